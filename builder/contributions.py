"""Stage "contributions" (method.md step 4): M's problem statement, main idea, novelty type, ideas, contributions.

One prompt per paper with M's title, abstract and body text (cut to the text
budget). The novelty type is the closed enum ``rqbench.records.NoveltyType``.
Every text passes the well-formedness gate (``llm_stage.ask_gated``): an idea or
a contribution that still fails after the re-ask is dropped by rule; a paper
whose problem statement or headline fails, or that keeps no contribution, is a
named skip (``malformed_problem_statement``, ``malformed_headline``,
``no_wellformed_contributions``) carrying the refused texts.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from rqbench.builder import prompt_text as pt
from rqbench.builder.gate import gated_items, gated_text
from rqbench.builder.llm_stage import (
    GRAMMAR_SAFE_TEXT,
    LLMStageSettings,
    ask_gated,
    bounded,
    grammar_constrained,
)
from rqbench.builder.stages import ItemSkipped
from rqbench.grammar_patterns import grammar_pattern
from rqbench.records import GateDrop, NoveltyType, ParsedPaper, Record, SourcePaper
from rqbench.steps import owned_step
from rqbench.wellformed import Kind

STEP = owned_step(__name__)


# A headline is one line. The gate's bound is in words (40) and characters (400); a grammar counts characters
# only, and the embedded model filled the 400 with two sentences of 45-50 words, which the gate then dropped as
# too_long with the paper (the offline sample lost two of its four papers this way). 200 characters keep a
# constrained decoder under the word bound; other models are asked as before.
GRAMMAR_HEADLINE_CHARS = 200


def _text(kind: Kind, limit: int, *, local: bool) -> Any:
    """A text field of at most ``limit`` characters; for a grammar-constrained decoder, with the kind's pattern."""
    extra = {"pattern": grammar_pattern(kind, limit)} if local else None
    return Annotated[str, Field(min_length=1, max_length=limit, json_schema_extra=extra)]


def reply_model_for(*, local: bool) -> type:
    """The registry's reply, long texts bounded so a grammar-constrained local model can be asked for it (with patterns)."""
    item = _text(Kind.contribution, GRAMMAR_SAFE_TEXT, local=local)
    fields: dict[str, Any] = {
        "problem_statement": (_text(Kind.problem_statement, GRAMMAR_SAFE_TEXT, local=local), ...),
        "ideas": (list[item], Field(min_length=1, max_length=8)),  # type: ignore[valid-type]
        "contributions": (list[item], Field(min_length=1, max_length=8)),  # type: ignore[valid-type]
    }
    if local:
        fields["main_idea_headline"] = (_text(Kind.headline, GRAMMAR_HEADLINE_CHARS, local=True), ...)
    return bounded(STEP.reply_model, **fields)


Reply = reply_model_for(local=False)
LocalReply = reply_model_for(local=True)


class ContributionsResult(Record):
    arxiv_id: str
    problem_statement: str
    main_idea_headline: str
    novelty_type: NoveltyType
    ideas: list[str]
    contributions: list[str]
    model: str
    dropped: list[GateDrop] = Field(default_factory=list, description="Ideas and contributions the gate refused.")


def variables(paper: SourcePaper, parsed: ParsedPaper, settings: LLMStageSettings) -> dict[str, str]:
    abstract = paper.abstract.strip() or pt.abstract_of(parsed) or "(no abstract)"
    return {
        "title": paper.title,
        "abstract": pt.clip(abstract, settings.context_budget_chars),
        "text": pt.paper_text(parsed, settings.text_budget_chars),
    }


async def extract(item: dict[str, Any], llm: Any, *, settings: LLMStageSettings) -> list[ContributionsResult]:
    paper: SourcePaper = item["filter"].paper
    parsed: ParsedPaper = item["parse"]
    reply_model = LocalReply if grammar_constrained(settings.model) else Reply
    reply, model = await ask_gated(llm, settings, reply_model, variables(paper, parsed, settings))
    ideas, dropped = gated_items(reply.ideas, Kind.contribution, "ideas")
    contributions, dropped_c = gated_items(reply.contributions, Kind.contribution, "contributions")
    dropped += dropped_c
    for field, kind in (("problem_statement", Kind.problem_statement), ("main_idea_headline", Kind.headline)):
        drop = gated_text(getattr(reply, field), kind, field)
        if drop is not None:
            raise ItemSkipped(f"malformed_{kind.value}", f"{field}: {', '.join(drop.rules)}", dropped=[drop, *dropped])
    if not contributions:
        raise ItemSkipped("no_wellformed_contributions", "every contribution failed the gate", dropped=dropped)
    return [
        ContributionsResult(
            arxiv_id=parsed.arxiv_id,
            problem_statement=reply.problem_statement.strip(),
            main_idea_headline=reply.main_idea_headline.strip(),
            novelty_type=reply.novelty_type,
            ideas=ideas,
            contributions=contributions,
            model=model,
            dropped=dropped,
        )
    ]
