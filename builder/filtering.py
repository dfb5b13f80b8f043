"""Stage 2: which sourced papers become target papers, and a funnel report of who was dropped by which rule.

The paper keeps papers with LaTeX source, then the top 10% by citation count in
each cs sub-field (the arXiv primary category), then only those Semantic Scholar
lists as published at a conference or journal, excluding papers it does not
index. Citation counts come from Semantic Scholar, so an unindexed paper cannot
be ranked: we drop it before ranking. The rules run in this order, each on the
survivors of the previous one:

1. ``latex``: LaTeX source available.
2. ``s2_indexed``: Semantic Scholar knows the paper.
3. ``top_cited``: within its primary category, rank <= max(1, floor(fraction * n)),
   n being the category's papers still in; ranked by citation count, ties broken
   by arXiv id ascending (the older paper first), so the cut is deterministic and
   keeps exactly that many.
4. ``venue``: published at a conference or journal (not an arXiv/CoRR listing).

Offline builds skip rules 2 to 4 (recorded as "not applied (offline)").
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import Field

from rqbench.builder.s2_api import S2Paper
from rqbench.records import SCHEMA_VERSION, MalformedCount, Record, SourcePaper

RULE_DESCRIPTIONS: dict[str, str] = {
    "latex": "LaTeX source available",
    "s2_indexed": "indexed by Semantic Scholar",
    "top_cited": "top fraction by citation count within the primary category",
    "venue": "published at a conference or journal (Semantic Scholar)",
}
S2_RULES = ("s2_indexed", "top_cited", "venue")
TIE_RULE = (
    "rank by citation count (descending), ties broken by arXiv id (ascending); "
    "keep the first max(1, floor(fraction * n)) of each primary category"
)
OFFLINE_NOTE = "not applied (offline)"

_PREPRINT_VENUE = re.compile(r"^\s*(arxiv(\.org)?|corr|arxiv preprint.*|biorxiv|medrxiv|ssrn)\s*$", re.IGNORECASE)


# --------------------------------------------------------------------------
# The rules, as pure functions
# --------------------------------------------------------------------------


def is_indexed(s2: S2Paper | None) -> bool:
    """Semantic Scholar returned a resolved paper for this id."""
    return s2 is not None and bool(s2.paper_id)


def _is_preprint(name: str | None) -> bool:
    return bool(name) and bool(_PREPRINT_VENUE.match(name))


def venue_kind(s2: S2Paper | None) -> Literal["conference", "journal"] | None:
    """``conference`` or ``journal`` when S2 lists the paper as published at one, else None.

    ``publicationVenue.type`` is the direct answer; when S2 has no venue object,
    a named, non-preprint venue (or journal) with publication type ``Conference``
    or ``JournalArticle`` counts. arXiv, CoRR and other preprint servers never count.
    """
    if s2 is None:
        return None
    pv = s2.publication_venue
    if pv is not None and pv.type in ("conference", "journal") and not _is_preprint(pv.name):
        return pv.type  # type: ignore[return-value]
    name = (s2.venue or "").strip() or (s2.journal.name.strip() if s2.journal and s2.journal.name else "")
    if not name or _is_preprint(name) or (pv is not None and _is_preprint(pv.name)):
        return None
    types = set(s2.publication_types)
    if "Conference" in types:
        return "conference"
    if "JournalArticle" in types:
        return "journal"
    return None


def top_cited(papers: list[SourcePaper], citations: Mapping[str, int], fraction: float) -> set[str]:
    """arXiv ids in the top ``fraction`` of their primary category by citation count (see the module's tie rule)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"top fraction must be in (0, 1], got {fraction}")
    by_cat: dict[str, list[SourcePaper]] = defaultdict(list)
    for p in papers:
        by_cat[p.primary_category].append(p)
    keep: set[str] = set()
    for group in by_cat.values():
        k = max(1, math.floor(fraction * len(group) + 1e-9))
        ranked = sorted(group, key=lambda p: (-citations.get(p.paper_id, 0), p.paper_id))
        keep.update(p.paper_id for p in ranked[:k])
    return keep


def with_s2_facts(paper: SourcePaper, s2: S2Paper) -> SourcePaper:
    """The paper with Semantic Scholar's facts filled in (citation count, venue, ids)."""
    pv = s2.publication_venue
    return SourcePaper.model_validate(
        {
            **paper.model_dump(),
            "s2_paper_id": s2.paper_id,
            "citation_count": s2.citation_count,
            "venue": (pv.name if pv and pv.name else None)
            or s2.venue
            or (s2.journal.name if s2.journal else None)
            or None,
            "publication_venue_type": (pv.type if pv and pv.type else None) or venue_kind(s2),
            "publication_types": list(s2.publication_types),
            "external_ids": dict(s2.external_ids),
        }
    )


# --------------------------------------------------------------------------
# The funnel report
# --------------------------------------------------------------------------


class RuleOutcome(Record):
    """What one rule did."""

    rule: str
    description: str
    applied: bool
    note: str = ""
    removed: dict[str, int] = Field(default_factory=dict, description="Papers removed, by primary category.")
    removed_total: int = 0
    remaining: int = Field(description="Papers left after this rule.")
    removed_ids: list[str] = Field(default_factory=list)


class FunnelReport(Record):
    """How many papers each rule removed, per sub-field: the record of stage 2."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.funnel"] = "rqbench.funnel"
    top_fraction: float
    tie_rule: str = TIE_RULE
    offline: bool = False
    subfields: list[str]
    input_by_subfield: dict[str, int]
    input_total: int
    rules: list[RuleOutcome]
    kept_by_subfield: dict[str, int]
    kept_total: int
    malformed: dict[str, MalformedCount] = Field(
        default_factory=dict, description="Texts the well-formedness gate kept out of the data later, by kind and rule."
    )

    def rule(self, name: str) -> RuleOutcome:
        for r in self.rules:
            if r.rule == name:
                return r
        raise KeyError(f"funnel report has no rule {name!r}; rules: {[r.rule for r in self.rules]}")

    def to_markdown(self) -> str:
        """A table: one row per sub-field, the papers in, removed by each rule, and kept."""
        head = ["sub-field", "in"] + [r.rule for r in self.rules] + ["kept"]
        lines = [
            "# Filtering funnel",
            "",
            f"Top fraction: {self.top_fraction:g}. Tie rule: {self.tie_rule}.",
            "",
        ]
        for r in self.rules:
            status = r.note if not r.applied else (r.note or "applied")
            lines.append(f"- `{r.rule}`: {r.description}: {status}")
        lines += ["", "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]

        def cell(r: RuleOutcome, cat: str | None) -> str:
            if not r.applied:
                return "n/a"
            n = r.removed_total if cat is None else r.removed.get(cat, 0)
            return f"-{n}" if n else "0"

        for cat in self.subfields:
            row = [cat, str(self.input_by_subfield.get(cat, 0))] + [cell(r, cat) for r in self.rules]
            lines.append("| " + " | ".join(row + [str(self.kept_by_subfield.get(cat, 0))]) + " |")
        total = ["**all**", str(self.input_total)] + [cell(r, None) for r in self.rules] + [str(self.kept_total)]
        lines.append("| " + " | ".join(total) + " |")
        return "\n".join(lines) + "\n"


def write_funnel_report(report: FunnelReport, out_dir: Path, stem: str = "funnel") -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.md`` into ``out_dir``; return both paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    js.write_text(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md.write_text(report.to_markdown(), encoding="utf-8")
    return js, md


# --------------------------------------------------------------------------
# The stage
# --------------------------------------------------------------------------


def _counts(papers: list[SourcePaper]) -> dict[str, int]:
    return dict(sorted(Counter(p.primary_category for p in papers).items()))


def _outcome(rule: str, before: list[SourcePaper], after: list[SourcePaper], note: str = "") -> RuleOutcome:
    kept = {p.paper_id for p in after}
    gone = [p for p in before if p.paper_id not in kept]
    return RuleOutcome(
        rule=rule,
        description=RULE_DESCRIPTIONS[rule],
        applied=True,
        note=note,
        removed=_counts(gone),
        removed_total=len(gone),
        remaining=len(after),
        removed_ids=[p.paper_id for p in gone],
    )


def apply_filters(
    papers: list[SourcePaper],
    s2: Mapping[str, S2Paper | None],
    *,
    has_latex: Mapping[str, bool],
    top_fraction: float = 0.10,
    offline: bool = False,
) -> tuple[list[SourcePaper], FunnelReport]:
    """Keep the papers that pass the four rules; return them (with S2 facts filled in) and the funnel report.

    Every paper must have an entry in ``has_latex`` and, unless ``offline``, in
    ``s2`` (``None`` meaning "not found"): a missing entry is a bug upstream, so it
    raises rather than counting as a drop.
    """
    if not 0 < top_fraction <= 1:
        raise ValueError(f"top_fraction must be in (0, 1], got {top_fraction}")
    dup = [i for i, n in Counter(p.paper_id for p in papers).items() if n > 1]
    if dup:
        raise ValueError(f"papers repeat arXiv ids: {', '.join(sorted(dup)[:10])}")
    missing = [p.paper_id for p in papers if p.paper_id not in has_latex]
    if missing:
        raise ValueError(f"has_latex has no entry for {len(missing)} paper(s): {', '.join(missing[:10])}")
    if not offline:
        missing = [p.paper_id for p in papers if p.paper_id not in s2]
        if missing:
            raise ValueError(
                f"Semantic Scholar data has no entry for {len(missing)} paper(s): {', '.join(missing[:10])} "
                "(use None for a paper S2 does not know, or run offline)"
            )

    rules: list[RuleOutcome] = []
    current = list(papers)

    after = [p for p in current if has_latex[p.paper_id]]
    rules.append(_outcome("latex", current, after))
    current = after

    if offline:
        for rule in S2_RULES:
            rules.append(
                RuleOutcome(
                    rule=rule,
                    description=RULE_DESCRIPTIONS[rule],
                    applied=False,
                    note=OFFLINE_NOTE,
                    remaining=len(current),
                )
            )
        kept = current
    else:
        after = [p for p in current if is_indexed(s2[p.paper_id])]
        rules.append(_outcome("s2_indexed", current, after))
        current = after

        uncounted = [p.paper_id for p in current if s2[p.paper_id].citation_count is None]  # type: ignore[union-attr]
        citations = {p.paper_id: s2[p.paper_id].citation_count or 0 for p in current}  # type: ignore[union-attr]
        keep = top_cited(current, citations, top_fraction)
        after = [p for p in current if p.paper_id in keep]
        note = f"{len(uncounted)} paper(s) without a citation count ranked as 0" if uncounted else ""
        rules.append(_outcome("top_cited", current, after, note))
        current = after

        after = [p for p in current if venue_kind(s2[p.paper_id]) is not None]
        rules.append(_outcome("venue", current, after))
        kept = [with_s2_facts(p, s2[p.paper_id]) for p in after]  # type: ignore[arg-type]

    report = FunnelReport(
        top_fraction=top_fraction,
        offline=offline,
        subfields=sorted({p.primary_category for p in papers}),
        input_by_subfield=_counts(papers),
        input_total=len(papers),
        rules=rules,
        kept_by_subfield=_counts(kept),
        kept_total=len(kept),
    )
    return kept, report
