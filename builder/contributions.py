"""Stage "contributions" (method.md step 4): M's problem statement, main idea, novelty type, ideas, contributions.

One prompt per paper with M's title, abstract and body text (cut to the text
budget). The novelty type is the closed enum ``rqbench.records.NoveltyType``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field
from rqbench.builder import prompt_text as pt
from rqbench.builder.llm_stage import GRAMMAR_SAFE_TEXT, LLMStageSettings, ask, bounded

from rqbench.records import NoveltyType, ParsedPaper, Record, SourcePaper
from rqbench.steps import owned_step

STEP = owned_step(__name__)
_Text = Annotated[str, Field(min_length=1, max_length=GRAMMAR_SAFE_TEXT)]
# The registry's reply, with long texts bounded so a grammar-constrained local model can be asked for it.
Reply = bounded(STEP.reply_model, problem_statement=(str, Field(min_length=1, max_length=GRAMMAR_SAFE_TEXT)),
                ideas=(list[_Text], Field(min_length=1, max_length=8)),
                contributions=(list[_Text], Field(min_length=1, max_length=8)))  # fmt: skip


class ContributionsResult(Record):
    arxiv_id: str
    problem_statement: str
    main_idea_headline: str
    novelty_type: NoveltyType
    ideas: list[str]
    contributions: list[str]
    model: str


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
    reply, model = await ask(llm, settings, Reply, variables(paper, parsed, settings))
    return [
        ContributionsResult(
            arxiv_id=parsed.arxiv_id,
            problem_statement=reply.problem_statement.strip(),
            main_idea_headline=reply.main_idea_headline.strip(),
            novelty_type=reply.novelty_type,
            ideas=[x.strip() for x in reply.ideas],
            contributions=[x.strip() for x in reply.contributions],
            model=model,
        )
    ]
