"""What RQ-Bench writes, pinned: a build, its release, a generated submission, its results and every cache key.

Two fixture papers are built on the scripted server, published to a local git
target, loaded back, answered by the scripted generator and judged in both
settings. Each artefact is reduced to a digest of its content (timestamps,
durations and temporary paths taken out) and compared with
``tests/golden/outputs.json``. A refactoring must leave every digest as it was;
a change that is meant to alter outputs updates the file (``RQB_UPDATE_GOLDEN=1``)
in the same commit, and the commit says why.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import evaluate_factory as F
import pyarrow.parquet as pq
from builder_script import make_cited_sources, make_papers, reply_for

from rqbench.hashing import content_hash

GOLDEN = Path(__file__).parent / "golden" / "outputs.json"
PAPERS = ["attention-sink-gpt2", "inlg2024-ngram-gec"]
FAVOURITE = "gu2025when"
# Fields whose values are clocks, durations, machine paths or run ids: never part of the pinned content.
# Call-log run ids are drawn afresh for every run (``LLM.run_id``): named, never pinned.
VOLATILE = {"created_at", "finished_at", "seconds", "published_at", "built_at", "date", "at", "build_id", "run_ids"}


def _scrub(value: Any, swap: dict[str, str]) -> Any:
    """``value`` without volatile fields, and with run-specific strings (paths, git commits) named instead."""
    if isinstance(value, dict):
        return {k: _scrub(v, swap) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_scrub(v, swap) for v in value]
    if isinstance(value, str):
        for old, new in swap.items():
            value = value.replace(old, new)
    return value


def _json_digest(path: Path, swap: dict[str, str]) -> str:
    return content_hash(_scrub(json.loads(path.read_text(encoding="utf-8")), swap))


def _jsonl_digest(path: Path, swap: dict[str, str]) -> str:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return content_hash(_scrub(rows, swap))


def _parquet_digest(path: Path) -> str:
    table = pq.read_table(path)
    return content_hash({"schema": str(table.schema.remove_metadata()), "rows": table.to_pylist()})


def _cache_keys(db: Path) -> str:
    with sqlite3.connect(db) as con:
        keys = sorted(k for (k,) in con.execute("SELECT key FROM responses"))
    return content_hash(keys)


def produce(tmp: Path, fixtures: Path, srv) -> dict[str, str]:
    """Run the whole path once and return a digest per artefact."""
    from rqbench.builder.pipeline import BuildConfig, run_build
    from rqbench.dataset_card.card import CardSettings
    from rqbench.dataset_card.publish import publish
    from rqbench.dataset_card.repo import LocalGitTarget
    from rqbench.evaluate.benchmark.source import load_benchmark
    from rqbench.evaluate.generate.run import generate_submission
    from rqbench.evaluate.generate.submission_files import load_submission
    from rqbench.evaluate.judge.run import judge_submission
    from rqbench.llm import LLM, CallStore

    db = tmp / "calls.db"
    llm = LLM(CallStore(db))
    cfg = llm.register(srv.model_config())
    srv.responder = lambda req: reply_for(req, prefer_key=FAVOURITE)
    out = tmp / "build"
    config = BuildConfig(
        out=out,
        papers=make_papers(tmp / "papers", fixtures, PAPERS),
        cited_sources=make_cited_sources(tmp / "cited"),
        max_cited_per_paper=4,
        allow_abstract_only=True,
        models={r: cfg.name for r in ("strong", "light", "labeller")},
        progress=False,
        concurrency=1,
    )
    run_build(config, llm)
    dataset = tmp / "dataset"
    publish(out, "0.1.0", LocalGitTarget(dataset), CardSettings(target="local", repo="golden/rq-bench"))

    srv.responder = F.judge_reply
    bench = load_benchmark(str(dataset))
    sub_dir = tmp / "submission"
    generate_submission(bench, cfg.name, "original", llm=llm, out=sub_dir, progress=False)
    sub = load_submission(sub_dir, bench.rq_ids, allow_partial=True)
    written = judge_submission(
        bench,
        sub,
        [cfg.name],
        ["standalone", "comparative"],
        llm=llm,
        orderings=2,
        out_dir=tmp / "results",
        progress=False,
    )

    # the release's git commit and the submission hash (which covers it) differ per run; the rest must not
    t = {
        str(tmp): "<tmp>",
        bench.revision: "<revision>",
        bench.revision[:12]: "<revision>",
        sub.hash: "<submission>",
        sub.hash.removeprefix("b2:")[:10]: "<submission>",
    }
    digests: dict[str, str] = {}
    for name in ("rqs", "papers", "cited_papers", "instances"):
        digests[f"build/records/{name}.jsonl"] = _jsonl_digest(out / "records" / f"{name}.jsonl", t)
    digests["build/skips.jsonl"] = _jsonl_digest(out / "skips.jsonl", t)
    digests["build/funnel.json"] = _json_digest(out / "funnel.json", t)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    digests["build/manifest.json (counts, dropped, stages)"] = content_hash(
        _scrub({k: manifest[k] for k in ("counts", "dropped", "stages")}, t)
    )
    for f in sorted((dataset / "data").rglob("*.parquet")):
        digests[f"release/{f.relative_to(dataset).as_posix()}"] = _parquet_digest(f)
    release = json.loads((dataset / "release.json").read_text(encoding="utf-8"))
    digests["release/release.json (fingerprints)"] = content_hash(
        {k: release[k] for k in ("data_fingerprint", "schema_fingerprint", "splits", "features")}
    )
    digests["submission/metadata.json"] = _json_digest(sub_dir / "metadata.json", t)
    digests["submission/submission.jsonl"] = _jsonl_digest(sub_dir / "submission.jsonl", t)
    digests["submission/generation_log.jsonl"] = _jsonl_digest(sub_dir / "generation_log.jsonl", t)
    for f in sorted(written):
        data = json.loads(f.read_text(encoding="utf-8"))
        data["dataset_repo"] = "<dataset>"
        data["totals"].pop("seconds", None)
        digests[f"results/{data['judge']['setting']}"] = content_hash(_scrub(data, t))
    digests["calls.db cache keys"] = _cache_keys(db)
    return digests


def test_build_release_submission_and_results_are_byte_identical_to_the_golden_run(
    tmp_path, fixtures_dir, scripted_server
):
    got = produce(tmp_path, fixtures_dir, scripted_server)
    if os.environ.get("RQB_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    changed = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    assert not changed, f"outputs differ from tests/golden/outputs.json: {changed}"
