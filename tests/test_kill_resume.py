"""A build killed with SIGKILL at random points resumes to the same records, paying no finished call twice.

The build runs as the real CLI (``rqbench.cli.main``) in a child process against a
scripted OpenAI-compatible server that lives in this test process (so it outlives
every kill). Children are forked from this process after litellm and the builder
are imported, so a kill costs the work it interrupts, not seconds of imports. Kills
land at random times, during parsing and during LLM stages. ``RQB_CI_FAULT_LOOPS``
sets the number of kills (default 20).

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
import time
from collections import Counter
from pathlib import Path

import pytest
from builder_script import make_cited_sources, make_papers, reply_for
from forked_cli import start

from rqbench.testing.scripted_server import ScriptedServer

pytestmark = pytest.mark.faults

PAPERS = ["attention-sink-gpt2"]
CONCURRENCY = 2
SPEC = "hosted_vllm/scripted@json_mode=json_object_schema,max_retries=3,timeout_s=20"


def build_cmd(papers: Path, cited: Path, out: Path) -> list[str]:
    cmd = [
        "build",
        "--papers",
        str(papers),
        "--out",
        str(out),
        "--cited-sources",
        str(cited),
        "--max-cited-per-paper",
        "4",
        "--allow-abstract-only",
        "--no-progress",
        "--concurrency",
        str(CONCURRENCY),
    ]
    for role in ("strong", "light", "labeller"):
        cmd += [f"--model-{role}", SPEC]
    return cmd


def env_for(home: Path, srv: ScriptedServer) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        RQB_HOME=str(home),
        HOSTED_VLLM_API_BASE=srv.api_base,
        HOSTED_VLLM_API_KEY="test",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONUNBUFFERED="1",
    )
    return env


def run_to_end(argv: list[str], env: dict[str, str], timeout: float = 300) -> int:
    proc = start(argv, env)
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        raise AssertionError(f"build did not finish in {timeout}s")
    return proc.exitcode


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
                try:
                    json.loads(line)
                except json.JSONDecodeError as exc:
                    raise AssertionError(f"{f}:{i}: torn line ({exc})") from exc
    for f in out.rglob("*.json"):
        try:
            json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{f}: torn file ({exc})") from exc


def test_sigkill_loop_resumes_to_identical_records(tmp_path, fixtures_dir, capsys):
    kills_wanted = int(os.environ.get("RQB_CI_FAULT_LOOPS", "20"))
    papers = make_papers(tmp_path / "papers", fixtures_dir, PAPERS)
    cited = make_cited_sources(tmp_path / "cited")

    def slow_reply(req):
        time.sleep(0.03)  # widen the windows a kill can land in
        return reply_for(req, prefer_key="gu2025when")

    # the uninterrupted reference
    import litellm  # noqa: F401  (imported once here, inherited by every forked child)

    import rqbench.builder.cli  # noqa: F401
    import rqbench.builder.pipeline  # noqa: F401

    with ScriptedServer(slow_reply) as ref_srv:
        assert run_to_end(build_cmd(papers, cited, tmp_path / "ref"), env_for(tmp_path / "ref-home", ref_srv)) == 0
        ref_requests = len(ref_srv.requests)
    reference = records_of(tmp_path / "ref")
    assert reference["rqs.jsonl"], "the reference build must produce RQs"

    rng = random.Random(20261202)
    out, home = tmp_path / "killed", tmp_path / "killed-home"
    kills = restarts = 0
    with ScriptedServer(slow_reply) as srv:
        env = env_for(home, srv)
        while kills < kills_wanted:
            before = len(srv.requests)
            proc = start(build_cmd(papers, cited, out), env)
            if kills % 2 == 0:  # by the clock: often during parsing
                deadline = time.monotonic() + rng.uniform(0.05, 2.0)
                while time.monotonic() < deadline and proc.is_alive():
                    time.sleep(0.01)
            else:  # by the LLM traffic: mid-stage
                deadline = time.monotonic() + 60
                target = before + rng.randint(1, 6)
                while len(srv.requests) < target and proc.is_alive() and time.monotonic() < deadline:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.05))
            if proc.is_alive():
                os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            if proc.exitcode != 0:
                assert proc.exitcode == -signal.SIGKILL, f"build exited with {proc.exitcode}"
                kills += 1
                if out.exists():
                    assert_no_torn_files(out)
            else:
                # finished before the kill: start over in a fresh folder so every kill interrupts real work
                restarts += 1
                out = tmp_path / f"killed-{restarts}"
                home = tmp_path / f"killed-home-{restarts}"
                env = env_for(home, srv)
                srv.requests.clear()
        assert run_to_end(build_cmd(papers, cited, out), env) == 0
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
        assert run_to_end(build_cmd(papers, cited, out), env_for(home, idle)) == 0
        assert len(idle.requests) == 0
    with capsys.disabled():
        print(
            f"\nkill loop: {kills} SIGKILLs survived; records identical to the uninterrupted build; "
            f"{len(requests)} requests vs {ref_requests} uninterrupted, {repeats} repeated "
            f"(in flight at a kill); finished calls paid twice: 0"
        )
