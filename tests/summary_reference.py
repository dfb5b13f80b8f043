"""The per-instance summary path that ``summarize`` replaced, kept as the reference its fast path must equal.

This is the previous ``evaluate/metrics/summary.py`` computation verbatim (score vectors per
instance, metric functions per value, the bootstrap per figure); only the row,
grouping and provenance helpers are shared with the product. tests/test_summary_fast.py
compares the two on random results; benchmarks/summary_scale.py times both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import date, datetime

from metric_oracle import ORACLE, ScoreVector, mean_vector, reference_value, score_vector

from rqbench.evaluate.criteria import METRICS
from rqbench.evaluate.metrics.bootstrap import DEFAULT_LEVEL, cluster_bootstrap_mean
from rqbench.evaluate.metrics.contamination import clean_reason, is_clean, paper_dates
from rqbench.evaluate.metrics.metric import CombineRule, MetricSpec, ScoreOptions
from rqbench.evaluate.metrics.summary import SUMMARY_BOOT, _group, _provenance, _subfields
from rqbench.evaluate.metrics.summary_row import COMBINED, REFERENCE_MODEL, CleanFigures, Figure, SummaryRow
from rqbench.records import InstanceResult, ResultsFile


def _instances(r: ResultsFile, subfield: str | None) -> list[InstanceResult]:
    return [i for i in r.instances if subfield is None or i.subfield == subfield]


# --------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------


def _figure(values: Sequence[float], clusters: Sequence[str], n_boot: int, seed: int, unjudged: int) -> Figure | None:
    est = cluster_bootstrap_mean(values, clusters, n_boot=n_boot, seed=seed, level=DEFAULT_LEVEL)
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


def _ran(r: ResultsFile) -> list[str] | None:
    """The criteria the file's run judged, as it recorded them (None: unrecorded, so all)."""
    return r.settings.get("metrics") or None


# judge label -> rq_id -> (arxiv_id, dimension -> vector)
_Vectors = dict[str, dict[str, tuple[str, dict[str, ScoreVector]]]]


def _vectors(files: Mapping[str, ResultsFile], subfield: str | None, opts: ScoreOptions) -> _Vectors:
    dims = {spec.dimension for spec in METRICS.values()}
    out: _Vectors = {}
    for label, r in files.items():
        per: dict[str, tuple[str, dict[str, ScoreVector]]] = {}
        for inst in _instances(r, subfield):
            try:
                per[inst.rq_id] = (inst.arxiv_id, {d: score_vector(inst, d, opts, _ran(r)) for d in dims})
            except ValueError as exc:
                raise ValueError(f"results of judge {label!r} for {r.submission.model!r}: {exc}") from exc
        out[label] = per
    return out


def _observations(
    spec: MetricSpec, vecs: _Vectors, labels: Sequence[str], combine: CombineRule | None, reference: bool
) -> tuple[list[float], list[str], set[str]]:
    """Per-instance values of one figure for one judge (one label) or the combined rule."""
    fn = reference_value if reference else ORACLE[spec.name]
    values: list[float] = []
    clusters: list[str] = []
    covered: set[str] = set()
    if combine is CombineRule.mean_scores and len(labels) > 1:
        rq_ids = sorted({rq for lab in labels for rq in vecs[lab]})
        for rq in rq_ids:
            have = [vecs[lab][rq] for lab in labels if rq in vecs[lab]]
            v = fn(mean_vector([h[1][spec.dimension] for h in have]))
            if v is not None:
                values.append(v)
                clusters.append(have[0][0])
                covered.add(rq)
        return values, clusters, covered
    for lab in labels:
        for rq, (arxiv_id, dims) in vecs[lab].items():
            v = fn(dims[spec.dimension])
            if v is not None:
                values.append(v)
                clusters.append(arxiv_id)
                covered.add(rq)
    return values, clusters, covered


def _figures(
    vecs: _Vectors,
    labels: Sequence[str],
    setting: str,
    combine: CombineRule | None,
    reference: bool,
    n_boot: int,
    seed: int,
) -> tuple[dict[str, Figure], set[str]]:
    figures: dict[str, Figure] = {}
    covered: set[str] = set()
    for name, spec in METRICS.items():
        if setting not in spec.settings or (reference and not spec.reference):
            continue
        values, clusters, cov = _observations(spec, vecs, labels, combine, reference)
        unjudged = sum(
            v.unjudged and (not reference or v.gt is None)
            for lab in labels
            for _, dims in vecs[lab].values()
            for v in [dims[spec.dimension]]
        )
        fig = _figure(values, clusters, n_boot, seed, unjudged)
        if fig is not None:
            figures[name] = fig
            covered |= cov
    return figures, covered


