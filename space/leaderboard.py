"""The leaderboard table: summary rows in, a filtered, sorted, column-chosen pandas frame out.

Pure functions only. Every figure comes from ``rqbench.evaluate.summary``
(``summarize`` over the stored results files); this module only lays them out:
one row per (model, prompt variant, judge setting, judge), columns in groups
(novelty, narrowness, overlap, human agreement, provenance), and a 95% CI
column beside each figure. The author-anchored reference rows stay visible
whatever the model filters say, since they are the yardstick.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd
from rqbench.evaluate.metrics import METRICS
from rqbench.evaluate.summary import COMBINED, REFERENCE_MODEL, SummaryRow

Group = Literal["model", "novelty", "narrowness", "overlap", "human agreement", "provenance"]
GROUPS: tuple[Group, ...] = ("model", "novelty", "narrowness", "overlap", "human agreement", "provenance")
DEFAULT_GROUPS: tuple[Group, ...] = ("model", "novelty", "narrowness", "overlap", "human agreement", "provenance")


@dataclass(frozen=True)
class Column:
    """One leaderboard column; ``metric`` names a ``METRICS`` entry for figure columns."""

    label: str
    group: Group
    metric: str | None = None
    percent: bool = False
    higher_is_better: bool | None = None


def _metric_col(name: str, label: str, group: Group) -> Column:
    spec = METRICS[name]
    return Column(label=label, group=group, metric=name, percent=spec.kind == "rate",
                  higher_is_better=spec.higher_is_better)  # fmt: skip


ID_COLUMNS: tuple[Column, ...] = (
    Column("Model", "model"),
    Column("Type", "model"),
    Column("Prompt variant", "model"),
    Column("Setting", "model"),
    Column("Judge", "model"),
)

FIGURE_COLUMNS: tuple[Column, ...] = (
    _metric_col("best5_originality", "Best@5 originality", "novelty"),
    _metric_col("best5_gap_addressing", "Best@5 gap addressing", "novelty"),
    _metric_col("best5_non_obviousness", "Best@5 non-obviousness", "novelty"),
    _metric_col("win_originality", "Win % originality", "novelty"),
    _metric_col("tie_originality", "Tie % originality", "novelty"),
    _metric_col("win_gap_addressing", "Win % gap addressing", "novelty"),
    _metric_col("tie_gap_addressing", "Tie % gap addressing", "novelty"),
    _metric_col("win_non_obviousness", "Win % non-obviousness", "novelty"),
    _metric_col("tie_non_obviousness", "Tie % non-obviousness", "novelty"),
    _metric_col("best5_source_bound_score", "Best@5 source-boundedness ↓", "narrowness"),
    _metric_col("best5_diagnostic_test_score", "Best@5 diagnostic framing ↓", "narrowness"),
    _metric_col("lose_source_bound_score", "Lose % source-boundedness", "narrowness"),
    _metric_col("lose_diagnostic_test_score", "Lose % diagnostic framing", "narrowness"),
    _metric_col("overlap5", "Overlap@5", "overlap"),
)

AGREEMENT_COLUMN = Column("Human agreement % (non-obviousness)", "human agreement", percent=True,
                          higher_is_better=True)  # fmt: skip

PROVENANCE_COLUMNS: tuple[Column, ...] = (
    Column("Judges", "provenance"),
    Column("Prompt set", "provenance"),
    Column("Dataset", "provenance"),
    Column("Instances", "provenance"),
    Column("Submitted", "provenance"),
    Column("Contamination", "provenance"),
)

ALL_COLUMNS: tuple[Column, ...] = (*ID_COLUMNS, *FIGURE_COLUMNS, AGREEMENT_COLUMN, *PROVENANCE_COLUMNS)
CI_SUFFIX = " 95% CI"
# Hidden helper columns that filters read; never shown.
_KIND = "_row_kind"
# True on the row that stands for its (model, variant, setting): the combined row, or a lone judge's own row
# (one judge gives no combined row), so the "combined" filter shows every model once.
_HEADLINE = "_headline"


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


def _contamination(row: SummaryRow) -> str:
    p = row.provenance
    if row.row_kind == "reference":
        return ""
    if p.contaminated is None:
        return "unknown (no knowledge cutoff given)" if p.knowledge_cutoff is None else "unknown"
    if p.contaminated:
        share = f", {100 * p.contaminated_share:.0f}% of sources before it" if p.contaminated_share is not None else ""
        return f"yes: cutoff {p.knowledge_cutoff} after sources from {p.earliest_source_date}{share}"
    return "no"


def build_table(rows: Iterable[SummaryRow], agreement: AgreementMap | None = None) -> pd.DataFrame:
    """Every row and every column (values and their CI columns); filters and choices come after."""
    records = []
    for r in rows:
        if r.subfield is not None:
            continue  # sub-field splits belong to reports, not the main board
        p = r.provenance
        rec: dict[str, object] = {
            "Model": r.model,
            "Type": "reference" if r.row_kind == "reference" else (p.model_type or "unknown"),
            "Prompt variant": r.prompt_variant or "—",
            "Setting": r.setting,
            "Judge": r.judge,
            _KIND: r.row_kind,
        }
        for col in FIGURE_COLUMNS:
            fig = r.figures.get(col.metric or "")
            rec[col.label] = _value(fig.value, col.percent) if fig else None
            rec[ci_label(col)] = _fmt_ci(fig.ci_low, fig.ci_high, col.percent) if fig else ""
        cell = (agreement or {}).get((r.model, r.setting, r.judge))
        rec[AGREEMENT_COLUMN.label] = _value(cell.value, True) if cell else None
        rec[ci_label(AGREEMENT_COLUMN)] = (
            _fmt_ci(cell.ci_low, cell.ci_high, True) + f" n={cell.n}" if cell else ""
        )
        rec["Judges"] = ", ".join(p.judge_labels)
        rec["Prompt set"] = ", ".join(f"{ps.name} ({ps.hash[:11]})" for ps in p.prompt_sets)
        rec["Dataset"] = f"{p.dataset_repo}@{p.dataset_revision}"
        rec["Instances"] = f"{p.instances_covered}/{p.instances_expected}" if p.instances_expected else str(
            p.instances_covered)  # fmt: skip
        rec["Submitted"] = f"{p.submission_date:%Y-%m-%d}" if p.submission_date else ""
        rec["Contamination"] = _contamination(r)
        records.append(rec)
    columns = table_columns(GROUPS, show_ci=True) + [_KIND]
    df = pd.DataFrame.from_records(records, columns=columns)
    group = ["Model", "Prompt variant", "Setting", _KIND]
    judges_in_group = df.groupby(group, dropna=False)["Judge"].transform("size") if len(df) else df["Judge"]
    df[_HEADLINE] = (df["Judge"] == COMBINED) | (judges_in_group == 1)
    return df


def table_columns(groups: Sequence[str], *, show_ci: bool) -> list[str]:
    """The visible column labels for the chosen groups, each CI column right after its figure."""
    out = []
    for col in ALL_COLUMNS:
        if col.group not in groups and col.group != "model":
            continue
        out.append(col.label)
        if show_ci and col in (*FIGURE_COLUMNS, AGREEMENT_COLUMN):
            out.append(ci_label(col))
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


def filter_table(df: pd.DataFrame, view: View) -> pd.DataFrame:
    """Rows matching the search (model name, case-insensitive, literal) and every non-empty filter."""
    mask = pd.Series(True, index=df.index)
    if view.search.strip():
        mask &= df["Model"].str.contains(view.search.strip(), case=False, regex=False)
    if view.judges:
        chosen = df["Judge"].isin(view.judges)
        if COMBINED in view.judges:
            chosen |= df[_HEADLINE].astype(bool)
        mask &= chosen
    if view.settings:
        mask &= df["Setting"].isin(view.settings)
    model_rows = df[_KIND] == "model"
    if view.variants:
        mask &= ~model_rows | df["Prompt variant"].isin(view.variants)
    if view.model_types:
        mask &= ~model_rows | df["Type"].isin(view.model_types)
    return df[mask]


def sort_table(df: pd.DataFrame, by: str | None, ascending: bool) -> pd.DataFrame:
    """Sort on a column (missing figures last); default order: setting, then Best@5 non-obviousness."""
    if not by:
        by = "Best@5 non-obviousness" if df["Best@5 non-obviousness"].notna().any() else "Win % non-obviousness"
        return df.sort_values(["Setting", by, "Model"], ascending=[False, False, True], na_position="last",
                              kind="stable")  # fmt: skip
    if by not in df.columns:
        raise ValueError(f"no column {by!r} to sort by")
    return df.sort_values(by, ascending=ascending, na_position="last", kind="stable")


def render(df: pd.DataFrame, view: View) -> pd.DataFrame:
    """The table the page shows: filtered, sorted, the chosen columns only."""
    out = sort_table(filter_table(df, view), view.sort_by, view.ascending)
    return out[table_columns(view.groups, show_ci=view.show_ci)].reset_index(drop=True)


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
    return [c.label for c in (*FIGURE_COLUMNS, AGREEMENT_COLUMN)]


__all__ = [
    "ALL_COLUMNS",
    "COMBINED",
    "GROUPS",
    "REFERENCE_MODEL",
    "AgreementCell",
    "View",
    "build_table",
    "choices",
    "filter_table",
    "render",
    "sort_table",
    "table_columns",
    "to_csv",
]
