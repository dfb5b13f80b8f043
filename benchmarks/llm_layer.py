"""Throughput of the LLM layer against direct HTTP to the same local server, and a cached rerun.

Prints two figures, each as a ratio against a baseline measured in this run:
1. N concurrent judge calls through ``LLM.ask`` vs the same requests sent
   directly with httpx to the embedded llama.cpp server (goal: ratio >= 0.9).
2. A fully cached rerun of 10,000 calls: wall time (goal: under 2 s) and the
   number of requests that reached a server (goal: 0), against the time one
   uncached call took.

    .venv/bin/python benchmarks/llm_layer.py [--n 8] [--cached 10000]

With ``RQB_LOCAL_API_BASE`` set it measures the server there instead of starting
one (the smoke test points it at the scripted server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Literal

import httpx
from pydantic import BaseModel, Field

from rqbench.llm import LLM, CallStore
from rqbench.llm.local_model import LocalModelServer, script_server
from rqbench.llm.selfcheck import BACKGROUND
from rqbench.prompts import load_prompt_set
from rqbench.records import reply_json_schema
from rqbench.untrusted import candidate_values

PROMPTS = load_prompt_set()


class OneScore(BaseModel):
    relevance: Literal[0, 1, 2, 3]
    originality: Literal[0, 1, 2, 3]
    gap_addressing: Literal[0, 1, 2, 3]
    non_obviousness: Literal[0, 1, 2, 3]


class ScoresShape(BaseModel):
    """A standalone-novelty reply whose every token the schema fixes except four digits 0-3: one score, fixed keys.

    This times transport, caching and logging, so both sides must generate the same reply length whatever the model
    writes. The real reply model lets the 135M model ramble inside a string or a key until ``max_tokens`` cuts the JSON
    (``Unterminated string`` on a fresh clone's run), and then the layer's re-ask times a request the direct path
    never sends. Under this schema the server's grammar bounds the reply to about 40 tokens, valid every time."""

    scores: list[OneScore] = Field(min_length=1, max_length=1)


TOPICS = [
    "longer inputs",
    "low-resource languages",
    "speech",
    "code",
    "graphs",
    "images",
    "music",
    "proteins",
    "tables",
    "video",
    "robotics",
    "chemistry",
    "law",
    "medicine",
    "finance",
    "weather",
]


def messages(i: int, tag: str) -> list[dict[str, str]]:
    q = f"Can attention-only models ({tag} run {i}) transfer to {TOPICS[i % len(TOPICS)]} without recurrence?"
    values = candidate_values([q])
    return PROMPTS["novelty_standalone"].render(
        background=BACKGROUND, candidates=values["candidates"], data_tag=values["data_tag"]
    )


async def direct(srv: LocalModelServer, n: int, max_tokens: int) -> float:
    schema = reply_json_schema(ScoresShape)
    async with httpx.AsyncClient(timeout=600) as client:

        async def one(i: int) -> None:
            r = await client.post(
                f"{srv.api_base}/chat/completions",
                json={
                    "model": srv.spec.id,
                    "messages": messages(i, "direct"),
                    "temperature": 0.0,
                    "max_tokens": max_tokens,
                    "response_format": {"type": "json_object", "schema": schema},
                },
            )
            r.raise_for_status()
            json.loads(r.json()["choices"][0]["message"]["content"], strict=False)

        t0 = time.perf_counter()
        await asyncio.gather(*[one(i) for i in range(n)])
        return time.perf_counter() - t0


async def layered(llm: LLM, name: str, n: int) -> float:
    t0 = time.perf_counter()
    await asyncio.gather(
        *[
            llm.ask(name, "novelty_standalone", messages(i, "layer"), ScoresShape, prompt_hash=PROMPTS.hash)
            for i in range(n)
        ]
    )
    return time.perf_counter() - t0


async def cached_rerun(llm: LLM, name: str, count: int) -> float:
    t0 = time.perf_counter()
    for start in range(0, count, 1000):
        await asyncio.gather(
            *[
                llm.ask(
                    name, "cached", [{"role": "user", "content": f"call {i}"}], ScoresShape, prompt_hash=PROMPTS.hash
                )
                for i in range(start, min(count, start + 1000))
            ]
        )
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8, help="concurrent judge calls per side")
    ap.add_argument("--cached", type=int, default=10_000, help="calls in the cached rerun")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    if args.smoke:
        args.n, args.cached = 2, 200
    tmp = Path(tempfile.mkdtemp(prefix="rqbench-bench-"))
    with script_server() as srv:
        cfg = srv.model_config(max_concurrency=args.n)
        llm = LLM(CallStore(tmp / "calls.db"))
        llm.register(cfg)
        asyncio.run(direct(srv, 1, cfg.max_tokens or 256))  # warm the server once
        # and litellm's import and client set-up, with the same prompt, so that the server's prefix cache holds the
        # shared background when the timed runs start (a short warm-up prompt left it empty, and the first direct
        # run alone paid a full prompt read: 17.8 s against 4.4 s, a layer/direct ratio of 2.3 at N=2)
        asyncio.run(llm.ask(cfg.name, "warmup", messages(0, "warm-up"), ScoresShape, prompt_hash=PROMPTS.hash))
        # alternate the order so neither side profits from the server's warm prefix cache
        t_direct_a = asyncio.run(direct(srv, args.n, cfg.max_tokens or 256))
        t_layer = asyncio.run(layered(llm, cfg.name, args.n))
        t_direct_b = asyncio.run(direct(srv, args.n, cfg.max_tokens or 256))
        t_direct = (t_direct_a + t_direct_b) / 2
        per_call = t_layer / args.n
        print(f"concurrent judge calls: N={args.n}")
        print(f"  direct HTTP: {args.n / t_direct:.3f} calls/s   through the layer: {args.n / t_layer:.3f} calls/s")
        print(f"  ratio layer/direct = {t_direct / t_layer:.3f}  (goal >= 0.9)")

    # the cached rerun: fill the cache as a finished run would have, then rerun with the server gone
    body = json.dumps({"scores": [{"relevance": 1, "originality": 1, "gap_addressing": 1, "non_obviousness": 1}]})
    store = llm.store
    for i in range(args.cached):
        key = llm.keys_for(cfg.name, "cached", [{"role": "user", "content": f"call {i}"}], ScoresShape, PROMPTS.hash)
        store.put(key, model=cfg.name, step="cached", request={}, text=body, tokens_in=1, tokens_out=1, cost_usd=0.0)
    rerun = LLM(store)
    rerun.register(cfg)  # a started server is stopped by now (any request fails loudly); every request is counted
    t_cached = asyncio.run(cached_rerun(rerun, cfg.name, args.cached))
    sent = store.count_requests(run_id=rerun.run_id)
    hits = sum(r["cache_hits"] or 0 for r in store.summary(run_id=rerun.run_id))
    print(
        f"fully cached rerun: {args.cached} calls in {t_cached:.2f} s (goal < 2 s), {sent} server requests, "
        f"{hits} cache hits"
    )
    print(f"  ratio cached-call time / live-call time = {t_cached / args.cached / per_call:.6f}")


if __name__ == "__main__":
    main()
