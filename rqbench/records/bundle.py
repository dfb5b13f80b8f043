"""A reproduction bundle: one leaderboard row and everything needed to recompute it without a call.

The manifest is the bundle's table of contents and its seal: what row it holds, what produced it
(dataset revision, prompt set, judges as configured and as the provider named itself, seeds,
summary settings) and the sha256 of every other member, so a changed byte is found and named.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from rqbench.records.common import PromptSetRef, Record
from rqbench.records.results import JudgeSpec

BUNDLE_FORMAT = "rq-bench-bundle/1"
MANIFEST_NAME = "manifest.json"


class RowKey(Record):
    """Which leaderboard row: a submission (by hash), its setting and judge, and a trial's size."""

    model: str
    prompt_variant: str
    setting: Literal["standalone", "comparative"]
    judge: str = Field(description="The judge's public label, or 'combined'.")
    submission_hash: str
    trial: int | None = None


class BundledCall(Record):
    """One call behind the row, from the call log and reply cache: the request and what came back.

    ``text`` is the reply; a call that failed in transport (never answered, so never cached) has
    no text and carries the failure it was recorded with, which the re-score replays.
    """

    key: str = Field(description="The cache key (a hash of model settings, messages, schema and prompt set).")
    model: str
    step: str
    request: dict[str, Any] = Field(description="The messages and the model's cache identity, as sent.")
    text: str | None = None
    finish_reason: str | None = None
    provider_model: str | None = Field(default=None, description="The model version the provider's reply named.")
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    failure_reason: str | None = None
    failure_detail: str | None = None


class BundledJudge(Record):
    """A judge of the row: its spec as the results file records it, and what the replies said about it."""

    spec: JudgeSpec
    cache_identity: dict[str, Any] = Field(description="The settings in every request's cache key.")
    provider_models: list[str] = Field(
        default_factory=list, description="Model versions the provider's replies named; empty when none was recorded."
    )
    results_file: str = Field(description="The member holding its results file.")


class SummarySettings(Record):
    """How the summary was computed: the row is byte-identical only under the same settings."""

    combine: str
    n_boot: int
    seed: int
    narrowness: str
    orderings: str
    failures: str


class BundleMember(Record):
    name: str
    sha256: str
    bytes: int


class BundleManifest(Record):
    """What a bundle holds and the checksum of every other member."""

    format: Literal["rq-bench-bundle/1"] = BUNDLE_FORMAT
    row: RowKey
    dataset_repo: str
    dataset_revision: str
    dataset_version: str | None = None
    instances: int = Field(description="Instances the row's results files judged.")
    instances_expected: int = Field(description="Instances in the dataset revision.")
    prompt_set: PromptSetRef
    judges: list[BundledJudge]
    summary: SummarySettings
    submission_source: str = Field(description="Where the bundled submission came from.")
    calls: int = Field(description="Calls in calls.jsonl: every call the row's judging read.")
    command: str = Field(description="The command that recomputes the row from the bundle.")
    members: list[BundleMember]
