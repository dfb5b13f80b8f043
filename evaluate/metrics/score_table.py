"""Columnar scores: a results file's scores as numpy arrays, one table per file, read by every metric.

``summarize`` reads each results file once into a ``ScoreTable``: one row per
instance and, per dimension of every criterion, the GT's value and the model
candidates' values (NaN for unscored), with the failures accounted as
``ScoreOptions.failures`` says (``Criterion.score_row``), and per criterion which
instances had no valid generation and which a judge left unjudged
(``evaluate/metrics/accounting.py``). Each criterion says how an instance becomes those
values, and each metric's declared function (``MetricSpec.fn``) computes its
figure from them; nothing here knows a criterion or a metric by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rqbench.evaluate.criteria import CRITERIA, DIMENSIONS
from rqbench.evaluate.metrics.accounting import criteria_run
from rqbench.evaluate.metrics.metric import MODEL_RQS, FailureAccounting, MetricSpec, ScoreOptions, split_candidates
from rqbench.records import ResultsFile


@dataclass
class ScoreTable:
    """One results file's scores: row i is instance ``rq_ids[i]`` (file order, one row per rq_id)."""

    rq_ids: list[str]
    arxiv_ids: list[str]
    subfields: np.ndarray  # of str
    gt: dict[str, np.ndarray]  # dimension -> (n,)
    model: dict[str, np.ndarray]  # dimension -> (n, width)
    no_generation: dict[str, np.ndarray]  # criterion -> (n,) bool: no valid generation (False where it was not run)
    unjudged: dict[str, np.ndarray]  # criterion -> (n,) bool: a judge's call failed on the instance
    missing: np.ndarray  # (n,) int: RQs missing from an instance that has some
    failures: FailureAccounting = FailureAccounting.paper
    repeats: bool = False  # some rq_id appeared more than once

    def __len__(self) -> int:
        return len(self.rq_ids)

    def values(self, spec: MetricSpec, rows: np.ndarray, reference: bool = False) -> np.ndarray:
        """One figure's per-instance values on ``rows``, an instance with no generation counted as the options say."""
        crit = DIMENSIONS[spec.dimension][0].name
        lost = self.no_generation[crit][rows] if self.failures is FailureAccounting.paper else None
        return spec.values(self.gt[spec.dimension][rows], self.model[spec.dimension][rows], reference, lost)

    def unjudged_for(self, dimension: str) -> np.ndarray:
        """Per row, whether a judge's failure left the instance unjudged for this dimension's criterion."""
        return self.unjudged[DIMENSIONS[dimension][0].name]

    def any_unjudged(self) -> np.ndarray:
        """Per row, whether a judge's failure left the instance unjudged for any criterion."""
        out = np.zeros(len(self.rq_ids), dtype=bool)
        for mask in self.unjudged.values():
            out |= mask
        return out

    def generation_failed(self) -> np.ndarray:
        out = np.zeros(len(self.rq_ids), dtype=bool)
        for mask in self.no_generation.values():
            out |= mask
        return out

    def rows(self, subfield: str | None) -> np.ndarray:
        """Row indices of one sub-field (all rows for None), in file order."""
        if subfield is None:
            return np.arange(len(self.rq_ids))
        return np.flatnonzero(self.subfields == subfield)


def score_table(r: ResultsFile, opts: ScoreOptions, *, subfield: str | None = None, keep: str = "last") -> ScoreTable:
    """The table of one results file (only ``subfield``'s instances when given).

    A repeated rq_id keeps its first position and, with ``keep="last"``, its last
    scores, as assigning into a dict keyed by rq_id would (``keep="first"``: its
    first scores). Errors name the judge and the submission.
    """
    index: dict[str, int] = {}
    arxiv: list[str] = []
    subs: list[str] = []
    # per row, per criterion: (gt, model slots, unjudged); and (no generation, RQs missing)
    per_row: list[list[tuple[list[float], list[list[float]], bool]]] = []
    lost: list[tuple[bool, int]] = []
    repeats = False
    criteria = list(CRITERIA.values())
    ran = set(criteria_run(r))
    for inst in r.instances:
        if subfield is not None and inst.subfield != subfield:
            continue
        try:
            gt, model = split_candidates(inst)
            vals = [
                c.score_row(inst, gt, model, opts) if c.name in ran else (*c.table_values(inst, gt, model, opts), False)
                for c in criteria
            ]
        except ValueError as exc:
            raise ValueError(f"results of judge {r.judge.label!r} for {r.submission.model!r}: {exc}") from exc
        status = (not model, MODEL_RQS - len(model) if 0 < len(model) < MODEL_RQS else 0)
        row = index.get(inst.rq_id)
        repeats = repeats or row is not None
        if row is not None and keep == "first":
            continue
        if row is None:
            index[inst.rq_id] = len(arxiv)
            arxiv.append(inst.arxiv_id)
            subs.append(inst.subfield)
            per_row.append(vals)
            lost.append(status)
        else:
            arxiv[row], subs[row], per_row[row], lost[row] = inst.arxiv_id, inst.subfield, vals, status
    n = len(arxiv)
    gt_cols: dict[str, np.ndarray] = {}
    model_cols: dict[str, np.ndarray] = {}
    no_generation: dict[str, np.ndarray] = {}
    unjudged: dict[str, np.ndarray] = {}
    failed = np.fromiter((x[0] for x in lost), dtype=bool, count=n)
    for k, c in enumerate(criteria):
        width = max((len(vals[k][1]) for vals in per_row), default=0)
        grid = np.full((n, width + 1, len(c.dimensions)), np.nan)
        for i, vals in enumerate(per_row):
            g, slots, _ = vals[k]
            grid[i, 0] = g
            if slots:
                grid[i, 1 : len(slots) + 1] = slots
        for j, d in enumerate(c.dimensions):
            gt_cols[d.name] = grid[:, 0, j].copy()
            model_cols[d.name] = grid[:, 1:, j].copy()
        no_generation[c.name] = failed & (c.name in ran)
        unjudged[c.name] = np.fromiter((vals[k][2] for vals in per_row), dtype=bool, count=n)
    return ScoreTable(
        list(index),
        arxiv,
        np.asarray(subs, dtype=object),
        gt_cols,
        model_cols,
        no_generation,
        unjudged,
        np.fromiter((x[1] for x in lost), dtype=np.int64, count=n),
        opts.failures,
        repeats,
    )


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
