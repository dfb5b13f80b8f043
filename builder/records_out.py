"""The final tables of a build, assembled from the stage outputs by one pure function.

Rules (method.md "Record", and the build folder contract):
- rq_id is ``<paper_id>_rq<index>``, index = the RQ's position in the model's
  reply to the author_rqs prompt (``LinkedRQ.index``; its position in the stored
  list for a stage output without one), kept even when an earlier RQ is dropped
  (there, for linking no allowed work or failing the gate; here, for no
  background text), so ids are stable;
- an RQ's ``cited_paper_ids`` are its linked works that have a CitedPaper;
  its background papers (the evaluation instance's ``background_paper_ids``)
  are those with text: ``full`` text, or any level with ``allow_abstract_only``;
- an RQ with no background paper is dropped and counted (``no_background_text``);
- every text passes the well-formedness gate once more (the stages applied it to
  their replies; this keeps out anything a stage output from elsewhere holds): a
  malformed RQ is dropped and counted (``malformed_rq``), keeping the indices of
  the rest; a malformed gap, idea or contribution is left out; a paper whose
  problem statement or headline fails, or that keeps no contribution, gets no
  RQs. Every text refused, here or in a stage, is a ``GateDrop`` in
  ``gate_drops`` or in a skip's ``dropped``;
- an RQ and its instance carry the source paper's first-version date and how it is
  known (``SourcePaper.first_version``: arXiv's ``published``, or a local folder's
  metadata.json); a paper with neither keeps both empty, never a guessed date;
- the verification verdict stays a label on the RQ; nothing is dropped for it;
- a cited paper carries the contributions the ``cited_contributions`` stage found
  for it, with their source (``extracted`` or ``abstract``); none when that
  stage has no record of it; extracted statements pass the gate once more, and
  a paper none of whose statements passes carries none;
- a paper appears in ``papers`` only with at least one RQ; a paper without one
  gets a named skip, so nothing vanishes silently;
- the manual-validation sample is ``random.seed(seed); random.sample(ids, min(n, len(ids)))``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from rqbench.builder.author_rqs import AuthorRQsResult, LinkedRQ
from rqbench.builder.cited_contributions import CitedContributions, CitedContributionsResult
from rqbench.builder.cited_text import LEVEL_RANK, CitedText, CitedTextResult
from rqbench.builder.contributions import ContributionsResult
from rqbench.builder.gaps import CitationGaps, GapsResult
from rqbench.builder.gate import gated_items, gated_text
from rqbench.builder.influence import InfluenceResult
from rqbench.builder.verification import VerificationResult
from rqbench.records import (
    CitedPaper,
    DateBasis,
    EvaluationInstance,
    Gap,
    GateDrop,
    PaperRecord,
    RQRecord,
    SkipRecord,
    SourcePaper,
    TextLevel,
    Verification,
    rq_id_for,
)
from rqbench.wellformed import Kind

STAGE = "records"
FirstVersion = tuple[date | None, DateBasis | None]  # ``SourcePaper.first_version()``: the day and how it is known


@dataclass
class BuildTables:
    rqs: list[RQRecord] = field(default_factory=list)
    papers: list[PaperRecord] = field(default_factory=list)
    cited_papers: list[CitedPaper] = field(default_factory=list)
    instances: list[EvaluationInstance] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    skips: list[SkipRecord] = field(default_factory=list)
    sample: list[str] = field(default_factory=list)
    gate_drops: list[GateDrop] = field(default_factory=list)  # those not in a skip's ``dropped``


def usable_levels(allow_abstract_only: bool) -> set[TextLevel]:
    return set(TextLevel) if allow_abstract_only else {TextLevel.full}


def _better(a: CitedPaper, b: CitedPaper) -> CitedPaper:
    """Of two records of one cited paper, the one with more text."""
    ka = (LEVEL_RANK[a.text_level], sum(len(s.text) for s in a.sections), len(a.abstract))
    kb = (LEVEL_RANK[b.text_level], sum(len(s.text) for s in b.sections), len(b.abstract))
    return b if kb > ka else a


def _gated_cited(found: CitedContributions, drops: list[GateDrop]) -> CitedContributions:
    """Extracted statements without the malformed ones (added to ``drops``); none left: the statements are gone."""
    if found.source != "extracted":
        return found  # the abstract is the paper's own text, not an LLM's
    kept, dropped = gated_items(found.contributions, Kind.contribution, f"{found.paper_id}.contributions")
    drops += dropped
    if kept:
        return found.model_copy(update={"contributions": kept})
    return found.model_copy(update={"contributions": [], "source": None, "note": "malformed_contributions"})


def _with_contributions(paper: CitedPaper, found: CitedContributions | None) -> CitedPaper:
    if found is None:
        return paper
    return paper.model_copy(update={"contributions": list(found.contributions), "contributions_source": found.source})


def cited_text_skips(cited: Sequence[CitedTextResult]) -> list[SkipRecord]:
    """One skip per influential cited work without body text: kept at its abstract or title level (or with no
    record at all), and why, so a work that reads as a title says so in skips.jsonl."""
    out = []
    for result in cited:
        for c in result.cited:
            if c.paper is not None and c.paper.text_level is TextLevel.full:
                continue
            level = c.paper.text_level.value if c.paper is not None else "no_record"
            why = c.no_full_text or c.no_paper or "unknown"
            out.append(
                SkipRecord(
                    stage="cited_text",
                    item_id=f"{result.arxiv_id}:{c.key}",
                    reason=why,
                    detail=f"kept at level {level}" + (f"; {c.lookup}" if c.lookup else ""),
                )
            )
    return out


def manual_sample(rq_ids: list[str], n: int = 50, seed: int = 42) -> list[str]:
    """The human-check sample of method.md step 8, exactly as the paper draws it."""
    rng = random.Random(seed)  # same stream as random.seed(seed) followed by random.sample
    return rng.sample(list(rq_ids), min(n, len(rq_ids)))


def _gated_extraction(contrib: ContributionsResult) -> tuple[ContributionsResult, list[GateDrop], bool]:
    """The paper's extraction without malformed ideas and contributions; the drops, the fatal ones first; fatal or not.

    A fatal drop (the problem statement, the headline, or the last contribution) leaves the paper without RQs.
    """
    fatal = [
        d
        for d in (
            gated_text(contrib.problem_statement, Kind.problem_statement, "problem_statement"),
            gated_text(contrib.main_idea_headline, Kind.headline, "main_idea_headline"),
        )
        if d
    ]
    ideas, idea_drops = gated_items(contrib.ideas, Kind.contribution, "ideas")
    kept, contribution_drops = gated_items(contrib.contributions, Kind.contribution, "contributions")
    if not kept:
        fatal += contribution_drops
        contribution_drops = []
    gated = contrib.model_copy(update={"ideas": ideas, "contributions": kept})
    return gated, fatal + idea_drops + contribution_drops, bool(fatal)


def _gated_gaps(rows: list[CitationGaps]) -> tuple[list[CitationGaps], list[GateDrop]]:
    out, drops = [], []
    for row in rows:
        kept, dropped = gated_items(row.gaps, Kind.gap, f"{row.key}.gaps")
        out.append(row.model_copy(update={"gaps": kept}))
        drops += dropped
    return out, drops


def _found_contributions(
    cited_contributions: Sequence[CitedContributionsResult],
) -> tuple[dict[str, CitedContributions], list[GateDrop]]:
    """What the ``cited_contributions`` stage found for each cited paper, gated; the statements the gate refused."""
    found_drops: list[GateDrop] = []
    found: dict[str, CitedContributions] = {
        c.paper_id: _gated_cited(c, found_drops) for r in cited_contributions for c in r.papers
    }
    return found, found_drops


def _stage_gate_drops(
    contributions: list[ContributionsResult],
    gaps: list[GapsResult],
    author_rqs: list[AuthorRQsResult],
    cited_contributions: Sequence[CitedContributionsResult],
) -> list[GateDrop]:
    """The texts each stage's own gate refused, stage by stage."""
    return [
        *(d for c in contributions for d in c.dropped),
        *(d for g in gaps for row in g.per_citation for d in row.dropped),
        *(d for r in author_rqs for d in r.dropped),
        *(d for r in cited_contributions for c in r.papers for d in c.dropped),
    ]


