"""The leaderboard table: summary rows in, a filtered, sorted, column-chosen pandas frame out.

Pure functions only. Every figure comes from ``rqbench.evaluate.metrics.summary``
(``summarize`` over the stored results files); this module only lays them out:
one row per (model, prompt variant, judge setting, judge), columns in groups
(the headline figures; novelty, narrowness, overlap, human agreement,
provenance), and a 95% CI column beside each figure. The author-anchored
reference rows stay visible whatever the model filters say, since they are the
yardstick.

With ``View.clean_only`` every model row's figures are its clean ones (the
instances whose source paper is newer than the model's knowledge cutoff), and a
"Clean" column gives their count in each row.

``render`` gives the frame (the CSV download holds it); ``display`` gives the
page's cells: each figure with its CI in one cell, win/tie/lose of a dimension
in one cell, and for every empty cell the reason it is empty. Every row says
how many of the revision's instances it scored ("Scored", with a mark and the
count when a judge's calls failed on some: the row is incomplete), and the
provenance group gives the failures (the model's and the judges') and each
judge's details (the paper's rules applied to its replies, its failed calls).
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rqbench.demo import is_demo_model
from rqbench.evaluate.criteria import CRITERIA, METRICS, Column
from rqbench.evaluate.judge_board.expert_corrected import MIN_EXPERT_LABELS, TOO_FEW_LABELS, ExpertCorrectedRate
from rqbench.evaluate.metrics.metric import describe_combine_rule, describe_failures
from rqbench.evaluate.metrics.summary_row import COMBINED, REFERENCE_MODEL, SummaryRow
from rqbench.records import dataset_label
from rqbench.space import bundles
from rqbench.space import length_columns as lc
from rqbench.space.html_table import Cell, Header

# One group per criterion (its columns are the criterion's declared ones), around who and where from.
# Diversity and cost have groups of their own: neither is a judge's criterion (diversity is the submission's RQs
# alone, cost its calls), and beside the model they would crowd the default view with figures few rows have.
GROUPS: tuple[str, ...] = (
    "model",
    "headline",
    *CRITERIA,
    "human agreement",
    lc.GROUP,
    "diversity",
    "cost",
    "provenance",
)
# The default view: who (model, setting, judge) and the headline figures; the other groups are one click away.
DEFAULT_GROUPS: tuple[str, ...] = ("model", "headline")

ID_COLUMNS: tuple[Column, ...] = (
    Column("Model", "model"),
    Column("Type", "model"),
    Column("Prompt variant", "model"),
    Column("Setting", "model"),
    Column("Judge", "model"),
    Column("Scored", "model"),
)

FIGURE_COLUMNS: tuple[Column, ...] = tuple(col for c in CRITERIA.values() for col in c.columns)

AGREEMENT_COLUMN = Column("Human agreement % (non-obviousness)", "human agreement", percent=True, higher_is_better=True)
# The judge's comparative win rate corrected with the annotators' picks (evaluate/judge_board/expert_corrected.py), and how many
# labelled instances (and picks) are behind it, or "too few labels".
CORRECTED_COLUMN = Column(
    "Expert-corrected win % (non-obviousness)", "human agreement", percent=True, higher_is_better=True
)
LABELS_COLUMN = Column("Expert labels", "human agreement")

PROVENANCE_COLUMNS: tuple[Column, ...] = (
    Column("Judges", "provenance"),
    Column("Prompt set", "provenance"),
    Column("Dataset", "provenance"),
    Column("Instances", "provenance"),
    Column("Failures", "provenance"),
    Column("Judge details", "provenance"),
    Column("Submitted", "provenance"),
    Column("Contamination", "provenance"),
)

# The diversity of the submission's RQs (evaluate/metrics/diversity.py), stored in its results files: lower is more diverse.
SIMILARITY_COLUMN = Column("Similarity of the five", "diversity", higher_is_better=False)
NEAR_DUPLICATES_COLUMN = Column("Near-duplicate pairs", "diversity", higher_is_better=False)
DIVERSITY_COLUMNS: tuple[Column, ...] = (SIMILARITY_COLUMN, NEAR_DUPLICATES_COLUMN)
# What the row cost (evaluate/generate/cost.py), from the call log as its results files stored it, and what a dollar bought.
GENERATION_COST_COLUMN = Column("Generation $", "cost", higher_is_better=False)
JUDGING_COST_COLUMN = Column("Judging cost", "cost")
PER_DOLLAR_COLUMN = Column("Win points per generation $ (non-obviousness)", "cost", higher_is_better=True)
COST_COLUMNS: tuple[Column, ...] = (GENERATION_COST_COLUMN, PER_DOLLAR_COLUMN, JUDGING_COST_COLUMN)

ALL_COLUMNS: tuple[Column, ...] = (
    *ID_COLUMNS,
    *FIGURE_COLUMNS,
    AGREEMENT_COLUMN,
    CORRECTED_COLUMN,
    LABELS_COLUMN,
    *lc.COLUMNS,
    *DIVERSITY_COLUMNS,
    *COST_COLUMNS,
    *PROVENANCE_COLUMNS,
)
# The figure columns that come with a CI column (the criteria's, and the two from human labels).
_WITH_CI: tuple[Column, ...] = (
    *FIGURE_COLUMNS,
    AGREEMENT_COLUMN,
    CORRECTED_COLUMN,
    *lc.WITH_CI,
    *DIVERSITY_COLUMNS,
    PER_DOLLAR_COLUMN,
)
# Columns whose cells are built from a value and a hidden reason (``_stored_cell``), not from ``figures``.
_STORED: tuple[Column, ...] = (*lc.COLUMNS, *DIVERSITY_COLUMNS, GENERATION_COST_COLUMN, PER_DOLLAR_COLUMN)
CI_SUFFIX = " 95% CI"
# Hidden helper columns that filters read; never shown.
_KIND = "_row_kind"
# True on the row that stands for its (model, variant, setting): the combined row, or a lone judge's own row
# (one judge gives no combined row), so the "combined" filter shows every model once.
_HEADLINE = "_headline"
# The combine rule of a combined row (empty otherwise), for the Judge cell's hover text and the caption.
_COMBINE = "_combine"
# Instances a judge of the row left unjudged (the row is incomplete when above 0), and the failure accounting.
_UNJUDGED = "_unjudged"
_FAILURES = "_failures"
# A trial row's limit N (it judged the revision's first N instances; 0 on a full run's row): trials are their
# own view, never ranked beside full runs (``View.trials``).
_TRIAL = "_trial"
# The expert-corrected cell's hover text: the raw rate and the rectifier behind the figure, or why there is none.
_CORRECTED_TITLE = "_corrected_title"
# The row's id in its reproduction bundle's address (``bundles.row_id``; empty on reference rows).
BUNDLE_ID = "_bundle"
# The model's name upper-cased, what the search compares (``filter_mask``).
_MODEL_UPPER = "_model_upper"
# Per stored column (diversity, cost): the cell's hover text, which on an empty cell is the reason it is empty.
_STORED_TITLE = "_title: "
_HIDDEN = (
    _KIND,
    _HEADLINE,
    _COMBINE,
    _UNJUDGED,
    _FAILURES,
    _TRIAL,
    _CORRECTED_TITLE,
    BUNDLE_ID,
    _MODEL_UPPER,
    *(_STORED_TITLE + c.label for c in _STORED),
)
# Beside the count of scored instances on an incomplete row (the report's tables use the same mark).
UNJUDGED_MARK = "†"
# Beside the count of scored instances on a trial's row.
TRIAL_MARK = "trial"


# The clean-only view (``View.clean_only``): each figure column's clean value and CI ride in hidden columns under
# this prefix and replace the shown ones; "Clean" gives each row's clean count, its hover text and, when it has none,
# the reason, which is also the reason its figure cells are empty.
CLEAN_PREFIX = "_clean: "
CLEAN_COLUMN = Column("Clean", "model")
_CLEAN_TITLE = "_clean_title"
_CLEAN_WHY = "_clean_why"
_EMPTY_WHY = "_empty_why"  # None, except in the clean view: why a model row has no clean figures ("" if it has)


def ci_label(col: Column) -> str:
    return col.label + CI_SUFFIX


def _fmt_ci(lo: float, hi: float, percent: bool) -> str:
    if percent:
        return f"[{100 * lo:.1f}, {100 * hi:.1f}]"
    return f"[{lo:.2f}, {hi:.2f}]"


def _value(v: float, percent: bool) -> float:
    return round(100 * v, 1) if percent else round(v, 2)


@dataclass(frozen=True)
class AgreementCell:
    """Human-judge agreement for one (model, setting, judge): share of shared instances with the same pick."""

    value: float
    ci_low: float
    ci_high: float
    n: int


AgreementMap = Mapping[tuple[str, str, str], AgreementCell]
# (model, setting, judge) -> the judge's expert-corrected win rate (space/annotate.py: expert_corrected_cells)
CorrectedMap = Mapping[tuple[str, str, str], ExpertCorrectedRate]

_WHY_CORRECTED_STANDALONE = (
    "Expert-corrected figures are for comparative rows: the annotators compared the two RQs side by side, as the "
    "comparative judge does."
)
_WHY_CORRECTED_COMBINED = (
    "Corrected per judge: the rectifier corrects one judge's picks, and 'combined' pools several; see each judge's row."
)
_WHY_NO_LABELS = "No expert label covers this row yet (see the Annotate tab)."


def _too_few(c: ExpertCorrectedRate) -> str:
    return (
        f"{TOO_FEW_LABELS}: {c.labelled} expert-labelled instance(s) ({c.labels} pick(s)); a corrected figure needs "
        f"at least {c.min_labels}"
    )


def _corrected_cells(row: SummaryRow, c: ExpertCorrectedRate | None) -> dict[str, object]:
    """The expert-corrected figure, its normal interval, the labels behind it, and its hover text (the raw rate
    and the rectifier, or why the cell is empty)."""
    empty: dict[str, object] = {CORRECTED_COLUMN.label: None, ci_label(CORRECTED_COLUMN): "", LABELS_COLUMN.label: ""}
    if row.row_kind == "reference":
        return empty | {_CORRECTED_TITLE: _WHY_REFERENCE}
    if row.setting != "comparative":
        return empty | {_CORRECTED_TITLE: _WHY_CORRECTED_STANDALONE}
    if row.judge == COMBINED:
        return empty | {_CORRECTED_TITLE: _WHY_CORRECTED_COMBINED}
    if c is None or c.labelled == 0:
        return empty | {_CORRECTED_TITLE: _WHY_NO_LABELS}
    labels = f"{c.labelled} ({c.labels} picks)"
    if c.value is None or c.ci_low is None or c.ci_high is None:
        return empty | {LABELS_COLUMN.label: f"{labels}: {TOO_FEW_LABELS}", _CORRECTED_TITLE: _too_few(c) + "."}
    raw = "" if c.judge_rate is None else f"raw {100 * c.judge_rate:.1f}% over {c.judged} instances"
    return {
        CORRECTED_COLUMN.label: _value(c.value, True),
        ci_label(CORRECTED_COLUMN): _fmt_ci(c.ci_low, c.ci_high, True),
        LABELS_COLUMN.label: labels,
        _CORRECTED_TITLE: f"{raw}, {100 * (c.rectifier or 0.0):+.1f} points from {c.labelled} expert-labelled "
        f"instance(s); 95% normal interval {_fmt_ci(c.ci_low, c.ci_high, True)} (prediction-powered inference).",
    }


def _contamination(row: SummaryRow) -> str:
    p = row.provenance
    if row.row_kind == "reference":
        return ""
    undated = row.clean.undated if row.clean is not None else 0
    if p.contaminated is None:
        if p.knowledge_cutoff is None:
            return "unknown (no knowledge cutoff given)"
        if p.contaminated_share is None:
            return "unknown (no source paper dated)"
        return f"unknown: no dated source paper on or before the cutoff {p.knowledge_cutoff}, {undated} undated"
    if p.contaminated:
        share = (
            f", {100 * p.contaminated_share:.0f}% of dated sources on or before it"
            if p.contaminated_share is not None
            else ""
        )
        return f"yes: cutoff {p.knowledge_cutoff}, sources from {p.earliest_source_date}{share}"
    return "no"


def judging_cost(row: SummaryRow) -> str:
    """What judging the row cost, from its results files' call totals: dollars and requests, or why it is unknown."""
    p = row.provenance
    if row.row_kind == "reference" or not p.judging_requests:
        return "" if row.row_kind == "reference" else "no requests recorded"
    if p.judging_cost_usd is None:
        return f"unknown: {p.unpriced_requests} of {p.judging_requests} requests have no price"
    cost = p.judging_cost_usd
    money = f"${cost:,.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.4f}"
    return f"{money} for {p.judging_requests:,} requests"


