"""What a build records about itself: the manifest with one entry per stage, every skipped item, the texts the gate refused."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from rqbench.records.common import SCHEMA_VERSION, PromptSetRef, Record

class GateDrop(Record):
    """A text of an LLM reply that the well-formedness gate (``rqbench.wellformed``) refused after the re-ask.

    The builder keeps it out of every later stage and every record, and counts it by rule.
    """

    kind: str = Field(description="The gate's kind: research_question, gap, contribution, problem_statement, headline.")
    field: str = Field(description="Where it stood in the reply, e.g. gaps[2] or research_questions[0].question.")
    rules: list[str] = Field(min_length=1, description="The gate's rules it broke, by name.")
    text: str = Field(default="", description="Its first 300 characters, for a reader of the build folder.")


class MalformedCount(Record):
    """The gate's drops of one kind: the texts dropped, and per rule how many of them broke it."""

    items: int = 0
    rules: dict[str, int] = Field(default_factory=dict, description="A text that broke several rules counts under each.")


class SkipRecord(Record):
    """A paper or item a stage could not use, with the reason, so nothing vanishes silently."""

    stage: str
    item_id: str
    reason: str
    detail: str = ""
    dropped: list[GateDrop] = Field(
        default_factory=list, description="The texts the well-formedness gate refused, when they are why it was skipped."
    )


class StageRun(Record):
    """One stage of a build, as the manifest records it."""

    stage: str
    model: str | None = None
    prompt_set: PromptSetRef | None = None
    items_in: int = 0
    items_out: int = 0
    skipped: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0
    seconds: float = 0.0
    finished_at: datetime | None = None


class BuildManifest(Record):
    """What produced a build: stages, models, prompt sets, counts, time and cost."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.build"] = "rqbench.build"
    build_id: str
    created_at: datetime
    inputs: dict[str, Any] = Field(default_factory=dict, description="Query, date window, papers folder, limits.")
    settings: dict[str, Any] = Field(default_factory=dict)
    stages: list[StageRun] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    dropped: dict[str, int] = Field(default_factory=dict, description="RQs dropped, by reason.")
    malformed: dict[str, MalformedCount] = Field(
        default_factory=dict, description="Texts the well-formedness gate kept out of the data, by kind."
    )
