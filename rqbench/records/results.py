"""Judging results: one self-describing file per (submission, judge, setting), with the protocol it followed."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import Field, field_serializer, field_validator

from rqbench.records.common import SCHEMA_VERSION, PromptSetRef, Record
from rqbench.records.judging import NarrownessScore, NoveltyScore, OverlapReply
from rqbench.records.submission import SubmissionMetadata


class PaperCut(Record):
    """What of one background paper a prompt carried: tokens kept and cut, and which sections."""

    paper_id: str
    text_level: str
    tokens: int = Field(description="Tokens of the paper's block as sent (the policy's count).")
    tokens_cut: int = Field(default=0, ge=0, description="Tokens of the paper left out; 0 when it went whole.")
    budget: int
    abstract_cut: bool = False
    sections_kept: list[str] = Field(default_factory=list)
    section_cut: str | None = None
    sections_dropped: int = 0

    @property
    def truncated(self) -> bool:
        return self.abstract_cut or self.section_cut is not None or self.sections_dropped > 0


class JudgeSpec(Record):
    """Which judge produced a result, configured how."""

    model: str = Field(description="litellm model name, e.g. gemini/gemini-3.1-pro or local/smollm2-135m.")
    label: str = Field(description="Display name; distinguishes two configurations of one model.")
    setting: Literal["standalone", "comparative"]
    temperature: float | None = Field(default=0.0, description="None: the vendor's default (none was sent).")
    reasoning_effort: str | None = None
    seed: int = 0
    orderings: int = Field(default=1, ge=1, description="Shuffled orderings per comparative call.")
    order_key: str | None = Field(
        default=None,
        description="What each comparative candidate order was drawn from (random.Random of this string, filled in); "
        "None in files written before the judge was part of it, whose key was {seed}:{rq_id}:{ordering}.",
    )
    prompt_set: PromptSetRef


class RawReply(Record):
    """A judge's reply text as received, kept so scores can be reparsed without a call."""

    step: str
    cache_key: str
    text: str | None
    error: str | None = None
    truncated: bool = Field(default=False, description="The reply was cut at the reply budget (finish_reason length).")
    candidate_order: list[str] = Field(
        default_factory=list, description="Candidate ids in the order shown (gt, m0..m4)."
    )
    paper_id: str | None = None


class CandidateScores(Record):
    """A candidate's scores under one judge; None means unscored (with the reason in failures)."""

    candidate_id: str = Field(description="'gt' or 'm0'..'m4'.")
    text: str
    novelty: NoveltyScore | None = None
    novelty_by_ordering: list[NoveltyScore] = Field(default_factory=list)
    rank_by_ordering: list[int] = Field(default_factory=list)
    narrowness: dict[str, NarrownessScore] = Field(default_factory=dict, description="Per background paper id.")
    criteria: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Scores of criteria declared as data (evaluate/criteria/declared.py): criterion -> dimension -> "
        "score. Left out of the file when empty, so files of the paper's criteria read as before.",
        exclude_if=lambda v: not v,
    )


class InstanceResult(Record):
    rq_id: str
    arxiv_id: str = Field(
        description="The source paper's id (the dataset's paper_id: its arXiv id, or a local paper's)."
    )
    subfield: str
    paper_published: date | None = Field(
        default=None,
        description="The source paper's first-version date, from the instance (None: unknown, or a file written "
        "before it was kept); its month is the release window a figure can be grouped by.",
    )
    background_paper_ids: list[str]
    candidates: list[CandidateScores] = Field(description="GT first, then the model's five.")
    overlap: OverlapReply | None = None
    raw_replies: list[RawReply] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    rule_corrections: int = Field(default=0, description="Applications of the paper's rules to this instance's replies")
    rule_applications: dict[str, int] = Field(
        default_factory=dict, description="The same, by rule (rqbench.records.Rule: relevance_zero, covering_subset)."
    )
    background: dict[str, list[PaperCut]] = Field(
        default_factory=dict,
        description="Per judge metric (novelty, narrowness), what of each background paper its prompts carried.",
    )


class Coverage(Record):
    """What a results file scored, failures counted by the project's rule (the paper is silent on failures;
    ``rqbench.evaluate.metrics.accounting``).

    Derived from the instances and written with the file, so a reader sees the count without recomputing it.
    """

    instances_expected: int = Field(ge=0, description="Instances in the dataset revision judged.")
    instances: int = Field(ge=0, description="Instances in this file.")
    instances_scored: int = Field(
        ge=0, description="Instances every criterion judged, and those with no valid generation (scored as a loss)."
    )
    generation_failures: int = Field(ge=0, description="Instances with no valid generation: the model's failure.")
    missing_candidates: int = Field(ge=0, description="RQs missing from instances that have some: the model's.")
    unjudged: int = Field(ge=0, description="Instances a judge's call failed on (after its re-ask): the judge's.")
    unjudged_by_criterion: dict[str, int] = Field(default_factory=dict)
    failed_calls: dict[str, int] = Field(default_factory=dict, description="Failed calls by reason.")
    rule_applications: dict[str, int] = Field(default_factory=dict, description="The paper's rules applied, by rule.")
    trial: int | None = Field(
        default=None,
        ge=1,
        description="A trial run's instances: the first N of the revision (--limit N); the rest "
        "are not in the run and are no one's failure. None for a full run.",
    )

    @property
    def incomplete(self) -> bool:
        """A judge left instances unjudged, or the file lacks instances its run took (the revision's, or a trial's)."""
        return self.unjudged > 0 or self.instances < (self.trial or self.instances_expected)