_WHY_NO_DIVERSITY = (
    "No diversity stored for this submission: `rqbench diversity RESULTS` embeds its RQs once and stores it in the "
    "results files (the page never embeds)."
)
_WHY_DIVERSITY_REFERENCE = "The author-anchored RQ is one question per instance: it has no pairs to compare."
_WHY_NO_PAIRS = "No instance of this submission has two RQs or more: there is no pair to compare."


def _diversity_cells(row: SummaryRow) -> dict[str, object]:
    """The mean pairwise similarity of the five and the near-duplicate pairs per instance, with their intervals and
    hover text; empty with the reason on reference rows and where nothing is stored."""
    d = row.diversity
    why = _WHY_DIVERSITY_REFERENCE if row.row_kind == "reference" else _WHY_NO_DIVERSITY if d is None else ""
    out: dict[str, object] = {}
    for col, attr, digits in (
        (SIMILARITY_COLUMN, "mean_similarity", 3),
        (NEAR_DUPLICATES_COLUMN, "near_duplicate_pairs", 2),
    ):
        e = getattr(d, attr) if d is not None and not why else None
        if e is None:
            out |= {col.label: None, ci_label(col): "", _STORED_TITLE + col.label: why or _WHY_NO_PAIRS}
            continue
        ci = f"[{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"
        what = (
            f"mean cosine over each instance's pairs of RQs ({d.embedder})"
            if attr == "mean_similarity"
            else f"pairs with cosine >= {d.threshold:g} ({d.embedder}), of 10 for five RQs"
        )
        out |= {
            col.label: round(e.value, digits),
            ci_label(col): ci,
            _STORED_TITLE + col.label: f"{what}, over {d.instances} instances; 95% CI {ci} (cluster bootstrap "
            "over source papers); lower is more diverse.",
        }
    return out


