"""What the builder's LLM stages reply: influence labels, contributions, gaps, author RQs, verification.

These are the registry's base reply models (``rqbench.steps``); a stage may
narrow one for grammar-constrained decoders, keeping its name. Every text the
dataset stores (problem statement, headline, ideas, contributions, gaps, RQs)
passes the well-formedness gate (``rqbench.wellformed``) here, so a reply that
fails is re-asked by the LLM layer quoting the rules. The influence reason and
the verifier's reasoning and evidence are free-text explanations, never
benchmark items: the gate does not apply to them.
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal

from pydantic import Field

from rqbench.records.common import MAX_LONG_TEXT, MAX_RQ_CHARS, MAX_SHORT_TEXT, Reply, gate_fields


class InfluenceLabel(str, enum.Enum):
    """The five labels of method.md step 3; the first two count as influential."""

    inspiration = "inspiration"
    competitor_baseline = "competitor_baseline"
    irrelevant = "irrelevant"
    minimally_influential = "minimally_influential"
    canonical_reference = "canonical_reference"

    @property
    def influential(self) -> bool:
        return self in (InfluenceLabel.inspiration, InfluenceLabel.competitor_baseline)


class InfluenceReply(Reply):
    label: InfluenceLabel
    reason: str = Field(default="", max_length=MAX_SHORT_TEXT)


class NoveltyType(str, enum.Enum):
    """What kind of novelty a paper claims (closed set, documented in the README).

    new_problem: poses a task or question not studied before.
    new_method: a new model, algorithm or technique.
    method_improvement: a modification or extension of an existing method.
    new_resource: a dataset, benchmark, corpus or tool for others to use.
    empirical_finding: an analysis or evaluation that reveals a new result.
    theory: a proof, bound or formal framework.
    application: an existing technique carried into a new domain.
    """

    new_problem = "new_problem"
    new_method = "new_method"
    method_improvement = "method_improvement"
    new_resource = "new_resource"
    empirical_finding = "empirical_finding"
    theory = "theory"
    application = "application"


class ContributionsReply(Reply):
    problem_statement: str = Field(min_length=1, max_length=MAX_LONG_TEXT)
    main_idea_headline: str = Field(min_length=1, max_length=MAX_SHORT_TEXT)
    novelty_type: NoveltyType
    ideas: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT)]] = Field(min_length=1, max_length=8)
    contributions: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT)]] = Field(
        min_length=1, max_length=8
    )

    _gate_problem = gate_fields("problem_statement", "problem_statement")
    _gate_headline = gate_fields("headline", "main_idea_headline")
    _gate_items = gate_fields("contribution", "ideas", "contributions")


class CitedContributionsReply(Reply):
    """What one cited (background) paper contributes, in its own terms: the text Table 6 compares RQs with."""

    contributions: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT)]] = Field(
        min_length=1, max_length=5
    )

    _gate = gate_fields("contribution", "contributions")


class GapReply(Reply):
    """Gaps that M identifies in one cited work and addresses; may be empty."""

    gaps: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT)]] = Field(max_length=6)

    _gate = gate_fields("gap", "gaps")


class AuthorRQ(Reply):
    question: str = Field(min_length=5, max_length=MAX_RQ_CHARS)
    cited_keys: list[str] = Field(min_length=1, description="Background papers: bib keys of M's citations.")

    _gate = gate_fields("research_question", "question")


class AuthorRQsReply(Reply):
    research_questions: list[AuthorRQ] = Field(min_length=1, max_length=6)


class VerificationReply(Reply):
    """Does M's own contribution address the RQ? (strict JSON of step 8)."""

    addressed: bool
    confidence: Literal["high", "medium", "low"]
    reasoning: str = Field(max_length=MAX_LONG_TEXT)
    evidence: str = Field(default="", max_length=MAX_SHORT_TEXT)