class CallTotals(Record):
    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = Field(default=0.0, description="Dollars of the priced requests (litellm's cost map).")
    unpriced: int = Field(
        default=0, description="Requests litellm's cost map has no price for: their cost is unknown, not in cost_usd."
    )
    seconds: float = 0.0
    run_ids: list[str] = Field(
        default_factory=list,
        description="The call log's runs the requests were sent in (`rqbench calls --run ID` lists their calls).",
    )


class GenerationCost(Record):
    """What generating the submission's RQs cost, looked up in the call log by the cache keys of its generation
    log; absent from a results file whose submission was made elsewhere (its calls are in no log here)."""

    requests: int = Field(ge=0, description="Distinct generation requests found in the call log (one per cache key).")
    cost_usd: float = Field(default=0.0, description="Dollars of the priced ones, as litellm priced them when sent.")
    unpriced: int = Field(default=0, ge=0, description="Of them, requests with no price: the total is then unknown.")
    unlogged: int = Field(
        default=0, ge=0, description="Cache keys of the generation log the call log never saw sent: unknown too."
    )
    run_ids: list[str] = Field(default_factory=list, description="The call log's runs that sent them.")

    @property
    def known(self) -> bool:
        """Every request is in the log with a price: ``cost_usd`` is the whole cost."""
        return self.unpriced == 0 and self.unlogged == 0


class InstanceDiversity(Record):
    """One instance's RQs under one embedding model: their mean pairwise cosine and near-duplicate pairs."""

    rq_id: str
    mean_cosine: float = Field(ge=-1.0, le=1.0, description="Mean cosine over the C(k, 2) pairs of the k RQs.")
    near_duplicate_pairs: int = Field(ge=0, description="Pairs whose cosine is at least the record's threshold.")


class DiversityRecord(Record):
    """A submission's five-RQ diversity under one embedding model, stored so no page load has to embed."""

    embedder: str
    threshold: float = Field(description="The near-duplicate cosine threshold.")
    instances: list[InstanceDiversity] = Field(description="Instances with at least two RQs.")


class Departure(Record):
    """One way a run differs from the paper's protocol, and how to restore the paper's."""

    item: str = Field(description="The protocol item, e.g. 'judges', 'judge temperature', 'input truncation'.")
    ours: str = Field(description="What the run does.")
    paper: str = Field(description="What the paper does.")
    restore: str = Field(description="The flag or setting that restores the paper's protocol.")

    def line(self) -> str:
        return f"{self.item}: {self.ours} (paper: {self.paper}); restore: {self.restore}"


class ProtocolRecord(Record):
    """The protocol a run asked for, and every setting in which it departs from the paper's."""

    name: Literal["paper", "custom"] = Field(
        description="paper: the run asked for the paper's protocol (--protocol paper); custom: it did not."
    )
    departures: list[Departure] = Field(default_factory=list)

    @property
    def faithful(self) -> bool:
        return not self.departures


def dataset_label(repo: str, revision: str, version: str | None = None) -> str:
    """How a dataset revision is named in reports and on pages: ``local/rq-bench-sample@v0.1.0 (cd54ea4a1b2c)``."""
    if version is None or version == revision:
        return f"{repo}@{revision}"
    return f"{repo}@{version} ({revision[:12]})"


class ResultsFile(Record):
    """Everything a leaderboard row or a report table is computed from."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.results"] = "rqbench.results"
    dataset_repo: str = Field(description="The dataset's public name: a Hub id, local/<folder> or build/<folder>.")
    dataset_revision: str
    dataset_version: str | None = Field(default=None, description="The release's tag (v0.1.0), where it has one.")
    submission_hash: str
    submission: SubmissionMetadata
    judge: JudgeSpec
    created_at: datetime
    instances_expected: int = Field(ge=0, description="Instances in the dataset revision (coverage denominator).")
    trial: int | None = Field(
        default=None,
        ge=1,
        description="A trial run (--limit N): it judged only the first N instances of the revision "
        "(dataset order), and is shown apart from full runs, never ranked beside them. None for a full run.",
    )
    instances: list[InstanceResult]
    totals: CallTotals = Field(default_factory=CallTotals)
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Run settings that shape the prompts (background truncation policy, metrics)."
    )
    protocol: ProtocolRecord | None = Field(
        default=None, description="The protocol and its departures from the paper's; None in files written before it."
    )
    coverage: Coverage | None = Field(
        default=None, description="What the file scored and who failed where; None in files written before it."
    )
    generation_cost: GenerationCost | None = Field(
        default=None,
        description="What generating the submission cost, from the call log; None when it was generated elsewhere.",
    )
    diversity: list[DiversityRecord] = Field(
        default_factory=list,
        description="The submission's diversity, one record per embedding model (the same "
        "in every results file of the submission).",
    )

    @property
    def dataset_label(self) -> str:
        return dataset_label(self.dataset_repo, self.dataset_revision, self.dataset_version)

    # Results files are published: the submitter's contact stays in the private request and the raw
    # upload, never here. It is dropped when a file is read (one written before this rule) or made,
    # and never written, even from a copy made with ``model_copy(update=...)``, which skips validators.
    @field_validator("submission")
    @classmethod
    def _no_contact(cls, meta: SubmissionMetadata) -> SubmissionMetadata:
        return meta.model_copy(update={"contact": ""}) if meta.contact else meta

    @field_serializer("submission")
    def _written_without_contact(self, meta: SubmissionMetadata) -> SubmissionMetadata:
        return meta.model_copy(update={"contact": ""}) if meta.contact else meta