def _fatal_skip(pid: str, drops: list[GateDrop], gap_drops: list[GateDrop]) -> SkipRecord:
    """The skip of a paper whose extraction failed the gate where it cannot lose a text: it gets no RQs."""
    why = f"malformed_{drops[0].kind}" if drops[0].kind != Kind.contribution.value else "no_wellformed_contributions"
    return SkipRecord(
        stage=STAGE,
        item_id=pid,
        reason=f"paper_without_rqs:{why}",
        detail=", ".join(drops[0].rules),
        dropped=drops + gap_drops,
    )


def _no_background_skip(rq_id: str, rq: LinkedRQ, texts: dict[str, CitedText]) -> SkipRecord:
    """The skip of an RQ none of whose linked works has usable text, with why each has none."""
    missing = "; ".join(f"{k}: {texts[k].no_full_text or texts[k].no_paper}" for k in rq.cited_keys if k in texts)
    return SkipRecord(stage=STAGE, item_id=rq_id, reason="no_background_text", detail=missing[:2000])


def _rq_gaps(rq: LinkedRQ, texts: dict[str, CitedText], gap_rows: list[CitationGaps]) -> list[Gap]:
    """The gap statements of the works an RQ cites, each with its cited paper's id where it has a record."""
    key_to_id = {k: texts[k].paper.paper_id for k in rq.cited_keys if k in texts and texts[k].paper}
    return [
        Gap(text=g, cited_key=row.key, cited_paper_id=key_to_id.get(row.key))
        for row in gap_rows
        if row.key in rq.cited_keys
        for g in row.gaps
    ]