def _money(cost: float) -> str:
    return f"${cost:,.2f}" if cost >= 0.01 or cost == 0 else f"${cost:.4f}"


_WHY_COST_REFERENCE = "The author-anchored RQ was written by the paper's authors: nothing was generated or paid."
_WHY_GENERATED_ELSEWHERE = (
    "Generated elsewhere: no call log here holds this submission's generation requests, so its cost is unknown."
)


def _generation_why(row: SummaryRow) -> str:
    """Why the row has no generation cost; "" when it has one."""
    g = row.provenance.generation_cost
    if row.row_kind == "reference":
        return _WHY_COST_REFERENCE
    if g is None:
        return _WHY_GENERATED_ELSEWHERE
    if g.unpriced or g.unlogged:
        parts = ([f"{g.unpriced} request(s) have no price in litellm's cost map"] if g.unpriced else []) + (
            [f"{g.unlogged} answered instance(s) have requests this call log never saw sent"] if g.unlogged else []
        )
        return f"Unknown: {'; '.join(parts)} (the {g.requests} priced request(s) came to {_money(g.cost_usd)})."
    return ""


def _cost_cells(row: SummaryRow) -> dict[str, object]:
    """Generation dollars (sortable), win points per dollar of them, and judging cost, each with its hover text."""
    g = row.provenance.generation_cost
    why = _generation_why(row)
    runs = f"; call-log run(s) {', '.join(g.run_ids)}" if g is not None and g.run_ids else ""
    out: dict[str, object] = {
        GENERATION_COST_COLUMN.label: None if why else row.generation_cost_usd,
        _STORED_TITLE + GENERATION_COST_COLUMN.label: why
        or f"{_money(row.generation_cost_usd or 0.0)} for {g.requests if g else 0} generation request(s), as "
        f"litellm priced them when sent (cache hits cost nothing){runs}.",
        JUDGING_COST_COLUMN.label: judging_cost(row),
    }
    pd_fig = row.per_dollar
    if pd_fig is not None:
        ci = f"[{pd_fig.ci_low:,.1f}, {pd_fig.ci_high:,.1f}]"
        return out | {
            PER_DOLLAR_COLUMN.label: round(pd_fig.value, 1),
            ci_label(PER_DOLLAR_COLUMN): ci,
            _STORED_TITLE + PER_DOLLAR_COLUMN.label: f"Pass@5 win rate on non-obviousness in points, per dollar of "
            f"generation ({_money(row.generation_cost_usd or 0.0)}); 95% CI {ci}.",
        }
    if why:
        reason = why
    elif not row.generation_cost_usd:
        reason = "Generation cost nothing (a free model): a figure per dollar is not defined."
    else:
        reason = _WHY_UNSCORED
    return out | {
        PER_DOLLAR_COLUMN.label: None,
        ci_label(PER_DOLLAR_COLUMN): "",
        _STORED_TITLE + PER_DOLLAR_COLUMN.label: reason,
    }


def _scored(row: SummaryRow) -> str:
    """``22/24``, ``1/4 trial`` on a trial's row, and ``22/24 † 2 unjudged`` on an incomplete row; empty for the
    reference rows."""
    p = row.provenance
    if row.row_kind == "reference":
        return ""
    text = f"{p.instances_scored}/{p.instances_expected}" if p.instances_expected else str(p.instances_scored)
    text += f" {TRIAL_MARK}" if p.trial else ""
    return text + (f" {UNJUDGED_MARK} {p.instances_unjudged} unjudged" if p.instances_unjudged else "")


def _failures(row: SummaryRow) -> str:
    """The model's failures and the judges', in words."""
    p = row.provenance
    if row.row_kind == "reference":
        return ""
    parts = []
    if p.generation_failures:
        parts.append(
            f"{p.generation_failures} with no valid generation (the model's; "
            + ("counted as losses)" if p.failures == "paper" else "left out: conditional)")
        )
    if p.missing_candidates:
        parts.append(f"{p.missing_candidates} RQ(s) missing (the model's)")
    if p.instances_unjudged:
        parts.append(f"{p.instances_unjudged} unjudged (a judge's calls failed after their re-ask)")
    return "; ".join(parts) or "none"


