"""Do the judges rank the models alike? Kendall's tau per pair of judges, a leave-one-judge-out ranking, and the
models whose place depends on the judge more than its own interval allows.

The paper's advice is to read novelty through several judges (its "novelty mirage"): a ranking that one judge
gives and another reverses is not a finding. This module measures that from the summary rows the leaderboard
already holds (one figure with its 95% interval per model and judge), so it costs no call.

- **Rank under a judge**: 1 is best, in the figure's direction; equal figures share their mean rank.
- **Rank interval under a judge**: the ranks its interval allows. Its best is 1 + the models whose interval lies
  wholly above it (surely better); its worst is the count of models less those wholly below it (surely worse).
  This is the rank interval that Chatbot Arena publishes beside its Elo ratings, read from bootstrap intervals.
- **Moved beyond its interval**: some judge puts the model at a rank outside the interval another judge's own
  uncertainty gives it. Two judges that merely disagree within their noise leave a model unmarked.
- **Kendall's tau-b** (scipy's, which counts ties) between every pair of judges' rankings, over the models both
  scored; and between the ranking by every judge's mean figure and the ranking by the mean without judge j
  (leave-one-judge-out): a tau well below 1 says j alone decides part of the order.

Pure functions on ``SummaryRow``s; ``rqbench report`` writes the tables (``tables.judge_stability_tables``) and
the Judges tab shows them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field
from scipy.stats import kendalltau, rankdata

from rqbench.evaluate.criteria import METRICS, SETTINGS, headline_figure
from rqbench.evaluate.metrics.summary_row import COMBINED, SummaryRow
from rqbench.evaluate.report.table import Table

# The figure the models are ranked by: the share of instances whose best RQ beats the author-anchored one on
# non-obviousness, the paper's headline comparison; it exists in both settings (Tables 3(b) and 4).
RANKING_METRIC = headline_figure("novelty", "win")
# Fewer models than this give no ranking to compare (one order of two is all or nothing).
MIN_MODELS = 2


class JudgeRank(BaseModel):
    """One model's place under one judge."""

    value: float
    ci_low: float
    ci_high: float
    rank: float = Field(description="1 is best; tied figures share their mean rank.")
    rank_best: int = Field(description="The best rank the figure's interval allows.")
    rank_worst: int = Field(description="The worst rank the figure's interval allows.")


class ModelStability(BaseModel):
    model: str = Field(description="The row's name (the model, and its prompt variant unless the paper's).")
    ranks: dict[str, JudgeRank] = Field(description="Per judge label.")
    leave_one_out: dict[str, float] = Field(
        description="Per judge label: the rank by the mean figure of every other judge."
    )
    moved: bool = Field(description="Some judge ranks it outside the rank interval another judge gives it.")
    why: str = Field(default="", description="Which judges, and where, when moved.")


class JudgePairTau(BaseModel):
    first: str
    second: str = Field(description="A judge label, or 'all judges' for a leave-one-judge-out row.")
    tau: float | None = Field(description="Kendall's tau-b; None where it is undefined (every rank tied).")
    models: int


class StabilityReport(BaseModel):
    setting: str
    metric: str
    judges: list[str]
    models: list[ModelStability]
    pairs: list[JudgePairTau] = Field(description="Every pair of judges.")
    leave_one_out: list[JudgePairTau] = Field(
        description="Per judge: the ranking without it against the ranking by every judge."
    )
    left_out: list[str] = Field(default_factory=list, description="Models not scored by every judge, not ranked.")


ALL_JUDGES = "all judges"


def ranks(values: Sequence[float], higher_is_better: bool) -> np.ndarray:
    """1 is best; ties share their mean rank."""
    x = np.asarray(values, dtype=float)
    return rankdata(-x if higher_is_better else x, method="average")


def rank_interval(i: int, lows: Sequence[float], highs: Sequence[float], higher_is_better: bool) -> tuple[int, int]:
    """The ranks model ``i``'s interval allows among every model's intervals: (best, worst)."""
    n = len(lows)
    others = [j for j in range(n) if j != i]
    if higher_is_better:
        surely_better = sum(lows[j] > highs[i] for j in others)
        surely_worse = sum(highs[j] < lows[i] for j in others)
    else:
        surely_better = sum(highs[j] < lows[i] for j in others)
        surely_worse = sum(lows[j] > highs[i] for j in others)
    return 1 + surely_better, n - surely_worse


