"""Report tables shaped like the paper's Tables 1-13 (the judges' own tables are in ``judge_tables.py``; the
``Table`` type and its writers in ``table.py``).

Each builder returns a ``Table``: a display frame of formatted cells (for
Markdown and LaTeX, in the paper's shape: "mean ± std", "win (tie)",
"win (lose)") and a tidy numeric frame with every value and its 95% CI (for
CSV). Builders read ``SummaryRow``s and agreement/similarity/meta-eval records;
they compute nothing new. A figure that lacks instances a judge's calls failed on
carries ``UNJUDGED_MARK`` in its cell, and the table's caption says whose and how
many; generation failures, counted by the project's rule (the paper is silent on
failures), are named too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pandas as pd

from rqbench.dataset_card.stats import LENGTH_LABELS, DatasetStats, summary_rows
from rqbench.evaluate.criteria import CRITERIA, SETTINGS, ReportTable, dimension
from rqbench.evaluate.metrics.bootstrap import Estimate
from rqbench.evaluate.metrics.diversity import DiversityRow
from rqbench.evaluate.metrics.metric import FailureAccounting, describe_combine_rule
from rqbench.evaluate.metrics.similarity import SimilarityRow
from rqbench.evaluate.metrics.summary_row import COMBINED, Figure, SummaryRow
from rqbench.evaluate.report.table import (
    TIDY_COLUMNS,
    UNJUDGED_MARK,
    Table,
    fmt_pct,
    fmt_rate_pair,
    fmt_score,
    tidy_frame,
)

# --------------------------------------------------------------------------
# What a caption says about failures, trials and how candidates combine
# --------------------------------------------------------------------------


def failures_note(rows: Sequence[SummaryRow], cells: Sequence[tuple[str, str, Figure | None]]) -> str:
    """The caption's account of failures: which rows' figures lack instances a judge failed on (the marked cells),
    and which models' failed generations entered the figures as losses (or, conditional, were left out)."""
    out = ""
    marked: dict[str, int] = {}
    for row, col, f in cells:
        if f is not None and f.unjudged:
            key = f"{row} under {col.split(': ', 1)[0]}"
            marked[key] = max(marked.get(key, 0), f.unjudged)
    conditional = bool(rows) and rows[0].provenance.failures == FailureAccounting.conditional.value
    if marked:
        what = (
            "whose RQs the marked figures take as far as they were scored (conditional)"
            if conditional
            else "that the marked figures lack"
        )
        out += (
            f" {UNJUDGED_MARK} Incomplete: a judge's calls failed (after their re-ask) on instances {what}: "
            + "; ".join(f"{k}, {n} unjudged" for k, n in marked.items())
            + "."
        )
    lost = {
        _row_name(r): r.provenance.generation_failures
        for r in rows
        if r.row_kind == "model" and r.provenance.generation_failures
    }
    if lost:
        who = ", ".join(f"{k} {n}" for k, n in lost.items())
        if conditional:
            out += f" Conditional figures: instances with no valid generation are left out ({who})."
        else:
            out += (
                " Instances with no valid generation count against the model: a loss, with the scale's worst value "
                f"as its best of five ({who})."
            )
    return out


def trials_note(rows: Sequence[SummaryRow]) -> str:
    """The caption's word on trial rows (``[trial N/M]``): their figures are over the revision's first N instances
    only, so they are not comparable with the full runs' rows beside them."""
    trials = sorted({_row_name(r) for r in rows if r.row_kind == "model" and r.provenance.trial is not None})
    if not trials:
        return ""
    return (
        f" TRIAL rows ({', '.join(trials)}): judged only the first N of the revision's M instances (--limit N); "
        "their figures are over those N and are not to be ranked beside the full runs'."
    )


def _row_name(r: SummaryRow) -> str:
    return r.name  # a trial's row carries its mark: never read as the full run's


def _judges(rows: Sequence[SummaryRow]) -> list[str]:
    labels = sorted({r.judge for r in rows if r.judge != COMBINED})
    return labels + ([COMBINED] if any(r.judge == COMBINED for r in rows) else [])


