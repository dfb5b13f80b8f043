"""Summary rows: the contract between stored results and the leaderboard/report.

``summarize`` turns results files (one per submission x judge x setting) into
``SummaryRow``s: one per (submission, setting, judge) plus, when two or more
judges scored it, a ``combined`` row per (submission, setting) under the combine
rule (``metrics.describe_combine_rule``), optionally split by sub-field, plus author-anchored
reference rows (the GT's own standalone means). Each figure carries a cluster
bootstrap CI over source papers, and failures enter it as ``ScoreOptions.failures``
says (by default every instance of the release, with the project's rule for failures: docs/metrics.md); each figure counts the
instances a judge left unjudged, and each row's provenance says how many of the
revision's instances were scored, which failed generation, which a judge left
unjudged, and the paper's rules each judge had applied. Reading files lives at the edge
(``load_results``); ``summarize`` itself is a pure function. Each results file
is read once into a columnar ``ScoreTable`` and every figure is computed on
arrays (``score_table.py``), which is what keeps the paper's scale (24 files of
1,434 instances) to about a second.

A model row also carries its clean figures: the same figures over the instances
whose source paper is newer than the model's knowledge cutoff
(``contamination.py``; empty, with the reason, when that cannot be known).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from rqbench.evaluate.benchmark.trial import trial_mark, trial_text
from rqbench.evaluate.criteria import METRICS
from rqbench.evaluate.metrics.accounting import criteria_run, failure_reason, instance_status, latest
from rqbench.evaluate.metrics.bootstrap import DEFAULT_LEVEL, cluster_bootstrap_mean_codes
from rqbench.evaluate.metrics.contamination import clean_reason, exposure, is_clean, paper_dates
from rqbench.evaluate.metrics.diversity import DEFAULT_EMBEDDER, DiversityRow, diversity_row, stored
from rqbench.evaluate.metrics.metric import CombineRule, FailureAccounting, MetricSpec, ScoreOptions
from rqbench.evaluate.metrics.score_table import ScoreTable, mean_over_judges, score_table
from rqbench.evaluate.metrics.summary_row import (
    COMBINED,
    PER_DOLLAR_METRIC,
    REFERENCE_MODEL,
    CleanFigures,
    Figure,
    Provenance,
    SummaryRow,
)
from rqbench.io import read_model
from rqbench.llm.catalog import resolved_cutoff
from rqbench.records import GenerationCost, PromptSetRef, ResultsFile

SUMMARY_BOOT = 1000


# --------------------------------------------------------------------------
# Reading results (the I/O edge)
# --------------------------------------------------------------------------


def load_results(paths: Iterable[str | Path]) -> list[ResultsFile]:
    """Read results files; a folder contributes every ``*.json`` under it. Errors name the file."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.json") if q.is_file())
            if not found:
                raise FileNotFoundError(f"{p}: folder holds no results files (*.json)")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such results file or folder")
    return [read_model(f, ResultsFile, kind="results file") for f in files]


# --------------------------------------------------------------------------
# Grouping
# --------------------------------------------------------------------------


@dataclass
class _Group:
    submission_hash: str
    setting: str
    trial: int | None = None  # a trial's files group apart from the full run's: never pooled or ranked with them
    judges: dict[str, ResultsFile] = field(default_factory=dict)


def _group(results: Sequence[ResultsFile]) -> list[_Group]:
    groups: dict[tuple[str, str, int | None], _Group] = {}
    for r in results:
        key = (r.submission_hash, r.judge.setting, r.trial)
        g = groups.setdefault(key, _Group(r.submission_hash, r.judge.setting, r.trial))
        if r.judge.label in g.judges:
            run = f", {trial_text(r.trial, r.instances_expected)}" if r.trial else ""
            raise ValueError(
                f"two results files for submission {r.submission.model!r} ({r.submission_hash[:12]}), "
                f"judge {r.judge.label!r}, setting {r.judge.setting!r}{run}; pass one of them"
            )
        first = next(iter(g.judges.values()), None)
        if first is not None and (first.dataset_repo, first.dataset_revision) != (r.dataset_repo, r.dataset_revision):
            raise ValueError(
                f"submission {r.submission.model!r}: judge {r.judge.label!r} used dataset "
                f"{r.dataset_repo}@{r.dataset_revision} but judge {first.judge.label!r} used "
                f"{first.dataset_repo}@{first.dataset_revision}; one row cannot mix revisions"
            )
        g.judges[r.judge.label] = r
    return list(groups.values())


