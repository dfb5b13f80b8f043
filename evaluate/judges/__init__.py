"""The five judges: novelty and narrowness (standalone and comparative) and author-anchor overlap."""

from rqbench.evaluate.judges.base import (
    GT_ID,
    SETTINGS,
    JudgeConfig,
    JudgeRequest,
    Metric,
    candidate_id,
    parse_reply,
    shuffled,
)
from rqbench.evaluate.judges.narrowness import Narrowness
from rqbench.evaluate.judges.novelty import Novelty
from rqbench.evaluate.judges.overlap import Overlap

from rqbench.steps import STEPS
from rqbench.untrusted import candidate_block, candidate_values, data_tag

METRICS: dict[str, Metric] = {m.name: m for m in (Novelty(), Narrowness(), Overlap())}


def metric_for_step(step: str) -> Metric:
    """The metric that owns a prompt step (for reparsing stored replies), as the step registry says."""
    owner = STEPS[step].owner if step in STEPS else None
    for m in METRICS.values():
        if type(m).__module__ == owner:
            return m
    raise KeyError(f"no judge owns step {step!r}")


__all__ = [
    "GT_ID",
    "METRICS",
    "SETTINGS",
    "JudgeConfig",
    "JudgeRequest",
    "Metric",
    "Narrowness",
    "Novelty",
    "Overlap",
    "candidate_block",
    "candidate_id",
    "candidate_values",
    "data_tag",
    "metric_for_step",
    "parse_reply",
    "shuffled",
]