def _rq_record(
    paper: SourcePaper,
    contrib: ContributionsResult,
    rq: LinkedRQ,
    rq_id: str,
    published: FirstVersion,
    gaps: list[Gap],
    cited_ids: list[str],
    verification: Verification | None,
) -> RQRecord:
    """One RQ's row of the ``rqs`` table: the question with its paper's extraction, gaps and citations."""
    published_at, published_source = published
    return RQRecord(
        rq_id=rq_id,
        rq=rq.question,
        paper_id=paper.paper_id,
        arxiv_id=paper.arxiv_id,
        paper_published=published_at,
        paper_published_source=published_source,
        subfield=paper.primary_category,
        novelty_type=contrib.novelty_type,
        problem_statement=contrib.problem_statement,
        main_idea_headline=contrib.main_idea_headline,
        contributions=contrib.contributions,
        ideas=contrib.ideas,
        gaps=gaps,
        cited_paper_ids=cited_ids,
        cited_keys=rq.cited_keys,
        verification=verification,
    )


def _instance(
    paper: SourcePaper, rq: LinkedRQ, rq_id: str, published: FirstVersion, background: list[str]
) -> EvaluationInstance:
    """One RQ's evaluation instance: the question to regenerate from its background papers."""
    published_at, published_source = published
    return EvaluationInstance(
        rq_id=rq_id,
        gt_rq=rq.question,
        paper_id=paper.paper_id,
        arxiv_id=paper.arxiv_id,
        paper_published=published_at,
        paper_published_source=published_source,
        subfield=paper.primary_category,
        background_paper_ids=background,
    )


