"""The criteria the judges score, and every figure they report.

``CRITERIA`` is the one list of criteria (novelty, narrowness, author-anchor
overlap; one module each, see ``base.py`` for what a criterion declares), and
``METRICS`` the one list of reported figures, gathered from the criteria in
that order. The summary, the report tables and the leaderboard read both.
"""

from rqbench.evaluate.metrics.metric import GT_ID, MetricSpec
from rqbench.steps import Step
from rqbench.untrusted import candidate_block, candidate_values, data_tag

from .base import Column, Criterion, Dimension, ReportTable, figure_column
from .narrowness import Narrowness
from .novelty import Novelty
from .overlap import Overlap
from .requests import (
    ORDER_KEY,
    SETTINGS,
    JudgeConfig,
    JudgeRequest,
    candidate_id,
    shuffled,
)

CRITERIA: dict[str, Criterion] = {c.name: c for c in (Novelty(), Narrowness(), Overlap())}
METRICS: dict[str, MetricSpec] = {m.name: m for c in CRITERIA.values() for m in c.metrics}
DIMENSIONS: dict[str, tuple[Criterion, Dimension]] = {d.name: (c, d) for c in CRITERIA.values() for d in c.dimensions}
STEPS: dict[str, Step] = {s.name: s for c in CRITERIA.values() for s in c.steps.values()}


def headline(criterion: str) -> str:
    """The dimension a criterion's headline figures are on (``Criterion.headline``)."""
    lead = CRITERIA[criterion].headline
    if lead is None:
        raise KeyError(f"criterion {criterion!r} has no headline dimension")
    return lead


def headline_figure(criterion: str, figure: str) -> str:
    """The name of a criterion's headline figure of one kind (``best5``, ``win``, ``tie``, ``lose``): the figure
    ``metrics.metric`` names for its headline dimension, checked to be one the criterion reports."""
    name = f"{figure}_{headline(criterion)}"
    if name not in METRICS or METRICS[name] not in CRITERIA[criterion].metrics:
        raise KeyError(f"criterion {criterion!r} reports no figure {name!r}")
    return name


def criterion_for_step(step: str) -> Criterion:
    """The criterion that asks a prompt step (for reparsing stored replies)."""
    for c in CRITERIA.values():
        if any(s.name == step for s in c.steps.values()):
            return c
    raise KeyError(f"no criterion asks step {step!r}; the judge steps are {', '.join(STEPS)}")


def metric(name: str) -> MetricSpec:
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(METRICS)}") from None


def dimension(name: str) -> tuple[Criterion, Dimension]:
    """The criterion a dimension belongs to, and the dimension."""
    try:
        return DIMENSIONS[name]
    except KeyError:
        raise KeyError(f"unknown dimension {name!r}; known: {', '.join(DIMENSIONS)}") from None


__all__ = [
    "CRITERIA",
    "DIMENSIONS",
    "GT_ID",
    "METRICS",
    "ORDER_KEY",
    "SETTINGS",
    "STEPS",
    "Column",
    "Criterion",
    "Dimension",
    "JudgeConfig",
    "JudgeRequest",
    "Narrowness",
    "Novelty",
    "Overlap",
    "ReportTable",
    "candidate_block",
    "candidate_id",
    "candidate_values",
    "criterion_for_step",
    "data_tag",
    "dimension",
    "figure_column",
    "headline",
    "headline_figure",
    "metric",
    "shuffled",
]