def kendall(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Kendall's tau-b, or None where undefined (fewer than two models, or one side all tied)."""
    if len(a) < MIN_MODELS:
        return None
    tau = kendalltau(a, b).statistic
    return None if tau is None or math.isnan(tau) else float(tau)


def _moved(ranks_by_judge: dict[str, JudgeRank]) -> str:
    out = []
    for a, b in itertools.permutations(ranks_by_judge, 2):
        ra, rb = ranks_by_judge[a], ranks_by_judge[b]
        if not ra.rank_best <= rb.rank <= ra.rank_worst:
            out.append(f"{b} ranks it {rb.rank:g}, outside {a}'s {ra.rank_best}-{ra.rank_worst}")
    return "; ".join(out)


def judge_stability(rows: Sequence[SummaryRow], setting: str, metric: str = RANKING_METRIC) -> StabilityReport | None:
    """The judges' rankings of the models on ``metric`` in ``setting``; None with fewer than two judges or models.

    Reads each judge's own model rows over every sub-field (no combined, reference or trial row).
    """
    higher = METRICS[metric].higher_is_better
    if higher is None:
        raise ValueError(f"metric {metric!r} has no direction, so it ranks nothing")
    table: dict[str, dict[str, SummaryRow]] = {}
    for r in rows:
        if (
            r.row_kind == "model"
            and r.setting == setting
            and r.subfield is None
            and r.judge != COMBINED
            and r.provenance.trial is None
            and r.figure(metric) is not None
        ):
            table.setdefault(r.judge, {})[r.name] = r
    judges = sorted(table)
    if len(judges) < 2:
        return None
    every = sorted({m for by in table.values() for m in by})
    models = [m for m in every if all(m in table[j] for j in judges)]
    if len(models) < MIN_MODELS:
        return None
    figs = {j: [table[j][m].figures[metric] for m in models] for j in judges}
    rank_of = {j: ranks([f.value for f in figs[j]], higher) for j in judges}
    lows = {j: [f.ci_low for f in figs[j]] for j in judges}
    highs = {j: [f.ci_high for f in figs[j]] for j in judges}
    values = np.array([[f.value for f in figs[j]] for j in judges])  # judges x models
    loo = {j: ranks(np.delete(values, k, axis=0).mean(axis=0), higher) for k, j in enumerate(judges)}
    consensus = ranks(values.mean(axis=0), higher)
    out: list[ModelStability] = []
    for i, m in enumerate(models):
        by_judge = {}
        for j in judges:
            best, worst = rank_interval(i, lows[j], highs[j], higher)
            f = figs[j][i]
            by_judge[j] = JudgeRank(
                value=f.value,
                ci_low=f.ci_low,
                ci_high=f.ci_high,
                rank=float(rank_of[j][i]),
                rank_best=best,
                rank_worst=worst,
            )
        why = _moved(by_judge)
        out.append(
            ModelStability(
                model=m,
                ranks=by_judge,
                leave_one_out={j: float(loo[j][i]) for j in judges},
                moved=bool(why),
                why=why,
            )
        )
    return StabilityReport(
        setting=setting,
        metric=metric,
        judges=judges,
        models=out,
        pairs=[
            JudgePairTau(first=a, second=b, tau=kendall(rank_of[a], rank_of[b]), models=len(models))
            for a, b in itertools.combinations(judges, 2)
        ],
        leave_one_out=[
            JudgePairTau(first=f"all but {j}", second=ALL_JUDGES, tau=kendall(loo[j], consensus), models=len(models))
            for j in judges
        ],
        left_out=[m for m in every if m not in models],
    )


# --------------------------------------------------------------------------
# Report tables (formatting only: every number above is computed already)
# --------------------------------------------------------------------------

MOVED_MARK = "⇅"


def _tau(t: float | None) -> str:
    return "undefined (all tied)" if t is None else f"{t:.2f}"


def stability_tables(rep: StabilityReport) -> list[Table]:
    """Two tables: each pair of judges' Kendall's tau (and leave-one-judge-out), and each model's rank per judge."""
    label = METRICS[rep.metric].label
    pairs = [*rep.pairs, *rep.leave_one_out]
    tau_display = pd.DataFrame(
        {"judges": [f"{p.first} vs {p.second}" for p in pairs], "Kendall's tau-b": [_tau(p.tau) for p in pairs]}
    ).set_index("judges")
    tau_data = pd.DataFrame([{"first": p.first, "second": p.second, "tau": p.tau, "models": p.models} for p in pairs])
    left = f" Not ranked (not scored by every judge): {', '.join(rep.left_out)}." if rep.left_out else ""
    n = len(rep.models)
    rank_rows = []
    rank_data = []
    for m in rep.models:
        cells = {"model": m.model + (f" {MOVED_MARK}" if m.moved else "")}
        for j in rep.judges:
            r = m.ranks[j]
            cells[j] = f"{r.rank:g} [{r.rank_best}-{r.rank_worst}]"
            rank_data.append(
                {"model": m.model, "judge": j, "rank": r.rank, "rank_best": r.rank_best, "rank_worst": r.rank_worst}
                | {"value": r.value, "ci_low": r.ci_low, "ci_high": r.ci_high, "moved": m.moved}
            )
        for j in rep.judges:
            cells[f"rank without {j}"] = f"{m.leave_one_out[j]:g}"
        rank_rows.append(cells)
    moved = [m for m in rep.models if m.moved]
    why = "".join(f" {m.model}: {m.why}." for m in moved)
    return [
        Table(
            f"judge_rank_agreement_{rep.setting}",
            f"{rep.setting.capitalize()} {label}: Kendall's tau-b between the model rankings of each pair of judges "
            f"over the {n} models every judge scored, and between the ranking by every judge's mean and the ranking "
            f"without each judge (leave-one-judge-out).{left}",
            "not in the paper (judge stability, docs/metrics.md)",
            tau_display,
            tau_data,
        ),
        Table(
            f"judge_ranks_{rep.setting}",
            f"{rep.setting.capitalize()} {label}: each model's rank under each judge (1 is best) with the ranks its "
            f"95% interval allows [best-worst], and its rank by the mean of the other judges. {MOVED_MARK}: a judge "
            f"ranks it outside the interval another judge gives it ({len(moved)} of {n}).{why}",
            "not in the paper (judge stability, docs/metrics.md)",
            pd.DataFrame(rank_rows).set_index("model"),
            pd.DataFrame(rank_data),
        ),
    ]


def judge_stability_tables(rows: Sequence[SummaryRow]) -> list[Table]:
    """The stability tables for every setting with two or more judges and models."""
    out: list[Table] = []
    for setting in SETTINGS:
        rep = judge_stability(rows, setting)
        if rep is not None:
            out += stability_tables(rep)
    return out