def combined_row(labels: Sequence[str]) -> list[str]:
    """``[COMBINED]`` when two or more distinct judges (labels) scored the group, else nothing.

    One judge's figures are that judge's, never "combined": the paper's combined
    figure is over two judges, and a lone judge's row must not pass for it.
    """
    return [COMBINED] if len(set(labels)) >= 2 else []


# --------------------------------------------------------------------------
# Figures, computed on score tables (``score_table``): one table per results file
# --------------------------------------------------------------------------


@dataclass
class _View:
    """The rows of one judge's score table that a row of the summary reads (one sub-field, or all)."""

    table: ScoreTable
    rows: np.ndarray
    codes: np.ndarray  # the source paper of each row, as a cluster code


class _Tables:
    """Each results file read into a score table once per ``summarize`` call; cluster codes shared by all."""

    def __init__(self, opts: ScoreOptions):
        self.opts = opts
        self._full: dict[int, tuple[ScoreTable, np.ndarray]] = {}
        self._codes: dict[str, int] = {}
        self.counts: _CountCache = {}  # each file's failure counts per split, for the provenance of its rows

    def codes(self, arxiv_ids: Sequence[str]) -> np.ndarray:
        c = self._codes
        return np.fromiter((c.setdefault(a, len(c)) for a in arxiv_ids), dtype=np.int64, count=len(arxiv_ids))

    def view(self, r: ResultsFile, subfield: str | None, keep: str = "last") -> _View:
        if keep == "first":
            t = score_table(r, self.opts, subfield=subfield, keep="first")
            return _View(t, np.arange(len(t)), self.codes(t.arxiv_ids))
        if id(r) not in self._full:
            t = score_table(r, self.opts)
            self._full[id(r)] = (t, self.codes(t.arxiv_ids))
        full, codes = self._full[id(r)]
        if subfield is None or not full.repeats:
            rows = full.rows(subfield)
            return _View(full, rows, codes[rows])
        t = score_table(r, self.opts, subfield=subfield)  # a repeated rq_id: rebuild as a dict over the split would
        return _View(t, np.arange(len(t)), self.codes(t.arxiv_ids))


def _figure(values: np.ndarray, codes: np.ndarray, n_boot: int, seed: int, unjudged: int = 0) -> Figure | None:
    est = cluster_bootstrap_mean_codes(values, codes, n_boot=n_boot, seed=seed, level=DEFAULT_LEVEL)
    if est is None:
        return None
    return Figure(
        value=est.value,
        ci_low=est.ci_low,
        ci_high=est.ci_high,
        std=est.std,
        n=est.n,
        n_clusters=est.n_clusters,
        unjudged=unjudged,
    )


@dataclass
class _Aligned:
    """The judges' rows on the sorted union of their rq_ids, for the ``mean_scores`` rule and paired tests."""

    rq_ids: list[str]
    gt: np.ndarray  # each cell the mean over the judges that scored it
    model: np.ndarray
    codes: np.ndarray  # cluster code, from the first judge that has the instance
    no_generation: np.ndarray  # any judge's file records no valid generation
    at: list[np.ndarray]  # per judge, its row for each rq_id (-1: the judge lacks it)


def _aligned(views: Sequence[_View], dim: str) -> _Aligned:
    """The judges' rows on the sorted union of their rq_ids, each cell averaged over the judges that have it."""
    positions = [{v.table.rq_ids[i]: k for k, i in enumerate(v.rows)} for v in views]
    union = sorted({rq for pos in positions for rq in pos})
    gts, models, ats = [], [], []
    codes = np.full(len(union), -1, dtype=np.int64)
    lost = np.zeros(len(union), dtype=bool)
    crit = _criterion(dim)
    for v, pos in zip(views, positions):
        at = np.fromiter((pos.get(rq, -1) for rq in union), dtype=np.int64, count=len(union))
        have = at >= 0
        src = v.rows[np.where(have, at, 0)]
        g = np.where(have, v.table.gt[dim][src], np.nan)
        m = v.table.model[dim][src]
        m = np.where(have[:, None], m, np.nan)
        gts.append(g)
        models.append(m)
        ats.append(np.where(have, src, -1))
        lost |= have & v.table.no_generation[crit][src]
        codes = np.where((codes < 0) & have, v.codes[np.where(have, at, 0)], codes)
    return _Aligned(union, mean_over_judges(gts), mean_over_judges(models), codes, lost, ats)


