"""Stage "gaps" (method.md step 5): per influential citation, the gaps M identifies and addresses.

One independent prompt per influential cited work, with M's ideas and
contributions and that citation's contexts only, so each cited work's role is
judged on its own.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from rqbench.builder import prompt_text as pt
from rqbench.builder.contributions import ContributionsResult
from rqbench.builder.influence import InfluenceResult
from rqbench.builder.llm_stage import GRAMMAR_SAFE_TEXT, LLMStageSettings, ask, bounded, is_permanent
from rqbench.builder.stages import gather_calls

from rqbench.llm import LLMCallFailed
from rqbench.records import CitedWork, ParsedPaper, Record, SourcePaper
from rqbench.steps import owned_step

STEP = owned_step(__name__)
# The registry's reply, with each gap bounded so a grammar-constrained local model can be asked for it.
Reply = bounded(STEP.reply_model, gaps=(list[Annotated[str, Field(min_length=1, max_length=GRAMMAR_SAFE_TEXT)]],
                                Field(max_length=6)))  # fmt: skip


class CitationGaps(Record):
    key: str
    gaps: list[str]
    failure: str | None = None


class GapsResult(Record):
    arxiv_id: str
    per_citation: list[CitationGaps]
    model: str | None = None


def variables(
    paper: SourcePaper, contrib: ContributionsResult, work: CitedWork, settings: LLMStageSettings
) -> dict[str, str]:
    return {
        "title": paper.title,
        "ideas": pt.bullets(contrib.ideas),
        "contributions": pt.bullets(contrib.contributions),
        "cited_title": pt.cited_title(work),
        "contexts": pt.contexts_block(work.contexts, settings.context_budget_chars),
    }


def _dedupe(gaps: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for g in gaps:
        norm = " ".join(g.lower().split())
        if norm and norm not in seen:
            seen.add(norm)
            out.append(g.strip())
    return out


async def find_gaps(item: dict[str, Any], llm: Any, *, settings: LLMStageSettings) -> list[GapsResult]:
    paper: SourcePaper = item["filter"].paper
    parsed: ParsedPaper = item["parse"]
    influence: InfluenceResult = item["influence"]
    contrib: ContributionsResult = item["contributions"]
    works = {w.key: w for w in parsed.cited_works}
    keys = [k for k in influence.influential_keys if k in works]
    calls = [ask(llm, settings, Reply, variables(paper, contrib, works[k], settings)) for k in keys]
    results = await gather_calls(calls)
    per: list[CitationGaps] = []
    model = None
    for key, res in zip(keys, results):
        if isinstance(res, LLMCallFailed):
            if not is_permanent(res):
                raise res
            per.append(CitationGaps(key=key, gaps=[], failure=f"{res.reason}: {res.detail}"[:500]))
            continue
        reply, model = res
        per.append(CitationGaps(key=key, gaps=_dedupe(reply.gaps)))
    return [GapsResult(arxiv_id=parsed.arxiv_id, per_citation=per, model=model)]
