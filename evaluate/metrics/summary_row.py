"""A summary row: the contract between stored results and the leaderboard and report.

One row per submission, setting and judge (or the judges combined, or the author-anchored reference): each figure
with its interval, and the provenance that says what produced it. ``summary.py`` computes them.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, Field

from rqbench.evaluate.benchmark.trial import trial_mark
from rqbench.evaluate.criteria import headline_figure
from rqbench.evaluate.metrics.diversity import DEFAULT_EMBEDDER, DiversityRow
from rqbench.records import GenerationCost, PromptSetRef

# The figure a dollar of generation buys: the Pass@5 win rate on non-obviousness (the row's setting), in points.
PER_DOLLAR_METRIC = headline_figure("novelty", "win")
COMBINED = "combined"
REFERENCE_MODEL = "author-anchored (GT)"


class Figure(BaseModel):
    """One reported number with its 95% cluster-bootstrap interval and spread."""

    value: float
    ci_low: float
    ci_high: float
    std: float = Field(description="Sample standard deviation of the per-instance values.")
    n: int = Field(description="Observations: instances, or instance x judge pairs when pooled.")
    n_clusters: int = Field(description="Distinct source papers behind the figure.")
    unjudged: int = Field(
        default=0,
        description="Instance x judge pairs a judge's failed call left unjudged for this figure's criterion (for the "
        "author-anchored reference row: those that left the GT without a score). Marked incomplete when above 0.",
    )


class Provenance(BaseModel):
    """Where a row's numbers come from, so a leaderboard row can be audited."""

    judge_models: list[str]
    judge_labels: list[str]
    prompt_sets: list[PromptSetRef]
    dataset_repo: str
    dataset_revision: str
    dataset_version: str | None = None
    instances_covered: int = Field(description="Instances with at least one figure in this row.")
    instances_expected: int | None = Field(description="Instances in the dataset revision; None for a sub-field split.")
    trial: int | None = Field(
        default=None,
        description="A trial row: its files judged only the revision's first N instances (--limit N). "
        "Its figures are over those; it is shown apart from full runs and never ranked beside them.",
    )
    failures: str = Field(default="paper", description="How failures entered the figures (metrics.FailureAccounting).")
    instances_scored: int = Field(
        default=0,
        description="Instances every judge of the row judged on every criterion run (a generation "
        "failure counts: it is scored as a loss).",
    )
    instances_unjudged: int = Field(default=0, description="Instances a judge of the row left unjudged (a failed call)")
    generation_failures: int = Field(default=0, description="Instances with no valid generation (the model's failure).")
    missing_candidates: int = Field(default=0, description="RQs missing from instances that have some (the model's).")
    rule_applications: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Per judge label: the paper's rules applied to its replies, by rule."
    )
    failed_calls: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="Per judge label: its calls that failed after their re-ask, by reason."
    )
    judging_cost_usd: float | None = Field(
        default=None,
        description="Dollars of the row's judging requests, as its results files recorded them from the call log "
        "(cache hits cost nothing); None when a request had no price in litellm's cost map, so the sum is unknown.",
    )
    judging_requests: int = Field(default=0, description="Requests sent to judge the row (not cache hits).")
    unpriced_requests: int = Field(default=0, description="Of them, the requests with no known price.")
    judging_run_ids: list[str] = Field(default_factory=list, description="The call log's runs of those requests.")
    generation_cost: GenerationCost | None = Field(
        default=None,
        description="What generating the submission cost, as its results files stored it from the call log; None "
        "when it was generated elsewhere (no call log here holds its requests).",
    )
    submission_hash: str | None = None
    submission_date: datetime | None = None
    model_type: str | None = None
    knowledge_cutoff: date | None = None
    knowledge_cutoff_source: str | None = Field(
        default=None, description="'submission' (its metadata states it), else the model catalog's source document."
    )
    earliest_source_date: date | None = Field(default=None, description="The earliest dated covered source paper.")
    contaminated: bool | None = Field(
        default=None,
        description="True if a covered source paper's first version is not after the knowledge cutoff; False if every "
        "one is dated and after it; None if unknown (no cutoff, or undated papers and none before it).",
    )
    contaminated_share: float | None = Field(
        default=None, description="Share of the dated covered instances whose source paper is not after the cutoff."
    )

    @property
    def incomplete(self) -> bool:
        """A judge left instances unjudged: the row's figures lack them, and it says so."""
        return self.instances_unjudged > 0