@dataclass
class _PaperRQs:
    """What one paper's RQs became: kept records with their instances and linked cited papers, or skips."""

    rqs: list[RQRecord] = field(default_factory=list)
    instances: list[EvaluationInstance] = field(default_factory=list)
    linked: list[CitedPaper] = field(default_factory=list)  # the kept RQs' linked works, in order
    skips: list[SkipRecord] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)


def _paper_rqs(
    paper: SourcePaper,
    contrib: ContributionsResult,
    rq_result: AuthorRQsResult,
    texts: dict[str, CitedText],
    gap_rows: list[CitationGaps],
    verdicts: list[Verification],
    usable: set[TextLevel],
) -> _PaperRQs:
    """One paper's RQs: each kept as a record and an instance, or dropped with a skip and counted."""
    pid = paper.paper_id
    published = paper.first_version()
    made = _PaperRQs()
    for position, rq in enumerate(rq_result.rqs):
        index = position if rq.index is None else rq.index
        rq_id = rq_id_for(pid, index)
        malformed = gated_text(rq.question, Kind.research_question, f"rqs[{index}].question")
        if malformed is not None:
            made.dropped["malformed_rq"] += 1
            made.skips.append(
                SkipRecord(
                    stage=STAGE,
                    item_id=rq_id,
                    reason="malformed_rq",
                    detail=", ".join(malformed.rules),
                    dropped=[malformed],
                )
            )
            continue
        linked = [texts[k].paper for k in rq.cited_keys if k in texts and texts[k].paper is not None]
        cited_ids = list(dict.fromkeys(p.paper_id for p in linked))
        background = list(dict.fromkeys(p.paper_id for p in linked if p.text_level in usable))
        if not background:
            made.dropped["no_background_text"] += 1
            made.skips.append(_no_background_skip(rq_id, rq, texts))
            continue
        verification = verdicts[position] if position < len(verdicts) else None
        made.rqs.append(
            _rq_record(paper, contrib, rq, rq_id, published, _rq_gaps(rq, texts, gap_rows), cited_ids, verification)
        )
        made.instances.append(_instance(paper, rq, rq_id, published, background))
        made.linked += linked
    return made


def _paper_record(
    paper: SourcePaper, contrib: ContributionsResult, n_rqs: int, infl: InfluenceResult | None
) -> PaperRecord:
    """A paper's row of the ``papers`` table: its extraction, how many RQs it kept, its influential works."""
    return PaperRecord(
        paper=paper,
        problem_statement=contrib.problem_statement,
        main_idea_headline=contrib.main_idea_headline,
        novelty_type=contrib.novelty_type,
        ideas=contrib.ideas,
        contributions=contrib.contributions,
        n_rqs=n_rqs,
        influential_keys=infl.influential_keys if infl else [],
        extraction_model=contrib.model,
    )


def _counts(
    papers: list[SourcePaper],
    out: BuildTables,
    gap_texts: set[str],
    levels_all: Counter[str],
    influence: list[InfluenceResult],
) -> dict[str, int]:
    """The manifest's counts of a finished build, from its tables."""
    level_counts = Counter(p.text_level.value for p in out.cited_papers)
    sources = Counter(p.contributions_source or "none" for p in out.cited_papers)
    verified = [r.verification for r in out.rqs if r.verification is not None]
    return {
        "papers_in": len(papers),
        "papers": len(out.papers),
        "rqs": len(out.rqs),
        "subfields": len({r.subfield for r in out.rqs}),
        "rq_citation_links": sum(len(r.cited_paper_ids) for r in out.rqs),
        "unique_cited_papers": len(out.cited_papers),
        "cited_papers": len(out.cited_papers),
        "instances": len(out.instances),
        "gap_statements": len(gap_texts),
        "cited_full": level_counts.get("full", 0),
        "cited_abstract": level_counts.get("abstract", 0),
        "cited_title": level_counts.get("title", 0),
        "cited_contributions_extracted": sources.get("extracted", 0),
        "cited_contributions_abstract": sources.get("abstract", 0),
        "influential_works_without_record": levels_all.get("none", 0),
        "influential_works": sum(len(x.influential_keys) for x in influence),
        "influence_promoted": sum(len(x.promoted_keys) for x in influence),
        "verified": len(verified),
        "verified_addressed": sum(1 for v in verified if v.addressed),
        "manual_sample": len(out.sample),
    }


