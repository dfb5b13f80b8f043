"""What a build records about itself: the manifest with one entry per stage, and every skipped item."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from rqbench.records.common import SCHEMA_VERSION, PromptSetRef, Record

class SkipRecord(Record):
    """A paper or item a stage could not use, with the reason, so nothing vanishes silently."""

    stage: str
    item_id: str
    reason: str
    detail: str = ""


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
