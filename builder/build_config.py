"""What a build is asked to do (``BuildConfig``: inputs, models, budgets, stages) and the settings each LLM stage
gets from it (``llm_settings``): the stage order, roles and reply caps of method.md "Building the dataset"."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from rqbench.builder.llm_stage import LOCAL_CONTEXT_BUDGET, LOCAL_TEXT_BUDGET, LLMStageSettings, is_local
from rqbench.llm.catalog import CHARS_PER_TOKEN, input_room, reply_budget, supports_reasoning
from rqbench.llm.config import default_model
from rqbench.prompts import load_prompt_set
from rqbench.records import SourceWindow
from rqbench.steps import in_package

STAGE_ORDER = (
    "source",
    "filter",
    "parse",
    "influence",
    "contributions",
    "gaps",
    "author_rqs",
    "cited_text",
    "cited_contributions",
    "verify",
    "records",
)
# The LLM stages in stage order, and the step each runs: the step registry's entries for the builder's modules.
BUILD_STEPS = in_package("rqbench.builder")
LLM_STAGES = tuple(stage for stage in STAGE_ORDER if stage in BUILD_STEPS)
STAGE_STEPS = {stage: BUILD_STEPS[stage].name for stage in LLM_STAGES}
# The paper's roles: a light labeller for citations, a light model for per-citation gaps,
# a strong one for contributions (M's and, as the same kind of extraction, the cited papers'), RQs and verification.
STAGE_ROLES = {
    "influence": "labeller",
    "contributions": "strong",
    "gaps": "light",
    "author_rqs": "strong",
    "cited_contributions": "strong",
    "verify": "strong",
}
# Small caps on the reply length, per stage: enough for the reply's JSON, short enough for the local model.
# A model with a reasoning setting gets the catalog's reply budget instead (``reply_budget``), since its
# reasoning tokens count against the cap (gemini-3.1-pro thinks whatever it is told).
DEFAULT_MAX_TOKENS = {
    "influence": 160,
    "contributions": 900,
    "gaps": 450,
    "author_rqs": 600,
    "cited_contributions": 500,
    "verify": 400,
}


class BuildConfig(BaseModel):
    """Everything that decides a build; all of it goes into the manifest."""

    model_config = ConfigDict(extra="forbid")

    out: Path
    papers: Path | None = Field(default=None, description="Offline: a folder of LaTeX folders, or a file of ids.")
    arxiv_query: str | None = Field(default=None, description="Online: an arXiv search query (cat:cs.* ...).")
    date_from: date | None = None
    date_to: date | None = None
    window: SourceWindow | None = Field(
        default=None, description="A rolling build's papers: newer than a release's newest, and/or one month."
    )
    arxiv_metadata: bool = Field(
        default=False, description="Look up folders named by arXiv ids on arXiv (their dates); a window implies it."
    )
    limit: int | None = Field(default=None, ge=1)
    stage: str | None = Field(default=None, description="Run or rerun only this stage.")
    workers: int = Field(default=1, ge=1, description="Processes for the parsing stages.")
    executor: Literal["local", "ray"] = "local"
    concurrency: int = Field(default=4, ge=1, description="Papers in flight at once in an LLM stage.")
    prompts: Path | None = None
    models: dict[str, str] = Field(default_factory=dict, description="Model per role or per stage name.")
    max_tokens: dict[str, int] = Field(default_factory=dict, description="Reply token cap per LLM stage.")
    max_cited_per_paper: int | None = Field(default=None, ge=1)
    min_influential: int = Field(default=0, ge=0, description="Flagged fallback for weak labellers (see influence).")
    text_budget_chars: int | None = Field(
        default=None,
        ge=1,
        description="M's text in a prompt, in characters; None: as much as the stage model's context window holds "
        "(the paper reads the whole paper), the embedded model's small budget for it.",
    )
    context_budget_chars: int | None = Field(default=4000, ge=1, description="One cited work's contexts.")
    allow_abstract_only: bool = False
    cited_sources: Path | None = None
    fetch_cited: bool | None = Field(default=None, description="Download cited e-prints; default: when online.")
    top_fraction: float = 0.10
    verification_source: Literal["latex", "text"] = "latex"
    sample_size: int = 50
    sample_seed: int = 42
    dry_run: bool = False
    progress: bool = True

    @model_validator(mode="after")
    def _inputs(self) -> BuildConfig:
        if (self.papers is None) == (self.arxiv_query is None):
            raise ValueError("give exactly one of papers (offline) or arxiv_query (online)")
        if self.window is not None and self.arxiv_query is not None and self.date_from is None:
            # the window's days: from the release's newest paper (or the month's first day) to date_to, else
            # the month's end or yesterday, whichever comes first
            self.date_from, self.date_to = self.window.query_dates(datetime.now(timezone.utc).date(), self.date_to)
        if self.stage is not None and self.stage not in STAGE_ORDER:
            raise ValueError(f"unknown stage {self.stage!r}; stages: {', '.join(STAGE_ORDER)}")
        bad = set(self.max_tokens) - set(LLM_STAGES)
        if bad:
            raise ValueError(f"max_tokens for unknown stage(s) {sorted(bad)}; LLM stages: {', '.join(LLM_STAGES)}")
        return self

    @property
    def online(self) -> bool:
        """Network in use: an arXiv query, or a file of ids (whose metadata and e-prints are fetched)."""
        return self.arxiv_query is not None or (self.papers is not None and self.papers.is_file())

    @property
    def apply_s2(self) -> bool:
        """The Semantic Scholar rules filter a queried population; a curated --papers set is kept as given."""
        return self.arxiv_query is not None

    def model_for(self, stage: str) -> str:
        return self.models.get(stage) or self.models.get(STAGE_ROLES[stage]) or default_model(STAGE_ROLES[stage])

    def inputs_record(self) -> dict[str, Any]:
        inputs: dict[str, Any] = {
            "papers": str(self.papers) if self.papers else None,
            "arxiv_query": self.arxiv_query,
            "date_from": self.date_from.isoformat() if self.date_from else None,
            "date_to": self.date_to.isoformat() if self.date_to else None,
            "limit": self.limit,
            "cited_sources": str(self.cited_sources) if self.cited_sources else None,
        }
        # only when set, so the inputs (and ids) of builds without them stay as they were
        if self.window is not None:
            inputs["window"] = self.window.model_dump(mode="json")
        if self.arxiv_metadata:
            inputs["arxiv_metadata"] = True
        return inputs

    def settings_record(self) -> dict[str, Any]:
        return {
            "models": {s: self.model_for(s) for s in LLM_STAGES},
            "max_tokens": {s: llm_settings(self, s).max_tokens for s in LLM_STAGES},
            "max_cited_per_paper": self.max_cited_per_paper,
            "min_influential": self.min_influential,
            "text_budget_chars": self.text_budget_chars,
            "context_budget_chars": self.context_budget_chars,
            "budgets_per_stage": {
                s: {
                    "text": llm_settings(self, s).text_budget_chars,
                    "text_basis": text_budget_basis(self, s),
                    "context": llm_settings(self, s).context_budget_chars,
                }
                for s in LLM_STAGES
            },
            "truncation": "head of the text in document order, cut at a word boundary and marked, only past the budget",
            "allow_abstract_only": self.allow_abstract_only,
            "fetch_cited": self.fetch_cited_effective,
            "top_fraction": self.top_fraction,
            "verification_source": self.verification_source,
            "prompts": load_prompt_set(self.prompts).ref(),
            "sample": {"seed": self.sample_seed, "size": self.sample_size},
        }

    @property
    def fetch_cited_effective(self) -> bool:
        return self.online if self.fetch_cited is None else self.fetch_cited


# --------------------------------------------------------------------------
# Each LLM stage's settings
# --------------------------------------------------------------------------


def _cap(value: int | None, cap: int) -> int:
    return cap if value is None else min(value, cap)


def stage_max_tokens(config: BuildConfig, stage: str) -> int:
    """A stage's reply cap: ``--max-tokens-<stage>``, else the catalog's budget for a reasoning model, else the small cap."""
    model = config.model_for(stage)
    if stage in config.max_tokens:
        return config.max_tokens[stage]
    return reply_budget(model) if supports_reasoning(model) else DEFAULT_MAX_TOKENS[stage]


def text_budget_basis(config: BuildConfig, stage: str) -> str:
    """Why a stage reads as much of M as it does (recorded in the manifest)."""
    model = config.model_for(stage)
    if config.text_budget_chars is not None:
        return "--text-budget" + (" (capped for the embedded model)" if is_local(model) else "")
    if is_local(model):
        return f"the embedded model's small budget ({LOCAL_TEXT_BUDGET:,} characters: its 8,192-token context)"
    room = input_room(model, stage_max_tokens(config, stage))
    return f"the context window ({room.source} {room.window:,} tokens)"


def llm_settings(config: BuildConfig, stage: str) -> LLMStageSettings:
    """A stage's settings. M's text goes whole up to the stage model's context window unless ``--text-budget``
    says otherwise; prompts for the embedded model are cut to fit its 8192-token context."""
    model = config.model_for(stage)
    max_tokens = stage_max_tokens(config, stage)
    text, ctx = config.text_budget_chars, config.context_budget_chars
    if is_local(model):
        text, ctx = _cap(text, LOCAL_TEXT_BUDGET), _cap(ctx, LOCAL_CONTEXT_BUDGET)
    elif text is None:
        text = input_room(model, max_tokens).tokens * CHARS_PER_TOKEN
    return LLMStageSettings(
        step=STAGE_STEPS[stage],
        model=model,
        max_tokens=max_tokens,
        prompts=str(config.prompts) if config.prompts else None,
        text_budget_chars=text,
        context_budget_chars=ctx,
    )
