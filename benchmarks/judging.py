"""Judging throughput and token cost on the embedded model.

1. Judge calls per second through the LLM layer (cache off: a fresh call store
   per run) at concurrency 1, 2 and 4, against direct HTTP requests (httpx) with
   the same messages to the same llama.cpp server at the same concurrency; the
   ratio is the layer's overhead (llama.cpp's Python server answers one request
   at a time, so concurrency mostly adds queueing).
2. Tokens per instance for standalone vs comparative novelty judging of one
   instance (GT + five), from the call log.

Run: .venv/bin/python benchmarks/judging.py [--calls N] [--max-tokens T]

With ``RQB_LOCAL_API_BASE`` set it measures the server there instead of starting
one (the smoke test points it at the scripted server).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import httpx

from rqbench.evaluate.benchmark.background import BackgroundPolicy, background_block
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.criteria import CRITERIA, JudgeConfig
from rqbench.evaluate.generate.submission_files import load_submission, write_submission
from rqbench.evaluate.judge.run import judge_submission, read_results
from rqbench.llm.client import LLM
from rqbench.llm.local_model import script_server
from rqbench.llm.store import CallStore
from rqbench.prompts import load_prompt_set
from rqbench.records import (
    CitedPaper,
    EvaluationInstance,
    SectionText,
    StandaloneNoveltyReply,
    SubmissionEntry,
    SubmissionMetadata,
    reply_json_schema,
)

PAPER = CitedPaper(
    paper_id="2401.00001",
    title="Sparse attention for long documents",
    abstract="We propose a sparse attention pattern that scales linearly with input length and keeps quality "
    "on long-document summarisation; we test it only on English news and on inputs up to 16k tokens.",
    text_level="full",
    sections=[SectionText(section="Introduction", text="Attention cost grows quadratically with length. " * 10)],
)
INSTANCE = EvaluationInstance(
    rq_id="2402.00002_rq0",
    gt_rq="How can attention sparsity patterns be learned per document rather than fixed?",
    arxiv_id="2402.00002",
    subfield="cs.CL",
    background_paper_ids=[PAPER.paper_id],
)
RQS = [
    "Does the fixed sparse pattern keep its quality on non-English long documents?",
    "Can sparse attention keep summary faithfulness beyond 16k tokens?",
    "Which document properties predict where a fixed sparsity pattern loses information?",
    "Can a learned router choose between sparse and dense attention per layer?",
    "How does linear-cost attention change what long-document benchmarks can measure?",
]


def requests_for(n: int) -> list[list[dict[str, str]]]:
    """``n`` distinct standalone novelty prompts (distinct, so no two share a cache key)."""
    prompts = load_prompt_set()
    judge = JudgeConfig(model="local", label="local", setting="standalone", prompts=prompts)
    bench = Benchmark([INSTANCE], {PAPER.paper_id: PAPER}, "bench", "v0")
    msgs = []
    for i in range(n):
        cands = {"gt": f"{INSTANCE.gt_rq} (variant {i})"}
        msgs.append(CRITERIA["novelty"].requests(judge, bench, INSTANCE, cands)[0].messages)
    return msgs


async def via_layer(cfg, messages, concurrency: int) -> float:  # type: ignore[no-untyped-def]
    llm = LLM(CallStore(Path(tempfile.mkdtemp()) / "calls.db"))
    llm.register(cfg.model_copy(update={"max_concurrency": concurrency}))
    ph = load_prompt_set().hash
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(llm.ask(cfg.name, "novelty_standalone", m, StandaloneNoveltyReply, prompt_hash=ph) for m in messages),
        return_exceptions=True,
    )
    dt = time.perf_counter() - t0
    failed = sum(isinstance(r, Exception) for r in results)
    sent = llm.store.count_requests(run_id=llm.run_id)
    if failed or sent != len(messages):
        print(f"  (layer: {failed} of {len(messages)} replies invalid; {sent} HTTP requests incl. re-asks)")
    return sent / dt  # HTTP requests per second, comparable with the direct loop


async def direct(cfg, messages, concurrency: int) -> float:  # type: ignore[no-untyped-def]
    schema = reply_json_schema(StandaloneNoveltyReply)
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=cfg.api_base, timeout=cfg.timeout_s) as client:

        async def one(m):  # type: ignore[no-untyped-def]
            async with sem:
                r = await client.post(
                    "/chat/completions",
                    json={
                        "model": cfg.litellm_model.split("/", 1)[1],
                        "messages": m,
                        "temperature": 0.0,
                        "max_tokens": cfg.max_tokens,
                        "response_format": {"type": "json_object", "schema": schema},
                    },
                )
                r.raise_for_status()

        t0 = time.perf_counter()
        await asyncio.gather(*(one(m) for m in messages))
        return len(messages) / (time.perf_counter() - t0)


def tokens_per_instance(cfg, tmp: Path) -> dict[str, tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    bench = Benchmark([INSTANCE], {PAPER.paper_id: PAPER}, "bench", "v0")
    folder = write_submission(
        tmp / "sub", SubmissionMetadata(model="bench"), [SubmissionEntry(rq_id=INSTANCE.rq_id, research_questions=RQS)]
    )
    sub = load_submission(folder, [INSTANCE.rq_id])
    out = {}
    for setting in ("standalone", "comparative"):
        llm = LLM(CallStore(tmp / f"{setting}.db"))
        llm.register(cfg)
        (path,) = judge_submission(
            bench,
            sub,
            [cfg.name],
            [setting],
            llm=llm,
            out_dir=tmp / "res",
            criteria=["novelty"],
            progress=False,
            policy=BackgroundPolicy(budget_tokens=600),
        )
        t = read_results(path).totals
        out[setting] = (t.calls, t.tokens_in, t.tokens_out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=4, help="calls per measurement (default 4)")
    ap.add_argument(
        "--max-tokens",
        type=int,
        default=96,
        help="reply cap, to keep the run short; a novelty reply needs about 40 (default 96)",
    )
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    concurrencies = (1,) if args.smoke else (1, 2, 4)
    if args.smoke:
        args.calls, args.max_tokens = 1, 48
    text, _ = background_block([PAPER], BackgroundPolicy(budget_tokens=600))
    print(f"background block: {len(text)} chars")
    with script_server() as srv, tempfile.TemporaryDirectory() as tmp:
        cfg = srv.model_config(max_tokens=args.max_tokens, max_retries=0)
        asyncio.run(direct(cfg, requests_for(1), 1))  # warm-up: model load, prompt cache
        asyncio.run(via_layer(cfg, requests_for(201)[200:], 1))  # and litellm's seconds-long first import
        print(f"judge calls per second, {args.calls} calls each (local model, max_tokens={args.max_tokens}):")
        for c in concurrencies:
            msgs = requests_for(args.calls)
            d = asyncio.run(direct(cfg, msgs, c))
            layer = asyncio.run(via_layer(cfg, requests_for(args.calls + 100)[100:], c))
            print(f"  concurrency {c}: LLM layer {layer:.3f}/s, direct httpx {d:.3f}/s, ratio {layer / d:.2f}")
        tok = tokens_per_instance(cfg, Path(tmp))
        s, cmp_ = tok["standalone"], tok["comparative"]
        print("novelty tokens per instance (GT + 5 candidates):")
        print(f"  standalone : {s[0]} calls, {s[1]} in + {s[2]} out = {s[1] + s[2]}")
        print(f"  comparative: {cmp_[0]} call(s), {cmp_[1]} in + {cmp_[2]} out = {cmp_[1] + cmp_[2]}")
        if cmp_[1] + cmp_[2]:
            print(f"  ratio standalone/comparative: {(s[1] + s[2]) / (cmp_[1] + cmp_[2]):.2f}")


if __name__ == "__main__":
    main()