def assemble(
    papers: list[SourcePaper],
    contributions: list[ContributionsResult],
    influence: list[InfluenceResult],
    gaps: list[GapsResult],
    author_rqs: list[AuthorRQsResult],
    cited: list[CitedTextResult],
    verify: list[VerificationResult],
    cited_contributions: Sequence[CitedContributionsResult] = (),
    *,
    allow_abstract_only: bool,
    sample_size: int = 50,
    sample_seed: int = 42,
) -> BuildTables:
    contrib_by = {c.arxiv_id: c for c in contributions}
    infl_by = {x.arxiv_id: x for x in influence}
    gaps_by = {g.arxiv_id: g for g in gaps}
    rqs_by = {r.arxiv_id: r for r in author_rqs}
    cited_by = {c.arxiv_id: c for c in cited}
    verify_by = {v.arxiv_id: v for v in verify}
    found, found_drops = _found_contributions(cited_contributions)
    usable = usable_levels(allow_abstract_only)
    out = BuildTables()
    dropped: Counter[str] = Counter()
    cited_table: dict[str, CitedPaper] = {}
    levels_all: Counter[str] = Counter()
    gap_texts: set[str] = set()
    out.gate_drops = [*_stage_gate_drops(contributions, gaps, author_rqs, cited_contributions), *found_drops]

    for paper in papers:
        pid = paper.paper_id
        contrib, rq_result = contrib_by.get(pid), rqs_by.get(pid)
        if contrib is None or rq_result is None:
            continue  # skipped by an earlier stage, which recorded why
        texts = {c.key: c for c in cited_by[pid].cited} if pid in cited_by else {}
        if pid not in cited_by and rq_result.rqs:
            continue  # cited texts not built yet (a partial build): the paper is not final
        contrib, drops, fatal = _gated_extraction(contrib)
        gap_rows, gap_drops = _gated_gaps(gaps_by[pid].per_citation if pid in gaps_by else [])
        if fatal:
            out.skips.append(_fatal_skip(pid, drops, gap_drops))
            continue
        out.gate_drops += drops + gap_drops
        verdicts = verify_by[pid].verdicts if pid in verify_by else []
        made = _paper_rqs(paper, contrib, rq_result, texts, gap_rows, verdicts, usable)
        dropped.update(made.dropped)
        out.skips += made.skips
        out.instances += made.instances
        for p in made.linked:
            p = _with_contributions(p, found.get(p.paper_id))
            cited_table[p.paper_id] = _better(cited_table[p.paper_id], p) if p.paper_id in cited_table else p
        if not made.rqs:
            reason = rq_result.note or ("all_rqs_dropped" if made.skips else "no_rqs")
            out.skips.append(SkipRecord(stage=STAGE, item_id=pid, reason=f"paper_without_rqs:{reason}"))
            continue
        for row in gap_rows:
            gap_texts.update(" ".join(g.lower().split()) for g in row.gaps)
        out.rqs.extend(made.rqs)
        out.papers.append(_paper_record(paper, contrib, len(made.rqs), infl_by.get(pid)))
        for c in texts.values():
            levels_all[c.paper.text_level.value if c.paper else "none"] += 1

    out.skips += cited_text_skips(cited)
    out.cited_papers = sorted(cited_table.values(), key=lambda p: p.paper_id)
    out.dropped = dict(sorted(dropped.items()))
    out.sample = manual_sample([r.rq_id for r in out.rqs], sample_size, sample_seed)
    out.counts = _counts(papers, out, gap_texts, levels_all, influence)
    return out
