"""Stage "author_rqs" (method.md step 6): the author-anchored RQs, each linked to the cited works behind it.

One prompt per paper with M's problem statement, ideas, contributions and the
gaps grouped by cited work. Only cited works with at least one gap may be
linked; the reply schema lists their keys as an enum, so a schema-following
model cannot invent a key, and any key outside the list is still dropped (and
counted) here. A paper without gaps gets no RQs and no call.

Each question passes the well-formedness gate (``llm_stage.ask_gated``): one
that still fails after the re-ask, or repeats an earlier one, is dropped by rule
(``dropped``) before the list is stored, so the verify stage never sees it. An
RQ keeps its position in the reply (``LinkedRQ.index``), which is its rq_id's
index, so dropping an earlier RQ never renames a later one.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, create_model

from rqbench.builder import prompt_text as pt
from rqbench.builder.contributions import ContributionsResult
from rqbench.builder.gaps import GapsResult
from rqbench.builder.gate import drop_of
from rqbench.builder.llm_stage import LLMStageSettings, ask_gated, grammar_constrained
from rqbench.grammar_patterns import grammar_pattern
from rqbench.records import (
    MAX_RQ_CHARS,
    AuthorRQ,
    AuthorRQsReply,
    GateDrop,
    ParsedPaper,
    Record,
    SourcePaper,
)
from rqbench.steps import owned_step
from rqbench.wellformed import Kind, check_many

STEP = owned_step(__name__)


class LinkedRQ(Record):
    question: str
    cited_keys: list[str] = Field(min_length=1)
    index: int | None = Field(default=None, ge=0, description="Its position in the model's reply: the rq_id's index.")


class AuthorRQsResult(Record):
    arxiv_id: str
    rqs: list[LinkedRQ]
    note: str | None = Field(default=None, description="Why there are no RQs, when there are none.")
    dropped_keys: list[str] = Field(default_factory=list, description="Linked keys that were not allowed.")
    dropped_rqs: int = Field(default=0, description="Well-formed RQs dropped for linking no allowed key.")
    dropped: list[GateDrop] = Field(default_factory=list, description="RQs the gate refused, by rule.")
    model: str | None = None


def reply_model_for(keys: list[str], *, local: bool = False) -> type[AuthorRQsReply]:
    """The registry's ``AuthorRQsReply`` whose ``cited_keys`` may only name ``keys`` (an enum in the JSON schema).

    For a grammar-constrained local model the schema also carries the gate's builder pattern
    (``grammar_patterns.grammar_pattern``), so the decoder cannot write braces, slots, copied "[@key]"
    citations, a second question or a title without "?" (a weak model otherwise does); the pattern is in the schema only, and the gate checks every model's reply.
    """
    key_type = Literal[tuple(keys)]  # type: ignore[valid-type]
    fields: dict[str, Any] = {"cited_keys": (list[key_type], Field(min_length=1))}
    if local:
        fields["question"] = (
            str,
            Field(
                min_length=5,
                max_length=MAX_RQ_CHARS,
                json_schema_extra={"pattern": grammar_pattern(Kind.research_question)},
            ),
        )
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
    reply_model = reply_model_for(keys, local=grammar_constrained(settings.model))
    reply, model = await ask_gated(llm, settings, reply_model, variables(paper, contrib, gaps, parsed, keys))
    allowed = set(keys)
    rqs: list[LinkedRQ] = []
    dropped_keys: list[str] = []
    unlinked = 0
    malformed: list[GateDrop] = []
    questions = [rq.question for rq in reply.research_questions]
    for i, (rq, failures) in enumerate(zip(reply.research_questions, check_many(questions, Kind.research_question))):
        if failures:
            malformed.append(
                drop_of(rq.question, Kind.research_question, f"research_questions[{i}].question", failures)
            )
            continue
        linked = list(dict.fromkeys(k for k in rq.cited_keys if k in allowed))
        dropped_keys += [k for k in rq.cited_keys if k not in allowed]
        if not linked:
            unlinked += 1
            continue
        rqs.append(LinkedRQ(question=rq.question.strip(), cited_keys=linked, index=i))
    return [
        AuthorRQsResult(
            arxiv_id=parsed.arxiv_id,
            rqs=rqs,
            dropped_keys=dropped_keys,
            dropped_rqs=unlinked,
            dropped=malformed,
            model=model,
            note=None if rqs else "no_valid_rqs",
        )
    ]
