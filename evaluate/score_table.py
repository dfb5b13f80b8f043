"""Columnar scores: a results file's per-instance ``ScoreVector``s as numpy arrays, and the metrics over them.

``summarize`` reads each results file once into a ``ScoreTable`` (one row per
instance; per dimension the GT's value and the model candidates' values, NaN
for unscored) and computes every figure as array operations. The numbers are
those of ``metrics.score_vector`` and the ``MetricSpec`` functions, bit for bit:
candidate scores are the same integer sums divided by the same counts, the
``mean_scores`` rule adds judges in the same order, and observations come out in
the order the per-instance functions produced them (tests/test_summary_fast.py
checks this against the per-instance path on random results).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rqbench.evaluate.metrics import (
    METRICS,
    NARROWNESS_DIMS,
    NOVELTY_DIMS,
    MetricSpec,
    NarrownessAggregation,
    OrderingAggregation,
    ScoreOptions,
    Verdict,
    split_candidates,
)
from rqbench.records import InstanceResult, ResultsFile

DIMENSIONS: tuple[str, ...] = (*NOVELTY_DIMS, *NARROWNESS_DIMS, "overlap")
_TIE_TOL = 1e-9
_NAN = float("nan")
_NOVELTY = operator.attrgetter(*NOVELTY_DIMS)
_NARROWNESS = operator.attrgetter(*NARROWNESS_DIMS)


@dataclass
class ScoreTable:
    """One results file's scores: row i is instance ``rq_ids[i]`` (file order, one row per rq_id)."""

    rq_ids: list[str]
    arxiv_ids: list[str]
    subfields: np.ndarray  # of str
    gt: dict[str, np.ndarray]  # dimension -> (n,)
    model: dict[str, np.ndarray]  # dimension -> (n, width)
    repeats: bool = False  # some rq_id appeared more than once

    def __len__(self) -> int:
        return len(self.rq_ids)

    def rows(self, subfield: str | None) -> np.ndarray:
        """Row indices of one sub-field (all rows for None), in file order."""
        if subfield is None:
            return np.arange(len(self.rq_ids))
        return np.flatnonzero(self.subfields == subfield)


def _instance_values(inst: InstanceResult, opts: ScoreOptions) -> tuple[list[list[float]], list[float]]:
    """Per candidate (GT first) the value on every novelty and narrowness dimension; and the overlap scores."""
    gt, model = split_candidates(inst)
    papers = inst.background_paper_ids
    first = opts.orderings is OrderingAggregation.first
    agg = opts.narrowness
    out = []
    for c in (gt, *model):
        if c.novelty_by_ordering:
            scores = c.novelty_by_ordering[:1] if first else c.novelty_by_ordering
        else:
            scores = [c.novelty] if c.novelty is not None else []
        # integer scores: a sum over orderings divided by their count, as metrics.novelty_value computes it
        if len(scores) == 1:
            vals = [float(x) for x in _NOVELTY(scores[0])]
        elif scores:
            vals = [sum(col) / len(scores) for col in zip(*map(_NOVELTY, scores))]
        else:
            vals = [_NAN] * len(NOVELTY_DIMS)
        marks = [_NARROWNESS(c.narrowness[k]) for k in papers if k in c.narrowness]
        if not marks:
            vals += [_NAN] * len(NARROWNESS_DIMS)
        elif agg is NarrownessAggregation.mean:
            vals += [sum(col) / len(marks) for col in zip(*marks)]
        elif agg is NarrownessAggregation.max:
            vals += [float(max(col)) for col in zip(*marks)]
        else:
            vals += [float(min(col)) for col in zip(*marks)]
        out.append(vals)
    overlap = [float(s) for s in inst.overlap.pairwise_scores] if inst.overlap is not None else []
    return out, overlap