def _criterion(dim: str) -> str:
    from rqbench.evaluate.criteria import dimension

    return dimension(dim)[0].name


_Cover = list[tuple[Sequence[str], np.ndarray]]  # (rq_ids, which of them have a value)


def _observations(
    spec: MetricSpec, views: Sequence[_View], combine: CombineRule | None, reference: bool
) -> tuple[np.ndarray, np.ndarray, _Cover]:
    """Per-instance values of one figure for one judge (one view) or the combined rule, in the per-instance order."""
    if combine is CombineRule.mean_scores and len(views) > 1:
        a = _aligned(views, spec.dimension)
        paper = views[0].table.failures is FailureAccounting.paper
        vals = spec.values(a.gt, a.model, reference, a.no_generation if paper else None)
        keep = ~np.isnan(vals)
        return vals[keep], a.codes[keep], [(a.rq_ids, keep)]
    values, clusters, cover = [], [], []
    for v in views:
        vals = v.table.values(spec, v.rows, reference)
        keep = ~np.isnan(vals)
        values.append(vals[keep])
        clusters.append(v.codes[keep])
        hit = np.zeros(len(v.table), dtype=bool)
        hit[v.rows[keep]] = True
        cover.append((v.table.rq_ids, hit))
    if not values:
        return np.zeros(0), np.zeros(0, dtype=np.int64), cover
    return np.concatenate(values), np.concatenate(clusters), cover


def _first_wins(views: Sequence[_View], tables: _Tables) -> _View:
    """One judge's files as one view: each rq_id once, from the first file that has it."""
    if len(views) == 1:
        return views[0]
    seen: set[str] = set()
    picks: list[tuple[_View, np.ndarray]] = []
    for v in views:
        keep = [i for i in v.rows if v.table.rq_ids[i] not in seen]
        seen.update(v.table.rq_ids[i] for i in keep)
        picks.append((v, np.asarray(keep, dtype=np.int64)))
    width = {d: max(v.table.model[d].shape[1] for v, _ in picks) for d in v.table.model}

    def stack(get) -> np.ndarray:  # type: ignore[no-untyped-def]
        return np.concatenate([get(v, rows) for v, rows in picks])

    def padded(d: str):  # type: ignore[no-untyped-def]
        def get(v: _View, rows: np.ndarray) -> np.ndarray:
            m = v.table.model[d][rows]
            return np.pad(m, ((0, 0), (0, width[d] - m.shape[1])), constant_values=np.nan)

        return get

    table = ScoreTable(
        rq_ids=[v.table.rq_ids[i] for v, rows in picks for i in rows],
        arxiv_ids=[v.table.arxiv_ids[i] for v, rows in picks for i in rows],
        subfields=stack(lambda v, rows: v.table.subfields[rows]),
        gt={d: stack(lambda v, rows, d=d: v.table.gt[d][rows]) for d in width},
        model={d: stack(padded(d)) for d in width},
        no_generation={c: stack(lambda v, rows, c=c: v.table.no_generation[c][rows]) for c in v.table.no_generation},
        unjudged={c: stack(lambda v, rows, c=c: v.table.unjudged[c][rows]) for c in v.table.unjudged},
        missing=stack(lambda v, rows: v.table.missing[rows]),
        failures=v.table.failures,
    )
    return _View(table, np.arange(len(table)), tables.codes(table.arxiv_ids))


