"""Generated RQs and submissions: the question rules, the generation reply, a submission's lines."""

from __future__ import annotations

from datetime import date as Date
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from rqbench import grammar_patterns, wellformed
from rqbench.records.common import MAX_LONG_TEXT, MAX_RQ_CHARS, WELLFORMED_PER_ITEM, Record, Reply, gate_type


def check_distinct(questions: list[str]) -> list[str]:
    """The five must differ: no question may repeat another but for spacing, case, quotes or end punctuation."""
    repeats = wellformed.duplicates(questions)
    if repeats:
        later, first = min(repeats.items())
        raise ValueError(
            f"research question {later} repeated within the five (rule duplicate: it repeats question {first} "
            f"but for case, spacing or end punctuation): {questions[later]!r}; give five different questions"
        )
    return questions


# A question passes the well-formedness gate (``rqbench.wellformed``) under its submitted standard: only what is
# not a question or cannot be shown safely refuses it, and the errors name the rules broken; what goes to review
# is listed by ``rqbench validate``. ``grammar_patterns.QUESTION_PATTERN`` goes into the JSON schema only, for
# grammar-constrained decoders (llama.cpp, vLLM): it cuts off debris a regular grammar can express; the gate is
# the same for every model.
Question = Annotated[
    str,
    Field(min_length=1, max_length=MAX_RQ_CHARS, json_schema_extra={"pattern": grammar_patterns.QUESTION_PATTERN}),
    gate_type(wellformed.Kind.research_question, wellformed.Standard.submitted),
]


class GenerationReply(Reply):
    """A model's answer to the RQ generation prompt.

    The JSON schema shown to the model asks for at most 6 gaps of 300 characters, which keeps a
    grammar-constrained reply inside a small model's token budget; validation accepts up to 10 of
    MAX_LONG_TEXT, so a longer answer from a hosted model is not refused. The questions pass the
    well-formedness gate; the gaps are the model's notes on the way to them, never judged or scored,
    so the gate does not refuse a reply for them (``rqbench validate`` warns about them).
    """

    gaps: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT, json_schema_extra={"maxLength": 300})]] = (
        Field(min_length=1, max_length=10, json_schema_extra={"maxItems": 6})
    )
    research_questions: list[Question] = Field(min_length=5, max_length=5)


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
    def _questions(cls, v: list[str], info: ValidationInfo) -> list[str]:
        if info.context == WELLFORMED_PER_ITEM:  # the caller applies the gate, duplicates included, itself
            return v
        return check_distinct(v)