class CleanFigures(BaseModel):
    """A model row's figures over its clean instances: those whose source paper's first version is after the
    model's knowledge cutoff (``evaluate/metrics/contamination.py``), so the model cannot have read it."""

    instances: int = Field(description="Clean instances with at least one figure, of the row's instances_covered.")
    undated: int = Field(description="Covered instances whose source paper has no first-version date: left out.")
    figures: dict[str, Figure] = Field(default_factory=dict, description="Keyed like SummaryRow.figures.")
    reason: str | None = Field(default=None, description="Why figures is empty; None when it holds figures.")


class SummaryRow(BaseModel):
    """One leaderboard/report row; ``figures`` is keyed by metric name (``rqbench.evaluate.criteria.METRICS``)."""

    row_kind: Literal["model", "reference"] = "model"
    model: str
    prompt_variant: str
    setting: Literal["standalone", "comparative"]
    judge: str = Field(description="The judge's label, or 'combined'.")
    combine: str | None = Field(default=None, description="The combine rule, on combined rows.")
    subfield: str | None = Field(default=None, description="None for the row over all sub-fields.")
    provenance: Provenance
    figures: dict[str, Figure] = Field(default_factory=dict)
    clean: CleanFigures | None = Field(default=None, description="The clean-subset figures; None on reference rows.")
    diversity: DiversityRow | None = Field(
        default=None,
        description=f"The diversity of the submission's RQs under {DEFAULT_EMBEDDER}, from the record its results "
        "files store (``rqbench diversity``); None on reference rows and where none is stored.",
    )
    per_dollar: Figure | None = Field(
        default=None,
        description=f"``{PER_DOLLAR_METRIC}`` in percentage points per dollar of generation, its interval divided "
        "alike; None where the figure or a known, non-zero generation cost is missing.",
    )

    @property
    def generation_cost_usd(self) -> float | None:
        """Dollars of generation when every request of it is logged and priced; else None (unknown)."""
        g = self.provenance.generation_cost
        return g.cost_usd if g is not None and g.known else None

    def figure(self, name: str) -> Figure | None:
        return self.figures.get(name)

    @property
    def name(self) -> str:
        """How tables, plots and the leaderboard name the row: the model, its prompt variant unless the paper's,
        and a trial's mark (``[trial 1/4]``)."""
        if self.row_kind == "reference":
            return self.model
        name = self.model if self.prompt_variant in ("", "original") else f"{self.model} ({self.prompt_variant})"
        return name + trial_mark(self.provenance.trial, self.provenance.instances_expected)

    def flat(self) -> dict[str, object]:
        """A flat dict for CSV: identity columns, then value/ci_low/ci_high per figure."""
        out: dict[str, object] = {
            "row_kind": self.row_kind,
            "model": self.model,
            "prompt_variant": self.prompt_variant,
            "setting": self.setting,
            "judge": self.judge,
            "combine": self.combine or "",
            "subfield": self.subfield or "",
            "instances_covered": self.provenance.instances_covered,
            "instances_expected": self.provenance.instances_expected,
            "trial": self.provenance.trial,
            "instances_scored": self.provenance.instances_scored,
            "instances_unjudged": self.provenance.instances_unjudged,
            "generation_failures": self.provenance.generation_failures,
            "failures": self.provenance.failures,
            "contaminated": self.provenance.contaminated,
            "judging_cost_usd": self.provenance.judging_cost_usd,
            "judging_requests": self.provenance.judging_requests,
            "unpriced_requests": self.provenance.unpriced_requests,
            "generation_cost_usd": self.generation_cost_usd,
            "generation_requests": self.provenance.generation_cost.requests if self.provenance.generation_cost else 0,
            f"{PER_DOLLAR_METRIC}_per_dollar": self.per_dollar.value if self.per_dollar else None,
        }
        for name, fig in self.figures.items():
            out[name] = fig.value
            out[f"{name}_ci_low"] = fig.ci_low
            out[f"{name}_ci_high"] = fig.ci_high
            out[f"{name}_std"] = fig.std
            out[f"{name}_n"] = fig.n
            out[f"{name}_unjudged"] = fig.unjudged
        return out
