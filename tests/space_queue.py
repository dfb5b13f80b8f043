"""A small benchmark, submissions for it, a queue of them and a worker judging on the scripted server:
what the worker, kill-loop and storage-fault tests share."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.records import CitedPaper, EvaluationInstance, SectionText
from rqbench.space.stores import SpaceStores
from rqbench.space.submit import BenchmarkTarget, SubmitFlow, SubmitPolicy, Submitter
from rqbench.space.worker import Worker, evaluate_judge


def make_bench(n: int = 2) -> Benchmark:
    insts, papers = [], {}
    for i in range(n):
        pid = f"2401.{20000 + i}"
        papers[pid] = CitedPaper(
            paper_id=pid,
            title=f"Background {i}",
            abstract=f"We study method {i}.",
            text_level="full",
            sections=[SectionText(section="Method", text=f"Method {i}.")],
        )
        insts.append(
            EvaluationInstance(
                rq_id=f"2501.{10000 + i}_rq0",
                gt_rq=f"How far does method {i} carry?",
                arxiv_id=f"2501.{10000 + i}",
                subfield="cs.CL",
                background_paper_ids=[pid],
            )
        )
    return Benchmark(insts, papers, "local/test-bench", "v1")


def write_submission(path: Path, bench: Benchmark, model: str) -> Path:
    lines = [{"kind": "metadata", "model": model, "model_type": "open"}]
    for inst in bench.instances:
        lines.append(
            {
                "rq_id": inst.rq_id,
                "research_questions": [f"Which question {k} would {model} ask on {inst.rq_id}?" for k in range(5)],
            }
        )
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def target_of(bench: Benchmark) -> BenchmarkTarget:
    return BenchmarkTarget(bench.repo, bench.revision, tuple(bench.rq_ids))


def queue(
    tmp_path: Path,
    stores: SpaceStores,
    bench: Benchmark,
    users_models: Iterable[tuple[str, str]],
    policy: SubmitPolicy = SubmitPolicy(),
    **flow_kw,
):
    """Submit one file per (user, model) through the real flow; the accepted requests, in order."""
    flow = SubmitFlow(stores, target_of(bench), policy, **flow_kw)
    reqs = []
    for user, model in users_models:
        out = flow.submit(
            write_submission(tmp_path / f"{model.replace('/', '_')}.jsonl", bench, model), Submitter(user)
        )
        assert out.accepted, out.errors
        reqs.append(out.request)
    return reqs


def worker_for(
    stores: SpaceStores, tmp_path: Path, llm, judges, bench: Benchmark, settings=("standalone", "comparative"), **kw
) -> Worker:
    judge = evaluate_judge(judges, list(settings), llm=llm, loader=lambda repo, rev: bench)
    return Worker(stores, judge, work_dir=tmp_path / "work", **kw)


def write_build(root: Path, bench: Benchmark) -> Path:
    """``bench`` as a build folder (``records/instances.jsonl``, ``records/cited_papers.jsonl``), which
    ``rqbench worker --dataset`` reads."""
    records = root / "records"
    records.mkdir(parents=True, exist_ok=True)
    (records / "instances.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in bench.instances))
    (records / "cited_papers.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in bench.papers.values()))
    return root
