"""The public side under damaged files and full disks: the Space keeps serving and names the bad file, the
worker fails the request by name and keeps the queue, and nothing already written is lost.

Full disks are a real tmpfs of 4 MiB where the machine lets the test mount one (``small_disk``), else the
same fault injected (ENOSPC from the stores' writes, SQLITE_FULL from the call log).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_replies import reply as judge_reply
from small_disk import small_disk  # noqa: F401  (a fixture)
from space_queue import make_bench, queue, target_of, worker_for, write_build, write_submission

from rqbench.llm import LLM
from rqbench.llm.store import CallStore
from rqbench.space.stores import SpaceStores
from rqbench.space.ui import SpaceConfig, build_app
from rqbench.testing.scripted_server import ScriptedServer
from rqbench.testing.synthetic import make_results

JUDGE = "scripted/judge-a"


@pytest.fixture
def bench():
    return make_bench()


def damage_requests(stores: SpaceStores, req_id: str) -> dict[str, bytes]:
    """Three ways a request file goes bad beside a good one: cut short, emptied to {}, a field hand-edited."""
    good = stores.requests.repo.read(stores.requests.path_for(req_id))
    edited = json.loads(good)
    edited["status"] = "judged-by-hand"
    bad = {
        "requests/cut.json": good[: len(good) // 2],
        "requests/emptied.json": b"{}",
        "requests/edited.json": json.dumps({**edited, "request_id": "edited"}).encode(),
    }
    for path, data in bad.items():
        stores.requests.repo.write(path, data, "damage")
    return bad


def page_fn(demo, name: str):
    return next(f for f in demo.fns.values() if f.name == name)


def load_page(demo) -> dict[str, object]:
    """Run the page's load event as Gradio would for a new visitor; the About tab's list of unreadable files."""
    load = page_fn(demo, "page_load")
    out = load.fn(*[b.value for b in load.inputs])
    about = next(o for o, b in zip(out, load.outputs) if getattr(b, "elem_id", None) == "about-unreadable")
    return {"about": about, "queue": page_fn(demo, "queue_shown").fn()}  # the queue, as the Submit tab opens


# --------------------------------------------------------------------------
# a damaged request or results file
# --------------------------------------------------------------------------


def test_a_damaged_request_file_is_named_and_the_page_and_submitting_go_on(tmp_path, bench):
    stores = SpaceStores.local(tmp_path / "store")
    (req,) = queue(tmp_path, stores, bench, [("alice", "model-one")])
    bad = damage_requests(stores, req.request_id)
    reqs, unreadable = stores.requests.load()
    assert [r.request_id for r in reqs] == [req.request_id]
    assert sorted(u.path for u in unreadable) == sorted(bad)
    assert any("edited.json" in str(u) and "field status" in str(u) for u in unreadable)

    demo = build_app(SpaceConfig(stores=stores, target=target_of(bench), n_boot=50))
    page = load_page(demo)
    about = page["about"]
    for path in bad:
        assert path in about.value, about.value  # each bad file named on the About tab, with why
    assert about.visible and "could not read (3)" in about.label
    assert list(page["queue"]["request"]) == [req.request_id]  # the readable queue is still listed
    submit = page_fn(demo, "do_submit")
    message, rows, _ = submit.fn(
        [str(write_submission(tmp_path / "two.jsonl", bench, "model-two"))], "bob", False, None
    )
    assert message.startswith("Queued"), message
    assert len(rows) == 2 and "model-two" in set(rows["model"])
    for path, data in bad.items():  # nothing was rewritten or dropped
        assert stores.requests.repo.read(path) == data


def test_the_worker_fails_a_damaged_request_by_name_and_judges_the_rest(tmp_path, bench, capsys, monkeypatch):
    from rqbench.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-for-loopback")
    from rqbench.evaluate.benchmark.source import load_benchmark

    loaded = load_benchmark(write_build(tmp_path / "build", bench))
    stores = SpaceStores.local(tmp_path / "store")
    r1, r2 = queue(tmp_path, stores, loaded, [("alice", "model-one"), ("bob", "model-two")])
    bad = damage_requests(stores, r1.request_id)
    store = ["--store", str(tmp_path / "store")]
    assert main(["worker", "--review", *store]) == 0
    out = capsys.readouterr().out
    assert all(f"unreadable request file: {tmp_path / 'store'}/{p}" in out for p in bad), out
    with ScriptedServer(judge_reply) as srv:
        spec = f"openai/scripted@api_base={srv.api_base},json_mode=json_object_schema,max_retries=0"
        rc = main(
            [
                "worker",
                "--once",
                *store,
                "--dataset",
                str(tmp_path / "build"),
                "--judge",
                spec,
                "--setting",
                "standalone",
            ]
        )
    assert rc == 1  # three requests failed (by name); the worker judged the other two and says so in its status
    out = capsys.readouterr().out
    for path in bad:
        assert f"request {Path(path).stem}: failed: the request file cannot be read" in out, out
    assert f"request {r1.request_id}: finished" in out and f"request {r2.request_id}: finished" in out
    assert "5 request(s) handled" in out
    assert {stores.requests.get(r.request_id).status for r in (r1, r2)} == {"finished"}
    for path, data in bad.items():
        assert stores.requests.repo.read(path) == data


def test_a_results_file_emptied_cut_or_edited_is_named_and_the_other_rows_stay(tmp_path):
    stores = SpaceStores.local(tmp_path / "store")
    kept = [stores.results.put(make_results(m, n_instances=2)) for m in ("model-a", "model-b")]
    spoiled = {
        "emptied": stores.results.put(make_results("model-c", n_instances=2)),
        "cut": stores.results.put(make_results("model-d", n_instances=2)),
        "edited": stores.results.put(make_results("model-e", n_instances=2)),
    }
    repo = stores.results.repo
    repo.write(spoiled["emptied"], b"{}", "emptied")
    repo.write(spoiled["cut"], repo.read(spoiled["cut"])[:300], "cut")
    edited = json.loads(repo.read(spoiled["edited"]))
    edited["judge"]["setting"] = "sideways"
    repo.write(spoiled["edited"], json.dumps(edited).encode(), "edited")
    repo.write("results/notes/report.json", b'{"kind": "something.else"}', "a report beside the results")
    repo.write("results/notes/summary.json", b"[1, 2]", "a summary beside the results")

    results, problems = stores.results.load()
    assert sorted(r.submission.model for r in results) == ["model-a", "model-b"]
    assert len(problems) == 3
    assert any(spoiled["emptied"] in p and "empty" in p for p in problems)
    assert any(spoiled["cut"] in p and "not JSON" in p for p in problems)
    assert any(spoiled["edited"] in p and "judge.setting" in p for p in problems)

    demo = build_app(SpaceConfig(stores=stores, n_boot=50))
    about = load_page(demo)["about"]
    assert about.visible and all(path in about.value for path in spoiled.values())
    from rqbench.space.ui import SpaceData

    data = SpaceData(SpaceConfig(stores=stores, n_boot=50)).refresh()
    assert {r.submission.model for r in data.results} == {"model-a", "model-b"} and data.rows
    assert all(repo.read(p) for p in kept)


# --------------------------------------------------------------------------
# a full disk
# --------------------------------------------------------------------------


def request_bytes(stores: SpaceStores) -> dict[str, bytes]:
    return {p: stores.requests.repo.read(p) for p in stores.requests.repo.list("requests/")}


def test_a_full_results_disk_fails_the_request_by_name_and_keeps_the_queue(tmp_path, bench, small_disk):
    stores = SpaceStores.local(tmp_path / "store", results_root=small_disk.root)
    r1, r2, r3 = queue(tmp_path, stores, bench, [("alice", "model-one"), ("bob", "model-two"), ("carol", "model-3")])
    with ScriptedServer(judge_reply) as srv:
        llm = LLM()
        llm.register(srv.model_config(JUDGE))
        w = worker_for(stores, tmp_path, llm, [JUDGE], bench)
        assert w.run_once().status == "finished"
        before = {p: stores.results.repo.read(p) for p in stores.results.paths()}
        assert len(before) == 2
        small_disk.fill()
        rep = w.run_once()
        assert rep.request_id == r2.request_id and rep.status == "failed", rep
        assert "results file results/model-two/" in rep.reason and "no space left on device" in rep.reason
        assert f"…/{small_disk.root.parent.name}/{small_disk.root.name}" in rep.reason  # named, not its host path
        assert str(small_disk.root) not in rep.reason
        assert stores.requests.get(r2.request_id).reason == rep.reason
        assert stores.requests.get(r3.request_id).status == "pending"  # the queue is kept
        small_disk.free()
        assert w.run_once().request_id == r3.request_id
    after = {p: stores.results.repo.read(p) for p in stores.results.paths()}
    assert {p: after[p] for p in before} == before, "nothing already written is lost"
    assert not any("model-two" in p for p in after), "a failed request publishes no half set of results"
    assert stores.requests.get(r3.request_id).status == "finished"
    print(f"\nresults store on a full {small_disk.kind}: {rep.reason}")


def test_a_full_request_store_leaves_every_request_as_it_was_and_names_the_store(tmp_path, bench, small_disk, capsys):
    stores = SpaceStores.local(small_disk.root, results_root=tmp_path / "results")
    r1, r2 = queue(tmp_path, stores, bench, [("alice", "model-one"), ("bob", "model-two")])
    before = request_bytes(stores)
    with ScriptedServer(judge_reply) as srv:
        llm = LLM()
        llm.register(srv.model_config(JUDGE))
        small_disk.fill()
        w = worker_for(stores, tmp_path, llm, [JUDGE], bench)
        reports = []
        while (rep := w.run_once()) is not None:
            reports.append(rep)
        assert [r.request_id for r in reports] == [r1.request_id, r2.request_id]
        for rep in reports:
            assert rep.status == "pending" and "could not record it (no space left on device)" in rep.reason
            assert f"…/{small_disk.root.parent.name}/{small_disk.root.name}" in rep.reason  # named, not its host path
        assert str(small_disk.root) not in rep.reason and "taken up again on the next pass" in rep.reason
        assert request_bytes(stores) == before, "a refused write leaves the old file whole"
        assert len(srv.requests) == 0, "nothing is judged that could not be marked running"

        demo = build_app(SpaceConfig(stores=stores, target=target_of(bench), n_boot=50))
        submit = page_fn(demo, "do_submit")
        message, rows, _ = submit.fn(
            [str(write_submission(tmp_path / "c.jsonl", bench, "model-three"))], "carol", False, None
        )
        assert "could not be processed" in message and "nothing was queued" in message
        assert sorted(rows["request"]) == sorted([r1.request_id, r2.request_id])

        small_disk.free()
        w.new_pass()
        assert [w.run_once().status, w.run_once().status, w.run_once()] == ["finished", "finished", None]
    print(f"\nrequest store on a full {small_disk.kind}: {reports[0].reason}")


def test_a_full_call_log_fails_the_request_by_name_and_keeps_what_was_logged(tmp_path, bench, small_disk):
    import sqlite3

    stores = SpaceStores.local(tmp_path / "store")
    r1, r2, r3 = queue(tmp_path, stores, bench, [("alice", "model-one"), ("bob", "model-two"), ("carol", "model-3")])
    log_path = small_disk.root / "calls.db"
    with ScriptedServer(judge_reply) as srv:
        store = CallStore(log_path)
        small_disk.watch(store)
        llm = LLM(store=store)
        llm.register(srv.model_config(JUDGE))
        w = worker_for(stores, tmp_path, llm, [JUDGE], bench)
        assert w.run_once().status == "finished"
        logged = sqlite3.connect(log_path).execute("SELECT key, text FROM responses ORDER BY key").fetchall()
        small_disk.fill()
        rep = w.run_once()
        assert rep.request_id == r2.request_id and rep.status == "failed", rep
        assert (
            rep.reason.startswith("CallLogError: the call log") and f"…/{log_path.parent.name}/calls.db" in rep.reason
        )
        assert "full" in rep.reason
        assert stores.requests.get(r3.request_id).status == "pending"
        small_disk.free()
        assert w.run_once().status == "finished"
    again = dict(sqlite3.connect(log_path).execute("SELECT key, text FROM responses").fetchall())
    assert all(again[k] == t for k, t in logged), "nothing already logged is lost"
    print(f"\ncall log on a full {small_disk.kind}: {rep.reason}")
