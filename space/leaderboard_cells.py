"""The leaderboard as shown: each cell's text, each column's header with its meaning, the reason a cell is empty,
and the rows a view shows. ``leaderboard.py`` builds the table and its views; this module only renders them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from rqbench.demo import is_demo_model
from rqbench.evaluate.criteria import METRICS, Column
from rqbench.evaluate.judge_board.expert_corrected import MIN_EXPERT_LABELS, TOO_FEW_LABELS
from rqbench.evaluate.metrics.metric import describe_combine_rule, describe_failures
from rqbench.space import length_columns as lc
from rqbench.space.html_table import Cell, Header
from rqbench.space.leaderboard import (
    AGREEMENT_COLUMN,
    BY_LABEL,
    CLEAN_COLUMN,
    CLEAN_TITLE,
    CLEAN_WHY,
    COMBINE,
    CORRECTED_COLUMN,
    CORRECTED_TITLE,
    EMPTY_WHY,
    FAILURES,
    GENERATION_COST_COLUMN,
    HEADLINE,
    KIND,
    LABELS_COLUMN,
    NEAR_DUPLICATES_COLUMN,
    PER_DOLLAR_COLUMN,
    SIMILARITY_COLUMN,
    STORED,
    STORED_TITLE,
    TRIAL,
    TRIAL_MARK,
    UNJUDGED,
    UNJUDGED_MARK,
    WHY_NO_LABELS,
    WHY_REFERENCE,
    WHY_UNSCORED,
    SortKey,
    View,
    ci_label,
    clean_frame,
    filter_mask,
    filter_table,
    fmt_money,
    ordered,
    sort_key,
    sort_table,
    table_columns,
)

# Shown under the model's name rather than as columns of their own: they are short and rarely compared.
_IN_MODEL_CELL = ("Type", "Prompt variant")

MISSING = "—"

_WHY_NOT_IN_SETTING = (
    "Best@5 comes from standalone judging only: the comparative judge sees the author-anchored RQ and the five "
    "together, and is read as win/tie/lose."
)

_WHY_NO_ANNOTATION = "No human annotation covers this row yet (see the Annotate tab)."

_WHY_NO_CLEAN_AGREEMENT = (
    "Clean only: human agreement has no clean value (the annotated pairs are not chosen by publication date)."
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
        return WHY_REFERENCE
    if col is AGREEMENT_COLUMN:
        return _WHY_NO_ANNOTATION if clean_why is None else _WHY_NO_CLEAN_AGREEMENT
    if col is CORRECTED_COLUMN:
        return WHY_NO_LABELS if clean_why is None else _WHY_NO_CLEAN_CORRECTED
    if clean_why:
        return f"No clean figures for this row: {clean_why}."
    return WHY_UNSCORED


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
    title = str(rec.get(CORRECTED_TITLE) or "")
    if str(rec[LABELS_COLUMN.label]).endswith(TOO_FEW_LABELS) and rec.get(EMPTY_WHY) is None:
        return Cell(TOO_FEW_LABELS, title=title, kind="missing")
    cell = _figure_cell(CORRECTED_COLUMN, rec, show_ci)
    if cell.kind == "missing" and rec.get(EMPTY_WHY) is None:
        return Cell(MISSING, title=title or cell.title, kind="missing")
    return cell if cell.kind == "missing" else Cell(cell.text, note=cell.note, title=title, kind="num")


def _stored_cell(col: Column, rec: Mapping[str, object], show_ci: bool) -> Cell:
    """A diversity or cost cell: its value (and CI), its hover text; a dash with the reason when it is empty."""
    v, title = rec[col.label], str(rec[STORED_TITLE + col.label])
    if v is None or pd.isna(v):
        return Cell(MISSING, title=title, kind="missing")
    if col is GENERATION_COST_COLUMN:
        return Cell(fmt_money(float(v)), title=title, kind="num")
    ci = str(rec.get(ci_label(col)) or "")
    digits = 3 if col is SIMILARITY_COLUMN else 1 if col is PER_DOLLAR_COLUMN or col in lc.COLUMNS else 2
    return Cell(f"{float(v):,.{digits}f}", note=ci if show_ci else "", title=title, kind="num")


def _figure_cell(col: Column, rec: Mapping[str, object], show_ci: bool) -> Cell:
    v = rec[col.label]
    if v is None or pd.isna(v):
        return Cell(
            MISSING,
            title=missing_reason(col, str(rec[KIND]), str(rec["Setting"]), rec.get(EMPTY_WHY)),
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
            title=missing_reason(cols[0], str(rec[KIND]), str(rec["Setting"]), rec.get(EMPTY_WHY)),
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
    cols = [BY_LABEL[label] for label in labels]
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
    if rec[KIND] == "reference":
        return Cell("", title=str(rec[CLEAN_TITLE]))
    if rec[CLEAN_WHY]:
        return Cell(MISSING, title=f"No clean figures for this row: {rec[CLEAN_WHY]}.", kind="missing")
    return Cell(str(rec[CLEAN_COLUMN.label]), title=str(rec[CLEAN_TITLE]), kind="num")


def _model_cell(rec: Mapping[str, object]) -> Cell:
    """The model's name, with its type and prompt variant (and "demo model") in small print."""
    if rec[KIND] == "reference":
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
    if rec[TRIAL]:
        note.append(f"trial: first {rec[TRIAL]}")
        title = _WHY_TRIAL.format(n=rec[TRIAL])
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
        elif item.metric or item in (AGREEMENT_COLUMN, CORRECTED_COLUMN, LABELS_COLUMN, *STORED):
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
            elif item in STORED:
                cell = _stored_cell(item, rec, view.show_ci)
            elif item.metric or item is AGREEMENT_COLUMN:
                cell = _figure_cell(item, rec, view.show_ci)
            elif item is CLEAN_COLUMN:
                cell = _clean_cell(rec)
            elif item.label == "Model":
                cell = _model_cell(rec)
            elif item.label == "Scored":
                n = int(rec[UNJUDGED] or 0)
                text, _, rest = str(rec["Scored"]).partition(f" {UNJUDGED_MARK}")
                text = text.removesuffix(f" {TRIAL_MARK}")
                notes = ([TRIAL_MARK] if rec[TRIAL] else []) + ([f"{UNJUDGED_MARK}{rest}"] if n else [])
                titles = ([_WHY_TRIAL.format(n=rec[TRIAL])] if rec[TRIAL] else []) + (
                    [_WHY_INCOMPLETE.format(n=n)] if n else []
                )
                cell = Cell(text, note=" ".join(notes), kind="stacked", title=" ".join(titles))
                if n:
                    incomplete = True
            elif item.label == "Judge":
                judges = str(rec["Judges"]).split(", ")
                demo = any(is_demo_model(j) for j in judges)
                rule = str(rec[COMBINE])
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
        if rec[COMBINE]:
            rules[str(rec[COMBINE])] = None
        rows.append(cells)
    lines = ([_CLEAN_CAPTION] if view.clean_only else []) + [f"{MISSING} {why}" for why in reasons]
    lines += [f"How 'combined' is made: {describe_combine_rule(rule)}." for rule in rules]
    if incomplete:
        lines.append(f"{UNJUDGED_MARK} Incomplete row: a judge's calls failed on some instances (hover the count).")
    accounting = sorted({str(f) for f in shown[FAILURES]}) if len(shown) else []
    lines += [f"Failures: {describe_failures(f)}." for f in accounting]
    lines.append(_trials_line(df, view))
    return headers, rows, "\n".join(line for line in lines if line)


def _trials_line(df: pd.DataFrame, view: View) -> str:
    """The caption's word on trial runs: what the trial view shows, or how many the ranking leaves out."""
    trials = df[(df[KIND] == "model") & (df[TRIAL] > 0) & df[HEADLINE].astype(bool)] if len(df) else df
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
