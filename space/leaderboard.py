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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rqbench.evaluate.criteria import CRITERIA, Column
from rqbench.evaluate.judge_board.expert_corrected import TOO_FEW_LABELS, ExpertCorrectedRate
from rqbench.evaluate.metrics.summary_row import COMBINED, REFERENCE_MODEL, SummaryRow
from rqbench.records import dataset_label
from rqbench.space import bundles
from rqbench.space import length_columns as lc

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
STORED: tuple[Column, ...] = (*lc.COLUMNS, *DIVERSITY_COLUMNS, GENERATION_COST_COLUMN, PER_DOLLAR_COLUMN)
CI_SUFFIX = " 95% CI"
# Hidden helper columns that filters read; never shown.
KIND = "_row_kind"
# True on the row that stands for its (model, variant, setting): the combined row, or a lone judge's own row
# (one judge gives no combined row), so the "combined" filter shows every model once.
HEADLINE = "_headline"
# The combine rule of a combined row (empty otherwise), for the Judge cell's hover text and the caption.
COMBINE = "_combine"
# Instances a judge of the row left unjudged (the row is incomplete when above 0), and the failure accounting.
UNJUDGED = "_unjudged"
FAILURES = "_failures"
# A trial row's limit N (it judged the revision's first N instances; 0 on a full run's row): trials are their
# own view, never ranked beside full runs (``View.trials``).
TRIAL = "_trial"
# The expert-corrected cell's hover text: the raw rate and the rectifier behind the figure, or why there is none.
CORRECTED_TITLE = "_corrected_title"
# The row's id in its reproduction bundle's address (``bundles.row_id``; empty on reference rows).
BUNDLE_ID = "_bundle"
# The model's name upper-cased, what the search compares (``filter_mask``).
_MODEL_UPPER = "_model_upper"
# Per stored column (diversity, cost): the cell's hover text, which on an empty cell is the reason it is empty.
STORED_TITLE = "_title: "
_HIDDEN = (
    KIND,
    HEADLINE,
    COMBINE,
    UNJUDGED,
    FAILURES,
    TRIAL,
    CORRECTED_TITLE,
    BUNDLE_ID,
    _MODEL_UPPER,
    *(STORED_TITLE + c.label for c in STORED),
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
CLEAN_TITLE = "_clean_title"
CLEAN_WHY = "_clean_why"
EMPTY_WHY = "_empty_why"  # None, except in the clean view: why a model row has no clean figures ("" if it has)


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
WHY_NO_LABELS = "No expert label covers this row yet (see the Annotate tab)."


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
        return empty | {CORRECTED_TITLE: WHY_REFERENCE}
    if row.setting != "comparative":
        return empty | {CORRECTED_TITLE: _WHY_CORRECTED_STANDALONE}
    if row.judge == COMBINED:
        return empty | {CORRECTED_TITLE: _WHY_CORRECTED_COMBINED}
    if c is None or c.labelled == 0:
        return empty | {CORRECTED_TITLE: WHY_NO_LABELS}
    labels = f"{c.labelled} ({c.labels} picks)"
    if c.value is None or c.ci_low is None or c.ci_high is None:
        return empty | {LABELS_COLUMN.label: f"{labels}: {TOO_FEW_LABELS}", CORRECTED_TITLE: _too_few(c) + "."}
    raw = "" if c.judge_rate is None else f"raw {100 * c.judge_rate:.1f}% over {c.judged} instances"
    return {
        CORRECTED_COLUMN.label: _value(c.value, True),
        ci_label(CORRECTED_COLUMN): _fmt_ci(c.ci_low, c.ci_high, True),
        LABELS_COLUMN.label: labels,
        CORRECTED_TITLE: f"{raw}, {100 * (c.rectifier or 0.0):+.1f} points from {c.labelled} expert-labelled "
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
            out |= {col.label: None, ci_label(col): "", STORED_TITLE + col.label: why or _WHY_NO_PAIRS}
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
            STORED_TITLE + col.label: f"{what}, over {d.instances} instances; 95% CI {ci} (cluster bootstrap "
            "over source papers); lower is more diverse.",
        }
    return out


def fmt_money(cost: float) -> str:
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
        return f"Unknown: {'; '.join(parts)} (the {g.requests} priced request(s) came to {fmt_money(g.cost_usd)})."
    return ""


def _cost_cells(row: SummaryRow) -> dict[str, object]:
    """Generation dollars (sortable), win points per dollar of them, and judging cost, each with its hover text."""
    g = row.provenance.generation_cost
    why = _generation_why(row)
    runs = f"; call-log run(s) {', '.join(g.run_ids)}" if g is not None and g.run_ids else ""
    out: dict[str, object] = {
        GENERATION_COST_COLUMN.label: None if why else row.generation_cost_usd,
        STORED_TITLE + GENERATION_COST_COLUMN.label: why
        or f"{fmt_money(row.generation_cost_usd or 0.0)} for {g.requests if g else 0} generation request(s), as "
        f"litellm priced them when sent (cache hits cost nothing){runs}.",
        JUDGING_COST_COLUMN.label: judging_cost(row),
    }
    pd_fig = row.per_dollar
    if pd_fig is not None:
        ci = f"[{pd_fig.ci_low:,.1f}, {pd_fig.ci_high:,.1f}]"
        return out | {
            PER_DOLLAR_COLUMN.label: round(pd_fig.value, 1),
            ci_label(PER_DOLLAR_COLUMN): ci,
            STORED_TITLE + PER_DOLLAR_COLUMN.label: f"Pass@5 win rate on non-obviousness in points, per dollar of "
            f"generation ({fmt_money(row.generation_cost_usd or 0.0)}); 95% CI {ci}.",
        }
    if why:
        reason = why
    elif not row.generation_cost_usd:
        reason = "Generation cost nothing (a free model): a figure per dollar is not defined."
    else:
        reason = WHY_UNSCORED
    return out | {
        PER_DOLLAR_COLUMN.label: None,
        ci_label(PER_DOLLAR_COLUMN): "",
        STORED_TITLE + PER_DOLLAR_COLUMN.label: reason,
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
            CLEAN_TITLE: "The author-anchored RQ has no knowledge cutoff: its figures are over every instance.",
            CLEAN_WHY: "",
        }
    undated = f"; {c.undated} with an undated source paper left out" if c.undated else ""
    if c.reason is not None:
        return {CLEAN_COLUMN.label: f"none: {c.reason}", CLEAN_TITLE: c.reason + undated, CLEAN_WHY: c.reason}
    source = (
        "stated by the submission"
        if p.knowledge_cutoff_source == "submission"
        else (f"from {p.knowledge_cutoff_source}")
    )
    return {
        CLEAN_COLUMN.label: f"{c.instances}/{p.instances_covered}",
        CLEAN_TITLE: f"{c.instances} of the row's {p.instances_covered} instances have a source paper first "
        f"published after the knowledge cutoff {p.knowledge_cutoff} ({source}){undated}.",
        CLEAN_WHY: "",
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
        out[STORED_TITLE + col.label] = WHY_NO_CLEAN_LENGTH
    out[EMPTY_WHY] = out[CLEAN_WHY]
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
            KIND: r.row_kind,
            COMBINE: r.combine or "",
            HEADLINE: headline,
            UNJUDGED: p.instances_unjudged,
            FAILURES: p.failures,
            TRIAL: p.trial or 0,
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
        rec |= lc.cells(r, lengths or {}, STORED_TITLE)
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
        rec |= _clean_cells(r) | _clean_figures(r) | {EMPTY_WHY: None}
        records.append(rec)
    columns = table_columns(GROUPS, show_ci=True, clean=True) + list(_HIDDEN) + _CLEAN_HIDDEN
    frame = pd.DataFrame.from_records(records, columns=columns)
    # Text as plain Python objects, one block: pandas moves Arrow-backed text a column at a time, which made every
    # filter, sort and page of a 1,000-row table cost ~150 column copies (benchmarks/space_load.py)
    text = {c: object for c, t in frame.dtypes.items() if isinstance(t, pd.StringDtype)}
    return frame.astype(text).copy()  # the copy joins the columns into blocks by type


_CLEAN_HIDDEN = [
    CLEAN_TITLE,
    CLEAN_WHY,
    EMPTY_WHY,
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

    model_rows = df[KIND].to_numpy() == "model"
    mask = ~model_rows | ((df[TRIAL].to_numpy() > 0) == view.trials)
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
            chosen |= df[HEADLINE].to_numpy(dtype=bool)
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

BY_LABEL = {c.label: c for c in (*ALL_COLUMNS, CLEAN_COLUMN)}
WHY_REFERENCE = (
    "The author-anchored RQ is the yardstick: win/tie/lose, Overlap@5 and human agreement compare the models with it."
)
WHY_UNSCORED = "No instance had this figure scored for this row (the judge's replies for it failed or are missing)."
WHY_NO_CLEAN_LENGTH = (
    "Clean only: the length-controlled figures have no clean value (each judge's length preference is fitted over "
    "every instance it scored)."
)


def to_csv(df: pd.DataFrame) -> bytes:
    """The shown table as CSV (UTF-8), for the download button."""
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode("utf-8")


def choices(df: pd.DataFrame) -> dict[str, list[str]]:
    """Filter choices present in the data, for the dropdowns."""
    models = df[df[KIND] == "model"]
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
    "filter_table",
    "render",
    "sort_table",
    "table_columns",
    "to_csv",
]
