"""The build: method.md "Building the dataset" as eleven resumable stages, and ``run_build``.

Order: source -> filter -> parse -> influence -> contributions -> gaps ->
author_rqs -> cited_text -> cited_contributions -> verify -> records. Each stage reads what earlier
stages stored under ``OUT/stages/`` and stores its own output there (see
``rqbench.builder.stages``), so a build resumes where it stopped, a rerun of a
finished build does nothing (and makes no LLM call), and ``--stage NAME``
reruns one stage. The final tables, the manifest, the funnel and the skips are
rewritten from the stored outputs at the end of every full run.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from rqbench.builder import author_rqs, cited_contributions, cited_text, contributions, gaps, influence, verification
from rqbench.builder.gate import gate_fingerprint, malformed_counts
from rqbench.builder.llm_stage import LOCAL_CONTEXT_BUDGET, LOCAL_TEXT_BUDGET, LLMStageSettings, is_local, stage_model
from rqbench.builder.records_out import BuildTables, assemble
from rqbench.builder.stages import (
    WHOLE,
    ItemSkipped,
    Stage,
    StageReport,
    StageStore,
    run_stage,
)

from rqbench.hashing import content_hash
from rqbench.io import write_atomic, write_jsonl
from rqbench.llm.catalog import CHARS_PER_TOKEN, input_room, reply_budget, supports_reasoning
from rqbench.llm.config import default_model
from rqbench.prompts import load_prompt_set
from rqbench.records import (
    BuildManifest,
    MalformedCount,
    ParsedPaper,
    PromptSetRef,
    Record,
    SkipRecord,
    SourcePaper,
    SourceWindow,
    StageRun,
)
from rqbench.steps import in_package

log = logging.getLogger(__name__)

STAGE_ORDER = (
    "source", "filter", "parse", "influence", "contributions", "gaps", "author_rqs", "cited_text",
    "cited_contributions", "verify", "records",
)  # fmt: skip
# The LLM stages in stage order, and the step each runs: the step registry's entries for the builder's modules.
BUILD_STEPS = in_package("rqbench.builder")
LLM_STAGES = tuple(stage for stage in STAGE_ORDER if stage in BUILD_STEPS)
STAGE_STEPS = {stage: BUILD_STEPS[stage].name for stage in LLM_STAGES}
# The paper's roles: a light labeller for citations, a light model for per-citation gaps,
# a strong one for contributions (M's and, as the same kind of extraction, the cited papers'), RQs and verification.
STAGE_ROLES = {"influence": "labeller", "contributions": "strong", "gaps": "light", "author_rqs": "strong",
               "cited_contributions": "strong", "verify": "strong"}  # fmt: skip
# Small caps on the reply length, per stage: enough for the reply's JSON, short enough for the local model.
# A model with a reasoning setting gets the catalog's reply budget instead (``reply_budget``), since its
# reasoning tokens count against the cap (gemini-3.1-pro thinks whatever it is told).
DEFAULT_MAX_TOKENS = {"influence": 160, "contributions": 900, "gaps": 450, "author_rqs": 600,
                      "cited_contributions": 500, "verify": 400}  # fmt: skip


class SourcedPaper(Record):
    """A target paper M and the folder that holds its LaTeX (None while only metadata is known).

    ``arxiv_id`` here, as in every stage output, is the stage's item key: the paper's ``paper_id`` (its arXiv id,
    or a local paper's id)."""

    arxiv_id: str
    paper: SourcePaper
    folder: str | None = None


class FilterOutcome(Record):
    """Stage "filter": the papers kept, the funnel report (as its JSON), and the named drops."""

    arxiv_id: str = WHOLE
    kept: list[SourcedPaper]
    funnel: dict[str, Any]
    skips: list[SkipRecord] = Field(default_factory=list)


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
        default=None, ge=1,
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
            "budgets_per_stage": {s: {"text": llm_settings(self, s).text_budget_chars,
                                      "text_basis": text_budget_basis(self, s),
                                      "context": llm_settings(self, s).context_budget_chars} for s in LLM_STAGES},
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
# Non-LLM stage functions (module level, so worker processes can run them)
# --------------------------------------------------------------------------


def source_stage(item: dict[str, Any], *, inputs: dict[str, Any], work_dir: str, progress: bool) -> list[SourcedPaper]:
    """The target papers; in a rolling build only those of its window (``select_window``), and folders named by
    arXiv ids are looked up on arXiv for their dates (as with ``--arxiv-metadata``)."""
    from contextlib import nullcontext

    from rqbench.builder.arxiv_api import ArxivClient
    from rqbench.builder.sourcing import select_window, source_papers

    window = SourceWindow.model_validate(inputs["window"]) if inputs.get("window") else None
    folder = inputs["papers"] is not None and Path(inputs["papers"]).is_dir()
    lookup = folder and (window is not None or bool(inputs.get("arxiv_metadata")))
    with ArxivClient() if lookup else nullcontext() as client:
        found = source_papers(
            work_dir=Path(work_dir),
            progress=progress,
            papers=Path(inputs["papers"]) if inputs["papers"] else None,
            arxiv_query=inputs["arxiv_query"],
            date_from=date.fromisoformat(inputs["date_from"]) if inputs["date_from"] else None,
            date_to=date.fromisoformat(inputs["date_to"]) if inputs["date_to"] else None,
            limit=inputs["limit"],
            client=client,
        )
    if window is not None:
        found = select_window(found, window)
    return [SourcedPaper(arxiv_id=p.paper_id, paper=p, folder=str(f) if f else None) for p, f in found]


def filter_stage(
    item: dict[str, Any], *, apply_s2: bool, fetch: bool, top_fraction: float, sources_dir: str
) -> list[FilterOutcome]:
    """The four keep rules (the Semantic Scholar ones only for a queried population); then the
    kept papers' e-prints are fetched where needed (politely, one at a time)."""
    from rqbench.builder.filtering import apply_filters

    sourced: list[SourcedPaper] = item["source"]
    papers = [s.paper for s in sourced]
    s2: dict[str, Any] = {}
    if apply_s2:
        from rqbench.builder.s2_api import S2Client

        with S2Client() as client:
            s2 = client.batch_arxiv([p.arxiv_id for p in papers])
    # Whether arXiv holds LaTeX is known only after download: assume so here, drop at fetch time.
    has_latex = {s.arxiv_id: (s.folder is not None) or fetch for s in sourced}  # keyed by paper id
    kept, funnel = apply_filters(papers, s2, has_latex=has_latex, top_fraction=top_fraction, offline=not apply_s2)
    folders = {s.arxiv_id: s.folder for s in sourced}
    out: list[SourcedPaper] = []
    skips: list[SkipRecord] = []
    for p in kept:
        folder = folders.get(p.paper_id)
        if folder is None and fetch:
            try:
                folder = str(fetch_eprint(p, Path(sources_dir)))
            except ItemSkipped as skip:
                skips.append(SkipRecord(stage="filter", item_id=p.paper_id, reason=skip.reason, detail=skip.detail))
                continue
        out.append(SourcedPaper(arxiv_id=p.paper_id, paper=p, folder=folder))
    return [FilterOutcome(kept=out, funnel=funnel.model_dump(mode="json"), skips=skips)]


def fetch_eprint(paper: SourcePaper, sources_dir: Path) -> Path:
    """Download and unpack one e-print under ``sources_dir/<id>/`` (sourcing's layout); reused when there."""
    from rqbench.builder.arxiv_api import ArxivClient, ArxivError
    from rqbench.builder.paper_skip import PaperSkipped
    from rqbench.builder.sourcing import fetch_latex

    try:
        with ArxivClient() as client:
            folder = fetch_latex(paper, sources_dir, client)
    except PaperSkipped as skip:
        raise ItemSkipped(skip.reason, skip.detail) from skip
    except ArxivError as exc:
        raise ItemSkipped("eprint_download_failed", str(exc)[:500]) from exc
    if folder is None:
        raise ItemSkipped("no_latex_source", "the e-print holds no LaTeX")
    return folder


def parse_stage(item: dict[str, Any]) -> list[ParsedPaper]:
    """Stage 3 on one paper; any parser failure is a named skip, so one bad paper never stops the build."""
    from rqbench.builder.paper_skip import PaperSkipped
    from rqbench.builder.parse import parse_paper

    sp: SourcedPaper = item["filter"]
    if sp.folder is None:
        raise ItemSkipped("no_latex_source", "no folder with LaTeX for this paper")
    try:
        parsed = parse_paper(Path(sp.folder), sp.arxiv_id)
    except PaperSkipped as skip:
        raise ItemSkipped(skip.reason, skip.detail) from skip
    except Exception as exc:  # a parser bug on odd input: recorded by name with its message, the build goes on
        log.warning("parser failed on %s: %r", sp.arxiv_id, exc)
        raise ItemSkipped("parser_error", f"{type(exc).__name__}: {exc}"[:1000]) from exc
    if not parsed.bibliography:
        raise ItemSkipped("no_bibliography", f"no .bib or .bbl entries in {sp.folder}")
    if not parsed.cited_works:
        raise ItemSkipped("no_citations", "the text cites nothing")
    return [parsed]


# --------------------------------------------------------------------------
# The stage table
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


def build_stages(config: BuildConfig) -> dict[str, Stage]:
    """Every stage of the build except ``records`` (which is ``assemble`` over all of them)."""
    out = Path(config.out)
    s = {name: llm_settings(config, name) for name in LLM_STAGES}
    ct = cited_text.CitedTextSettings(
        cited_sources=str(config.cited_sources) if config.cited_sources else None,
        fetch_dir=str(out / "cited_sources") if config.fetch_cited_effective else None,
    )
    stages = [
        Stage("source", (), SourcedPaper,
              functools.partial(source_stage, inputs=config.inputs_record(), work_dir=str(out / "sources" / "slices"),
                                progress=config.progress), "whole", fingerprint=config.inputs_record()),
        Stage("filter", ("source",), FilterOutcome,
              functools.partial(filter_stage, apply_s2=config.apply_s2, fetch=config.online,
                                top_fraction=config.top_fraction, sources_dir=str(out / "sources")), "whole",
              fingerprint={"top_fraction": config.top_fraction, "s2": config.apply_s2, "fetch": config.online}),
        Stage("parse", ("filter",), ParsedPaper, parse_stage, "cpu"),
        Stage("influence", ("parse", "filter"), influence.InfluenceResult,
              functools.partial(influence.label_paper, settings=s["influence"], max_cited=config.max_cited_per_paper,
                                min_influential=config.min_influential, sources=ct), "llm",
              fingerprint={**s["influence"].fingerprint(), "max_cited": config.max_cited_per_paper,
                           "min_influential": config.min_influential, "sources": ct.model_dump()}),
        Stage("contributions", ("parse", "filter"), contributions.ContributionsResult,
              functools.partial(contributions.extract, settings=s["contributions"]), "llm",
              fingerprint={**s["contributions"].fingerprint(), **gate_fingerprint()}),
        Stage("gaps", ("influence", "contributions", "parse", "filter"), gaps.GapsResult,
              functools.partial(gaps.find_gaps, settings=s["gaps"]), "llm",
              fingerprint={**s["gaps"].fingerprint(), **gate_fingerprint()}),
        Stage("author_rqs", ("gaps", "contributions", "parse", "filter"), author_rqs.AuthorRQsResult,
              functools.partial(author_rqs.write_rqs, settings=s["author_rqs"]), "llm",
              fingerprint={**s["author_rqs"].fingerprint(), **gate_fingerprint()}),
        Stage("cited_text", ("influence", "parse", "filter"), cited_text.CitedTextResult,
              functools.partial(cited_text.cited_text, settings=ct), "cpu", fingerprint=ct.model_dump()),
        Stage("cited_contributions", ("cited_text", "author_rqs"), cited_contributions.CitedContributionsResult,
              functools.partial(cited_contributions.extract, settings=s["cited_contributions"]), "llm",
              fingerprint={**s["cited_contributions"].fingerprint(),
                           "min_text_chars": cited_contributions.MIN_TEXT_CHARS, **gate_fingerprint()}),
        Stage("verify", ("author_rqs", "parse", "filter"), verification.VerificationResult,
              functools.partial(verification.verify, settings=s["verify"], source=config.verification_source), "llm",
              fingerprint={**s["verify"].fingerprint(), "source": config.verification_source}),
    ]  # fmt: skip
    return {st.name: st for st in stages}


# --------------------------------------------------------------------------
# Running a build
# --------------------------------------------------------------------------


def _stored(out: Path, stages: dict[str, Stage], name: str) -> list[BaseModel]:
    """A stage's stored outputs, as downstream stages see them (the filter stage's kept papers)."""
    recs = StageStore(out, name).records(stages[name].output)
    if name == "filter":
        return [p for outcome in recs for p in outcome.kept]  # type: ignore[attr-defined]
    return recs


def _say(config: BuildConfig, text: str) -> None:
    if config.progress:
        from tqdm import tqdm

        tqdm.write(text, file=sys.stderr)


def _llm_totals(llm: Any, step: str, since: float) -> dict[str, Any]:
    rows = [r for r in llm.store.summary(run_id=llm.run_id, since=since) if r["step"].split(":")[0] == step]
    cost = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    return {
        "llm_calls": int(sum(r["requests"] or 0 for r in rows)),
        "cache_hits": int(sum(r["cache_hits"] or 0 for r in rows)),
        "tokens_in": int(sum(r["tokens_in"] or 0 for r in rows)),
        "tokens_out": int(sum(r["tokens_out"] or 0 for r in rows)),
        "cost_usd": float(sum(cost)) if cost else 0.0,
    }


def _upper_bounds(name: str, config: BuildConfig, parsed: list[ParsedPaper]) -> int:
    """Dry run: most calls a stage could make when its inputs are not built yet."""
    per_paper = [len(influence.select_cited(p, config.max_cited_per_paper)) for p in parsed]
    if name in ("gaps", "cited_contributions"):  # one call per influential work, at most
        return sum(per_paper)
    if name == "author_rqs":
        return len(parsed)
    if name == "verify":
        return 6 * len(parsed)  # AuthorRQsReply allows up to six RQs
    return 0


def run_build(config: BuildConfig, llm: Any = None) -> BuildManifest:
    """Run (or resume) every stage, then write the tables, manifest, funnel and skips; return the manifest."""
    from rqbench.llm import LLM

    if llm is None:
        llm = LLM(dry_run=config.dry_run)
    elif config.dry_run and not llm.dry_run:
        raise ValueError("a dry run needs an LLM made with dry_run=True")
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    stages = build_stages(config)
    names = [config.stage] if config.stage else list(STAGE_ORDER)
    bounds: dict[str, int] = {}
    for name in names:
        if name == "records":
            continue
        stage = stages[name]
        inputs = {i: _stored(out, stages, i) for i in stage.inputs}
        missing = [i for i in stage.inputs if not StageStore(out, i).exists()]
        if missing:
            if config.dry_run:  # an upstream LLM stage was only counted: bound what this one could cost
                if name in LLM_STAGES:
                    bounds[name] = _upper_bounds(name, config, _stored(out, stages, "parse"))
                continue
            raise RuntimeError(f"stage {name!r} needs the output of {missing}; run the build without --stage first")
        since = time.time()
        # downloads of cited e-prints keep arXiv's one-request-at-a-time rule: no parallel workers then
        fetching = name == "cited_text" and config.fetch_cited_effective
        report = run_stage(stage, out, inputs, llm=llm, workers=1 if fetching else config.workers,
                           concurrency=config.concurrency, progress=config.progress, redo=config.stage == name,
                           executor=config.executor if stage.kind == "cpu" and not fetching else "local")  # fmt: skip
        if config.dry_run and report.dry_run_pending:
            _say(config, f"{name}: {report.dry_run_pending} item(s) counted, not run (dry run)")
            continue
        entry: dict[str, Any] = {
            "run_id": llm.run_id, "at": datetime.now(timezone.utc).isoformat(), "items_in": report.items_in,
            "already_done": report.already_done, "processed": report.processed, "items_out": report.items_out,
            "skipped": report.skipped, "retryable": report.retryable, "seconds": round(report.seconds, 3),
        }  # fmt: skip
        if name in LLM_STAGES:
            entry.update(_llm_totals(llm, STAGE_STEPS[name], since))
            entry["model"] = stage_model_name(llm, config, name) if report.processed else None
        if report.processed or not StageStore(out, name).runs():
            StageStore(out, name).log_run(entry)
        _say(config, _report_line(report))
        if report.retryable:
            _say(config, f"{name}: {report.retryable} item(s) failed on the endpoint and will be retried on rerun")
    if config.dry_run:
        return _dry_manifest(config, llm, bounds)
    if config.stage and config.stage != "records":
        return write_manifest(config, stages, None)
    tables = assemble_tables(config, stages)
    write_outputs(config, stages, tables)
    return write_manifest(config, stages, tables)


def stage_model_name(llm: Any, config: BuildConfig, name: str) -> str:
    s = llm_settings(config, name)
    return stage_model(llm, s.model, s.max_tokens)


def _report_line(r: StageReport) -> str:
    return (f"{r.stage}: {r.items_in} in, {r.already_done} already done, {r.processed} run now, "
            f"{r.items_out} records out, {r.skipped} skipped ({r.seconds:.1f}s)")  # fmt: skip


def assemble_tables(config: BuildConfig, stages: dict[str, Stage]) -> BuildTables:
    out = Path(config.out)
    return assemble(
        [s.paper for s in _stored(out, stages, "filter")],  # type: ignore[attr-defined]
        _stored(out, stages, "contributions"),  # type: ignore[arg-type]
        _stored(out, stages, "influence"),  # type: ignore[arg-type]
        _stored(out, stages, "gaps"),  # type: ignore[arg-type]
        _stored(out, stages, "author_rqs"),  # type: ignore[arg-type]
        _stored(out, stages, "cited_text"),  # type: ignore[arg-type]
        _stored(out, stages, "verify"),  # type: ignore[arg-type]
        _stored(out, stages, "cited_contributions"),  # type: ignore[arg-type]
        allow_abstract_only=config.allow_abstract_only,
        sample_size=config.sample_size,
        sample_seed=config.sample_seed,
    )


def all_skips(out: Path, stages: dict[str, Stage], tables: BuildTables | None) -> list[SkipRecord]:
    skips: list[SkipRecord] = []
    for name in STAGE_ORDER:
        if name == "records":
            continue
        store = StageStore(out, name)
        skips += store.skips()
        if name == "filter":
            for outcome in store.records(FilterOutcome):
                skips += outcome.skips  # type: ignore[attr-defined]
    if tables is not None:
        skips += tables.skips
    return skips


def write_outputs(config: BuildConfig, stages: dict[str, Stage], tables: BuildTables) -> None:
    """The build folder contract: records/*.jsonl, funnel, skips, the manual-validation sample."""
    import json

    from rqbench.builder.filtering import FunnelReport

    out = Path(config.out)
    rec = out / "records"
    write_jsonl(rec / "rqs.jsonl", tables.rqs)
    write_jsonl(rec / "papers.jsonl", tables.papers)
    write_jsonl(rec / "cited_papers.jsonl", tables.cited_papers)
    write_jsonl(rec / "instances.jsonl", tables.instances)
    write_jsonl(out / "skips.jsonl", all_skips(out, stages, tables))
    sample = {
        "rule": f"random.seed({config.sample_seed}); random.sample(all_rq_ids, min({config.sample_size}, len(all_rq_ids)))",
        "seed": config.sample_seed,
        "size": config.sample_size,
        "n_rqs": len(tables.rqs),
        "rq_ids": tables.sample,
    }  # fmt: skip
    write_atomic(out / "manual_validation_sample.json", json.dumps(sample, indent=2) + "\n")
    outcomes = StageStore(out, "filter").records(FilterOutcome)
    funnel = FunnelReport.model_validate(outcomes[0].funnel) if outcomes else None  # type: ignore[attr-defined]
    malformed = build_malformed(out, stages, tables)
    if funnel is not None:
        funnel = funnel.model_copy(update={"malformed": malformed})
        write_atomic(out / "funnel.json", json.dumps(funnel.model_dump(mode="json"), indent=2) + "\n")
    write_atomic(out / "funnel.md", funnel_markdown(out, funnel, tables, malformed))


def build_malformed(out: Path, stages: dict[str, Stage], tables: BuildTables) -> dict[str, MalformedCount]:
    """The gate's drops of the whole build, by kind and rule: in stage outputs, in skips, at the records stage."""
    return malformed_counts([*tables.gate_drops, *(d for s in all_skips(out, stages, tables) for d in s.dropped)])


def funnel_markdown(out: Path, funnel: Any, tables: BuildTables, malformed: dict[str, MalformedCount]) -> str:
    """The filtering funnel, then what each later stage kept and skipped, the RQs dropped, the gate's drops."""
    from collections import Counter

    parts = [funnel.to_markdown() if funnel is not None else "# Filtering funnel\n\n(no filter output)\n"]
    parts.append("\n# Build stages\n\n| stage | items in | records out | skipped | skip reasons |\n|---|---|---|---|---|")
    for name in STAGE_ORDER[2:-1]:
        store = StageStore(out, name)
        runs = store.runs()
        last = runs[-1] if runs else {}
        reasons = Counter(s.reason for s in store.skips())
        why = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or "-"
        parts.append(f"| {name} | {last.get('items_in', 0)} | {last.get('items_out', 0)} | "
                     f"{last.get('skipped', 0)} | {why} |")  # fmt: skip
    dropped = ", ".join(f"{k}: {v}" for k, v in tables.dropped.items()) or "none"
    parts.append(f"\nRQs written: {tables.counts.get('rqs', 0)} from {tables.counts.get('papers', 0)} papers; "
                 f"RQs dropped: {dropped}.\n")  # fmt: skip
    parts.append(cited_text_markdown(StageStore(out, "cited_text").records(cited_text.CitedTextResult)))
    parts.append(malformed_markdown(malformed))
    return "\n".join(parts)


def cited_text_markdown(results: list[BaseModel]) -> str:
    """funnel.md's section on the influential works' text: levels, why a work has no body text, how each was found."""
    from collections import Counter

    levels: Counter[str] = Counter()
    why: Counter[str] = Counter()
    how: Counter[str] = Counter()
    for r in results:
        for c in r.cited:  # type: ignore[attr-defined]
            levels[c.paper.text_level.value if c.paper is not None else "no record"] += 1
            if c.paper is None or c.paper.text_level.value != "full":
                why[c.no_full_text or c.no_paper or "unknown"] += 1
            how[c.arxiv_id_how or "not found"] += 1
    if not levels:
        return "# Cited papers' text\n\nNo influential cited work.\n"
    rows = "\n".join(f"| {lv} | {n} |" for lv, n in sorted(levels.items()))
    reasons = ", ".join(f"{k}: {v}" for k, v in sorted(why.items())) or "none"
    found = ", ".join(f"{k}: {v}" for k, v in sorted(how.items()))
    return ("# Cited papers' text\n\nThe influential cited works of every paper (skips.jsonl lists each one "
            "without body text, stage `cited_text`):\n\n| text level | works |\n|---|---|\n" + rows
            + f"\n\nWhy a work has no body text: {reasons}.\n\nHow its source or id was found: {found}.\n")


def malformed_markdown(malformed: dict[str, MalformedCount]) -> str:
    """The well-formedness gate's section of funnel.md: texts dropped per kind, and the rules they broke."""
    head = "# Well-formedness gate\n\nTexts of LLM replies that failed `rqbench.wellformed` after one re-ask, kept out of the data"
    if not malformed:
        return head + ": none.\n"
    rows = [f"| {kind.replace('_', ' ')} | {c.items} | {', '.join(f'{r}: {n}' for r, n in c.rules.items())} |"
            for kind, c in malformed.items()]  # fmt: skip
    return (head + " (a text that broke several rules counts under each):\n\n| kind | texts dropped | rules |\n"
            "|---|---|---|\n" + "\n".join(rows) + "\n")


def write_manifest(config: BuildConfig, stages: dict[str, Stage], tables: BuildTables | None) -> BuildManifest:
    out = Path(config.out)
    ps = load_prompt_set(config.prompts)
    ref = PromptSetRef(name=ps.name, hash=ps.hash)
    runs: list[StageRun] = []
    for name in STAGE_ORDER:
        if name == "records":
            continue
        logged = StageStore(out, name).runs()
        if not logged:
            continue
        last = logged[-1]
        models = [r["model"] for r in logged if r.get("model")]
        costs = [r.get("cost_usd") for r in logged]
        runs.append(
            StageRun(
                stage=name,
                model=models[-1] if models else (config.model_for(name) if name in LLM_STAGES else None),
                prompt_set=ref if name in LLM_STAGES else None,
                items_in=last.get("items_in", 0),
                items_out=last.get("items_out", 0),
                skipped=last.get("skipped", 0),
                llm_calls=sum(r.get("llm_calls", 0) for r in logged),
                cache_hits=sum(r.get("cache_hits", 0) for r in logged),
                tokens_in=sum(r.get("tokens_in", 0) for r in logged),
                tokens_out=sum(r.get("tokens_out", 0) for r in logged),
                cost_usd=float(sum(c for c in costs if c is not None)),
                seconds=round(sum(r.get("seconds", 0.0) for r in logged), 3),
                finished_at=datetime.fromisoformat(last["at"]),
            )
        )
    if tables is not None:
        runs.append(StageRun(stage="records", items_in=tables.counts.get("papers_in", 0), items_out=len(tables.rqs),
                             skipped=sum(tables.dropped.values()), finished_at=datetime.now(timezone.utc)))  # fmt: skip
    inputs, settings = config.inputs_record(), config.settings_record()
    previous = _read_manifest(out)
    manifest = BuildManifest(
        build_id=content_hash({"inputs": inputs, "settings": settings}),
        created_at=datetime.now(timezone.utc),
        inputs=inputs,
        settings=settings,
        stages=runs,
        counts=tables.counts if tables is not None else (previous.counts if previous else {}),
        dropped=tables.dropped if tables is not None else (previous.dropped if previous else {}),
        malformed=build_malformed(out, stages, tables) if tables is not None else (previous.malformed if previous else {}),
    )
    write_atomic(out / "manifest.json", manifest.model_dump_json(indent=2) + "\n")
    return manifest


def _read_manifest(out: Path) -> BuildManifest | None:
    path = out / "manifest.json"
    if not path.exists():
        return None
    return BuildManifest.model_validate_json(path.read_text(encoding="utf-8"))


def _dry_manifest(config: BuildConfig, llm: Any, bounds: dict[str, int]) -> BuildManifest:
    """Not written: what a dry run counted, for the CLI to print."""
    est = llm.estimate
    settings = config.settings_record()
    settings["dry_run"] = {
        "calls": est.calls, "cached": est.cached, "tokens_in": est.tokens_in, "tokens_out_max": est.tokens_out_max,
        "cost_usd": est.cost_usd, "cost_unknown_calls": est.cost_unknown_calls, "by_step": dict(est.by_step),
        "upper_bounds_not_yet_countable": bounds, "line": est.line(),
    }  # fmt: skip
    return BuildManifest(build_id="dry-run", created_at=datetime.now(timezone.utc), inputs=config.inputs_record(),
                         settings=settings)  # fmt: skip
