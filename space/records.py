"""Records the Space stores: submission requests and human judgments.

They live here rather than in ``rqbench.records`` because only the Space writes
them; the evaluation code reads results files, never these.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Literal

from pydantic import Field

from rqbench.records import SCHEMA_VERSION, Pick, Record, SubmissionMetadata

# "review": the manipulation screen flagged some RQs; the worker leaves it until a maintainer approves
# (back to "pending") or rejects it ("failed"), so nothing of it is judged or published before then.
RequestStatus = Literal["pending", "review", "running", "finished", "failed"]


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class SubmissionRequest(Record):
    """One queued submission: what the worker judges and what the Submit tab lists."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.request"] = "rqbench.request"
    request_id: str = Field(description="Stable id: the submission hash without its prefix, shortened.")
    user: str = Field(description="Hub user name, or the local name offline; the model name's owner.")
    submission_hash: str
    metadata: SubmissionMetadata
    submission_file: str = Field(description="Path of the raw upload inside the private submissions store.")
    dataset_repo: str
    dataset_revision: str
    instances: int = Field(ge=0, description="Instances with five RQs in the upload.")
    partial: bool = Field(
        default=False,
        description="Accepted as a partial submission: some rq_ids are missing or "
        "failed, and the worker judges the rest (coverage is shown beside every score).",
    )
    status: RequestStatus = "pending"
    reason: str = Field(default="", description="Why a request failed; empty otherwise.")
    submitted_at: datetime
    updated_at: datetime
    started_at: datetime | None = None
    attempts: int = Field(default=0, ge=0, description="How often a worker took this request up.")
    worker: str = Field(default="", description="Id of the worker that holds a running request.")
    results_files: list[str] = Field(default_factory=list, description="Paths in the results store.")
    flags: list[str] = Field(default_factory=list, description="Why the screen flagged RQs (the first 20).")
    flagged_count: int = Field(default=0, ge=0, description="RQs the manipulation screen flagged for review.")
    reviewed_by: str = Field(default="", description="The maintainer who approved or rejected a flagged request.")
    reviewed_at: datetime | None = None
    review_note: str = Field(default="", max_length=2000)

    @property
    def held_for_review(self) -> bool:
        """Flagged and not yet approved: the worker must neither judge nor publish it."""
        return self.flagged_count > 0 and not self.reviewed_by


Side = Literal["gt", "model"]


class HumanJudgment(Record):
    """One annotator's blinded choice between the author-anchored RQ and a model's best-of-five."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.judgment"] = "rqbench.judgment"
    judgment_id: str
    annotator: str = Field(description="Hashed annotator id (never the raw account name).")
    rq_id: str
    subfield: str
    model: str = Field(description="The model whose best-of-five RQ was shown.")
    submission_hash: str
    model_candidate: str | None = Field(
        default=None,
        description="The shown model RQ's candidate id (m0..m4); None in judgments made before it was kept.",
    )
    model_text_hash: str | None = Field(
        default=None, description="rqbench.evaluate.metrics.shown_pair.text_hash of the shown model RQ's text."
    )
    left: Side = Field(description="Which RQ was shown on the left; the other was on the right.")
    choice: Literal["left", "right", "tie"]
    winner: Pick = Field(description="The choice mapped back to the sides.")
    source_bound_left: int | None = Field(default=None, ge=0, le=3)
    source_bound_right: int | None = Field(default=None, ge=0, le=3)
    comment: str = Field(default="", max_length=2000)
    seconds: float = Field(ge=0, description="Time from showing the pair to the choice.")
    dataset_repo: str
    dataset_revision: str
    created_at: datetime


class Skip(Record):
    """A pair an annotator chose to skip: not shown to them again, counted as no judgment."""

    kind: Literal["rqbench.skip"] = "rqbench.skip"
    annotator: str
    rq_id: str
    model: str
    created_at: datetime