def _figures(
    views: Sequence[_View],
    setting: str,
    combine: CombineRule | None,
    reference: bool,
    n_boot: int,
    seed: int,
) -> tuple[dict[str, Figure], set[str]]:
    figures: dict[str, Figure] = {}
    hits: dict[int, tuple[Sequence[str], np.ndarray]] = {}  # per rq_id list: rows with a value in some figure
    for name, spec in METRICS.items():
        if setting not in spec.settings or (reference and not spec.reference):
            continue
        values, codes, cover = _observations(spec, views, combine, reference)
        fig = _figure(values, codes, n_boot, seed, _unjudged(spec, views, reference))
        if fig is not None:
            figures[name] = fig
            for ids, mask in cover:
                seen = hits.get(id(ids))
                hits[id(ids)] = (ids, mask if seen is None else seen[1] | mask)
    covered = {ids[i] for ids, mask in hits.values() for i in np.flatnonzero(mask)}
    return figures, covered


def _unjudged(spec: MetricSpec, views: Sequence[_View], reference: bool) -> int:
    """Instance x judge pairs a judge's failure left without this figure's value (see ``Figure.unjudged``)."""
    total = 0
    for v in views:
        hit = v.table.unjudged_for(spec.dimension)[v.rows]
        if reference:
            hit = hit & np.isnan(v.table.gt[spec.dimension][v.rows])
        total += int(hit.sum())
    return total


def _provenance(
    files: Sequence[ResultsFile],
    covered: set[str],
    arxiv_of: Mapping[str, str],
    subfield: str | None,
    dates: Mapping[str, date],
    submission: bool,
    failures: FailureAccounting = FailureAccounting.paper,
    cache: _CountCache | None = None,
) -> Provenance:
    first = files[0]
    prompt_sets: list[PromptSetRef] = []
    for f in files:
        if f.judge.prompt_set not in prompt_sets:
            prompt_sets.append(f.judge.prompt_set)
    prov = Provenance(
        judge_models=sorted({f.judge.model for f in files}),
        judge_labels=sorted({f.judge.label for f in files}),
        prompt_sets=prompt_sets,
        dataset_repo=first.dataset_repo,
        dataset_revision=first.dataset_revision,
        dataset_version=first.dataset_version,
        instances_covered=len(covered),
        instances_expected=max(f.instances_expected for f in files) if subfield is None else None,
        trial=first.trial if submission else None,
        failures=failures.value,
    )
    if not submission:
        return prov
    if subfield is None:  # the calls are the files', not a split's
        prov.judging_requests = sum(f.totals.calls for f in files)
        prov.unpriced_requests = sum(f.totals.unpriced for f in files)
        prov.judging_cost_usd = None if prov.unpriced_requests else sum(f.totals.cost_usd for f in files)
        prov.judging_run_ids = sorted({run for f in files for run in f.totals.run_ids})
    prov.generation_cost = next((f.generation_cost for f in files if f.generation_cost is not None), None)
    _count_failures(prov, files, subfield, cache)
    sub = first.submission
    prov.submission_hash = first.submission_hash
    prov.submission_date = sub.date
    prov.model_type = sub.model_type
    cutoff, prov.knowledge_cutoff_source = resolved_cutoff(sub.model, sub.knowledge_cutoff)
    prov.knowledge_cutoff = cutoff
    seen = exposure([dates.get(arxiv_of[rq]) for rq in sorted(covered)], cutoff)
    prov.contaminated, prov.contaminated_share, prov.earliest_source_date = seen.contaminated, seen.share, seen.earliest
    return prov


@dataclass
class _FileCounts:
    """One results file's failures on one split, as ``_count_failures`` adds them up."""

    present: set[str]
    unjudged: set[str]
    lost: set[str]
    missing: dict[str, int]
    rules: Counter[str]
    failed: Counter[str]


def _file_counts(f: ResultsFile, subfield: str | None) -> _FileCounts:
    ran = criteria_run(f)
    insts = [i for i in latest(f) if subfield is None or i.subfield == subfield]
    out = _FileCounts({i.rq_id for i in insts}, set(), set(), {}, Counter(), Counter())
    for inst in insts:
        status = instance_status(inst, ran)
        if status.unjudged:
            out.unjudged.add(inst.rq_id)
        if status.no_generation:
            out.lost.add(inst.rq_id)
        out.missing[inst.rq_id] = status.missing
        out.rules.update(inst.rule_applications)
        out.failed.update(failure_reason(raw.error) for raw in inst.raw_replies if raw.error is not None)
    return out