def _judge_details(row: SummaryRow) -> str:
    """Per judge: the paper's rules applied to its replies, and its calls that failed after their re-ask."""
    p = row.provenance
    out = []
    for label in p.judge_labels:
        rules = ", ".join(f"{k} {v}" for k, v in p.rule_applications.get(label, {}).items()) or "none"
        failed = ", ".join(f"{k} {v}" for k, v in p.failed_calls.get(label, {}).items()) or "none"
        out.append(f"{label}: rules applied {rules}; failed calls {failed}")
    return " | ".join(out) if row.row_kind == "model" else ""


def headline_flags(rows: Sequence[SummaryRow]) -> list[bool]:
    """Per row, whether it stands for its (model, variant, setting, run): the combined row, or a lone judge's own
    row. A trial and the full run are two runs, each with its own headline row."""

    def key(r: SummaryRow) -> tuple:
        return (r.model, r.prompt_variant, r.setting, r.row_kind, r.subfield, r.provenance.trial)

    sizes = Counter(key(r) for r in rows)
    return [r.judge == COMBINED or sizes[key(r)] == 1 for r in rows]


def _clean_cells(row: SummaryRow) -> dict[str, object]:
    """A row's clean count (the "Clean" column), its hover text, and the reason when it has no clean figures."""
    c, p = row.clean, row.provenance
    if row.row_kind == "reference" or c is None:
        return {
            CLEAN_COLUMN.label: "",
            _CLEAN_TITLE: "The author-anchored RQ has no knowledge cutoff: its figures are over every instance.",
            _CLEAN_WHY: "",
        }
    undated = f"; {c.undated} with an undated source paper left out" if c.undated else ""
    if c.reason is not None:
        return {CLEAN_COLUMN.label: f"none: {c.reason}", _CLEAN_TITLE: c.reason + undated, _CLEAN_WHY: c.reason}
    source = (
        "stated by the submission"
        if p.knowledge_cutoff_source == "submission"
        else (f"from {p.knowledge_cutoff_source}")
    )
    return {
        CLEAN_COLUMN.label: f"{c.instances}/{p.instances_covered}",
        _CLEAN_TITLE: f"{c.instances} of the row's {p.instances_covered} instances have a source paper first "
        f"published after the knowledge cutoff {p.knowledge_cutoff} ({source}){undated}.",
        _CLEAN_WHY: "",
    }


def _clean_figures(row: SummaryRow) -> dict[str, object]:
    """The hidden clean value and CI of every figure column (a reference row keeps its own: it has no cutoff)."""
    figures = row.figures if row.row_kind == "reference" or row.clean is None else row.clean.figures
    out: dict[str, object] = {}
    for col in FIGURE_COLUMNS:
        fig = figures.get(col.metric or "")
        out[CLEAN_PREFIX + col.label] = _value(fig.value, col.percent) if fig else None
        out[CLEAN_PREFIX + ci_label(col)] = _fmt_ci(fig.ci_low, fig.ci_high, col.percent) if fig else ""
    return out


def clean_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The table with every figure its clean value: what the clean-only view filters, sorts and shows. Human
    agreement has none (the annotated pairs are not chosen by date), so it is left empty, with that reason."""
    out = df.copy()
    for col in FIGURE_COLUMNS:
        for label in (col.label, ci_label(col)):
            out[label] = out[CLEAN_PREFIX + label]
    for col in (AGREEMENT_COLUMN, CORRECTED_COLUMN):
        out[col.label] = None
        out[ci_label(col)] = ""
    for col in lc.COLUMNS:
        out[col.label] = None
        if col in lc.WITH_CI:
            out[ci_label(col)] = ""
        out[_STORED_TITLE + col.label] = _WHY_NO_CLEAN_LENGTH
    out[_EMPTY_WHY] = out[_CLEAN_WHY]
    return out


def build_table(
    rows: Iterable[SummaryRow],
    agreement: AgreementMap | None = None,
    corrected: CorrectedMap | None = None,
    lengths: lc.LengthMap | None = None,
) -> pd.DataFrame:
    """Every row and every column (values and their CI columns); filters and choices come after."""
    main = [r for r in rows if r.subfield is None]  # sub-field splits belong to reports, not the main board
    records = []
    for r, headline in zip(main, headline_flags(main)):
        p = r.provenance
        rec: dict[str, object] = {
            "Model": r.model,
            "Type": "reference" if r.row_kind == "reference" else (p.model_type or "unknown"),
            "Prompt variant": r.prompt_variant or "—",
            "Setting": r.setting,
            "Judge": r.judge,
            _KIND: r.row_kind,
            _COMBINE: r.combine or "",
            _HEADLINE: headline,
            _UNJUDGED: p.instances_unjudged,
            _FAILURES: p.failures,
            _TRIAL: p.trial or 0,
            BUNDLE_ID: bundles.row_id(r),
            _MODEL_UPPER: r.model.upper(),
            "Scored": _scored(r),
        }
        for col in FIGURE_COLUMNS:
            fig = r.figures.get(col.metric or "")
            rec[col.label] = _value(fig.value, col.percent) if fig else None
            rec[ci_label(col)] = _fmt_ci(fig.ci_low, fig.ci_high, col.percent) if fig else ""
        cell = (agreement or {}).get((r.model, r.setting, r.judge))
        rec[AGREEMENT_COLUMN.label] = _value(cell.value, True) if cell else None
        rec[ci_label(AGREEMENT_COLUMN)] = _fmt_ci(cell.ci_low, cell.ci_high, True) + f" n={cell.n}" if cell else ""
        rec |= _corrected_cells(r, (corrected or {}).get((r.model, r.setting, r.judge)))
        rec |= lc.cells(r, lengths or {}, _STORED_TITLE)
        rec["Judges"] = ", ".join(p.judge_labels)
        rec["Prompt set"] = ", ".join(f"{ps.name} ({ps.hash[:11]})" for ps in p.prompt_sets)
        rec["Dataset"] = dataset_label(p.dataset_repo, p.dataset_revision, p.dataset_version)
        rec["Instances"] = (
            f"{p.instances_covered}/{p.instances_expected}" if p.instances_expected else str(p.instances_covered)
        )
        rec["Failures"] = _failures(r)
        rec["Judge details"] = _judge_details(r)
        rec["Submitted"] = f"{p.submission_date:%Y-%m-%d}" if p.submission_date else ""
        rec["Contamination"] = _contamination(r)
        rec |= _diversity_cells(r) | _cost_cells(r)
        rec |= _clean_cells(r) | _clean_figures(r) | {_EMPTY_WHY: None}
        records.append(rec)
    columns = table_columns(GROUPS, show_ci=True, clean=True) + list(_HIDDEN) + _CLEAN_HIDDEN
    frame = pd.DataFrame.from_records(records, columns=columns)
    # Text as plain Python objects, one block: pandas moves Arrow-backed text a column at a time, which made every
    # filter, sort and page of a 1,000-row table cost ~150 column copies (benchmarks/space_load.py)
    text = {c: object for c, t in frame.dtypes.items() if isinstance(t, pd.StringDtype)}
    return frame.astype(text).copy()  # the copy joins the columns into blocks by type


_CLEAN_HIDDEN = [
    _CLEAN_TITLE,
    _CLEAN_WHY,
    _EMPTY_WHY,
    *(CLEAN_PREFIX + label for col in FIGURE_COLUMNS for label in (col.label, ci_label(col))),
]


def table_columns(groups: Sequence[str], *, show_ci: bool, clean: bool = False) -> list[str]:
    """The visible column labels for the chosen groups, each CI column right after its figure; ``clean`` adds the
    clean count after the model's columns."""
    out = []
    for col in ALL_COLUMNS:
        if col.group not in groups and col.group != "model" and not (col.headline and "headline" in groups):
            continue
        out.append(col.label)
        if show_ci and col in _WITH_CI:
            out.append(ci_label(col))
    if clean:
        ids = {c.label for c in ID_COLUMNS}
        out.insert(max(i for i, label in enumerate(out) if label in ids) + 1, CLEAN_COLUMN.label)
    return out


