"""Batch mode against the scripted server's OpenAI files + batches endpoints: same results, resumable, no request paid twice."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import evaluate_factory as F
import pytest
from scripted_replies import user_text

from rqbench.cli import main
from rqbench.evaluate.judge.run import read_results
from rqbench.llm import LLM, CallStore, Deferred
from rqbench.llm.batch import BatchRunner, PendingRequest, batch_body
from rqbench.records import StandaloneNoveltyReply

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def build(tmp_path):
    bench = F.benchmark(3)
    F.write_build(bench, tmp_path / "build")
    sub = F.submission(bench, tmp_path / "sub")
    return bench, tmp_path / "build", sub


@pytest.fixture
def env(scripted_server, monkeypatch):
    scripted_server.responder = F.judge_reply
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("RQB_BATCH_POLL_S", "0.02")
    return F.scripted_spec(scripted_server)


def _judge_args(sub, root, out, spec, *extra):
    return [
        "judge",
        str(sub.path),
        "--judge",
        spec,
        "--judge",
        spec + ",temperature=0.5",
        "--setting",
        "both",
        "--dataset",
        str(root),
        "--out",
        str(out),
        *extra,
    ]


def _instances(out: Path) -> dict[str, list]:
    return {p.name: [i.model_dump() for i in read_results(p).instances] for p in sorted(out.glob("*.json"))}


def _reask_once(req):
    """An invalid first reply for one candidate; its re-ask (a longer conversation) is answered properly."""
    if "Question 2 about 2501.00001_rq0" in user_text(req) and len(req["messages"]) == 2:
        return "this is not JSON"
    return None


def test_batch_judging_writes_the_results_of_a_direct_run(build, env, scripted_server, tmp_path, monkeypatch, capsys):
    _, root, sub = build
    scripted_server.responder = F.responder_with({"novelty_standalone": _reask_once})
    assert main(_judge_args(sub, root, tmp_path / "direct", env)) == 0
    direct_requests = len(scripted_server.requests)

    monkeypatch.setenv("RQB_HOME", str(tmp_path / "home-batch"))  # a fresh cache and call log
    assert main(_judge_args(sub, root, tmp_path / "batched", env, "--batch")) == 0
    batches = scripted_server.batches
    assert len(scripted_server.requests) == direct_requests  # not one direct call in batch mode
    assert len(batches.created) == 2  # one model: the first asks, then the re-ask round
    assert sum(batches.executed.values()) == direct_requests and max(batches.executed.values()) == 1
    assert _instances(tmp_path / "batched") == _instances(tmp_path / "direct")
    for name in _instances(tmp_path / "direct"):
        d, b = read_results(tmp_path / "direct" / name).totals, read_results(tmp_path / "batched" / name).totals
        assert (b.calls, b.tokens_in, b.tokens_out) == (d.calls, d.tokens_in, d.tokens_out)
    rows = CallStore(tmp_path / "home-batch" / "calls.db").summary()
    assert sum(r["by_batch"] for r in rows) == sum(r["requests"] for r in rows) == direct_requests
    assert "requests submitted" in capsys.readouterr().err

    # a rerun is served from the cache: no batch, no call
    assert main(_judge_args(sub, root, tmp_path / "batched", env, "--batch")) == 0
    assert len(batches.created) == 2 and len(scripted_server.requests) == direct_requests


def test_failed_batch_lines_are_named_failures_and_a_rerun_sends_only_them(build, env, scripted_server, tmp_path):
    _, root, sub = build
    batches = scripted_server.batches
    bad = "Question 4 about 2501.00000_rq0"
    batches.line_error = lambda line: (500, "scripted line failure") if bad in json.dumps(line) else None
    out = tmp_path / "results"
    # a judge's calls failed: the results are written, the run says so and exits 1
    assert main(_judge_args(sub, root, out, env, "--batch", "--setting", "standalone")) == 1
    failures = [f for p in out.glob("*.json") for i in read_results(p).instances for f in i.failures]
    assert failures and all("batch_line_500" in f and "m4" in f for f in failures)
    first_lines = sum(batches.executed.values())

    batches.line_error = None
    assert main(_judge_args(sub, root, out, env, "--batch", "--setting", "standalone")) == 0
    assert not [f for p in out.glob("*.json") for i in read_results(p).instances for f in i.failures]
    resent = sum(batches.executed.values()) - first_lines
    assert resent == len(failures) and max(batches.executed.values()) == 1  # only the failed lines, each once


def test_killed_between_submit_and_collect_resumes_the_same_batch(build, env, scripted_server, tmp_path):
    _, root, sub = build
    batches = scripted_server.batches
    batches.hold = True  # the batch stays in progress until we let it finish
    out = tmp_path / "results"
    args = _judge_args(sub, root, out, env, "--batch", "--setting", "standalone")
    child_env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rqbench", *args],
        env=child_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (batches.created and batches.batches[batches.created[0]]["status"] == "in_progress"):
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the batch was never submitted"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    store = CallStore(Path(os.environ["RQB_HOME"]) / "calls.db")
    (row,) = store.batches()
    assert row["state"] == "submitted" and row["batch_id"] == batches.created[0]
    assert not list(out.glob("*.json"))

    batches.hold = False
    assert main(args) == 0
    assert batches.created == [row["batch_id"]]  # resumed, not resubmitted
    assert max(batches.executed.values()) == 1 and sum(batches.executed.values()) == row["n_requests"]
    assert len(list(out.glob("*.json"))) == 2
    assert not [f for p in out.glob("*.json") for i in read_results(p).instances for f in i.failures]


def _pending(llm: LLM, model: str, n: int) -> list[PendingRequest]:
    cfg = llm.model(model)
    out = []
    for i in range(n):
        msgs = [{"role": "system", "content": "judge"}, {"role": "user", "content": f"[0] Q{i}?"}]
        key = llm.keys_for(model, "novelty_standalone", msgs, StandaloneNoveltyReply, "h")
        out.append(
            PendingRequest(
                key,
                cfg.name,
                "novelty_standalone",
                batch_body(cfg, msgs, None),
                {"messages": msgs, "model": cfg.cache_identity()},
            )
        )
    return out


def test_a_batch_created_before_its_id_was_stored_is_adopted_not_recreated(tmp_path, scripted_server, monkeypatch):
    """The crash window between the create request and storing its answer."""
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    good = json.dumps({"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 1, "non_obviousness": 3}]})
    scripted_server.responder = lambda req: good
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(scripted_server.model_config())
    pending = _pending(llm, cfg.name, 3)
    runner = BatchRunner(llm.store, {cfg.name: cfg}, run_id="r1", poll_s=0.01, report=None)
    local_id = runner._record(pending)
    batches = scripted_server.batches
    from rqbench.llm.batch import batch_file

    fid = batches._store("in.jsonl", "batch", batch_file((p.key, p.step, p.body) for p in pending))["id"]
    batches._create({"input_file_id": fid, "endpoint": "/v1/chat/completions", "metadata": {"rqbench_batch": local_id}})
    llm.store.batch_update(local_id, file_id=fid, state="uploaded")  # the crash: the batch id was never stored

    result = asyncio.run(runner.run(pending))
    assert result.answered == 3 and not result.failed
    assert len(batches.created) == 1 and llm.store.batch(local_id)["batch_id"] == batches.created[0]
    assert all(llm.store.get(p.key) is not None for p in pending)


def test_an_expired_batch_names_the_lines_it_did_not_run(tmp_path, scripted_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    good = json.dumps({"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 1, "non_obviousness": 3}]})
    scripted_server.responder = lambda req: good
    scripted_server.batches.end_status = "expired"
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(scripted_server.model_config())
    runner = BatchRunner(llm.store, {cfg.name: cfg}, run_id="r1", poll_s=0.01, report=None)
    result = asyncio.run(runner.run(_pending(llm, cfg.name, 4)))
    assert result.answered == 2 and len(result.failed) == 2
    assert {r for r, _ in result.failed.values()} == {"batch_expired"}
    assert {r["state"] for r in llm.store.batches()} == {"collected"}


def test_batch_mode_calls_a_model_without_a_batch_endpoint_directly(tmp_path, scripted_server, monkeypatch, caplog):
    good = json.dumps({"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 1, "non_obviousness": 3}]})
    scripted_server.responder = lambda req: good
    llm = LLM(CallStore(tmp_path / "calls.db"), batch=True)
    llm.register(scripted_server.model_config(name="ds", litellm_model="deepseek/deepseek-v4-pro"))
    msgs = [{"role": "system", "content": "judge"}, {"role": "user", "content": "[0] Q?"}]
    ans = asyncio.run(llm.ask("ds", "novelty_standalone", msgs, StandaloneNoveltyReply, prompt_hash="h"))
    assert not ans.cached and len(scripted_server.requests) == 1 and not llm.pending
    assert "has no batch endpoint" in caplog.text

    llm.register(scripted_server.model_config(name="oa"))
    with pytest.raises(Deferred):
        asyncio.run(llm.ask("oa", "novelty_standalone", msgs, StandaloneNoveltyReply, prompt_hash="h"))
    assert len(llm.pending) == 1 and len(scripted_server.requests) == 1


def test_generation_by_batch_writes_the_submission_of_a_direct_run(build, env, scripted_server, tmp_path, monkeypatch):
    _, root, _ = build
    args = ["generate", "--model", env, "--dataset", str(root)]
    assert main([*args, "--out", str(tmp_path / "direct")]) == 0
    n_direct = len(scripted_server.requests)
    monkeypatch.setenv("RQB_HOME", str(tmp_path / "home-batch"))
    assert main([*args, "--out", str(tmp_path / "batched"), "--batch"]) == 0
    assert len(scripted_server.requests) == n_direct and sum(scripted_server.batches.executed.values()) == n_direct
    for name in ("submission.jsonl", "generation_log.jsonl"):
        direct = (tmp_path / "direct" / name).read_text()
        assert (tmp_path / "batched" / name).read_text().replace('"cached": true', '"cached": false') == direct


def test_a_setting_the_model_refuses_is_a_named_failure_in_batch_mode_too(tmp_path, scripted_server):
    from rqbench.llm import LLMCallFailed

    llm = LLM(CallStore(tmp_path / "calls.db"), batch=True)
    llm.register(scripted_server.model_config(name="g", litellm_model="openai/gpt-4o", reasoning_effort="high"))
    msgs = [{"role": "system", "content": "judge"}, {"role": "user", "content": "[0] Q?"}]
    with pytest.raises(LLMCallFailed) as err:
        asyncio.run(llm.ask("g", "novelty_standalone", msgs, StandaloneNoveltyReply, prompt_hash="h"))
    assert err.value.reason == "UnsupportedParamsError" and not llm.pending


def test_a_batch_line_cut_at_the_budget_is_truncated_as_in_a_direct_call(
    build, env, scripted_server, tmp_path, monkeypatch
):
    from rqbench.testing.scripted_server import ScriptedReply

    _, root, sub = build

    def cut_one(req):
        if req.step == "novelty_standalone" and "Question 3 about 2501.00002_rq0" in user_text(req):
            return ScriptedReply("", finish_reason="length")  # the whole budget spent before any text
        return F.judge_reply(req)

    scripted_server.responder = cut_one
    args = [
        "judge",
        str(sub.path),
        "--judge",
        env,
        "--setting",
        "standalone",
        "--criteria",
        "novelty",
        "--dataset",
        str(root),
    ]
    # the cut reply is a judge's failure: both runs write their results and exit 1
    assert main([*args, "--out", str(tmp_path / "direct")]) == 1
    monkeypatch.setenv("RQB_HOME", str(tmp_path / "home-batch"))
    assert main([*args, "--out", str(tmp_path / "batched"), "--batch"]) == 1
    assert _instances(tmp_path / "batched") == _instances(tmp_path / "direct")
    (rf,) = [read_results(p) for p in (tmp_path / "batched").glob("*.json")]
    (failure,) = [f for i in rf.instances for f in i.failures]
    assert failure.startswith("novelty_standalone[m3]: truncated: ")
    assert [r.truncated for i in rf.instances for r in i.raw_replies].count(True) == 1
    statuses = [r["failures"] for r in CallStore(tmp_path / "home-batch" / "calls.db").summary()]
    assert sum(statuses) >= 1  # the cut reply is logged as a failure (status truncated), not ok
