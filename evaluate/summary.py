"""Summary rows: the contract between stored results and the leaderboard/report.

``summarize`` turns results files (one per submission x judge x setting) into
``SummaryRow``s: one per (submission, setting, judge) plus, when two or more
judges scored it, a ``combined`` row per (submission, setting) under the combine
rule (``metrics.describe_combine_rule``), optionally split by sub-field, plus author-anchored
reference rows (the GT's own standalone means). Each figure carries a cluster
bootstrap CI over source papers. Reading files lives at the edge
(``load_results``); ``summarize`` itself is a pure function.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from rqbench.evaluate.bootstrap import DEFAULT_LEVEL, cluster_bootstrap_mean
from rqbench.evaluate.metrics import (
    METRICS,
    CombineRule,
    MetricSpec,
    ScoreOptions,
    ScoreVector,
    mean_vector,
    score_vector,
)
from rqbench.io import read_model
from rqbench.records import InstanceResult, PromptSetRef, ResultsFile

COMBINED = "combined"
REFERENCE_MODEL = "author-anchored (GT)"
SUMMARY_BOOT = 1000


class Figure(BaseModel):
    """One reported number with its 95% cluster-bootstrap interval and spread."""

    value: float
    ci_low: float
    ci_high: float
    std: float = Field(description="Sample standard deviation of the per-instance values.")
    n: int = Field(description="Observations: instances, or instance x judge pairs when pooled.")
    n_clusters: int = Field(description="Distinct source papers behind the figure.")


class Provenance(BaseModel):
    """Where a row's numbers come from, so a leaderboard row can be audited."""

    judge_models: list[str]
    judge_labels: list[str]
    prompt_sets: list[PromptSetRef]
    dataset_repo: str
    dataset_revision: str
    instances_covered: int = Field(description="Instances with at least one figure in this row.")
    instances_expected: int | None = Field(description="Instances in the dataset revision; None for a sub-field split.")
    submission_hash: str | None = None
    submission_date: datetime | None = None
    model_type: str | None = None
    knowledge_cutoff: date | None = None
    earliest_source_date: date | None = None
    contaminated: bool | None = Field(
        default=None,
        description="True if the knowledge cutoff is after the earliest covered source paper; None if unknown.",
    )
    contaminated_share: float | None = Field(
        default=None, description="Share of covered instances whose source paper predates the knowledge cutoff."
    )


class SummaryRow(BaseModel):
    """One leaderboard/report row; ``figures`` is keyed by ``metrics.METRICS`` names."""

    row_kind: Literal["model", "reference"] = "model"
    model: str
    prompt_variant: str
    setting: Literal["standalone", "comparative"]
    judge: str = Field(description="The judge's label, or 'combined'.")
    combine: str | None = Field(default=None, description="The combine rule, on combined rows.")
    subfield: str | None = Field(default=None, description="None for the row over all sub-fields.")
    provenance: Provenance
    figures: dict[str, Figure] = Field(default_factory=dict)

    def figure(self, name: str) -> Figure | None:
        return self.figures.get(name)

    def flat(self) -> dict[str, object]:
        """A flat dict for CSV: identity columns, then value/ci_low/ci_high per figure."""
        out: dict[str, object] = {
            "row_kind": self.row_kind,
            "model": self.model,
            "prompt_variant": self.prompt_variant,
            "setting": self.setting,
            "judge": self.judge,
            "combine": self.combine or "",
            "subfield": self.subfield or "",
            "instances_covered": self.provenance.instances_covered,
            "instances_expected": self.provenance.instances_expected,
            "contaminated": self.provenance.contaminated,
        }
        for name, fig in self.figures.items():
            out[name] = fig.value
            out[f"{name}_ci_low"] = fig.ci_low
            out[f"{name}_ci_high"] = fig.ci_high
            out[f"{name}_std"] = fig.std
            out[f"{name}_n"] = fig.n
        return out


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
# Source-paper dates and contamination
# --------------------------------------------------------------------------

_NEW_ID = re.compile(r"^(\d{2})(\d{2})\.\d{4,5}$")
_OLD_ID = re.compile(r"^[a-z\-]+(?:\.[A-Z]{2})?/(\d{2})(\d{2})\d{3}$")