@dataclass(frozen=True)
class View:
    """What the user chose: a search string, filters (empty = all), groups, sort, CI display."""

    search: str = ""
    judges: tuple[str, ...] = (COMBINED,)  # "combined" also shows the lone judge of a one-judge run
    settings: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()
    groups: tuple[str, ...] = DEFAULT_GROUPS
    show_ci: bool = True
    sort_by: str | None = None
    ascending: bool = False
    clean_only: bool = False  # every model row's figures over its clean instances, and their count
    trials: bool = False  # False: full runs (the ranking); True: trial runs only, ranked among themselves


def filter_table(df: pd.DataFrame, view: View) -> pd.DataFrame:
    """Rows matching the search (model name, case-insensitive, literal) and every non-empty filter; full runs'
    rows, or with ``view.trials`` trial runs' rows (the reference rows are in both)."""
    return df[filter_mask(df, view)]


def filter_mask(df: pd.DataFrame, view: View) -> pd.Series:
    """``filter_table``'s selection, as a boolean per row of ``df`` (plain arrays: a page's search is a few of these
    over every row, and pandas' per-operation overhead was most of its time)."""

    def among(column: str, chosen: Sequence[str]) -> np.ndarray:
        wanted = set(chosen)
        return np.fromiter((v in wanted for v in df[column].to_numpy()), dtype=bool, count=len(df))

    model_rows = df[_KIND].to_numpy() == "model"
    mask = ~model_rows | ((df[_TRIAL].to_numpy() > 0) == view.trials)
    search = view.search.strip()
    if search:
        # Case-insensitive as pandas' ``str.contains(case=False)`` is (both sides upper-cased), on the names
        # upper-cased once when the table was built. No name holds a search over three times its length, whatever
        # the case mapping (one character becomes at most three), so such a search is not even compared.
        names = df[_MODEL_UPPER].to_numpy()
        longest = max(map(len, names), default=0)
        wanted = search.upper()
        if len(search) > 3 * longest:
            mask &= False
        else:
            mask &= np.fromiter((wanted in name for name in names), dtype=bool, count=len(names))
    if view.judges:
        chosen = among("Judge", view.judges)
        if COMBINED in view.judges:
            chosen |= df[_HEADLINE].to_numpy(dtype=bool)
        mask &= chosen
    if view.settings:
        mask &= among("Setting", view.settings)
    if view.variants:
        mask &= ~model_rows | among("Prompt variant", view.variants)
    if view.model_types:
        mask &= ~model_rows | among("Type", view.model_types)
    return pd.Series(mask, index=df.index, dtype=bool)


# An order of the rows, as ``sort_table`` sorts them: (the columns, each one's direction)
SortKey = tuple[tuple[str, ...], tuple[bool, ...]]


def sort_key(df: pd.DataFrame, by: str | None, ascending: bool) -> SortKey:
    """How ``sort_table`` orders ``df``: on a column (missing figures last); by default setting, then Best@5
    non-obviousness (win % where no row has it), then model."""
    if not by:
        by = "Best@5 non-obviousness" if df["Best@5 non-obviousness"].notna().any() else "Win % non-obviousness"
        return ("Setting", by, "Model"), (False, False, True)
    if by not in df.columns:
        raise ValueError(f"no column {by!r} to sort by")
    return (by,), (ascending,)


def sort_table(df: pd.DataFrame, by: str | None, ascending: bool) -> pd.DataFrame:
    """Sort on a column (missing figures last); default order: setting, then Best@5 non-obviousness."""
    return ordered(df, sort_key(df, by, ascending))


def ordered(df: pd.DataFrame, key: SortKey) -> pd.DataFrame:
    """``df`` in the order ``key`` names. The sort is stable, so the rows a filter keeps from ``ordered(df, key)``
    are in the order ``ordered`` gives the filtered rows: a table's order can be computed once and filtered after."""
    columns, directions = key
    return df.sort_values(list(columns), ascending=list(directions), na_position="last", kind="stable")


def render(df: pd.DataFrame, view: View) -> pd.DataFrame:
    """The table the page shows, as data: filtered, sorted, the chosen columns only (figures and CI apart)."""
    df = clean_frame(df) if view.clean_only else df
    out = sort_table(filter_table(df, view), view.sort_by, view.ascending)
    return out[table_columns(view.groups, show_ci=view.show_ci, clean=view.clean_only)].reset_index(drop=True)


