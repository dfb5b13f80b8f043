"""Stage "author_rqs" (method.md step 6): the author-anchored RQs, each linked to the cited works behind it.

One prompt per paper with M's problem statement, ideas, contributions and the
gaps grouped by cited work. Only cited works with at least one gap may be
linked; the reply schema lists their keys as an enum, so a schema-following
model cannot invent a key, and any key outside the list is still dropped (and
counted) here. A paper without gaps gets no RQs and no call.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, create_model
from rqbench.builder import prompt_text as pt
from rqbench.builder.contributions import ContributionsResult
from rqbench.builder.gaps import GapsResult
from rqbench.builder.llm_stage import LLMStageSettings, ask, is_local

from rqbench.records import (
    QUESTION_GRAMMAR_PATTERN,
    AuthorRQ,
    AuthorRQsReply,
    ParsedPaper,
    Record,
    SourcePaper,
)
from rqbench.steps import owned_step

STEP = owned_step(__name__)


class LinkedRQ(Record):
    question: str
    cited_keys: list[str] = Field(min_length=1)


class AuthorRQsResult(Record):
    arxiv_id: str
    rqs: list[LinkedRQ]
    note: str | None = Field(default=None, description="Why there are no RQs, when there are none.")
    dropped_keys: list[str] = Field(default_factory=list, description="Linked keys that were not allowed.")
    dropped_rqs: int = 0
    model: str | None = None


# For a grammar-constrained local model, the schema itself makes the question end with "?" (a weak
# model otherwise writes a title); hosted models get the records' rule, checked after the reply.
LOCAL_QUESTION_PATTERN = QUESTION_GRAMMAR_PATTERN


def reply_model_for(keys: list[str], *, local: bool = False) -> type[AuthorRQsReply]:
    """The registry's ``AuthorRQsReply`` whose ``cited_keys`` may only name ``keys`` (an enum in the JSON schema)."""
    key_type = Literal[tuple(keys)]  # type: ignore[valid-type]
    fields: dict[str, Any] = {"cited_keys": (list[key_type], Field(min_length=1))}
    if local:
        fields["question"] = (str, Field(pattern=LOCAL_QUESTION_PATTERN))
    rq = create_model("AuthorRQ", __base__=AuthorRQ, **fields)
    return create_model(
        "AuthorRQsReply", __base__=STEP.reply_model, research_questions=(list[rq], Field(min_length=1, max_length=6))
    )


def gaps_block(gaps: GapsResult, parsed: ParsedPaper) -> str:
    works = {w.key: w for w in parsed.cited_works}
    parts = []
    for c in gaps.per_citation:
        if not c.gaps:
            continue
        title = pt.cited_title(works[c.key]) if c.key in works else c.key
        parts.append(f"[{c.key}] {title}\n" + pt.bullets(c.gaps))
    return "\n\n".join(parts)


def variables(
    paper: SourcePaper, contrib: ContributionsResult, gaps: GapsResult, parsed: ParsedPaper, keys: list[str]
) -> dict[str, str]:
    return {
        "title": paper.title,
        "problem_statement": contrib.problem_statement,
        "ideas": pt.bullets(contrib.ideas),
        "contributions": pt.bullets(contrib.contributions),
        "gaps": gaps_block(gaps, parsed),
        "keys": ", ".join(keys),
    }


async def write_rqs(item: dict[str, Any], llm: Any, *, settings: LLMStageSettings) -> list[AuthorRQsResult]:
    paper: SourcePaper = item["filter"].paper
    parsed: ParsedPaper = item["parse"]
    contrib: ContributionsResult = item["contributions"]
    gaps: GapsResult = item["gaps"]
    keys = [c.key for c in gaps.per_citation if c.gaps]
    if not keys:
        note = "no_influential_citations" if not gaps.per_citation else "no_gaps"
        return [AuthorRQsResult(arxiv_id=parsed.arxiv_id, rqs=[], note=note)]
    reply, model = await ask(llm, settings, reply_model_for(keys, local=is_local(settings.model)), variables(paper, contrib, gaps, parsed, keys))
    allowed = set(keys)
    rqs: list[LinkedRQ] = []
    dropped_keys: list[str] = []
    dropped = 0
    seen: set[str] = set()
    for rq in reply.research_questions:
        linked = list(dict.fromkeys(k for k in rq.cited_keys if k in allowed))
        dropped_keys += [k for k in rq.cited_keys if k not in allowed]
        norm = " ".join(rq.question.lower().split())
        if not linked or norm in seen:
            dropped += 1
            continue
        seen.add(norm)
        rqs.append(LinkedRQ(question=rq.question, cited_keys=linked))
    return [AuthorRQsResult(arxiv_id=parsed.arxiv_id, rqs=rqs, dropped_keys=dropped_keys, dropped_rqs=dropped,
                            model=model, note=None if rqs else "no_valid_rqs")]  # fmt: skip
