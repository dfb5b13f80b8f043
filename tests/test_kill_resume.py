"""A build killed with SIGKILL at random points resumes to the same records, paying no finished call twice.

The build runs as the real CLI in a subprocess against a scripted OpenAI-compatible
server that lives in this test process (so it outlives every kill). Kills land at
random times, during parsing and during LLM stages. ``RQB_CI_FAULT_LOOPS`` sets the
number of kills (default 20).

What "no paid call twice" can mean: a call whose reply was received is committed
to the cache before anything else happens, so the call log never shows a finished
call twice. A request still in flight at the moment of a kill was sent but never
received; the provider may have done the work, and the rerun sends it again. The
test counts those server-side repeats and bounds them by the calls in flight at
the kills (at most ``--concurrency`` per kill).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from builder_script import make_cited_sources, make_papers, reply_for
from rqbench.llm.scripted_server import ScriptedServer

pytestmark = pytest.mark.faults

PAPERS = ["attention-sink-gpt2"]
CONCURRENCY = 2
SPEC = "hosted_vllm/scripted@json_mode=json_object_schema,max_retries=3,timeout_s=20"


def build_cmd(papers: Path, cited: Path, out: Path) -> list[str]:
    cmd = [sys.executable, "-m", "rqbench", "build", "--papers", str(papers), "--out", str(out),
           "--cited-sources", str(cited), "--max-cited-per-paper", "4", "--allow-abstract-only",
           "--no-progress", "--concurrency", str(CONCURRENCY)]  # fmt: skip
    for role in ("strong", "light", "labeller"):
        cmd += [f"--model-{role}", SPEC]
    return cmd


def env_for(home: Path, srv: ScriptedServer) -> dict[str, str]:
    env = dict(os.environ)
    env.update(RQB_HOME=str(home), HOSTED_VLLM_API_BASE=srv.api_base, HOSTED_VLLM_API_KEY="test",
               LITELLM_LOCAL_MODEL_COST_MAP="True", PYTHONUNBUFFERED="1")  # fmt: skip
    return env


def request_key(req: dict) -> str:
    return json.dumps({"m": req.get("messages"), "f": req.get("response_format")}, sort_keys=True)


def records_of(out: Path) -> dict[str, list[str]]:
    recs = {}
    for f in sorted((out / "records").glob("*.jsonl")):
        recs[f.name] = f.read_text(encoding="utf-8").splitlines()
    return recs


def assert_no_torn_files(out: Path) -> None:
    for f in out.rglob("*.jsonl"):
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                json.loads(line)  # raises on a truncated line, naming nothing: add context below
    for f in out.rglob("*.json"):
        json.loads(f.read_text(encoding="utf-8"))


def test_sigkill_loop_resumes_to_identical_records(tmp_path, fixtures_dir, capsys):
    kills_wanted = int(os.environ.get("RQB_CI_FAULT_LOOPS", "20"))
    papers = make_papers(tmp_path / "papers", fixtures_dir, PAPERS)
    cited = make_cited_sources(tmp_path / "cited")

    def slow_reply(req):
        time.sleep(0.03)  # widen the windows a kill can land in
        return reply_for(req, prefer_key="gu2025when")

    # the uninterrupted reference
    with ScriptedServer(slow_reply) as ref_srv:
        ref = subprocess.run(build_cmd(papers, cited, tmp_path / "ref"), env=env_for(tmp_path / "ref-home", ref_srv),
                             capture_output=True, text=True, timeout=600)  # fmt: skip
        assert ref.returncode == 0, ref.stderr[-3000:]
        ref_requests = len(ref_srv.requests)
    reference = records_of(tmp_path / "ref")
    assert reference["rqs.jsonl"], "the reference build must produce RQs"

    rng = random.Random(20261202)
    out, home = tmp_path / "killed", tmp_path / "killed-home"
    kills = 0
    with ScriptedServer(slow_reply) as srv:
        env = env_for(home, srv)
        while kills < kills_wanted:
            before = len(srv.requests)
            proc = subprocess.Popen(build_cmd(papers, cited, out), env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)  # fmt: skip
            if kills % 2 == 0:  # by the clock: often during start-up and parsing
                deadline = time.monotonic() + rng.uniform(1.0, 9.0)
                while time.monotonic() < deadline and proc.poll() is None:
                    time.sleep(0.02)
            else:  # by the LLM traffic: mid-stage
                deadline = time.monotonic() + 60
                target = before + rng.randint(1, 6)
                while len(srv.requests) < target and proc.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.05))
            if proc.poll() is not None:
                err = proc.stderr.read() if proc.stderr else ""
                assert proc.returncode == 0, err[-3000:]
                # finished before the kill: start over in a fresh folder so every kill interrupts real work
                out = tmp_path / f"killed-{kills}"
                home = tmp_path / f"killed-home-{kills}"
                env = env_for(home, srv)
                srv.requests.clear()
                continue
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            assert_no_torn_files(out) if out.exists() else None
        final = subprocess.run(build_cmd(papers, cited, out), env=env, capture_output=True, text=True, timeout=600)
        assert final.returncode == 0, final.stderr[-3000:]
        requests = [request_key(r) for r in srv.requests]
    assert_no_torn_files(out)
    assert records_of(out) == reference, "a killed-and-resumed build must write the same records"

    # the call log never shows a finished call twice
    db = sqlite3.connect(home / "calls.db")
    paid = Counter(k for (k,) in db.execute("SELECT key FROM calls WHERE cache='miss' AND status='ok'"))
    assert paid and max(paid.values()) == 1
    # server-side repeats are bounded by the calls in flight at the kills
    repeats = len(requests) - len(set(requests))
    assert repeats <= kills * CONCURRENCY
    # and one more rerun sends nothing at all
    with ScriptedServer(slow_reply) as idle:
        again = subprocess.run(build_cmd(papers, cited, out), env=env_for(home, idle), capture_output=True,
                               text=True, timeout=600)  # fmt: skip
        assert again.returncode == 0 and len(idle.requests) == 0
    with capsys.disabled():
        print(f"\nkill loop: {kills} SIGKILLs survived; records identical to the uninterrupted build; "
              f"{len(requests)} requests vs {ref_requests} uninterrupted, {repeats} repeated "
              f"(in flight at a kill); finished calls paid twice: 0")
