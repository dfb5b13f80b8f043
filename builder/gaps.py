"""Stage "gaps" (method.md step 5): per influential citation, the gaps M identifies and addresses.

One independent prompt per influential cited work, with M's ideas and
contributions and that citation's contexts only, so each cited work's role is
judged on its own. Each gap passes the well-formedness gate
(``llm_stage.ask_gated``): one that still fails after the re-ask, or repeats an
earlier gap of the same citation, is dropped by rule and kept in ``dropped``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from rqbench.builder import prompt_text as pt
from rqbench.builder.contributions import ContributionsResult
from rqbench.builder.gate import gated_items
from rqbench.builder.influence import InfluenceResult
from rqbench.builder.llm_stage import (
    GRAMMAR_SAFE_TEXT,
    LLMStageSettings,
    ask_gated,
    bounded,
    grammar_constrained,
    is_permanent,
)
from rqbench.builder.stages import gather_calls
from rqbench.grammar_patterns import grammar_pattern
from rqbench.llm import LLMCallFailed
from rqbench.records import CitedWork, GateDrop, ParsedPaper, Record, SourcePaper
from rqbench.steps import owned_step
from rqbench.wellformed import Kind

STEP = owned_step(__name__)


# A grammar-constrained model writes every gap to its bound when it rambles: four gaps of 300 characters
# fit the stage's 450-token reply budget, where six of 1000 ran past it (a 'truncated' item, seen on the
# embedded model in a fresh build).
LOCAL_GAP_CHARS = 300
LOCAL_MAX_GAPS = 4


def reply_model_for(*, local: bool) -> type:
    """The registry's reply, each gap bounded for a grammar-constrained local model (which also gets the gap pattern)."""
    chars, most = (LOCAL_GAP_CHARS, LOCAL_MAX_GAPS) if local else (GRAMMAR_SAFE_TEXT, 6)
    extra = {"pattern": grammar_pattern(Kind.gap, chars)} if local else None
    gap = Annotated[str, Field(min_length=1, max_length=chars, json_schema_extra=extra)]
    return bounded(STEP.reply_model, gaps=(list[gap], Field(max_length=most)))  # type: ignore[valid-type]


Reply = reply_model_for(local=False)
LocalReply = reply_model_for(local=True)


class CitationGaps(Record):
    key: str
    gaps: list[str]
    failure: str | None = None
    dropped: list[GateDrop] = Field(default_factory=list, description="Gaps the gate refused, by rule.")


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


async def find_gaps(item: dict[str, Any], llm: Any, *, settings: LLMStageSettings) -> list[GapsResult]:
    paper: SourcePaper = item["filter"].paper
    parsed: ParsedPaper = item["parse"]
    influence: InfluenceResult = item["influence"]
    contrib: ContributionsResult = item["contributions"]
    works = {w.key: w for w in parsed.cited_works}
    keys = [k for k in influence.influential_keys if k in works]
    reply_model = LocalReply if grammar_constrained(settings.model) else Reply
    calls = [ask_gated(llm, settings, reply_model, variables(paper, contrib, works[k], settings)) for k in keys]
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
        kept, dropped = gated_items(reply.gaps, Kind.gap, "gaps")
        per.append(CitationGaps(key=key, gaps=kept, dropped=dropped))
    return [GapsResult(arxiv_id=parsed.arxiv_id, per_citation=per, model=model)]