_CountCache = dict[tuple[int, str | None], _FileCounts]


def _count_failures(
    prov: Provenance, files: Sequence[ResultsFile], subfield: str | None, cache: _CountCache | None = None
) -> None:
    """A submission row's counts: instances scored by every judge of the row, generation failures, instances a
    judge left unjudged, RQs missing, and per judge its failed calls and the paper's rules it had applied.
    ``cache`` keeps each file's counts for the other rows it enters (its judge's row, the combined one)."""
    counts = []
    for f in files:
        key = (id(f), subfield)
        if cache is None or key not in cache:
            got = _file_counts(f, subfield)
            if cache is None:
                counts.append(got)
                continue
            cache[key] = got
        counts.append(cache[key])
    unjudged: set[str] = set()
    lost: set[str] = set()
    missing: dict[str, int] = {}
    for f, c in zip(files, counts):
        unjudged |= c.unjudged
        lost |= c.lost
        for rq, n in c.missing.items():
            missing[rq] = max(missing.get(rq, 0), n)
        label = f.judge.label
        prov.rule_applications[label] = dict(sorted((Counter(prov.rule_applications.get(label, {})) + c.rules).items()))
        prov.failed_calls[label] = dict(sorted((Counter(prov.failed_calls.get(label, {})) + c.failed).items()))
    every = set.intersection(*(c.present for c in counts)) if counts else set()
    prov.instances_scored = len(every - unjudged)
    prov.instances_unjudged = len(unjudged)
    prov.generation_failures = len(lost)
    prov.missing_candidates = sum(missing.values())


def _diversity(files: Sequence[ResultsFile], n_boot: int, seed: int) -> DiversityRow | None:
    """The submission's stored diversity under the board's embedder (the same in each of its files), as figures."""
    for f in files:
        record = stored(f, DEFAULT_EMBEDDER)
        if record is not None:
            return diversity_row(f, record, n_boot=n_boot, seed=seed)
    return None


def _per_dollar(fig: Figure | None, cost: GenerationCost | None) -> Figure | None:
    """A rate figure in points per dollar of generation: value and interval divided by the (fixed) cost."""
    if fig is None or cost is None or not cost.known or cost.cost_usd <= 0:
        return None
    k = 100 / cost.cost_usd
    return fig.model_copy(
        update={"value": fig.value * k, "ci_low": fig.ci_low * k, "ci_high": fig.ci_high * k, "std": fig.std * k}
    )


def _subfields(results: Sequence[ResultsFile]) -> list[str]:
    return sorted({i.subfield for r in results for i in r.instances})


# --------------------------------------------------------------------------
# Clean figures: a model row's figures over the instances it cannot have read
# --------------------------------------------------------------------------


class _CleanRows:
    """Which rows of each score table are clean under a cutoff, worked out once per table and cutoff."""

    def __init__(self, dates: Mapping[str, date], arxiv_of: Mapping[str, str]):
        self.dates = dates
        self.arxiv_of = arxiv_of
        self._masks: dict[tuple[int, date], tuple[ScoreTable, np.ndarray]] = {}  # the table kept: its id stays its own

    def published(self, rq_id: str) -> date | None:
        return self.dates.get(self.arxiv_of[rq_id])

    def mask(self, table: ScoreTable, cutoff: date) -> np.ndarray:
        key = (id(table), cutoff)
        if key not in self._masks:
            dates = self.dates
            clean = np.fromiter(
                (is_clean(dates.get(a), cutoff) for a in table.arxiv_ids), dtype=bool, count=len(table.arxiv_ids)
            )
            self._masks[key] = (table, clean)
        return self._masks[key][1]