def score_table(
    r: ResultsFile, opts: ScoreOptions, *, subfield: str | None = None, keep: str = "last"
) -> ScoreTable:
    """The table of one results file (only ``subfield``'s instances when given).

    A repeated rq_id keeps its first position and, with ``keep="last"``, its last
    scores, as assigning into a dict keyed by rq_id would (``keep="first"``: its
    first scores). Errors name the judge and the submission.
    """
    index: dict[str, int] = {}
    arxiv: list[str] = []
    subs: list[str] = []
    cand_vals: list[list[list[float]]] = []
    overlaps: list[list[float]] = []
    repeats = False
    for inst in r.instances:
        if subfield is not None and inst.subfield != subfield:
            continue
        try:
            vals, ov = _instance_values(inst, opts)
        except ValueError as exc:
            raise ValueError(f"results of judge {r.judge.label!r} for {r.submission.model!r}: {exc}") from exc
        row = index.get(inst.rq_id)
        repeats = repeats or row is not None
        if row is not None and keep == "first":
            continue
        if row is None:
            index[inst.rq_id] = len(arxiv)
            arxiv.append(inst.arxiv_id)
            subs.append(inst.subfield)
            cand_vals.append(vals)
            overlaps.append(ov)
        else:
            arxiv[row], subs[row], cand_vals[row], overlaps[row] = inst.arxiv_id, inst.subfield, vals, ov
    n = len(arxiv)
    width = max((len(v) - 1 for v in cand_vals), default=0)
    dims = len(NOVELTY_DIMS) + len(NARROWNESS_DIMS)
    grid = np.full((n, width + 1, dims), np.nan)
    for i, vals in enumerate(cand_vals):
        grid[i, : len(vals)] = vals
    gt = {d: grid[:, 0, j].copy() for j, d in enumerate(DIMENSIONS[:dims])}
    model = {d: grid[:, 1:, j].copy() for j, d in enumerate(DIMENSIONS[:dims])}
    ov_width = max((len(o) for o in overlaps), default=0)
    ov = np.full((n, ov_width), np.nan)
    for i, o in enumerate(overlaps):
        ov[i, : len(o)] = o
    gt["overlap"] = np.full(n, np.nan)
    model["overlap"] = ov
    return ScoreTable(list(index), arxiv, np.asarray(subs, dtype=object), gt, model, repeats)


# --------------------------------------------------------------------------
# The metrics on arrays
# --------------------------------------------------------------------------


def best(model: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Best@5 per row over the scored candidates; NaN where none is scored."""
    if model.shape[1] == 0:
        return np.full(model.shape[0], np.nan)
    return (np.fmax if higher_is_better else np.fmin).reduce(model, axis=1)


def verdict_indicator(gt: np.ndarray, model: np.ndarray, outcome: Verdict, higher_is_better: bool) -> np.ndarray:
    """1.0 where the Pass@5 verdict is ``outcome``, 0.0 where it is another, NaN where there is none."""
    b = best(model, higher_is_better)
    valid = ~np.isnan(b) & ~np.isnan(gt)
    with np.errstate(invalid="ignore"):
        tie = np.abs(b - gt) <= _TIE_TOL
        better = b > gt if higher_is_better else b < gt
    hit = {Verdict.tie: tie, Verdict.win: ~tie & better, Verdict.lose: ~tie & ~better}[outcome]
    return np.where(valid, hit.astype(float), np.nan)


def metric_values(spec: MetricSpec, gt: np.ndarray, model: np.ndarray, reference: bool = False) -> np.ndarray:
    """A metric's per-row value (NaN = no value), as ``spec.fn`` (or ``spec.reference_fn``) gives it per instance."""
    if reference:
        if spec.kind != "score":
            raise ValueError(f"metric {spec.name!r} has no reference value")
        return gt
    if spec.kind in ("score", "diagnostic"):
        return best(model, bool(spec.higher_is_better) if spec.kind == "score" else True)
    outcome = Verdict(spec.name.split("_", 1)[0])
    return verdict_indicator(gt, model, outcome, spec.family.higher_is_better)


def mean_over_judges(parts: Sequence[np.ndarray]) -> np.ndarray:
    """The ``mean_scores`` rule on aligned arrays (NaN = absent): each cell averaged over the judges that have it.

    Judges are added one after another from 0, as ``sum`` adds them, so the means are the same floats.
    """
    width = max((p.shape[1] if p.ndim == 2 else 0) for p in parts) if parts[0].ndim == 2 else None
    shape = (parts[0].shape[0], width) if width is not None else parts[0].shape
    total = np.zeros(shape)
    count = np.zeros(shape)
    for p in parts:
        if width is not None and p.shape[1] < width:
            p = np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=np.nan)
        have = ~np.isnan(p)
        total = np.where(have, total + np.where(have, p, 0.0), total)
        count += have
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _check_covered() -> None:
    for spec in METRICS.values():
        if spec.dimension not in DIMENSIONS:
            raise ValueError(f"metric {spec.name!r}: dimension {spec.dimension!r} has no column in ScoreTable")
        if spec.kind == "rate" and spec.name.split("_", 1)[0] not in {v.value for v in Verdict}:
            raise ValueError(f"rate metric {spec.name!r} does not name its verdict (win_/tie_/lose_)")


_check_covered()