# --------------------------------------------------------------------------
# The page's cells
# --------------------------------------------------------------------------

_BY_LABEL = {c.label: c for c in (*ALL_COLUMNS, CLEAN_COLUMN)}
# Shown under the model's name rather than as columns of their own: they are short and rarely compared.
_IN_MODEL_CELL = ("Type", "Prompt variant")
MISSING = "—"
_WHY_NOT_IN_SETTING = (
    "Best@5 comes from standalone judging only: the comparative judge sees the author-anchored RQ and the five "
    "together, and is read as win/tie/lose."
)
_WHY_REFERENCE = (
    "The author-anchored RQ is the yardstick: win/tie/lose, Overlap@5 and human agreement compare the models with it."
)
_WHY_NO_ANNOTATION = "No human annotation covers this row yet (see the Annotate tab)."
_WHY_UNSCORED = "No instance had this figure scored for this row (the judge's replies for it failed or are missing)."
_WHY_NO_CLEAN_AGREEMENT = (
    "Clean only: human agreement has no clean value (the annotated pairs are not chosen by publication date)."
)
_WHY_NO_CLEAN_LENGTH = (
    "Clean only: the length-controlled figures have no clean value (each judge's length preference is fitted over "
    "every instance it scored)."
)
_WHY_NO_CLEAN_CORRECTED = (
    "Clean only: the expert-corrected figure has no clean value (the annotated pairs are not chosen by publication "
    "date)."
)


def missing_reason(col: Column, row_kind: str, setting: str, clean_why: str | None = None) -> str:
    """Why a figure cell is empty for a row of this kind and setting: by design, or for want of data.

    clean_why: None outside the clean-only view; there, why the row has no clean figures ("" when it has).
    """
    spec = METRICS.get(col.metric or "")
    if spec is not None and setting not in spec.settings:
        return _WHY_NOT_IN_SETTING
    if row_kind == "reference":
        return _WHY_REFERENCE
    if col is AGREEMENT_COLUMN:
        return _WHY_NO_ANNOTATION if clean_why is None else _WHY_NO_CLEAN_AGREEMENT
    if col is CORRECTED_COLUMN:
        return _WHY_NO_LABELS if clean_why is None else _WHY_NO_CLEAN_CORRECTED
    if clean_why:
        return f"No clean figures for this row: {clean_why}."
    return _WHY_UNSCORED


_CORRECTED_HEADER = (
    "The judge's Pass@5 win rate against the author-anchored RQ (comparative non-obviousness), corrected with the "
    "annotators' picks by prediction-powered inference (Angelopoulos et al., 2023): the judge's rate on every "
    "instance plus the mean annotator-minus-judge difference on the annotated ones; higher is better. Grey: the 95% "
    f"normal interval. Fewer than {MIN_EXPERT_LABELS} annotated instances: {TOO_FEW_LABELS}."
)


_STORED_HEADERS = {
    **lc.HEADERS,
    SIMILARITY_COLUMN.label: "Mean cosine similarity of an instance's RQs over their pairs (10 for five), averaged "
    "over instances, embedded once with all-MiniLM-L6-v2 and stored with the results; lower is more diverse. Over "
    "every instance, also in the clean view. Grey: the 95% cluster-bootstrap CI over source papers.",
    NEAR_DUPLICATES_COLUMN.label: "Pairs of an instance's RQs at cosine 0.8 or above (near-duplicates; of 10 for "
    "five), averaged over instances; lower is more diverse. Grey: the 95% cluster-bootstrap CI over source papers.",
    GENERATION_COST_COLUMN.label: "Dollars of generating the submission's RQs, from the call log (litellm's price "
    "per request when sent; a cache hit costs nothing); empty when unknown, never $0 for unknown.",
    PER_DOLLAR_COLUMN.label: "The Pass@5 win rate on non-obviousness (in the row's setting) in percentage points per "
    "dollar of generation; higher is better. Grey: the 95% CI divided by the cost.",
}


def _header_title(col: Column) -> str:
    if col.label in _STORED_HEADERS:
        return _STORED_HEADERS[col.label]
    if col is CORRECTED_COLUMN:
        return _CORRECTED_HEADER
    if col is LABELS_COLUMN:
        return "Annotated instances behind the expert-corrected figure (and the annotators' picks on them)."
    spec = METRICS.get(col.metric or "")
    what = spec.label if spec is not None else col.label
    if col.higher_is_better is None:
        direction = ""
    else:
        direction = "; higher is better" if col.higher_is_better else "; lower is better (broader)"
    return f"{what}{direction}. Grey: the 95% cluster-bootstrap CI over source papers."


def _number(v: float, percent: bool) -> str:
    return f"{v:.1f}" if percent else f"{v:.2f}"


def _corrected_cell(rec: Mapping[str, object], show_ci: bool) -> Cell:
    """The expert-corrected figure with its interval, the raw rate and the rectifier on hover; "too few labels"
    (greyed, the threshold on hover) where the annotated instances are too few."""
    title = str(rec.get(_CORRECTED_TITLE) or "")
    if str(rec[LABELS_COLUMN.label]).endswith(TOO_FEW_LABELS) and rec.get(_EMPTY_WHY) is None:
        return Cell(TOO_FEW_LABELS, title=title, kind="missing")
    cell = _figure_cell(CORRECTED_COLUMN, rec, show_ci)
    if cell.kind == "missing" and rec.get(_EMPTY_WHY) is None:
        return Cell(MISSING, title=title or cell.title, kind="missing")
    return cell if cell.kind == "missing" else Cell(cell.text, note=cell.note, title=title, kind="num")


def _stored_cell(col: Column, rec: Mapping[str, object], show_ci: bool) -> Cell:
    """A diversity or cost cell: its value (and CI), its hover text; a dash with the reason when it is empty."""
    v, title = rec[col.label], str(rec[_STORED_TITLE + col.label])
    if v is None or pd.isna(v):
        return Cell(MISSING, title=title, kind="missing")
    if col is GENERATION_COST_COLUMN:
        return Cell(_money(float(v)), title=title, kind="num")
    ci = str(rec.get(ci_label(col)) or "")
    digits = 3 if col is SIMILARITY_COLUMN else 1 if col is PER_DOLLAR_COLUMN or col in lc.COLUMNS else 2
    return Cell(f"{float(v):,.{digits}f}", note=ci if show_ci else "", title=title, kind="num")