def _clean(
    rows: _CleanRows,
    model: str,
    cutoff: date | None,
    views: Sequence[_View],
    setting: str,
    combine: CombineRule | None,
    figures: dict[str, Figure],
    covered: set[str],
    n_boot: int,
    seed: int,
) -> CleanFigures:
    """The row's figures on its views restricted to clean instances; empty with the reason when there are none."""
    published = [rows.published(rq) for rq in covered]
    undated = sum(d is None for d in published)
    clean = 0 if cutoff is None else sum(is_clean(d, cutoff) for d in published)
    why = clean_reason(model, cutoff, len(covered), len(covered) - undated, clean)
    if why is not None or cutoff is None:
        return CleanFigures(instances=0, undated=undated, reason=why)
    masks = [rows.mask(v.table, cutoff)[v.rows] for v in views]
    if all(m.all() for m in masks):  # every instance is clean: the row's own figures, computed once
        return CleanFigures(instances=len(covered), undated=undated, figures=dict(figures))
    kept = [_View(v.table, v.rows[m], v.codes[m]) for v, m in zip(views, masks)]
    clean_figures, clean_covered = _figures(kept, setting, combine, False, n_boot, seed)
    return CleanFigures(instances=len(clean_covered), undated=undated, figures=clean_figures)


def summarize(
    results: list[ResultsFile],
    *,
    combine: str = "pooled",
    by_subfield: bool = False,
    source_dates: Mapping[str, date | datetime] | None = None,
    options: ScoreOptions = ScoreOptions(),
    include_reference: bool = True,
    n_boot: int = SUMMARY_BOOT,
    seed: int = 0,
) -> list[SummaryRow]:
    """Every summary row for the given results (see the module docstring).

    combine: a ``CombineRule`` name ("pooled" or "mean_scores").
    by_subfield: add rows per sub-field after the all-sub-field rows.
    source_dates: arXiv id -> first-version date, for source papers whose instances carry no
        ``paper_published`` (results written before dates were kept); a paper with neither stays undated.
    """
    try:
        rule = CombineRule(combine)
    except ValueError:
        raise ValueError(f"unknown combine rule {combine!r}; choose one of {[r.value for r in CombineRule]}") from None
    # Hundreds of small matrix-vector products (one per figure): BLAS threads only add overhead, and on a
    # busy machine they cost 100x (measured: 16 ms vs 0.15 ms a figure). One thread gives the same numbers.
    with threadpool_limits(limits=1, user_api="blas"):
        return _summarize(results, rule, by_subfield, source_dates, options, include_reference, n_boot, seed)


def _summarize(
    results: list[ResultsFile],
    rule: CombineRule,
    by_subfield: bool,
    source_dates: Mapping[str, date | datetime] | None,
    options: ScoreOptions,
    include_reference: bool,
    n_boot: int,
    seed: int,
) -> list[SummaryRow]:
    splits: list[str | None] = [None] + (_subfields(results) if by_subfield else [])
    rows: list[SummaryRow] = []
    arxiv_of = {i.rq_id: i.arxiv_id for r in results for i in r.instances}
    dates = paper_dates(results, source_dates)
    tables = _Tables(options)
    clean_rows = _CleanRows(dates, arxiv_of)
    groups = _group(results)
    for g in sorted(
        groups,
        key=lambda g: (next(iter(g.judges.values())).submission.model, g.setting, g.trial is not None, g.trial or 0),
    ):
        files = [g.judges[lab] for lab in sorted(g.judges)]
        sub = files[0].submission
        diversity = _diversity(files, n_boot, seed)
        for split in splits:
            views = {lab: tables.view(r, split) for lab, r in g.judges.items()}
            if split is not None and not any(len(v.rows) for v in views.values()):
                continue
            labels = sorted(g.judges)
            for judge in [*labels, *combined_row(labels)]:
                use = labels if judge == COMBINED else [judge]
                figs, covered = _figures(
                    [views[lab] for lab in use], g.setting, rule if judge == COMBINED else None, False, n_boot, seed
                )
                used_files = [g.judges[lab] for lab in use]
                prov = _provenance(used_files, covered, arxiv_of, split, dates, True, options.failures, tables.counts)
                rows.append(
                    SummaryRow(
                        model=sub.model,
                        prompt_variant=sub.prompt_variant,
                        setting=g.setting,  # type: ignore[arg-type]
                        judge=judge,
                        combine=rule.value if judge == COMBINED else None,
                        subfield=split,
                        provenance=prov,
                        figures=figs,
                        diversity=diversity if split is None else None,
                        per_dollar=_per_dollar(figs.get(PER_DOLLAR_METRIC), prov.generation_cost),
                        clean=_clean(
                            clean_rows,
                            sub.model,
                            prov.knowledge_cutoff,
                            [views[lab] for lab in use],
                            g.setting,
                            rule if judge == COMBINED else None,
                            figs,
                            covered,
                            n_boot,
                            seed,
                        ),
                    )
                )
    if include_reference:
        rows.extend(_reference_rows(results, rule, splits, tables, dates, n_boot, seed, arxiv_of))
    return rows


