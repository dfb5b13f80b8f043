"""Author-anchor overlap: the GT against each of the five model RQs (0-4) and the smallest covering subset.

The GT is the reference here, not a candidate, so only the five are shown, in
their submitted order (the covering subset's indices and its smallest-index
rule refer to that order). The call is the same in both settings, so a
``--setting both`` run pays for it once (the second is a cache hit).

Figure: Overlap@5, the highest of the five overlap scores per instance. A
diagnostic of how close the model comes to the author-pursued direction, not a
quality score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.metrics.metric import GT_ID, MetricSpec, ScoreOptions, best
from rqbench.records import OVERLAP_SCALE, CandidateScores, EvaluationInstance, InstanceResult, OverlapReply, Reply
from rqbench.steps import Step

from .base import Criterion, Dimension, ReportTable, figure_column
from .requests import JudgeConfig, JudgeRequest

_DIMENSION = Dimension("overlap", "author-anchor overlap", True, OVERLAP_SCALE)


def _overlap_at_5(gt: np.ndarray, model: np.ndarray) -> np.ndarray:
    """Overlap@5 per instance: the best of the five GT-overlap scores (the GT has no value of its own)."""
    return best(model, True)


OVERLAP5 = MetricSpec(
    name="overlap5",
    fn=_overlap_at_5,
    higher_is_better=True,
    dimension="overlap",
    label="Overlap@5 (author-anchor overlap, 0-4)",
    kind="diagnostic",
    no_generation=_DIMENSION.worst,
)


class Overlap(Criterion):
    name = "overlap"
    steps = {"any": Step("overlap", OverlapReply, __name__, "any")}
    dimensions = (_DIMENSION,)
    metrics = (OVERLAP5,)
    report_tables = (
        ReportTable(
            "best_of",
            "overlap",
            "Author-anchor overlap: mean ± std over instances of the best of five overlap scores (0-4). "
            "A diagnostic, not a quality score.",
            {"any": "Table 2"},
            metric="overlap5",
            column="Overlap@5",
            by_subfield=False,
        ),
    )
    columns = (figure_column(OVERLAP5, "Overlap@5", "overlap", headline=True),)
    per_candidate = False

    # -- judging ------------------------------------------------------------
    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        model_ids = [c for c in candidates if c != GT_ID]
        return self.build(
            judge, self.step_for(judge.setting), [model_ids], candidates, {"ground_truth": " ".join(inst.gt_rq.split())}
        )

    def apply(self, req: JudgeRequest, reply: Reply, result: InstanceResult) -> None:
        assert isinstance(reply, OverlapReply)
        result.overlap = reply

    def reset(self, result: InstanceResult) -> None:
        result.overlap = None

    # -- scoring ------------------------------------------------------------
    def complete(self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores]) -> bool:
        return inst.overlap is not None

    def table_values(
        self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores], opts: ScoreOptions
    ) -> tuple[list[float], list[list[float]]]:
        """The GT has no overlap of its own (NaN); the model slots are the judge's five pairwise scores."""
        scores = inst.overlap.pairwise_scores if inst.overlap is not None else []
        return [float("nan")], [[float(s)] for s in scores]