def combine_note(rows: Sequence[SummaryRow]) -> str:
    """The sentence for a caption whose table shows a combined figure: the rule and the judges it combined."""
    notes = []
    for r in rows:
        if r.judge == COMBINED and r.combine:
            text = describe_combine_rule(r.combine, r.provenance.judge_labels)
            if text not in notes:
                notes.append(text)
    return "".join(f" Combined: {n}." for n in notes)


def _select(rows: Sequence[SummaryRow], setting: str, subfield: str | None = None) -> list[SummaryRow]:
    return [r for r in rows if r.setting == setting and r.subfield == subfield]


def _grid(
    rows: Sequence[SummaryRow],
    columns: list[tuple[str, str]],  # (dimension key, column label)
    cell: Callable[[SummaryRow, str], tuple[str, list[tuple[str, Figure | None]]]],
    *,
    name: str,
    caption: str,
    paper_table: str,
) -> Table:
    """A table with one row per model and one column per (judge, dimension)."""
    judges = _judges(rows)
    order: list[str] = []
    for r in sorted(rows, key=lambda r: (r.row_kind != "reference", _row_name(r))):
        if _row_name(r) not in order:
            order.append(_row_name(r))
    display = pd.DataFrame(index=order, columns=[f"{j}: {lab}" for j in judges for _, lab in columns], dtype=object)
    display.index.name = "model"
    tidy: list[tuple[str, str, Figure | None]] = []
    for r in rows:
        for key, lab in columns:
            text, figs = cell(r, key)
            display.loc[_row_name(r), f"{r.judge}: {lab}"] = text
            tidy += [(_row_name(r), f"{r.judge}: {fname}", f) for fname, f in figs]
    note = combine_note(rows) + failures_note(rows, tidy) + trials_note(rows)
    return Table(name, caption + note, paper_table, display.fillna("–"), tidy_frame(tidy))


# --------------------------------------------------------------------------
# Tables from summary rows
# --------------------------------------------------------------------------


def _columns(t: ReportTable) -> list[tuple[str, str]]:
    """(dimension, label) for each of a declared table's dimensions."""
    return [(d, dimension(d)[1].label) for d in t.dimensions]


def _score_cell(r: SummaryRow, dim: str):
    f = r.figure(f"best5_{dim}")
    return fmt_score(f), [(f"best5_{dim}", f)]


def _rate_cell(other: str):
    def cell(r: SummaryRow, dim: str):
        win, oth = r.figure(f"win_{dim}"), r.figure(f"{other}_{dim}")
        return fmt_rate_pair(win, oth), [(f"win_{dim}", win), (f"{other}_{dim}", oth)]

    return cell


def best_of_table(rows: Sequence[SummaryRow], t: ReportTable) -> Table:
    """One figure per model and judge, from whichever setting carried it (standalone first): Table 2's overlap."""
    assert t.metric is not None
    metric = t.metric
    picked: dict[tuple[str, str], SummaryRow] = {}
    for r in sorted(rows, key=lambda r: r.setting != "standalone"):
        if r.row_kind == "model" and r.subfield is None and r.figure(metric) is not None:
            picked.setdefault((_row_name(r), r.judge), r)

    def cell(r: SummaryRow, _):
        f = r.figure(metric)
        return fmt_score(f), [(metric, f)]

    return _grid(
        list(picked.values()),
        [(metric, t.column)],
        cell,
        name=t.name,
        caption=t.caption,
        paper_table=t.paper_tables["any"],
    )


def scores_table(rows: Sequence[SummaryRow], t: ReportTable, subfield: str | None = None) -> Table:
    """Standalone Best@5 per dimension, mean ± std, with the GT reference row (Tables 3(a), 7(a))."""
    return _grid(
        _select(rows, "standalone", subfield),
        _columns(t),
        _score_cell,
        name=_n(t.name, subfield),
        caption=t.caption + _sf(subfield),
        paper_table=t.paper_tables["standalone"],
    )


