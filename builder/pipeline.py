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
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rqbench.builder import author_rqs, cited_contributions, cited_text, contributions, gaps, influence, verification
from rqbench.builder.build_config import LLM_STAGES, STAGE_ORDER, STAGE_STEPS, BuildConfig, llm_settings
from rqbench.builder.build_outputs import dry_run_manifest, write_manifest, write_outputs
from rqbench.builder.gate import gate_fingerprint
from rqbench.builder.input_stages import FilterOutcome, SourcedPaper, filter_stage, parse_stage, source_stage
from rqbench.builder.llm_stage import stage_model
from rqbench.builder.records_out import BuildTables, assemble
from rqbench.builder.stages import Stage, StageReport, StageStore, run_stage
from rqbench.records import BuildManifest, ParsedPaper

# --------------------------------------------------------------------------
# The stage table
# --------------------------------------------------------------------------


def build_stages(config: BuildConfig) -> dict[str, Stage]:
    """Every stage of the build except ``records`` (which is ``assemble`` over all of them)."""
    out = Path(config.out)
    s = {name: llm_settings(config, name) for name in LLM_STAGES}
    ct = cited_text.CitedTextSettings(
        cited_sources=str(config.cited_sources) if config.cited_sources else None,
        fetch_dir=str(out / "cited_sources") if config.fetch_cited_effective else None,
    )
    stages = [
        Stage(
            "source",
            (),
            SourcedPaper,
            functools.partial(
                source_stage,
                inputs=config.inputs_record(),
                work_dir=str(out / "sources" / "slices"),
                progress=config.progress,
            ),
            "whole",
            fingerprint=config.inputs_record(),
        ),
        Stage(
            "filter",
            ("source",),
            FilterOutcome,
            functools.partial(
                filter_stage,
                apply_s2=config.apply_s2,
                fetch=config.online,
                top_fraction=config.top_fraction,
                sources_dir=str(out / "sources"),
            ),
            "whole",
            fingerprint={"top_fraction": config.top_fraction, "s2": config.apply_s2, "fetch": config.online},
        ),
        Stage("parse", ("filter",), ParsedPaper, parse_stage, "cpu"),
        Stage(
            "influence",
            ("parse", "filter"),
            influence.InfluenceResult,
            functools.partial(
                influence.label_paper,
                settings=s["influence"],
                max_cited=config.max_cited_per_paper,
                min_influential=config.min_influential,
                sources=ct,
            ),
            "llm",
            fingerprint={
                **s["influence"].fingerprint(),
                "max_cited": config.max_cited_per_paper,
                "min_influential": config.min_influential,
                "sources": ct.model_dump(),
            },
        ),
        Stage(
            "contributions",
            ("parse", "filter"),
            contributions.ContributionsResult,
            functools.partial(contributions.extract, settings=s["contributions"]),
            "llm",
            fingerprint={**s["contributions"].fingerprint(), **gate_fingerprint()},
        ),
        Stage(
            "gaps",
            ("influence", "contributions", "parse", "filter"),
            gaps.GapsResult,
            functools.partial(gaps.find_gaps, settings=s["gaps"]),
            "llm",
            fingerprint={**s["gaps"].fingerprint(), **gate_fingerprint()},
        ),
        Stage(
            "author_rqs",
            ("gaps", "contributions", "parse", "filter"),
            author_rqs.AuthorRQsResult,
            functools.partial(author_rqs.write_rqs, settings=s["author_rqs"]),
            "llm",
            fingerprint={**s["author_rqs"].fingerprint(), **gate_fingerprint()},
        ),
        Stage(
            "cited_text",
            ("influence", "parse", "filter"),
            cited_text.CitedTextResult,
            functools.partial(cited_text.cited_text, settings=ct),
            "cpu",
            fingerprint=ct.model_dump(),
        ),
        Stage(
            "cited_contributions",
            ("cited_text", "author_rqs"),
            cited_contributions.CitedContributionsResult,
            functools.partial(cited_contributions.extract, settings=s["cited_contributions"]),
            "llm",
            fingerprint={
                **s["cited_contributions"].fingerprint(),
                "min_text_chars": cited_contributions.MIN_TEXT_CHARS,
                **gate_fingerprint(),
            },
        ),
        Stage(
            "verify",
            ("author_rqs", "parse", "filter"),
            verification.VerificationResult,
            functools.partial(verification.verify, settings=s["verify"], source=config.verification_source),
            "llm",
            fingerprint={**s["verify"].fingerprint(), "source": config.verification_source},
        ),
    ]
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
        report = run_stage(
            stage,
            out,
            inputs,
            llm=llm,
            workers=1 if fetching else config.workers,
            concurrency=config.concurrency,
            progress=config.progress,
            redo=config.stage == name,
            executor=config.executor if stage.kind == "cpu" and not fetching else "local",
        )
        if config.dry_run and report.dry_run_pending:
            _say(config, f"{name}: {report.dry_run_pending} item(s) counted, not run (dry run)")
            continue
        entry: dict[str, Any] = {
            "run_id": llm.run_id,
            "at": datetime.now(timezone.utc).isoformat(),
            "items_in": report.items_in,
            "already_done": report.already_done,
            "processed": report.processed,
            "items_out": report.items_out,
            "skipped": report.skipped,
            "retryable": report.retryable,
            "seconds": round(report.seconds, 3),
        }
        if name in LLM_STAGES:
            entry.update(_llm_totals(llm, STAGE_STEPS[name], since))
            entry["model"] = stage_model_name(llm, config, name) if report.processed else None
        if report.processed or not StageStore(out, name).runs():
            StageStore(out, name).log_run(entry)
        _say(config, _report_line(report))
        if report.retryable:
            _say(config, f"{name}: {report.retryable} item(s) failed on the endpoint and will be retried on rerun")
    if config.dry_run:
        return dry_run_manifest(config, llm, bounds)
    if config.stage and config.stage != "records":
        return write_manifest(config, stages, None)
    tables = assemble_tables(config, stages)
    write_outputs(config, stages, tables)
    return write_manifest(config, stages, tables)


def stage_model_name(llm: Any, config: BuildConfig, name: str) -> str:
    s = llm_settings(config, name)
    return stage_model(llm, s.model, s.max_tokens)


def _report_line(r: StageReport) -> str:
    return (
        f"{r.stage}: {r.items_in} in, {r.already_done} already done, {r.processed} run now, "
        f"{r.items_out} records out, {r.skipped} skipped ({r.seconds:.1f}s)"
    )


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
