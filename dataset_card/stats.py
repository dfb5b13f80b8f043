"""Summary statistics of a release, computed from its records (pure functions, no I/O).

These are the numbers of the paper's Table 1 (RQs, papers, sub-fields, RQ-citation
links, unique cited papers, distinct gap statements, RQs dropped and why, lengths,
the texts the well-formedness gate kept out)
and of its per-sub-field breakdown, plus the cited papers' text levels and the
verification results. The card prints only what is computed here.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from rqbench.records import (
    BuildManifest,
    CitedPaper,
    EvaluationInstance,
    MalformedCount,
    PaperRecord,
    RQRecord,
    TextLevel,
)
from rqbench.wellformed import words

if TYPE_CHECKING:
    from rqbench.dataset_card.build_folder import Build


class Spread(BaseModel):
    """A distribution summarised: how many values, mean, median, min, max."""

    count: int
    mean: float | None
    median: float | None
    min: float | None
    max: float | None


class SubfieldRow(BaseModel):
    subfield: str
    papers: int
    rqs: int
    rq_citation_links: int
    unique_cited_papers: int
    gap_statements: int


class VerificationStats(BaseModel):
    """The LLM check of step 8, and the ids drawn for the human check."""

    verified: int = Field(description="RQs that carry an LLM verification.")
    approved: int = Field(description="Of those, verdict addressed=true.")
    approval_rate: float | None
    unverified: int
    by_confidence: dict[str, int]
    models: list[str]
    manual_sample_ids: list[str]
    manual_sample_protocol: dict[str, str] = Field(default_factory=dict)


class CitedWithoutText(BaseModel):
    """A cited paper that has no body text: which, at what level, and why."""

    paper_id: str
    title: str
    text_level: str
    reason: str | None


class DatasetStats(BaseModel):
    rqs: int
    papers: int = Field(description="Source papers with at least one RQ.")
    papers_without_rqs: int
    subfields: int
    rq_citation_links: int = Field(description="Sum over RQs of their background papers.")
    unique_cited_papers: int
    gap_statements: int = Field(description="Distinct gap texts (case and spacing ignored).")
    gap_mentions: int = Field(description="Gap entries over all RQs, repeats included.")
    instances: int
    rqs_dropped: dict[str, int]
    malformed: dict[str, MalformedCount] = Field(
        default_factory=dict, description="Texts the well-formedness gate kept out of the data, by kind and rule."
    )
    lengths: dict[str, Spread]
    by_subfield: list[SubfieldRow]
    novelty_types: dict[str, int]
    text_levels: dict[str, int] = Field(description="Cited papers by how much text we have: full, abstract, title.")
    cited_sections: int = Field(default=0, description="Sections of body text over all full-text cited papers.")
    cited_contributions: dict[str, int] = Field(
        default_factory=dict,
        description="Cited papers by where their contributions come from: extracted, abstract, none.",
    )
    cited_without_text: list[CitedWithoutText] = Field(default_factory=list)
    background_with_text: int = Field(default=0, description="Instances whose background has a full-text paper.")
    verification: VerificationStats


def spread(values: Iterable[float]) -> Spread:
    vals = list(values)
    if not vals:
        return Spread(count=0, mean=None, median=None, min=None, max=None)
    return Spread(
        count=len(vals),
        mean=round(statistics.fmean(vals), 2),
        median=float(statistics.median(vals)),
        min=float(min(vals)),
        max=float(max(vals)),
    )


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def distinct_gaps(rqs: Iterable[RQRecord]) -> set[str]:
    return {_norm(g.text) for r in rqs for g in r.gaps if g.text.strip()}


def by_subfield(rqs: Sequence[RQRecord]) -> list[SubfieldRow]:
    """The per-sub-field breakdown, largest sub-field first (ties by name)."""
    groups: dict[str, list[RQRecord]] = defaultdict(list)
    for r in rqs:
        groups[r.subfield].append(r)
    rows = [
        SubfieldRow(
            subfield=name,
            papers=len({r.paper_id for r in group}),
            rqs=len(group),
            rq_citation_links=sum(len(r.cited_paper_ids) for r in group),
            unique_cited_papers=len({c for r in group for c in r.cited_paper_ids}),
            gap_statements=len(distinct_gaps(group)),
        )
        for name, group in groups.items()
    ]
    return sorted(rows, key=lambda row: (-row.rqs, row.subfield))


def verification_stats(
    rqs: Sequence[RQRecord], manual_sample: Sequence[str] = (), protocol: dict[str, object] | None = None
) -> VerificationStats:
    checked = [r.verification for r in rqs if r.verification is not None]
    approved = sum(1 for v in checked if v.addressed)
    return VerificationStats(
        verified=len(checked),
        approved=approved,
        approval_rate=round(approved / len(checked), 4) if checked else None,
        unverified=len(rqs) - len(checked),
        by_confidence=dict(sorted(Counter(v.confidence for v in checked).items())),
        models=sorted({v.model for v in checked}),
        manual_sample_ids=list(manual_sample),
        manual_sample_protocol={k: str(v) for k, v in (protocol or {}).items()},
    )


def build_stats(build: Build) -> DatasetStats:
    """``compute_stats`` over every record of a build folder, with its manual sample."""
    return compute_stats(
        build.rqs,
        build.papers,
        build.cited_papers,
        build.instances,
        build.manifest,
        build.manual_sample,
        build.manual_sample_info,
    )


def compute_stats(
    rqs: Sequence[RQRecord],
    papers: Sequence[PaperRecord],
    cited_papers: Sequence[CitedPaper],
    instances: Sequence[EvaluationInstance],
    manifest: BuildManifest,
    manual_sample: Sequence[str] = (),
    manual_sample_protocol: dict[str, object] | None = None,
) -> DatasetStats:
    """Table 1, the sub-field breakdown, text levels and verification, from the records alone."""
    paper_ids = {r.paper_id for r in rqs}
    linked = {c for r in rqs for c in r.cited_paper_ids}
    full_bodies = [
        sum(len(words(s.text, split="spaces")) for s in c.sections)
        for c in cited_papers
        if c.text_level == TextLevel.full
    ]
    per_paper = Counter(r.paper_id for r in rqs)
    lengths = {
        "rq_words": spread(len(words(r.rq, split="spaces")) for r in rqs),
        "problem_statement_words": spread(len(words(p.problem_statement, split="spaces")) for p in papers),
        "gap_words": spread(len(words(g, split="spaces")) for g in distinct_gaps(rqs)),
        "background_papers_per_rq": spread(len(r.cited_paper_ids) for r in rqs),
        "gaps_per_rq": spread(len(r.gaps) for r in rqs),
        "rqs_per_paper": spread(per_paper.values()),
        "cited_full_text_words": spread(full_bodies),
        "cited_sections_per_full_text": spread(len(c.sections) for c in cited_papers if c.text_level == TextLevel.full),
    }
    levels = Counter(c.text_level.value for c in cited_papers)
    full_text_ids = {c.paper_id for c in cited_papers if c.text_level == TextLevel.full}
    return DatasetStats(
        rqs=len(rqs),
        papers=len(paper_ids),
        papers_without_rqs=len({p.paper.paper_id for p in papers} - paper_ids),
        subfields=len({r.subfield for r in rqs}),
        rq_citation_links=sum(len(r.cited_paper_ids) for r in rqs),
        unique_cited_papers=len(linked),
        gap_statements=len(distinct_gaps(rqs)),
        gap_mentions=sum(len(r.gaps) for r in rqs),
        instances=len(instances),
        rqs_dropped=dict(sorted(manifest.dropped.items())),
        malformed=dict(manifest.malformed),
        lengths=lengths,
        by_subfield=by_subfield(rqs),
        novelty_types=dict(sorted(Counter(r.novelty_type.value for r in rqs).items())),
        text_levels={level.value: levels.get(level.value, 0) for level in TextLevel},
        cited_sections=sum(len(c.sections) for c in cited_papers if c.text_level == TextLevel.full),
        cited_contributions=dict(Counter(c.contributions_source or "none" for c in cited_papers)),
        cited_without_text=[
            CitedWithoutText(paper_id=c.paper_id, title=c.title, text_level=c.text_level.value, reason=c.no_full_text)
            for c in sorted(cited_papers, key=lambda c: c.paper_id)
            if c.text_level != TextLevel.full
        ],
        background_with_text=sum(1 for i in instances if set(i.background_paper_ids) & full_text_ids),
        verification=verification_stats(rqs, manual_sample, manual_sample_protocol),
    )


# What each spread in ``DatasetStats.lengths`` measures, as the card and the report label it.
LENGTH_LABELS = {
    "rq_words": "words per RQ",
    "problem_statement_words": "words per problem statement",
    "gap_words": "words per distinct gap statement",
    "background_papers_per_rq": "background papers per RQ",
    "gaps_per_rq": "gap entries per RQ",
    "rqs_per_paper": "RQs per source paper",
    "cited_full_text_words": "words per full-text cited paper",
    "cited_sections_per_full_text": "sections per full-text cited paper",
}


def summary_rows(stats: DatasetStats) -> list[tuple[str, int]]:
    """Table 1's counts, labelled: the one list the card and ``rqbench report`` both print."""
    s = stats
    rows = [
        ("research questions", s.rqs),
        ("source papers", s.papers),
        ("sub-fields", s.subfields),
        ("RQ–citation links", s.rq_citation_links),
        ("unique cited papers", s.unique_cited_papers),
        ("distinct gap statements", s.gap_statements),
        ("gap entries over all RQs", s.gap_mentions),
        ("evaluation instances", s.instances),
        ("RQs dropped", sum(s.rqs_dropped.values())),
    ]
    if s.papers_without_rqs:
        rows.append(("papers in `papers` without an RQ", s.papers_without_rqs))
    return rows


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` rows."""
    bounds = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
        (100_000_000, "10M<n<100M"),
        (1_000_000_000, "100M<n<1B"),
        (10_000_000_000, "1B<n<10B"),
        (100_000_000_000, "10B<n<100B"),
        (1_000_000_000_000, "100B<n<1T"),
    ]
    for bound, name in bounds:
        if n < bound:
            return name
    return "n>1T"
