"""Stage "cited_contributions": what each background paper contributes, the text Table 6 compares RQs with.

The paper compares every RQ with its background papers' "contributions" (§7,
Table 6) without saying how they were obtained; its only contribution extractor
is the one it runs on target papers (§4). This stage runs the same kind of
extraction on each cited paper that an author-anchored RQ links to (one prompt
per paper, over its title, abstract and body text cut to the text budget), and
on no other cited work.

Every such paper ends with a labelled source:

- ``extracted``: the model's statements from the body text;
- ``abstract``: the abstract as one statement, when the body text is shorter
  than ``min_text_chars`` (or absent), or when the model's reply could not be
  used (the failure's name is kept in ``note``; ``malformed_contributions`` when
  every statement failed the well-formedness gate after the re-ask);
- none: neither body text nor abstract exists (a title-only work).

A dead endpoint is not a fallback: the item is retried on the next run. The
statements pass the well-formedness gate (``llm_stage.ask_gated``, as in the
``contributions`` stage): one that still fails after the re-ask, or repeats an
earlier one, is dropped by rule and kept in ``dropped``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from rqbench.builder import prompt_text as pt
from rqbench.builder.author_rqs import AuthorRQsResult
from rqbench.builder.cited_text import CitedTextResult
from rqbench.builder.gate import gated_items
from rqbench.builder.llm_stage import GRAMMAR_SAFE_TEXT, LLMStageSettings, ask_gated, bounded, is_permanent
from rqbench.builder.stages import gather_calls
from rqbench.llm import LLMCallFailed
from rqbench.records import CitedPaper, ContributionSource, GateDrop, Record, TextLevel
from rqbench.steps import owned_step
from rqbench.wellformed import Kind

STEP = owned_step(__name__)
# The registry's reply, with each statement bounded so a grammar-constrained local model can be asked for it.
_Statement = Annotated[str, Field(min_length=1, max_length=GRAMMAR_SAFE_TEXT)]
Reply = bounded(STEP.reply_model, contributions=(list[_Statement], Field(min_length=1, max_length=5)))
MIN_TEXT_CHARS = 200  # less body text than this says less than the abstract: the abstract stands in


class CitedContributions(Record):
    """One linked cited paper's contributions and where they come from."""

    paper_id: str
    contributions: list[str] = Field(default_factory=list)
    source: ContributionSource | None = None
    note: str | None = Field(default=None, description="Why the source is not 'extracted', by name.")
    model: str | None = None
    dropped: list[GateDrop] = Field(default_factory=list, description="Statements the gate refused, by rule.")
    sections_read: list[str] = Field(
        default_factory=list,
        description="The sections the prompt held within the "
        "text budget, in order; the one cut at the budget is marked '(cut)'.",
    )


class CitedContributionsResult(Record):
    arxiv_id: str
    papers: list[CitedContributions]


def linked_papers(cited: CitedTextResult, rqs: AuthorRQsResult) -> list[CitedPaper]:
    """The cited papers the paper's author-anchored RQs link to, each once, in first-linked order."""
    by_key = {c.key: c.paper for c in cited.cited if c.paper is not None}
    out: dict[str, CitedPaper] = {}
    for rq in rqs.rqs:
        for key in rq.cited_keys:
            paper = by_key.get(key)
            if paper is not None:
                out.setdefault(paper.paper_id, paper)
    return list(out.values())


def body_chars(paper: CitedPaper) -> int:
    return sum(len(s.text.strip()) for s in paper.sections) if paper.text_level is TextLevel.full else 0


def variables(paper: CitedPaper, settings: LLMStageSettings) -> dict[str, str]:
    return {
        "title": paper.title,
        "abstract": pt.clip(paper.abstract, settings.context_budget_chars) or "(no abstract)",
        "text": pt.sections_text(((s.section, s.text) for s in paper.sections), settings.text_budget_chars),
    }


def fallback(paper: CitedPaper, note: str, dropped: list[GateDrop] | None = None) -> CitedContributions:
    """The abstract as the one statement, labelled; nothing when there is no abstract either."""
    abstract = paper.abstract.strip()
    if not abstract:
        return CitedContributions(paper_id=paper.paper_id, note=f"{note}; no abstract", dropped=dropped or [])
    return CitedContributions(
        paper_id=paper.paper_id, contributions=[abstract], source="abstract", note=note, dropped=dropped or []
    )


def _tidy(statements: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in statements:
        norm = " ".join(x.split())
        if norm and norm.casefold() not in seen:
            seen.add(norm.casefold())
            out.append(norm)
    return out


async def extract(
    item: dict[str, Any], llm: Any, *, settings: LLMStageSettings, min_text_chars: int = MIN_TEXT_CHARS
) -> list[CitedContributionsResult]:
    """Contributions of every cited paper one paper's RQs link to (an llm stage: one call per paper with text)."""
    cited: CitedTextResult = item["cited_text"]
    rqs: AuthorRQsResult = item["author_rqs"]
    papers = linked_papers(cited, rqs)
    readable = [p for p in papers if body_chars(p) >= min_text_chars]
    results = await gather_calls([ask_gated(llm, settings, Reply, variables(p, settings)) for p in readable])
    got = dict(zip((p.paper_id for p in readable), results))
    out: list[CitedContributions] = []
    for p in papers:
        res = got.get(p.paper_id)
        if res is None:
            short = "too_little_text" if p.text_level is TextLevel.full else f"no_body_text:{p.text_level.value}"
            out.append(fallback(p, short))
        elif isinstance(res, LLMCallFailed):
            if not is_permanent(res):
                raise res
            out.append(fallback(p, f"llm_{res.reason}"))
        else:
            reply, model = res
            kept, dropped = gated_items(_tidy(reply.contributions), Kind.contribution, "contributions")
            if not kept:
                out.append(fallback(p, "malformed_contributions", dropped))
                continue
            read = pt.sections_read(((s.section, s.text) for s in p.sections), settings.text_budget_chars)
            out.append(
                CitedContributions(
                    paper_id=p.paper_id,
                    contributions=kept,
                    source="extracted",
                    model=model,
                    dropped=dropped,
                    sections_read=read,
                )
            )
    return [CitedContributionsResult(arxiv_id=cited.arxiv_id, papers=out)]