def _reference_rows(
    results: Sequence[ResultsFile],
    rule: CombineRule,
    splits: Sequence[str | None],
    tables: _Tables,
    dates: Mapping[str, date],
    n_boot: int,
    seed: int,
    arxiv_of: Mapping[str, str],
) -> list[SummaryRow]:
    """The GT's own standalone means per judge: each rq_id once per judge, first file wins.

    Comparative GT scores depend on the model RQs they were shown with, so the
    reference is given for standalone judging only.
    """
    by_label: dict[str, list[ResultsFile]] = defaultdict(list)
    for r in sorted(results, key=lambda r: r.trial is not None):  # full runs first: a trial adds only what they lack
        if r.judge.setting == "standalone":
            by_label[r.judge.label].append(r)
    if not by_label:
        return []
    rows = []
    for split in splits:
        views = {
            label: _first_wins(
                [
                    tables.view(f, split, keep="first") if tables.view(f, None).table.repeats else tables.view(f, split)
                    for f in files
                ],
                tables,
            )
            for label, files in by_label.items()
        }
        if split is not None and not any(len(v.rows) for v in views.values()):
            continue
        labels = sorted(by_label)
        for judge in [*labels, *combined_row(labels)]:
            use = labels if judge == COMBINED else [judge]
            figs, covered = _figures(
                [views[lab] for lab in use], "standalone", rule if judge == COMBINED else None, True, n_boot, seed
            )
            used = [f for lab in use for f in by_label[lab]]
            rows.append(
                SummaryRow(
                    row_kind="reference",
                    model=REFERENCE_MODEL,
                    prompt_variant="",
                    setting="standalone",
                    judge=judge,
                    combine=rule.value if judge == COMBINED else None,
                    subfield=split,
                    provenance=_provenance(used, covered, arxiv_of, split, dates, False, tables.opts.failures),
                    figures=figs,
                )
            )
    return rows


def instance_values(
    results: Sequence[ResultsFile],
    metric_name: str,
    *,
    setting: str,
    combine: str = "pooled",
    options: ScoreOptions = ScoreOptions(),
) -> dict[str, tuple[str, dict[str, float]]]:
    """Per submission (by hash): its name and one combined value per instance, for paired tests.

    Pooled: the mean over the judges of their per-instance values; mean_scores:
    the value on the judges' mean scores.
    """
    spec = METRICS[metric_name]
    rule = CombineRule(combine)
    paper = options.failures is FailureAccounting.paper
    tables = _Tables(options)
    out: dict[str, tuple[str, dict[str, float]]] = {}
    # a submission's full run where it has one, else its largest trial (named as one): later groups overwrite
    for g in sorted(
        _group([r for r in results if r.judge.setting == setting]), key=lambda g: (g.trial is None, g.trial or 0)
    ):
        views = [tables.view(g.judges[lab], None) for lab in sorted(g.judges)]
        a = _aligned(views, spec.dimension)
        if rule is CombineRule.mean_scores:
            vals = spec.values(a.gt, a.model, no_generation=a.no_generation if paper else None)
        else:  # each judge's value, then their mean
            per_judge = []
            for v, at in zip(views, a.at):
                x = v.table.values(spec, np.maximum(at, 0))
                per_judge.append(np.where(at >= 0, x, np.nan))
            vals = mean_over_judges(per_judge)
        per = {rq: float(x) for rq, x in zip(a.rq_ids, vals) if not np.isnan(x)}
        sub = next(iter(g.judges.values())).submission
        name = sub.model if sub.prompt_variant == "original" else f"{sub.model} ({sub.prompt_variant})"
        first = next(iter(g.judges.values()))
        out[g.submission_hash] = (name + trial_mark(g.trial, first.instances_expected), per)
    return out
