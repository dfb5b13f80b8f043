"""The queue survives its worker: submissions from several accounts queued at once, ``rqbench worker --once``
SIGKILLed at random points and restarted, and every submission still ends judged exactly once.

The worker runs as the real CLI in a child process forked after litellm and the worker are imported (a
kill costs the work it interrupts, not seconds of imports), against a scripted judge server that lives in
this process and outlives every kill. Kills land by the clock and by the judge traffic. After the last
restart: every request is finished (or failed with a named reason), each finished one has its results
files and no other file exists, every stored file parses, the call log shows no finished call paid twice,
a final run sends nothing, and the leaderboard equals the one an uninterrupted worker makes from a copy
of the same queue.

A request is given up after ``max_attempts`` (3) takings, by design (a submission that kills the worker
must not stall the queue; ``test_worker.py`` covers it), so the test never kills a third time while one
request is running: it waits for that request to finish before arming the next kill.

``RQB_QUEUE_SUBMISSIONS`` (default 50, from 10 accounts) and ``RQB_QUEUE_KILLS`` (default 10) size it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from forked_cli import start
from scripted_replies import reply as judge_reply
from space_queue import make_bench, target_of, write_build, write_submission

from rqbench.space.stores import SpaceStores
from rqbench.space.submit import SubmitFlow, SubmitPolicy, Submitter
from rqbench.testing.scripted_server import ScriptedServer

pytestmark = pytest.mark.faults

ACCOUNTS = 10
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def enqueue_at_once(tmp_path: Path, store: Path, bench, n: int) -> list[str]:
    """``n`` submissions from ``ACCOUNTS`` accounts, each account's from its own thread, all released at once."""
    stores = SpaceStores.local(store)
    per_account = -(-n // ACCOUNTS)
    flow = SubmitFlow(stores, target_of(bench), SubmitPolicy(per_user_per_day=per_account), clock=lambda: NOW)
    jobs = [(f"account-{i % ACCOUNTS}", f"lab-{i % ACCOUNTS}/model-{i // ACCOUNTS}") for i in range(n)]
    (tmp_path / "uploads").mkdir()
    files = {
        model: write_submission(tmp_path / "uploads" / f"{model.replace('/', '_')}.jsonl", bench, model)
        for _, model in jobs
    }
    ids: list[str] = []
    errors: list[str] = []
    barrier = threading.Barrier(ACCOUNTS)

    def account(i: int) -> None:
        barrier.wait()
        for user, model in jobs[i::ACCOUNTS]:
            out = flow.submit(files[model], Submitter(user))
            (ids.append(out.request.request_id) if out.accepted else errors.extend(out.errors))

    threads = [threading.Thread(target=account, args=(i,)) for i in range(ACCOUNTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(ids) == n, errors
    return ids


def worker_argv(store: Path, build: Path, api_base: str) -> list[str]:
    spec = f"openai/scripted@api_base={api_base},json_mode=json_object_schema,max_retries=2,timeout_s=20"
    return [
        "worker",
        "--once",
        "--store",
        str(store),
        "--dataset",
        str(build),
        "--judge",
        spec,
        "--setting",
        "standalone",
    ]


def run_to_end(argv: list[str], env: dict[str, str], timeout: float = 600) -> None:
    proc = start(argv, env)
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        raise AssertionError(f"the worker did not finish in {timeout}s")
    assert proc.exitcode == 0, f"the worker exited with {proc.exitcode}"


def env_for(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        RQB_HOME=str(home),
        OPENAI_API_KEY="test-key-for-loopback",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONUNBUFFERED="1",
    )
    return env


def request_key(req: dict) -> str:
    return json.dumps({"m": req.get("messages"), "f": req.get("response_format")}, sort_keys=True)


def stored_requests(store: Path) -> dict[str, dict]:
    return {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in (store / "requests").glob("*.json")}


def assert_whole(store: Path) -> None:
    """Every stored file parses: a kill never leaves a torn request or results file in view."""
    for f in store.rglob("*.json"):
        if not f.name.startswith("."):
            try:
                json.loads(f.read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise AssertionError(f"{f}: torn file ({exc})") from exc


def leaderboard(store: Path):
    from rqbench.evaluate.metrics.summary import summarize
    from rqbench.space import leaderboard as lb

    results, problems = SpaceStores.local(store).results.load()
    assert problems == []
    view = lb.View(settings=("standalone",), groups=lb.GROUPS)  # every column, provenance included
    return lb.render(lb.build_table(summarize(results, n_boot=200)), view)


def test_the_queue_survives_its_worker_killed_at_random_points(tmp_path, capsys):
    n = int(os.environ.get("RQB_QUEUE_SUBMISSIONS", "50"))
    kills_wanted = int(os.environ.get("RQB_QUEUE_KILLS", "10"))
    bench = make_bench()
    build = write_build(tmp_path / "build", bench)
    store = tmp_path / "store"
    ids = enqueue_at_once(tmp_path, store, bench, n)
    shutil.copytree(store, tmp_path / "ref-store")

    import litellm  # noqa: F401  (imported once here, inherited by every forked child)

    import rqbench.cli  # noqa: F401
    import rqbench.evaluate.judge.run  # noqa: F401
    import rqbench.space.worker  # noqa: F401

    t0 = time.monotonic()
    with ScriptedServer(judge_reply) as ref_srv:
        run_to_end(worker_argv(tmp_path / "ref-store", build, ref_srv.api_base), env_for(tmp_path / "ref-home"))
        ref_requests = len(ref_srv.requests)
    uninterrupted_s = time.monotonic() - t0

    rng = random.Random(20261204)
    home = tmp_path / "home"
    kills = 0
    t0 = time.monotonic()
    with ScriptedServer(judge_reply) as srv:
        argv, env = worker_argv(store, build, srv.api_base), env_for(home)
        while kills < kills_wanted:
            before = len(srv.requests)
            proc = start(argv, env)
            # a request taken twice already must finish before the next kill: a third would give it up
            risky = [
                rid for rid, r in stored_requests(store).items() if r["status"] == "running" and r["attempts"] >= 2
            ]
            while risky and proc.is_alive() and stored_requests(store)[risky[0]]["status"] == "running":
                time.sleep(0.01)
            if kills % 2 == 0:  # by the clock: often while the worker starts or between requests
                deadline = time.monotonic() + rng.uniform(0.05, 1.0)
                while time.monotonic() < deadline and proc.is_alive():
                    time.sleep(0.01)
            else:  # by the judge traffic: mid-request
                deadline = time.monotonic() + 60
                target = len(srv.requests) + rng.randint(1, 15)  # a request makes about 22
                while len(srv.requests) < target and proc.is_alive() and time.monotonic() < deadline:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.05))
            if not proc.is_alive():
                proc.join()
                raise AssertionError(
                    f"the worker finished the queue after {kills} kills; lower the kill points "
                    f"(exit {proc.exitcode}, {len(srv.requests) - before} requests this run)"
                )
            os.kill(proc.pid, signal.SIGKILL)
            proc.join()
            kills += 1
            assert_whole(store)
        run_to_end(argv, env)
        sent = [request_key(r) for r in srv.requests]
    killed_s = time.monotonic() - t0

    # every submission judged exactly once, or failed with a named reason
    final = stored_requests(store)
    assert sorted(final) == sorted(ids)
    failed = {rid: r["reason"] for rid, r in final.items() if r["status"] == "failed"}
    assert all(reason.strip() for reason in failed.values()), failed
    finished = [r for r in final.values() if r["status"] == "finished"]
    assert len(finished) + len(failed) == n and not failed, failed  # the scripted judge never fails
    published = [p for r in finished for p in r["results_files"]]
    assert len(published) == len(set(published)) == len(finished)  # one file per request and setting
    on_disk = sorted(
        f.relative_to(store).as_posix() for f in (store / "results").rglob("*.json") if not f.name.startswith(".")
    )
    assert on_disk == sorted(published), "no results file duplicated or left over"
    assert_whole(store)
    leftovers = [f for f in store.rglob(".*.tmp")]  # a write cut by a kill leaves only its hidden temporary file
    taken = Counter(r["attempts"] for r in final.values())

    # the call log never shows a finished call twice; requests in flight at a kill were sent again
    db = sqlite3.connect(home / "calls.db")
    paid = Counter(k for (k,) in db.execute("SELECT key FROM calls WHERE cache='miss' AND status='ok'"))
    assert paid and max(paid.values()) == 1
    repeats = len(sent) - len(set(sent))
    assert repeats <= kills * 8  # at most max_concurrency in flight per kill

    # the leaderboard equals the uninterrupted worker's
    import pandas as pd

    # every column but the judging cost: a worker killed mid-request loses its run's tally of requests sent (the
    # resumed run counts only its own misses), so that cell says what the last run paid, not the whole history
    cost = "Judging cost"
    pd.testing.assert_frame_equal(
        leaderboard(store).drop(columns=[cost]), leaderboard(tmp_path / "ref-store").drop(columns=[cost])
    )

    # and one more run has nothing to do
    with ScriptedServer(judge_reply) as idle:
        run_to_end(worker_argv(store, build, idle.api_base), env_for(home))
        assert len(idle.requests) == 0
    with capsys.disabled():
        print(
            f"\nqueue kill loop: {n} submissions from {ACCOUNTS} accounts, {kills} SIGKILLs of `rqbench worker "
            f"--once`: {len(finished)} finished, {len(failed)} failed; takings per request {dict(sorted(taken.items()))}; "
            f"{len(sent)} judge requests vs {ref_requests} uninterrupted, {repeats} repeated (in flight at a "
            f"kill); finished calls paid twice: 0; leaderboard identical; {len(leftovers)} hidden temporary "
            f"file(s) left by cut writes; {killed_s:.0f} s with kills vs {uninterrupted_s:.0f} s uninterrupted"
        )
