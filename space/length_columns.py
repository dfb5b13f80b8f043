"""The leaderboard's length-control group: each row's win rates with the RQs' length held equal to the
author-anchored RQ's, and what the longest-of-five rule would score.

The figures are ``rqbench.evaluate.report.length_control``'s (the report's ``length_controlled_*`` tables): one fit per judge
and setting over every model that judge scored, so a row's controlled figure depends on the other rows of its judge,
and a combined row (several judges, each with its own length preference) has none. This module only turns them into
the table's cells: a value, its interval, and hover text that says what moved it, or why the cell is empty.
"""

from __future__ import annotations

from collections.abc import Mapping

from rqbench.evaluate.criteria import METRICS, Column
from rqbench.evaluate.metrics.summary_row import COMBINED, SummaryRow
from rqbench.evaluate.report.length_control import LENGTH_METRIC, LENGTH_METRICS, JudgeLength, LengthControlled, RowKey

GROUP = "length control"


def _controlled_label(metric: str) -> str:
    dimension = METRICS[metric].label.rpartition(", ")[2]
    return f"Length-controlled win % ({dimension})"


# One column per controlled figure (novelty's headline win, narrowness's), then the length-only baseline.
CONTROLLED_COLUMNS: dict[str, Column] = {
    m: Column(_controlled_label(m), GROUP, percent=True, higher_is_better=True) for m in LENGTH_METRICS
}
LONGEST_COLUMN = Column("Longest-of-five rule win % (non-obviousness)", GROUP, percent=True)
COLUMNS: tuple[Column, ...] = (*CONTROLLED_COLUMNS.values(), LONGEST_COLUMN)
# The columns with an interval beside them (the rule is a plain share of instances).
WITH_CI: tuple[Column, ...] = tuple(CONTROLLED_COLUMNS.values())

# (model, variant, setting, judge) -> figure -> (its judge's fit, the model's controlled figures)
LengthMap = Mapping[RowKey, Mapping[str, tuple[JudgeLength, LengthControlled]]]

WHY_REFERENCE = "The author-anchored RQ is the length the others are held to: it has no length-controlled figure."
WHY_COMBINED = (
    "Length control is fitted per judge (each judge has its own length preference): see this model's rows for "
    "each judge."
)
WHY_TRIAL = "Trial runs are not length-controlled: the fit is over each judge's full runs."
WHY_NONE = "No length-controlled figure: the judge scored no instance of this row with the model's RQs."

HEADERS: dict[str, str] = {
    **{
        col.label: f"The {METRICS[m].label.lower()} predicted if the model's RQs were as long as the author-anchored "
        "RQ: a logistic fit per judge and setting of the win on the length difference (tanh of it over its standard "
        "deviation) with one strength per model, read at zero difference (the manner of alpaca_eval's "
        "length-controlled win rate); higher is better. Grey: the 95% cluster-bootstrap CI over source papers."
        for m, col in CONTROLLED_COLUMNS.items()
    },
    LONGEST_COLUMN.label: "A baseline that reads no content: an instance is won when the longest of the model's RQs "
    "has more words than the author-anchored RQ. A judge whose verdicts match it often may be counting words "
    "(hover a cell for how often this judge's do).",
}


def _fmt_ci(lo: float, hi: float) -> str:
    return f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def _preference(fit: JudgeLength) -> str:
    if not fit.measurable:
        return f"{fit.judge}'s length preference cannot be measured here (the word difference never varies)"
    return (
        f"{fit.judge}'s length preference: {100 * fit.shift_at_one_sd:+.1f} points of win rate for RQs "
        f"{fit.scale_words:.1f} words longer (phi {fit.phi:+.2f})"
    )


def _why_empty(row: SummaryRow, found: Mapping[str, tuple[JudgeLength, LengthControlled]] | None) -> str:
    if row.row_kind == "reference":
        return WHY_REFERENCE
    if row.judge == COMBINED:
        return WHY_COMBINED
    if row.provenance.trial:
        return WHY_TRIAL
    return "" if found else WHY_NONE


def cells(row: SummaryRow, lengths: LengthMap, title_key: str) -> dict[str, object]:
    """The row's length-control values, intervals and hover texts (``title_key + label``), or each cell empty with
    the reason."""
    found = lengths.get((row.model, row.prompt_variant, row.setting, row.judge))
    why = _why_empty(row, found)
    out: dict[str, object] = {}
    for metric, col in CONTROLLED_COLUMNS.items():
        pair = None if why else (found or {}).get(metric)
        if pair is None:
            out |= {col.label: None, col.label + " 95% CI": "", title_key + col.label: why or WHY_NONE}
            continue
        fit, m = pair
        c = m.controlled
        ci = _fmt_ci(c.ci_low, c.ci_high)
        out |= {
            col.label: round(100 * c.value, 1),
            col.label + " 95% CI": ci,
            title_key + col.label: f"raw {100 * m.raw.value:.1f}% -> {100 * c.value:.1f}% with the length held "
            f"equal, over {c.n} instance(s); the model's RQs average {m.mean_delta_words:+.1f} words against the "
            f"author-anchored RQ; {_preference(fit)}. 95% CI {ci}.",
        }
    pair = None if why else (found or {}).get(LENGTH_METRIC)
    if pair is None:
        return out | {LONGEST_COLUMN.label: None, title_key + LONGEST_COLUMN.label: why or WHY_NONE}
    _, m = pair
    return out | {
        LONGEST_COLUMN.label: round(100 * m.longest_rule, 1),
        title_key + LONGEST_COLUMN.label: f"The longest RQ has more words than the author-anchored RQ on "
        f"{100 * m.longest_rule:.1f}% of instances; the judge's verdict matches that rule on "
        f"{100 * m.agreement_with_rule:.1f}%.",
    }