def _figure_cell(col: Column, rec: Mapping[str, object], show_ci: bool) -> Cell:
    v = rec[col.label]
    if v is None or pd.isna(v):
        return Cell(
            MISSING,
            title=missing_reason(col, str(rec[_KIND]), str(rec["Setting"]), rec.get(_EMPTY_WHY)),
            kind="missing",
        )
    ci = str(rec[ci_label(col)])
    return Cell(_number(float(v), col.percent), note=ci if show_ci else "", title=f"95% CI {ci}", kind="num")


def _rates_cell(cols: Sequence[Column], rec: Mapping[str, object]) -> Cell:
    """Win / tie / lose of one dimension in one cell; each rate's CI on hover."""
    vals = [rec[c.label] for c in cols]
    if all(v is None or pd.isna(v) for v in vals):
        return Cell(
            MISSING,
            title=missing_reason(cols[0], str(rec[_KIND]), str(rec["Setting"]), rec.get(_EMPTY_WHY)),
            kind="missing",
        )
    text = " / ".join(MISSING if v is None or pd.isna(v) else f"{float(v):.0f}" for v in vals)
    title = "; ".join(
        f"{part} {_number(float(v), True)}% {rec[ci_label(c)]}"
        for part, c, v in zip(("win", "tie", "lose"), cols, vals)
        if v is not None and not pd.isna(v)
    )
    return Cell(text, title=f"{title} (95% CIs)", kind="num")


def _plan(view: View) -> list[Column | tuple[Column, Column, Column]]:
    """The page's columns in order: one Column each, or (win, tie, lose) of a dimension merged into one."""
    labels = [c for c in table_columns(view.groups, show_ci=False, clean=view.clean_only) if c not in _IN_MODEL_CELL]
    cols = [_BY_LABEL[label] for label in labels]
    metrics = {c.metric: c for c in cols if c.metric}
    plan: list[Column | tuple[Column, Column, Column]] = []
    merged: set[str] = set()
    for c in cols:
        if c.label in merged:
            continue
        if c.metric and c.metric.startswith("win_"):
            dim = c.metric.removeprefix("win_")
            tie, lose = metrics.get(f"tie_{dim}"), metrics.get(f"lose_{dim}")
            if tie is not None and lose is not None:
                plan.append((c, tie, lose))
                merged |= {tie.label, lose.label}
                continue
        plan.append(c)
    return plan


def _rates_header(cols: Sequence[Column]) -> Header:
    dim = (cols[0].metric or "").removeprefix("win_").replace("_", " ").replace("non obviousness", "non-obviousness")
    return Header(
        f"Win / tie / lose % {dim}",
        kind="num",
        title=f"Share of instances where the best of the five RQs beats, ties with or loses to the "
        f"author-anchored RQ on {dim} (Pass@5 rates); hover a cell for the 95% CIs.",
    )


_WHY_INCOMPLETE = (
    "Incomplete: a judge's calls failed (after their re-ask) on {n} instance(s), which this row's figures lack; "
    "rerunning the judge with --retry-failed asks them again."
)
_WHY_TRIAL = (
    "A trial: it judged only the first {n} instance(s) of the dataset revision (--limit {n}), so its figures are "
    "over those, not the release. Trials are listed apart and never ranked beside full runs."
)
_ID_TITLES = {
    "Judge": "The judge's label; 'combined' pools a row's judges (hover it for the rule and the judges).",
    "Scored": "Instances of the dataset revision this row scored, of all of them. A failed generation counts as "
    "scored (a loss); an instance a judge's calls failed on does not, and is marked.",
    "Setting": "standalone: one RQ per judge call; comparative: the author-anchored RQ and the five in one call.",
    "Prompt variant": "The generation prompt: original, revised, or the submitter's own (custom).",
    CLEAN_COLUMN.label: "Clean instances: those whose source paper was first published after the model's knowledge "
    "cutoff, of the row's instances; this view's figures are over them. Undated papers are left out.",
}
_CLEAN_CAPTION = (
    "Clean only: each model row's figures are over its clean instances, those whose source paper was first published "
    "after the model's knowledge cutoff (the Clean column: how many, of the row's). The author-anchored reference rows "
    "are over every instance."
)


def _clean_cell(rec: Mapping[str, object]) -> Cell:
    """The row's clean count, with its cutoff on hover; "—" with the reason when it has no clean figures."""
    if rec[_KIND] == "reference":
        return Cell("", title=str(rec[_CLEAN_TITLE]))
    if rec[_CLEAN_WHY]:
        return Cell(MISSING, title=f"No clean figures for this row: {rec[_CLEAN_WHY]}.", kind="missing")
    return Cell(str(rec[CLEAN_COLUMN.label]), title=str(rec[_CLEAN_TITLE]), kind="num")


def _model_cell(rec: Mapping[str, object]) -> Cell:
    """The model's name, with its type and prompt variant (and "demo model") in small print."""
    if rec[_KIND] == "reference":
        return Cell(
            str(rec["Model"]),
            note="reference",
            title="The author-anchored RQ, scored by the same judges",
            kind="stacked",
        )
    note = [str(rec["Type"]), f"{rec['Prompt variant']} prompt"]
    if is_demo_model(str(rec["Model"])):
        note.append("demo model")
    title = ""
    if rec[_TRIAL]:
        note.append(f"trial: first {rec[_TRIAL]}")
        title = _WHY_TRIAL.format(n=rec[_TRIAL])
    return Cell(str(rec["Model"]), note=" · ".join(note), title=title, kind="stacked")


