"""What a build records about itself: the manifest with one entry per stage, every skipped item, the texts the
gate refused, and the window of papers a rolling build sources."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from typing import Any, Literal

from pydantic import Field, field_validator

from rqbench.records.common import SCHEMA_VERSION, PromptSetRef, Record
from rqbench.records.papers import SourcePaper

_MONTH_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def month_of(day: date | datetime) -> str:
    """``YYYY-MM`` of a day, or of a time in UTC (a naive time is taken as UTC): the release window it falls in."""
    if isinstance(day, datetime):
        day = (day.astimezone(timezone.utc) if day.tzinfo else day).date()
    return f"{day.year:04d}-{day.month:02d}"


def _utc(t: datetime) -> datetime:
    return t.astimezone(timezone.utc) if t.tzinfo else t.replace(tzinfo=timezone.utc)


class SourceWindow(Record):
    """The papers a rolling build takes: newer than a release's newest paper, and/or first posted in one month.

    A paper qualifies by its first-version date (arXiv ``published``); one without a date cannot be placed
    in a window, so a window build refuses it rather than guess.
    """

    since_release: str | None = Field(default=None, description="The release (tag vX.Y.Z) the build extends.")
    dataset: str | None = Field(default=None, description="Where that release lives: a local repository or a Hub id.")
    after: datetime | None = Field(
        default=None, description="The release's newest first-version date: papers must be strictly newer."
    )
    base_data_fingerprint: str | None = Field(
        default=None, description="That release's data fingerprint, so publishing checks it extends the very same data."
    )
    month: str | None = Field(default=None, description="YYYY-MM: only papers first posted in this month.")

    @field_validator("month")
    @classmethod
    def _month(cls, v: str | None) -> str | None:
        if v is not None and not _MONTH_RE.match(v):
            raise ValueError(f"month {v!r} is not YYYY-MM")
        return v

    def admits(self, paper: SourcePaper) -> bool:
        """Whether a sourced paper belongs to the window (False for an undated one)."""
        if paper.published is None:
            return False
        if self.after is not None and not _utc(paper.published) > _utc(self.after):
            return False
        return self.month is None or month_of(paper.published) == self.month

    def query_dates(self, today: date, last: date | None = None) -> tuple[date, date]:
        """The arXiv submission window to query: from the newest release paper's day (or the month's first) to
        ``last``, else the month's last day, never past yesterday (arXiv still adds to today); ValueError when
        that leaves no day."""
        starts, ends = [], [last or today - timedelta(days=1), today - timedelta(days=1)]
        if self.after is not None:
            starts.append(_utc(self.after).date())
        if self.month is not None:
            year, month = (int(x) for x in self.month.split("-"))
            first = date(year, month, 1)
            starts.append(first)
            ends.append(date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1))
        if not starts:
            raise ValueError("a source window needs a release to follow or a month")
        d0, d1 = max(starts), min(ends)
        if d1 < d0:
            raise ValueError(f"the window {self.describe()} has no finished day to query yet ({d0} to {d1})")
        return d0, d1

    def describe(self) -> str:
        parts = []
        if self.since_release:
            parts.append(
                f"papers newer than {self.after.isoformat() if self.after else '?'} (the newest paper of "
                f"{self.since_release} in {self.dataset})"
            )
        if self.month:
            parts.append(f"papers first posted in {self.month}")
        return " and ".join(parts) or "every paper"


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
    rules: dict[str, int] = Field(
        default_factory=dict, description="A text that broke several rules counts under each."
    )


class SkipRecord(Record):
    """A paper or item a stage could not use, with the reason, so nothing vanishes silently."""

    stage: str
    item_id: str
    reason: str
    detail: str = ""
    dropped: list[GateDrop] = Field(
        default_factory=list,
        description="The texts the well-formedness gate refused, when they are why it was skipped.",
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
