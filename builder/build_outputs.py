"""What a finished build writes from its stored stages: the tables, the skips, the funnel and the manifest."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from rqbench.builder import cited_text
from rqbench.builder.build_config import LLM_STAGES, STAGE_ORDER, BuildConfig
from rqbench.builder.gate import malformed_counts
from rqbench.builder.input_stages import FilterOutcome
from rqbench.builder.records_out import BuildTables
from rqbench.builder.stages import Stage, StageStore
from rqbench.hashing import content_hash
from rqbench.io import write_atomic, write_jsonl
from rqbench.prompts import load_prompt_set
from rqbench.records import BuildManifest, MalformedCount, PromptSetRef, SkipRecord, StageRun


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
    }
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
    parts.append(
        "\n# Build stages\n\n| stage | items in | records out | skipped | skip reasons |\n|---|---|---|---|---|"
    )
    for name in STAGE_ORDER[2:-1]:
        store = StageStore(out, name)
        runs = store.runs()
        last = runs[-1] if runs else {}
        reasons = Counter(s.reason for s in store.skips())
        why = ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or "-"
        parts.append(
            f"| {name} | {last.get('items_in', 0)} | {last.get('items_out', 0)} | {last.get('skipped', 0)} | {why} |"
        )
    dropped = ", ".join(f"{k}: {v}" for k, v in tables.dropped.items()) or "none"
    parts.append(
        f"\nRQs written: {tables.counts.get('rqs', 0)} from {tables.counts.get('papers', 0)} papers; "
        f"RQs dropped: {dropped}.\n"
    )
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
    return (
        "# Cited papers' text\n\nThe influential cited works of every paper (skips.jsonl lists each one "
        "without body text, stage `cited_text`):\n\n| text level | works |\n|---|---|\n"
        + rows
        + f"\n\nWhy a work has no body text: {reasons}.\n\nHow its source or id was found: {found}.\n"
    )


def malformed_markdown(malformed: dict[str, MalformedCount]) -> str:
    """The well-formedness gate's section of funnel.md: texts dropped per kind, and the rules they broke."""
    head = "# Well-formedness gate\n\nTexts of LLM replies that failed `rqbench.wellformed` after one re-ask, kept out of the data"
    if not malformed:
        return head + ": none.\n"
    rows = [
        f"| {kind.replace('_', ' ')} | {c.items} | {', '.join(f'{r}: {n}' for r, n in c.rules.items())} |"
        for kind, c in malformed.items()
    ]
    return (
        head + " (a text that broke several rules counts under each):\n\n| kind | texts dropped | rules |\n"
        "|---|---|---|\n" + "\n".join(rows) + "\n"
    )


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
        runs.append(
            StageRun(
                stage="records",
                items_in=tables.counts.get("papers_in", 0),
                items_out=len(tables.rqs),
                skipped=sum(tables.dropped.values()),
                finished_at=datetime.now(timezone.utc),
            )
        )
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
        malformed=build_malformed(out, stages, tables)
        if tables is not None
        else (previous.malformed if previous else {}),
    )
    write_atomic(out / "manifest.json", manifest.model_dump_json(indent=2) + "\n")
    return manifest


def _read_manifest(out: Path) -> BuildManifest | None:
    path = out / "manifest.json"
    if not path.exists():
        return None
    return BuildManifest.model_validate_json(path.read_text(encoding="utf-8"))


def dry_run_manifest(config: BuildConfig, llm: Any, bounds: dict[str, int]) -> BuildManifest:
    """Not written: what a dry run counted, for the CLI to print."""
    est = llm.estimate
    settings = config.settings_record()
    settings["dry_run"] = {
        "calls": est.calls,
        "cached": est.cached,
        "tokens_in": est.tokens_in,
        "tokens_out_max": est.tokens_out_max,
        "cost_usd": est.cost_usd,
        "cost_unknown_calls": est.cost_unknown_calls,
        "by_step": dict(est.by_step),
        "upper_bounds_not_yet_countable": bounds,
        "line": est.line(),
    }
    return BuildManifest(
        build_id="dry-run", created_at=datetime.now(timezone.utc), inputs=config.inputs_record(), settings=settings
    )