def shown_rows(df: pd.DataFrame, view: View, order: Callable[[SortKey], pd.Index] | None = None) -> pd.DataFrame:
    """Every row ``view`` selects, in its order (clean figures in the clean view): what the page's table pages through.

    ``order``: the index of the whole of ``df`` in a sort key's order, for a caller that keeps it per version of the
    table (one sort of every row per key, then only a filter per view; the same rows in the same order, since the
    sort is stable). The clean view sorts its own rows."""
    if view.clean_only:
        df = clean_frame(df)
        return sort_table(filter_table(df, view), view.sort_by, view.ascending)
    mask = filter_mask(df, view)
    key = sort_key(df[mask], view.sort_by, view.ascending)
    if order is None:
        return ordered(df[mask], key)
    index = order(key)
    return df.loc[index[mask.loc[index].to_numpy()]]


def display(
    df: pd.DataFrame, view: View, *, rows: slice = slice(None), shown: pd.DataFrame | None = None
) -> tuple[list[Header], list[list[Cell]], str]:
    """The page's table for ``view``: headers, cells (figures with their CIs, reasons for empty cells) and a caption.

    ``rows`` picks a page of the selected rows (all by default); ``shown`` is ``shown_rows(df, view)`` when the
    caller has it already. The caption speaks for the cells on that page."""
    shown = shown_rows(df, view) if shown is None else shown
    shown = shown.iloc[rows]
    plan = _plan(view)
    headers = []
    for item in plan:
        if isinstance(item, tuple):
            headers.append(_rates_header(item))
        elif item.metric or item in (AGREEMENT_COLUMN, CORRECTED_COLUMN, LABELS_COLUMN, *_STORED):
            headers.append(Header(item.label, title=_header_title(item), kind="num"))
        else:
            headers.append(Header(item.label, title=_ID_TITLES.get(item.label, "")))
    rows: list[list[Cell]] = []
    reasons: dict[str, None] = {}
    rules: dict[str, None] = {}
    incomplete = False
    # one object array, not ``to_dict("records")``: pandas reads a sliced 86-column frame cell by cell (three
    # quarters of a page's time); an object array holds the same Python values (float, int, bool, str, None)
    names = list(shown.columns)
    for rec in (dict(zip(names, values)) for values in shown.to_numpy(dtype=object)):
        cells = []
        for item in plan:
            if isinstance(item, tuple):
                cell = _rates_cell(item, rec)
            elif item is CORRECTED_COLUMN:
                cell = _corrected_cell(rec, view.show_ci)
            elif item in _STORED:
                cell = _stored_cell(item, rec, view.show_ci)
            elif item.metric or item is AGREEMENT_COLUMN:
                cell = _figure_cell(item, rec, view.show_ci)
            elif item is CLEAN_COLUMN:
                cell = _clean_cell(rec)
            elif item.label == "Model":
                cell = _model_cell(rec)
            elif item.label == "Scored":
                n = int(rec[_UNJUDGED] or 0)
                text, _, rest = str(rec["Scored"]).partition(f" {UNJUDGED_MARK}")
                text = text.removesuffix(f" {TRIAL_MARK}")
                notes = ([TRIAL_MARK] if rec[_TRIAL] else []) + ([f"{UNJUDGED_MARK}{rest}"] if n else [])
                titles = ([_WHY_TRIAL.format(n=rec[_TRIAL])] if rec[_TRIAL] else []) + (
                    [_WHY_INCOMPLETE.format(n=n)] if n else []
                )
                cell = Cell(text, note=" ".join(notes), kind="stacked", title=" ".join(titles))
                if n:
                    incomplete = True
            elif item.label == "Judge":
                judges = str(rec["Judges"]).split(", ")
                demo = any(is_demo_model(j) for j in judges)
                rule = str(rec[_COMBINE])
                cell = Cell(
                    str(rec["Judge"]),
                    note="demo" if demo else "",
                    title=describe_combine_rule(rule, judges) if rule else "",
                )
            else:
                cell = Cell(str(rec[item.label] if rec[item.label] is not None else ""))
            if cell.kind == "missing":
                reasons[cell.title] = None
            cells.append(cell)
        if rec[_COMBINE]:
            rules[str(rec[_COMBINE])] = None
        rows.append(cells)
    lines = ([_CLEAN_CAPTION] if view.clean_only else []) + [f"{MISSING} {why}" for why in reasons]
    lines += [f"How 'combined' is made: {describe_combine_rule(rule)}." for rule in rules]
    if incomplete:
        lines.append(f"{UNJUDGED_MARK} Incomplete row: a judge's calls failed on some instances (hover the count).")
    accounting = sorted({str(f) for f in shown[_FAILURES]}) if len(shown) else []
    lines += [f"Failures: {describe_failures(f)}." for f in accounting]
    lines.append(_trials_line(df, view))
    return headers, rows, "\n".join(line for line in lines if line)


def _trials_line(df: pd.DataFrame, view: View) -> str:
    """The caption's word on trial runs: what the trial view shows, or how many the ranking leaves out."""
    trials = df[(df[_KIND] == "model") & (df[_TRIAL] > 0) & df[_HEADLINE].astype(bool)] if len(df) else df
    if view.trials:
        return (
            "Trial runs: each judged only the first N instances of the dataset revision (--limit N); their "
            "figures are over those instances, not the release, so they are ranked among themselves only."
        )
    if not len(trials):
        return ""
    return (
        f"{len(trials)} trial run row(s) not shown: trials judge only the first instances of the revision and "
        'never rank beside full runs; choose "trial runs" under Runs (More columns, filters and intervals) to '
        "see them."
    )


def to_csv(df: pd.DataFrame) -> bytes:
    """The shown table as CSV (UTF-8), for the download button."""
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def choices(df: pd.DataFrame) -> dict[str, list[str]]:
    """Filter choices present in the data, for the dropdowns."""
    models = df[df[_KIND] == "model"]
    return {
        "judges": sorted(df["Judge"].unique(), key=lambda j: (j != COMBINED, j)),
        "settings": sorted(df["Setting"].unique()),
        "variants": sorted(models["Prompt variant"].unique()),
        "model_types": sorted(models["Type"].unique()),
    }


def numeric_columns() -> list[str]:
    return [c.label for c in _WITH_CI]


__all__ = [
    "ALL_COLUMNS",
    "COMBINED",
    "GROUPS",
    "REFERENCE_MODEL",
    "AgreementCell",
    "View",
    "build_table",
    "choices",
    "clean_frame",
    "display",
    "filter_table",
    "render",
    "sort_table",
    "table_columns",
    "to_csv",
]