def arxiv_id_date(arxiv_id: str) -> date | None:
    """The first day of the month an arXiv id was issued (ids encode YYMM); None if unparseable."""
    m = _NEW_ID.match(arxiv_id) or _OLD_ID.match(arxiv_id)
    if not m:
        return None
    yy, mm = int(m.group(1)), int(m.group(2))
    if not 1 <= mm <= 12:
        return None
    year = 1900 + yy if yy >= 91 else 2000 + yy
    return date(year, mm, 1)


def _as_date(v: date | datetime) -> date:
    return v.date() if isinstance(v, datetime) else v


def source_date(arxiv_id: str, source_dates: Mapping[str, date | datetime] | None) -> date | None:
    """A source paper's date: from the mapping when given, else from its arXiv id."""
    if source_dates and arxiv_id in source_dates:
        return _as_date(source_dates[arxiv_id])
    return arxiv_id_date(arxiv_id)


# --------------------------------------------------------------------------
# Grouping
# --------------------------------------------------------------------------


@dataclass
class _Group:
    submission_hash: str
    setting: str
    judges: dict[str, ResultsFile] = field(default_factory=dict)


def _group(results: Sequence[ResultsFile]) -> list[_Group]:
    groups: dict[tuple[str, str], _Group] = {}
    for r in results:
        key = (r.submission_hash, r.judge.setting)
        g = groups.setdefault(key, _Group(r.submission_hash, r.judge.setting))
        if r.judge.label in g.judges:
            raise ValueError(
                f"two results files for submission {r.submission.model!r} ({r.submission_hash[:12]}), "
                f"judge {r.judge.label!r}, setting {r.judge.setting!r}; pass one of them"
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


def _instances(r: ResultsFile, subfield: str | None) -> list[InstanceResult]:
    return [i for i in r.instances if subfield is None or i.subfield == subfield]


def combined_row(labels: Sequence[str]) -> list[str]:
    """``[COMBINED]`` when two or more distinct judges (labels) scored the group, else nothing.

    One judge's figures are that judge's, never "combined": the paper's combined
    figure is over two judges, and a lone judge's row must not pass for it.
    """
    return [COMBINED] if len(set(labels)) >= 2 else []


# --------------------------------------------------------------------------
# Figures
# --------------------------------------------------------------------------


def _figure(values: Sequence[float], clusters: Sequence[str], n_boot: int, seed: int) -> Figure | None:
    est = cluster_bootstrap_mean(values, clusters, n_boot=n_boot, seed=seed, level=DEFAULT_LEVEL)
    if est is None:
        return None
    return Figure(
        value=est.value, ci_low=est.ci_low, ci_high=est.ci_high, std=est.std, n=est.n, n_clusters=est.n_clusters
    )


# judge label -> rq_id -> (arxiv_id, dimension -> vector)
_Vectors = dict[str, dict[str, tuple[str, dict[str, ScoreVector]]]]


def _vectors(files: Mapping[str, ResultsFile], subfield: str | None, opts: ScoreOptions) -> _Vectors:
    dims = {spec.dimension for spec in METRICS.values()}
    out: _Vectors = {}
    for label, r in files.items():
        per: dict[str, tuple[str, dict[str, ScoreVector]]] = {}
        for inst in _instances(r, subfield):
            try:
                per[inst.rq_id] = (inst.arxiv_id, {d: score_vector(inst, d, opts) for d in dims})
            except ValueError as exc:
                raise ValueError(f"results of judge {label!r} for {r.submission.model!r}: {exc}") from exc
        out[label] = per
    return out


def _observations(
    spec: MetricSpec, vecs: _Vectors, labels: Sequence[str], combine: CombineRule | None, reference: bool
) -> tuple[list[float], list[str], set[str]]:
    """Per-instance values of one figure for one judge (one label) or the combined rule."""
    fn = spec.reference_fn if reference else spec.fn
    assert fn is not None
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
        if setting not in spec.settings or (reference and spec.reference_fn is None):
            continue
        values, clusters, cov = _observations(spec, vecs, labels, combine, reference)
        fig = _figure(values, clusters, n_boot, seed)
        if fig is not None:
            figures[name] = fig
            covered |= cov
    return figures, covered


def _provenance(
    files: Sequence[ResultsFile],
    covered: set[str],
    arxiv_of: Mapping[str, str],
    subfield: str | None,
    source_dates: Mapping[str, date | datetime] | None,
    submission: bool,
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
        instances_covered=len(covered),
        instances_expected=max(f.instances_expected for f in files) if subfield is None else None,
    )
    if not submission:
        return prov
    sub = first.submission
    dates = [d for rq in covered if (d := source_date(arxiv_of[rq], source_dates)) is not None]
    prov.submission_hash = first.submission_hash
    prov.submission_date = sub.date
    prov.model_type = sub.model_type
    prov.knowledge_cutoff = sub.knowledge_cutoff
    prov.earliest_source_date = min(dates) if dates else None
    if sub.knowledge_cutoff is not None and dates:
        prov.contaminated = sub.knowledge_cutoff > min(dates)
        prov.contaminated_share = sum(d < sub.knowledge_cutoff for d in dates) / len(dates)
    return prov


def _subfields(results: Sequence[ResultsFile]) -> list[str]:
    return sorted({i.subfield for r in results for i in r.instances})


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
    source_dates: arXiv id -> publication date, for the contamination flag
        (missing ids fall back to the YYMM their arXiv id encodes).
    """
    try:
        rule = CombineRule(combine)
    except ValueError:
        raise ValueError(f"unknown combine rule {combine!r}; choose one of {[r.value for r in CombineRule]}") from None
    splits: list[str | None] = [None] + (_subfields(results) if by_subfield else [])
    rows: list[SummaryRow] = []
    arxiv_of = {i.rq_id: i.arxiv_id for r in results for i in r.instances}
    groups = _group(results)
    for g in sorted(groups, key=lambda g: (next(iter(g.judges.values())).submission.model, g.setting)):
        files = [g.judges[lab] for lab in sorted(g.judges)]
        sub = files[0].submission
        for split in splits:
            vecs = _vectors(g.judges, split, options)
            if split is not None and not any(vecs.values()):
                continue
            labels = sorted(g.judges)
            for judge in [*labels, *combined_row(labels)]:
                use = labels if judge == COMBINED else [judge]
                figs, covered = _figures(
                    vecs, use, g.setting, rule if judge == COMBINED else None, False, n_boot, seed
                )
                used_files = [g.judges[lab] for lab in use]
                rows.append(
                    SummaryRow(
                        model=sub.model,
                        prompt_variant=sub.prompt_variant,
                        setting=g.setting,  # type: ignore[arg-type]
                        judge=judge,
                        combine=rule.value if judge == COMBINED else None,
                        subfield=split,
                        provenance=_provenance(used_files, covered, arxiv_of, split, source_dates, True),
                        figures=figs,
                    )
                )
    if include_reference:
        rows.extend(_reference_rows(results, rule, splits, options, source_dates, n_boot, seed, arxiv_of))
    return rows


def _reference_rows(
    results: Sequence[ResultsFile],
    rule: CombineRule,
    splits: Sequence[str | None],
    options: ScoreOptions,
    source_dates: Mapping[str, date | datetime] | None,
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
                        dims = {s.dimension for s in METRICS.values() if s.reference_fn is not None}
                        per[inst.rq_id] = (inst.arxiv_id, {d: score_vector(inst, d, options) for d in dims})
            vecs[label] = per
        if split is not None and not any(vecs.values()):
            continue
        labels = sorted(by_label)
        for judge in [*labels, *combined_row(labels)]:
            use = labels if judge == COMBINED else [judge]
            figs, covered = _figures(
                vecs, use, "standalone", rule if judge == COMBINED else None, True, n_boot, seed
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
                    provenance=_provenance(used, covered, arxiv_of, split, source_dates, False),
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
    out: dict[str, tuple[str, dict[str, float]]] = {}
    for g in _group([r for r in results if r.judge.setting == setting]):
        vecs = _vectors(g.judges, None, options)
        labels = sorted(g.judges)
        per: dict[str, float] = {}
        for rq in sorted({rq for lab in labels for rq in vecs[lab]}):
            have = [vecs[lab][rq][1][spec.dimension] for lab in labels if rq in vecs[lab]]
            if rule is CombineRule.mean_scores:
                v = spec.fn(mean_vector(have))
                if v is not None:
                    per[rq] = v
            else:
                vals = [x for h in have if (x := spec.fn(h)) is not None]
                if vals:
                    per[rq] = sum(vals) / len(vals)
        sub = next(iter(g.judges.values())).submission
        name = sub.model if sub.prompt_variant == "original" else f"{sub.model} ({sub.prompt_variant})"
        out[g.submission_hash] = (name, per)
    return out
