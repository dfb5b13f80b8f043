"""The criteria the judges score, and every figure they report.

``CRITERIA`` is the one list of criteria: the paper's three (novelty,
narrowness, author-anchor overlap; one module each, see ``base.py`` for what a
criterion declares), then any declared as data in a folder that ``RQB_CRITERIA``
names (``declared.py``: ``criterion.toml`` and its prompt files); and
``METRICS`` the one list of reported figures, gathered from the criteria in
that order. The summary, the report tables and the leaderboard read both.
"""

import os
from collections.abc import Sequence
from pathlib import Path

from rqbench.evaluate.metrics.metric import GT_ID, MetricSpec
from rqbench.steps import Step
from rqbench.untrusted import candidate_block, candidate_values, data_tag

from .base import Column, Criterion, Dimension, ReportTable, figure_column
from .declared import DECLARATION, CriterionDeclarationError, DeclaredCriterion, load_declared
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

# the paper's three, as modules: each carries a rule of the paper's that no table can say
PAPER_CRITERIA: tuple[Criterion, ...] = (Novelty(), Narrowness(), Overlap())
CRITERIA_ENV = "RQB_CRITERIA"


def declared_folders(value: str | None) -> list[Path]:
    """The criterion folders ``RQB_CRITERIA`` names (``os.pathsep``-separated): each a folder with a
    ``criterion.toml``, or a folder of such folders (read in name order)."""
    out: list[Path] = []
    for part in (value or "").split(os.pathsep):
        if not part.strip():
            continue
        root = Path(part.strip()).expanduser()
        if (root / DECLARATION).is_file():
            out.append(root)
        elif root.is_dir():
            found = sorted(p for p in root.iterdir() if (p / DECLARATION).is_file())
            if not found:
                raise CriterionDeclarationError(
                    f"{CRITERIA_ENV}: {root} holds no {DECLARATION}, nor any folder that does"
                )
            out += found
        else:
            raise CriterionDeclarationError(f"{CRITERIA_ENV}: {root} is not a folder")
    return out


def _with_declared(paper: Sequence[Criterion], folders: Sequence[Path]) -> dict[str, Criterion]:
    out: dict[str, Criterion] = {c.name: c for c in paper}
    for folder in folders:
        taken = [*out, *(d.name for c in out.values() for d in c.dimensions)]
        taken += [s.name for c in out.values() for s in c.steps.values()]
        c = load_declared(folder, taken=taken)
        out[c.name] = c
    return out


# Read once, at import: the tables, columns and figures below (and the modules that derive theirs from them) are
# fixed for the process, as a plugin's commands are fixed once the tool has started.
CRITERIA: dict[str, Criterion] = _with_declared(PAPER_CRITERIA, declared_folders(os.environ.get(CRITERIA_ENV)))
DECLARED: dict[str, DeclaredCriterion] = {n: c for n, c in CRITERIA.items() if isinstance(c, DeclaredCriterion)}
METRICS: dict[str, MetricSpec] = {m.name: m for c in CRITERIA.values() for m in c.metrics}
DIMENSIONS: dict[str, tuple[Criterion, Dimension]] = {d.name: (c, d) for c in CRITERIA.values() for d in c.dimensions}
STEPS: dict[str, Step] = {s.name: s for c in CRITERIA.values() for s in c.steps.values()}


def criteria_flag(value: str | None) -> list[str]:
    """The criteria a ``--criteria a,b`` flag names; every criterion (the paper's, then the declared) when not given."""
    if value is None:
        return list(CRITERIA)
    return [c.strip() for c in value.split(",") if c.strip()]


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
    "CRITERIA_ENV",
    "DECLARED",
    "PAPER_CRITERIA",
    "CriterionDeclarationError",
    "DeclaredCriterion",
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
    "criteria_flag",
    "criterion_for_step",
    "data_tag",
    "dimension",
    "figure_column",
    "headline",
    "headline_figure",
    "metric",
    "shuffled",
]