def rates_table(rows: Sequence[SummaryRow], t: ReportTable, setting: str, subfield: str | None = None) -> Table:
    """Pass@5 win rate with the table's other rate in brackets, per judge and combined (Tables 3(b), 4, 7(b), 8)."""
    caption = t.caption.replace("{setting}", setting).replace("{Setting}", setting.capitalize())
    return _grid(
        [r for r in _select(rows, setting, subfield) if r.row_kind == "model"],
        _columns(t),
        _rate_cell(t.other),
        name=_n(t.name.replace("{setting}", setting), subfield),
        caption=caption + _sf(subfield),
        paper_table=t.paper_tables[setting],
    )


def _paper_order(paper_table: str) -> tuple[float, str]:
    """'Table 3(b)' -> (3, '(b)'): the paper's order of its tables; a table the paper has not (a criterion declared
    as data) comes after them all."""
    if not paper_table.startswith("Table "):
        return float("inf"), paper_table
    number = paper_table.removeprefix("Table ")
    digits = "".join(ch for ch in number if ch.isdigit())
    return int(digits or 0), number[len(digits) :]


def criterion_tables(rows: Sequence[SummaryRow], subfield: str | None = None) -> list[Table]:
    """Every table the criteria declare, in the paper's order (only those kept per sub-field for a split)."""
    made: list[tuple[str, Table]] = []
    for c in CRITERIA.values():
        for t in c.report_tables:
            if subfield is not None and not t.by_subfield:
                continue
            if t.kind == "best_of":
                made.append((t.paper_tables["any"], best_of_table(rows, t)))
            elif t.kind == "scores":
                made.append((t.paper_tables["standalone"], scores_table(rows, t, subfield)))
            else:
                made += [(t.paper_tables[s], rates_table(rows, t, s, subfield)) for s in SETTINGS]
    return [table for _, table in sorted(made, key=lambda m: _paper_order(m[0]))]


def prompt_variant_table(rows: Sequence[SummaryRow], judge: str | None = None) -> Table | None:
    """Table 10: the same model under different generation prompts (standalone); every judge's columns,
    and the combined ones where two or more judges scored, unless ``judge`` names one."""
    use = [r for r in _select(rows, "standalone") if r.row_kind == "model" and judge in (None, r.judge)]
    variants: dict[str, set[str]] = {}
    for r in use:
        variants.setdefault(r.model, set()).add(r.prompt_variant)
    multi = {m for m, v in variants.items() if len(v) > 1}
    if not multi:
        return None
    use = [r for r in use if r.model in multi]
    cols = [col for c in CRITERIA.values() for t in c.report_tables if t.kind == "scores" for col in _columns(t)]
    who = f"{judge} judge" if judge else "per judge"
    return _grid(
        use,
        cols,
        _score_cell,
        name="prompt_variants",
        caption=f"Prompt variants ({who}, standalone): Best@5 novelty (higher is better) and "
        "narrowness (lower is broader), mean ± std.",
        paper_table="Table 10",
    )


HEADLINE_COLUMNS = tuple(col for c in CRITERIA.values() for col in c.columns if col.headline)


def _fmt_figure(f: Figure | None, percent: bool) -> str:
    if f is None:
        return "–"
    if percent:
        return fmt_pct(f)
    return f"{f.value:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"


