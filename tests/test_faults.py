"""Provider failures injected at the HTTP level at a 30% rate: every call ends retried-to-success or named.

The fault mix covers what APIs really do: 429 with Retry-After, 500, 503, timeouts,
connection resets, truncated bodies, non-JSON bodies, empty replies, and a
well-formed JSON reply of the wrong shape (which the layer re-asks, then records).
``RQB_FAULT_CALLS`` bounds the number of calls (default 200; ``RQB_CI_FAULT_LOOPS`` is the kill tests' count).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import sqlite3
import threading

import pytest

from rqbench.llm import LLM, CallStore, LLMCallFailed
from rqbench.records import StandaloneNoveltyReply
from rqbench.testing.scripted_server import Fault, ScriptedServer

pytestmark = pytest.mark.faults

GOOD = json.dumps({"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 2, "non_obviousness": 1}]})
WRONG_SHAPE = json.dumps({"score": 3, "verdict": "novel"})
KINDS = ["429", "500", "503", "timeout", "reset", "truncated", "not_json", "empty", "wrong_shape"]


def fault_for(kind: str) -> Fault | None:
    return {
        "429": Fault("status", 429, {"retry-after": "0.05"}),
        "500": Fault("status", 500),
        "503": Fault("status", 503),
        # a server that never answers: with "slow" (answer late) a stalled event loop on a busy machine
        # can read the late 200 before its timeout fires, and the fault then leaves no error row
        "timeout": Fault("hang", seconds=1.6),
        "reset": Fault("reset"),
        "truncated": Fault("truncated"),
        "not_json": Fault("not_json"),
        "empty": Fault("empty"),
        "wrong_shape": Fault("reply", content=WRONG_SHAPE),
    }[kind]


def run_fault_mix(tmp_path, n_calls: int, rate: float = 0.3, seed: int = 7):
    rng = random.Random(seed)
    injected: collections.Counter[str] = collections.Counter()
    plan_lock = threading.Lock()

    def plan(n: int):
        with plan_lock:
            if rng.random() >= rate:
                return None
            kind = rng.choice(KINDS)
            injected[kind] += 1
            return fault_for(kind)

    with ScriptedServer(lambda req: GOOD, fault_plan=plan) as srv:
        llm = LLM(CallStore(tmp_path / "calls.db"))
        llm.register(srv.model_config(timeout_s=1.0, max_retries=8, max_concurrency=8))

        async def one(i: int):
            msgs = [{"role": "user", "content": f"candidate {i}"}]
            try:
                await llm.ask("scripted/test", "novelty_standalone", msgs, StandaloneNoveltyReply, prompt_hash="h")
                return "ok"
            except LLMCallFailed as exc:
                return f"failed:{exc.reason}"

        async def all_calls():
            return await asyncio.gather(*[one(i) for i in range(n_calls)])

        outcomes = asyncio.run(all_calls())
        sent = len(srv.requests)
    log = sqlite3.connect(tmp_path / "calls.db")
    statuses = collections.Counter(r[0] for r in log.execute("SELECT status FROM calls WHERE cache='miss'"))
    return injected, collections.Counter(outcomes), statuses, sent


def test_thirty_percent_faults_every_call_ends_by_name(tmp_path, capsys):
    n = int(os.environ.get("RQB_FAULT_CALLS", "200"))
    injected, outcomes, statuses, sent = run_fault_mix(tmp_path, n)
    assert sum(outcomes.values()) == n, "no call may vanish"
    assert all(k == "ok" or k.startswith("failed:") for k in outcomes)
    assert sum(injected.values()) >= n * 0.2, "the plan must actually inject faults"
    # transient faults are all retried to success; only a twice-wrong shape may end as a named failure
    assert set(outcomes) <= {"ok", "failed:invalid_reply"}
    assert outcomes["ok"] >= n * 0.95
    # every request the server saw is in the log, with its error by name (a request that timed
    # out before the busy server read it is logged too, so the log may hold a few more)
    assert sum(statuses.values()) >= sent
    # each transport fault left exactly one error row; a wrong shape is a 200 that the layer re-asks
    errors = sum(v for k, v in statuses.items() if k.startswith("error:"))
    assert errors >= sum(v for k, v in injected.items() if k != "wrong_shape")
    # 200 replies: one valid answer per successful call, plus every wrong-shape reply
    assert statuses["ok"] == outcomes["ok"] + injected["wrong_shape"]
    with capsys.disabled():
        print(f"\nfault mix over {n} calls, {sent} requests: injected {dict(injected)}; outcomes {dict(outcomes)}")
        print(f"logged statuses {dict(statuses)}")
