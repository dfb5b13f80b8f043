"""The Judges tab's second half: do the judges rank the models alike, and how much does each prefer length?

The same figures as report.md's judge-stability and length-control tables (``rqbench.evaluate.report.judge_stability``,
``rqbench.evaluate.report.length_control``), laid out as HTML cells: each model's rank under each judge with the ranks its
interval allows, a mark where a judge ranks it beyond another judge's interval, Kendall's tau per pair of judges and
leave-one-judge-out; then each judge's length preference with every model's raw and length-controlled win rate.
Pure functions of the stored results; the tab draws them when opened.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from rqbench.evaluate.criteria import METRICS, SETTINGS
from rqbench.evaluate.metrics.bootstrap import Estimate
from rqbench.evaluate.metrics.summary_row import SummaryRow
from rqbench.evaluate.report.judge_stability import MOVED_MARK, RANKING_METRIC, StabilityReport, judge_stability
from rqbench.evaluate.report.length_control import LENGTH_METRIC, LENGTH_METRICS, JudgeLength, judge_length
from rqbench.records import ResultsFile
from rqbench.space.html_table import Cell, Header, render_table

NO_STABILITY = (
    "Rank stability needs two judges that scored the same two models or more in one setting; "
    "the stored results have none yet (run `rqbench judge` with a second `--judge`)."
)
NO_LENGTH = "No judge's results with model RQs are stored yet, so no length preference can be measured."
STABILITY_CAPTION = (
    f"Rank 1 is best on the {METRICS[RANKING_METRIC].label.lower()}; brackets: the ranks the figure's 95% interval "
    f"allows. {MOVED_MARK}: a judge ranks the model outside the interval another judge gives it. Kendall's tau-b: 1 "
    "the same order, -1 reversed; 'all but J' ranks by the mean of the other judges against the mean of all."
)


def length_caption(metric: str = LENGTH_METRIC) -> str:
    return (
        f"The {METRICS[metric].label.lower()} before and after holding the RQs' length equal to the "
        "author-anchored RQ's (a logistic fit per judge, docs/metrics.md). Length preference: the change in win rate "
        "when a model's RQs are one standard deviation of the word difference longer."
    )


def _pct(e: Estimate) -> Cell:
    return Cell(
        f"{100 * e.value:.1f}%",
        note=f"[{100 * e.ci_low:.1f}, {100 * e.ci_high:.1f}]",
        title=f"n = {e.n} instances on {e.n_clusters} papers",
        kind="num stacked",
    )


def _tau(t: float | None) -> Cell:
    if t is None:
        return Cell("—", kind="missing", title="undefined: one ranking ties every model")
    return Cell(f"{t:.2f}", kind="num")


def stability_table(rep: StabilityReport) -> tuple[list[Header], list[list[Cell]]]:
    """One row per model: its rank under each judge, then leave-one-judge-out ranks."""
    headers = [
        Header("Model"),
        *[Header(j, kind="num", title=f"rank under {j} [the ranks its interval allows]") for j in rep.judges],
        *[Header(f"without {j}", kind="num", title=f"rank by the mean of every judge but {j}") for j in rep.judges],
    ]
    rows = []
    for m in rep.models:
        first = Cell(m.model + (f" {MOVED_MARK}" if m.moved else ""), title=m.why)
        ranks = [
            Cell(f"{r.rank:g}", note=f"[{r.rank_best}-{r.rank_worst}]", kind="num stacked")
            for r in (m.ranks[j] for j in rep.judges)
        ]
        loo = [Cell(f"{m.leave_one_out[j]:g}", kind="num") for j in rep.judges]
        rows.append([first, *ranks, *loo])
    return headers, rows


def tau_table(rep: StabilityReport) -> tuple[list[Header], list[list[Cell]]]:
    headers = [Header("Rankings compared"), Header("Kendall's tau-b", kind="num"), Header("Models", kind="num")]
    return headers, [
        [Cell(f"{p.first} vs {p.second}"), _tau(p.tau), Cell(str(p.models), kind="num")]
        for p in (*rep.pairs, *rep.leave_one_out)
    ]


def length_table(fits: Sequence[JudgeLength]) -> tuple[list[Header], list[list[Cell]]]:
    """One row per (judge, model): the judge's preference, the raw and controlled rates, the longest-of-five rule."""
    headers = [
        Header("Judge"),
        Header("Length preference", kind="num", title="win-rate change for RQs one standard deviation longer"),
        Header("Model"),
        Header("Win %", kind="num"),
        Header("Length-controlled win %", kind="num"),
        Header("Longest-of-five rule %", kind="num", title="the win rate of a judge that only counted words"),
        Header("Judge agrees with the rule", kind="num"),
    ]
    rows = []
    for f in fits:
        pref = (
            Cell(f"{100 * f.shift_at_one_sd:+.1f} pts", note=f"phi {f.phi:+.2f}", kind="num stacked")
            if f.measurable
            else Cell("—", kind="missing", title="the word difference never varies: nothing to measure")
        )
        for m in f.models:
            rows.append(
                [
                    Cell(f.judge),
                    pref,
                    Cell(m.model),
                    _pct(m.raw),
                    _pct(m.controlled),
                    Cell(f"{100 * m.longest_rule:.1f}%", kind="num"),
                    Cell(f"{100 * m.agreement_with_rule:.1f}%", kind="num"),
                ]
            )
    return headers, rows


def stability_html(rows: Sequence[SummaryRow]) -> str:
    """Per setting with two judges and two models: the ranks table and the tau table; else the sentence why not."""
    parts = []
    for setting in SETTINGS:
        rep = judge_stability(rows, setting)
        if rep is None:
            continue
        parts.append(f'<div class="rqb-caption"><b>{escape(setting.capitalize())} judging</b></div>')
        parts.append(render_table(*stability_table(rep), caption=STABILITY_CAPTION))
        parts.append(render_table(*tau_table(rep), sticky_first=False))
    return "".join(parts) or render_table([], [], empty=NO_STABILITY)


def length_html(results: Sequence[ResultsFile], *, n_boot: int) -> str:
    """Per setting and controlled figure (novelty's and narrowness's win): each judge's length preference and every
    model's raw and controlled win rate."""
    parts = []
    for setting in SETTINGS:
        for metric in LENGTH_METRICS:
            fits = judge_length(results, setting, metric=metric, n_boot=n_boot)
            if fits:
                title = f"{setting.capitalize()} judging: {METRICS[metric].label.split(', ', 1)[-1]}"
                parts.append(f'<div class="rqb-caption"><b>{escape(title)}</b></div>')
                parts.append(render_table(*length_table(fits), caption=length_caption(metric), sticky_first=False))
    return "".join(parts) or render_table([], [], empty=NO_LENGTH)