def clean_subset_table(rows: Sequence[SummaryRow]) -> Table | None:
    """The headline figures of every model row over its clean instances (source paper first published after the
    model's knowledge cutoff), with the cutoff and its source, the clean count of the row's instances, and why a
    row has none. None when there is no model row."""
    use = [r for r in rows if r.row_kind == "model" and r.subfield is None and r.clean is not None]
    if not use:
        return None
    judges = _judges(use)
    use.sort(key=lambda r: (_row_name(r), r.setting != "standalone", judges.index(r.judge)))
    cols = [
        "setting",
        "judge",
        "knowledge cutoff",
        "cutoff source",
        "clean / instances",
        "undated",
        *(c.label for c in HEADLINE_COLUMNS),
        "no clean figures because",
    ]
    records, tidy, counts = [], [], []
    for r in use:
        p, c = r.provenance, r.clean
        assert c is not None
        key = f"{_row_name(r)} | {r.setting} | {r.judge}"
        records.append(
            [
                _row_name(r),
                r.setting,
                r.judge,
                str(p.knowledge_cutoff or "unknown"),
                p.knowledge_cutoff_source or "–",
                f"{c.instances}/{p.instances_covered}",
                str(c.undated),
                *(_fmt_figure(c.figures.get(col.metric or ""), col.percent) for col in HEADLINE_COLUMNS),
                c.reason or "",
            ]
        )
        tidy += [(key, col.metric or "", c.figures.get(col.metric or "")) for col in HEADLINE_COLUMNS]
        counts += [
            (key, "clean_instances", c.instances),
            (key, "instances_covered", p.instances_covered),
            (key, "undated", c.undated),
        ]
    display = pd.DataFrame(records, columns=["model", *cols]).set_index("model")
    return Table(
        "clean_subset",
        "Post-cutoff (clean) figures: each model's headline figures, value [95% CI], over "
        "the instances whose source paper was first published (arXiv v1) after the model's knowledge cutoff, "
        "which it cannot have read. The cutoff is the submission's own, else the model catalog's (its "
        "vendor document is the source); clean / instances counts the clean instances of the row's; an "
        "instance whose paper has no first-version date is left out (undated), never guessed clean."
        + combine_note(use)
        + trials_note(use),
        "beyond the paper",
        display,
        pd.concat([tidy_frame(tidy), _counts_frame(counts)], ignore_index=True),
    )


def _n(name: str, subfield: str | None) -> str:
    return name if subfield is None else f"{name}__{subfield.replace('.', '_')}"


def _sf(subfield: str | None) -> str:
    return "" if subfield is None else f" Sub-field {subfield} only."


# --------------------------------------------------------------------------
# Similarity (Table 6)
# --------------------------------------------------------------------------


def _sources(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "–"


def similarity_table(rows: Sequence[SimilarityRow], *, missing: Sequence[str] = ()) -> Table:
    """Table 6: cosine similarity of the best RQ (and the GT) to the background papers' contributions.

    The last column says which contribution texts each row's background papers
    supplied (``extracted`` by the builder, or the ``abstract`` in its place).
    """
    embedders = list(dict.fromkeys(r.embedder for r in rows))
    names: list[str] = []
    for r in rows:
        n = r.model if r.prompt_variant in ("", "original") else f"{r.model} ({r.prompt_variant})"
        if n not in names:
            names.append(n)
    display = pd.DataFrame(index=names, columns=[*embedders, "contributions"], dtype=object)
    display.index.name = "RQs"
    tidy = []
    for r in rows:
        n = r.model if r.prompt_variant in ("", "original") else f"{r.model} ({r.prompt_variant})"
        display.loc[n, r.embedder] = f"{r.mean:.3f} ± {r.std:.3f}"
        if pd.isna(display.loc[n, "contributions"]):
            display.loc[n, "contributions"] = _sources(r.contribution_sources)
            tidy += [
                (n, f"contributions: {k}", Estimate(value=v, ci_low=v, ci_high=v, std=0.0, n=v, n_clusters=0))
                for k, v in r.contribution_sources.items()
            ]
        tidy.append(
            (n, r.embedder, Estimate(value=r.mean, ci_low=r.ci_low, ci_high=r.ci_high, std=r.std, n=r.n, n_clusters=0))
        )
    gone = f" Not loaded here, so left out: {', '.join(missing)}." if missing else ""
    return Table(
        "similarity",
        "Cosine similarity (max over background papers) of the best-of-five RQ by mean "
        "standalone novelty, and of the GT, to the background papers' contributions; mean ± std. The last "
        "column counts the background papers by the source of their contribution text." + gone,
        "Table 6",
        display.fillna("–"),
        tidy_frame(tidy),
    )


# --------------------------------------------------------------------------
# The dataset itself (Tables 1 and 13)
# --------------------------------------------------------------------------


def _counts_frame(entries: list[tuple[str, str, float | None]]) -> pd.DataFrame:
    """A tidy frame of plain numbers (no interval: a count of the dataset is exact)."""
    recs = [
        {"row": r, "column": c, "value": v, "ci_low": v, "ci_high": v, "std": float("nan"), "n": None}
        for r, c, v in entries
        if v is not None
    ]
    return pd.DataFrame(recs, columns=TIDY_COLUMNS)


def _num(x: float | None) -> str:
    if x is None:
        return "–"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.2f}"


