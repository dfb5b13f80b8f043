"""Generated RQs and submissions: the question rules, the generation reply, a submission's lines."""

from __future__ import annotations

from datetime import date as Date, datetime
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from rqbench.records.common import MAX_LONG_TEXT, MAX_RQ_CHARS, Record, Reply

def _check_question(v: str) -> str:
    v = v.strip()
    if not v:
        raise ValueError("research question is empty")
    if len(v) > MAX_RQ_CHARS:
        raise ValueError(f"research question is {len(v)} characters, over the limit of {MAX_RQ_CHARS}")
    if not v.endswith("?"):
        raise ValueError("research question must end with '?'")
    return v


def check_distinct(questions: list[str]) -> list[str]:
    """The five must differ: case and spacing aside, no question may repeat."""
    seen: set[str] = set()
    for q in questions:
        norm = " ".join(q.lower().split())
        if norm in seen:
            raise ValueError(f"research question repeated within the five: {q!r}")
        seen.add(norm)
    return questions


# Shown to grammar-constrained decoders (llama.cpp, vLLM) in the JSON schema only, so that a weak
# model ends every question with "?"; validation itself is _check_question's, with its clearer errors.
QUESTION_GRAMMAR_PATTERN = r'^[^"\\\n]{10,300}\?$'

Question = Annotated[
    str, Field(min_length=1, max_length=MAX_RQ_CHARS, json_schema_extra={"pattern": QUESTION_GRAMMAR_PATTERN})
]


class GenerationReply(Reply):
    """A model's answer to the RQ generation prompt.

    The JSON schema shown to the model asks for at most 6 gaps of 300 characters, which keeps a
    grammar-constrained reply inside a small model's token budget; validation accepts up to 10 of
    MAX_LONG_TEXT, so a longer answer from a hosted model is not refused.
    """

    gaps: list[
        Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT, json_schema_extra={"maxLength": 300})]
    ] = Field(min_length=1, max_length=10, json_schema_extra={"maxItems": 6})
    research_questions: list[Question] = Field(min_length=5, max_length=5)

    @field_validator("research_questions")
    @classmethod
    def _questions(cls, v: list[str]) -> list[str]:
        return [_check_question(q) for q in v]


class SubmissionMetadata(Record):
    """The first line of a submission: who made the RQs and how."""

    kind: Literal["metadata"] = "metadata"
    model: str = Field(min_length=1)
    provider: str = ""
    model_type: Literal["open", "closed", "unknown"] = "unknown"
    knowledge_cutoff: Date | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    prompt_variant: Literal["original", "revised", "strict", "custom"] = Field(
        default="original",
        description="The generation prompt: original (the paper's A.4 rules), revised (A.8), strict (original plus "
        "a rule of our own), custom (another prompt).",
    )
    date: datetime | None = None
    contact: str = ""
    notes: str = Field(default="", max_length=4000)


class SubmissionEntry(Record):
    """One line of a submission: exactly five RQs for one rq_id."""

    rq_id: str
    research_questions: list[Question] = Field(default_factory=list, max_length=5)
    gaps: list[str] = Field(default_factory=list)
    failure: str | None = Field(default=None, description="Set when generation failed; the RQs are then absent.")

    @model_validator(mode="after")
    def _five_unless_failed(self) -> "SubmissionEntry":
        if self.failure is None and len(self.research_questions) != 5:
            raise ValueError(
                f"research_questions needs at least 5 and at most 5 entries, got {len(self.research_questions)}"
            )
        if self.failure is not None and self.research_questions:
            raise ValueError("a failed entry (failure set) carries no research_questions")
        return self

    @field_validator("research_questions")
    @classmethod
    def _questions(cls, v: list[str]) -> list[str]:
        return check_distinct([_check_question(q) for q in v])