def _clean(
    vecs: _Vectors,
    labels: Sequence[str],
    setting: str,
    combine: CombineRule | None,
    covered: set[str],
    model: str,
    cutoff: date | None,
    dates: Mapping[str, date],
    n_boot: int,
    seed: int,
) -> CleanFigures:
    """The row's figures recomputed from the per-instance vectors of its clean instances only."""
    published = {rq: dates.get(vecs_arxiv) for lab in labels for rq, (vecs_arxiv, _) in vecs[lab].items()}
    undated = sum(published[rq] is None for rq in covered)
    clean = {rq for rq, d in published.items() if cutoff is not None and is_clean(d, cutoff)}
    why = clean_reason(model, cutoff, len(covered), len(covered) - undated, len(clean & covered))
    if why is not None:
        return CleanFigures(instances=0, undated=undated, reason=why)
    kept = {lab: {rq: v for rq, v in vecs[lab].items() if rq in clean} for lab in labels}
    figs, clean_covered = _figures(kept, labels, setting, combine, False, n_boot, seed)
    return CleanFigures(instances=len(clean_covered), undated=undated, figures=figs)


def reference_summarize(
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
    source_dates: arXiv id -> first-version date, for papers whose instances carry none.
    """
    try:
        rule = CombineRule(combine)
    except ValueError:
        raise ValueError(f"unknown combine rule {combine!r}; choose one of {[r.value for r in CombineRule]}") from None
    splits: list[str | None] = [None] + (_subfields(results) if by_subfield else [])
    rows: list[SummaryRow] = []
    arxiv_of = {i.rq_id: i.arxiv_id for r in results for i in r.instances}
    dates = paper_dates(results, source_dates)
    groups = _group(results)
    for g in sorted(groups, key=lambda g: (next(iter(g.judges.values())).submission.model, g.setting)):
        files = [g.judges[lab] for lab in sorted(g.judges)]
        sub = files[0].submission
        for split in splits:
            vecs = _vectors(g.judges, split, options)
            if split is not None and not any(vecs.values()):
                continue
            labels = sorted(g.judges)
            for judge in [*labels, *([COMBINED] if len(set(labels)) >= 2 else [])]:
                use = labels if judge == COMBINED else [judge]
                figs, covered = _figures(vecs, use, g.setting, rule if judge == COMBINED else None, False, n_boot, seed)
                used_files = [g.judges[lab] for lab in use]
                prov = _provenance(used_files, covered, arxiv_of, split, dates, True, options.failures)
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
                        clean=_clean(
                            vecs,
                            use,
                            g.setting,
                            rule if judge == COMBINED else None,
                            covered,
                            sub.model,
                            prov.knowledge_cutoff,
                            dates,
                            n_boot,
                            seed,
                        ),
                    )
                )
    if include_reference:
        rows.extend(_reference_rows(results, rule, splits, options, dates, n_boot, seed, arxiv_of))
    return rows


def _reference_rows(
    results: Sequence[ResultsFile],
    rule: CombineRule,
    splits: Sequence[str | None],
    options: ScoreOptions,
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
    for r in results:
        if r.judge.setting == "standalone":
            by_label[r.judge.label].append(r)
    if not by_label:
        return []
    rows = []
    for split in splits:
        vecs: _Vectors = {}
        for label, files in by_label.items():
            per: dict[str, tuple[str, dict[str, ScoreVector]]] = {}
            for f in files:
                for inst in _instances(f, split):
                    if inst.rq_id not in per:
                        dims = {s.dimension for s in METRICS.values() if s.reference}
                        per[inst.rq_id] = (inst.arxiv_id, {d: score_vector(inst, d, options, _ran(f)) for d in dims})
            vecs[label] = per
        if split is not None and not any(vecs.values()):
            continue
        labels = sorted(by_label)
        for judge in [*labels, *([COMBINED] if len(set(labels)) >= 2 else [])]:
            use = labels if judge == COMBINED else [judge]
            figs, covered = _figures(vecs, use, "standalone", rule if judge == COMBINED else None, True, n_boot, seed)
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
                    provenance=_provenance(used, covered, arxiv_of, split, dates, False, options.failures),
                    figures=figs,
                )
            )
    return rows


def reference_instance_values(
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
    out: dict[str, tuple[str, dict[str, float]]] = {}
    for g in _group([r for r in results if r.judge.setting == setting]):
        vecs = _vectors(g.judges, None, options)
        labels = sorted(g.judges)
        per: dict[str, float] = {}
        for rq in sorted({rq for lab in labels for rq in vecs[lab]}):
            have = [vecs[lab][rq][1][spec.dimension] for lab in labels if rq in vecs[lab]]
            if rule is CombineRule.mean_scores:
                v = ORACLE[spec.name](mean_vector(have))
                if v is not None:
                    per[rq] = v
            else:
                vals = [x for h in have if (x := ORACLE[spec.name](h)) is not None]
                if vals:
                    per[rq] = sum(vals) / len(vals)
        sub = next(iter(g.judges.values())).submission
        name = sub.model if sub.prompt_variant == "original" else f"{sub.model} ({sub.prompt_variant})"
        out[g.submission_hash] = (name, per)
    return out