def dataset_summary_table(stats: DatasetStats, *, dataset: str, name: str = "dataset_summary") -> Table:
    """Table 1: the dataset's counts, RQs dropped by reason, then each per-statistic summary (spread)."""
    cols = ["value", "mean", "median", "min", "max"]
    display = pd.DataFrame(columns=cols, dtype=object)
    display.index.name = "statistic"
    tidy: list[tuple[str, str, float | None]] = []
    for label, value in summary_rows(stats):
        display.loc[label] = [str(value), "", "", "", ""]
        tidy.append((label, "value", value))
    for reason, n in stats.rqs_dropped.items():
        label = f"RQs dropped: {reason}"
        display.loc[label] = [str(n), "", "", "", ""]
        tidy.append((label, "value", n))
    for key, sp in stats.lengths.items():
        label = LENGTH_LABELS.get(key, key)
        display.loc[label] = [str(sp.count), _num(sp.mean), _num(sp.median), _num(sp.min), _num(sp.max)]
        tidy += [
            (label, "count", sp.count),
            (label, "mean", sp.mean),
            (label, "median", sp.median),
            (label, "min", sp.min),
            (label, "max", sp.max),
        ]
    return Table(
        name,
        f"Summary statistics of the dataset the results were judged on ({dataset}); a spread row "
        "gives how many values it summarises, then their mean, median, minimum and maximum.",
        "Table 1",
        display,
        _counts_frame(tidy),
    )


SUBFIELD_COLUMNS = ["papers", "RQs", "RQ–citation links", "unique cited papers", "distinct gap statements"]


def subfield_table(stats: DatasetStats, *, dataset: str, name: str = "subfields") -> Table:
    """Table 13: the per-sub-field breakdown, largest sub-field first."""
    display = pd.DataFrame(columns=SUBFIELD_COLUMNS, dtype=object)
    display.index.name = "sub-field"
    tidy: list[tuple[str, str, float | None]] = []
    for r in stats.by_subfield:
        values = [r.papers, r.rqs, r.rq_citation_links, r.unique_cited_papers, r.gap_statements]
        display.loc[r.subfield] = [str(v) for v in values]
        tidy += [(r.subfield, col, v) for col, v in zip(SUBFIELD_COLUMNS, values)]
    return Table(
        name,
        f"Sub-field breakdown of the dataset the results were judged on ({dataset}).",
        "Table 13",
        display,
        _counts_frame(tidy),
    )


# --------------------------------------------------------------------------
# Every table of a kind, and the diversity and cost tables
# --------------------------------------------------------------------------


def summary_tables(rows: Sequence[SummaryRow], *, by_subfield: bool = False) -> list[Table]:
    """Every table that comes from summary rows alone, in the paper's order."""
    out = criterion_tables(rows)
    pv = prompt_variant_table(rows)
    if pv is not None:
        out.append(pv)
    clean = clean_subset_table(rows)
    if clean is not None:
        out.append(clean)
    if by_subfield:
        for sf in sorted({r.subfield for r in rows if r.subfield is not None}):
            out += criterion_tables(rows, sf)
    return [t for t in out if not t.display.empty]


def diversity_table(rows: Sequence[DiversityRow]) -> Table:
    """The report's table: per model, the mean pairwise similarity of its five and the near-duplicate pairs."""

    def num(e: Estimate | None, digits: int) -> str:
        return "–" if e is None else f"{e.value:.{digits}f} [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"

    display = pd.DataFrame(
        [
            {
                "model": d.model if d.prompt_variant == "original" else f"{d.model} ({d.prompt_variant})",
                "embedder": d.embedder,
                "mean pairwise similarity [95% CI]": num(d.mean_similarity, 3),
                f"near-duplicate pairs (cosine >= {d.threshold:g}) per instance [95% CI]": num(
                    d.near_duplicate_pairs, 2
                ),
                "instances": d.instances,
            }
            for d in rows
        ]
    )
    data = pd.DataFrame(
        [
            {"model": d.model, "prompt_variant": d.prompt_variant, "embedder": d.embedder, "figure": name}
            | ({"value": e.value, "ci_low": e.ci_low, "ci_high": e.ci_high, "n": e.n} if e else {})
            for d in rows
            for name, e in (("mean_similarity", d.mean_similarity), ("near_duplicate_pairs", d.near_duplicate_pairs))
        ]
    )
    return Table(
        "diversity",
        "Diversity of the five RQs: the mean cosine similarity of an instance's RQs over its 10 pairs (lower is "
        "more diverse), and its pairs at or above the near-duplicate threshold, each the mean over instances.",
        "not in the paper (diversity of the five, docs/metrics.md)",
        display.set_index(["model", "embedder"]) if len(display) else display,
        data,
    )


def cost_table(rows: Sequence[SummaryRow]) -> Table:
    """The report's cost table: per model row (all sub-fields), generation and judging dollars with their call-log
    runs, and the comparative non-obviousness win rate in points per dollar of generation. Unknown is "unknown"."""

    def money(v: float | None) -> str:
        return "unknown" if v is None else f"${v:,.4f}"

    kept = [r for r in rows if r.row_kind == "model" and r.subfield is None]
    records = []
    for r in kept:
        p, g = r.provenance, r.provenance.generation_cost
        gen = "unknown (generated elsewhere)" if g is None else money(r.generation_cost_usd)
        fig = r.per_dollar
        records.append(
            {
                "model": r.name,
                "setting": r.setting,
                "judge": r.judge,
                "generation $": gen,
                "generation requests": g.requests if g else 0,
                "generation runs": ", ".join(g.run_ids) if g else "",
                "judging $": money(p.judging_cost_usd) if p.judging_requests else "no requests recorded",
                "judging requests": p.judging_requests,
                "judging runs": ", ".join(p.judging_run_ids),
                "win points per generation $ [95% CI]": "–"
                if fig is None
                else f"{fig.value:,.1f} [{fig.ci_low:,.1f}, {fig.ci_high:,.1f}]",
            }
        )
    data = pd.DataFrame(
        [
            {
                "model": r.model,
                "prompt_variant": r.prompt_variant,
                "setting": r.setting,
                "judge": r.judge,
                "generation_cost_usd": r.generation_cost_usd,
                "generation_requests": r.provenance.generation_cost.requests if r.provenance.generation_cost else 0,
                "generation_run_ids": " ".join(r.provenance.generation_cost.run_ids)
                if r.provenance.generation_cost
                else "",
                "judging_cost_usd": r.provenance.judging_cost_usd,
                "judging_requests": r.provenance.judging_requests,
                "judging_run_ids": " ".join(r.provenance.judging_run_ids),
                "win_points_per_dollar": r.per_dollar.value if r.per_dollar else None,
                "win_points_per_dollar_ci_low": r.per_dollar.ci_low if r.per_dollar else None,
                "win_points_per_dollar_ci_high": r.per_dollar.ci_high if r.per_dollar else None,
            }
            for r in kept
        ]
    )
    display = pd.DataFrame(records)
    return Table(
        "cost",
        "What each row cost, from the call log as its results files stored it (litellm's price per request when "
        "sent; a cache hit costs nothing; a request with no price, or generated elsewhere, makes the total unknown), "
        "and the Pass@5 win rate on non-obviousness in points per dollar of generation (in the row's setting: standalone and comparative judging each give one)."
        + combine_note(kept),
        "not in the paper (cost per point, docs/metrics.md)",
        display.set_index(["model", "setting", "judge"]) if len(display) else display,
        data,
    )
