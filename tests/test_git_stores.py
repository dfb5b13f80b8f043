"""Hub-backed stores under concurrent writers and broken pushes, against a local bare git repository standing
in for the Hub (real git end to end; ``FakeHfApi`` only makes the repositories).

Two Space replicas, or a Space and its worker, each hold their own clone: a push refused because the other
pushed first is retried on top of theirs, a push cut off after the remote took it is not written twice, a
push the remote refuses half-way (objects sent, ref not moved) is sent again, and a remote that keeps
refusing ends in a ``StoreWriteError`` that names the file. No writer loses another's file.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

import pytest
from scripted_replies import reply as judge_reply
from space_queue import make_bench, queue, worker_for
from test_stores import FakeHfApi, git

from rqbench.llm import LLM
from rqbench.space.stores import GitRepo, SpaceStores, StoreWriteError
from rqbench.testing.scripted_server import ScriptedServer

REPO = "org/rq-bench-requests"


@pytest.fixture
def hub(tmp_path) -> FakeHfApi:
    api = FakeHfApi(tmp_path / "hub")
    api.create_repo(REPO, repo_type="dataset", private=True)
    return api


def clone(hub: FakeHfApi, tmp_path: Path, who: str, **kw) -> GitRepo:
    return GitRepo(
        f"{hub.endpoint}/datasets/{REPO}", tmp_path / who / REPO, name=f"{who}:{REPO}", fetch_after_s=0, **kw
    )


def commits(hub: FakeHfApi) -> list[str]:
    return git("log", "--format=%s", "main", cwd=hub.root / "datasets" / REPO).splitlines()


def hook(hub: FakeHfApi, name: str, body: str) -> Path:
    path = hub.root / "datasets" / REPO / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_two_writers_racing_lose_none_of_each_others_files(hub, tmp_path):
    a, b = clone(hub, tmp_path, "replica-a"), clone(hub, tmp_path, "replica-b")
    refused = []
    for repo in (a, b):
        real = repo._git

        def counting(*args, _real=real, **kw):
            done = _real(*args, **kw)
            if args[0] == "push" and done.returncode != 0:
                refused.append(args)
            return done

        repo._git = counting  # type: ignore[method-assign]
    barrier = threading.Barrier(2)

    def write_many(repo: GitRepo, who: str) -> None:
        barrier.wait()
        for i in range(15):
            repo.write(f"requests/{who}-{i}.json", f'{{"n": {i}}}'.encode(), f"{who} {i}")

    threads = [threading.Thread(target=write_many, args=(r, w)) for r, w in ((a, "a"), (b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = sorted(f"requests/{w}-{i}.json" for w in "ab" for i in range(15))
    assert hub.files(REPO) == expected
    assert a.list("requests/") == b.list("requests/") == expected
    assert a.read("requests/b-14.json") == b'{"n": 14}'
    assert len(commits(hub)) == 31  # the Hub's first commit and one per write: nothing written twice
    assert refused, "the writers must actually have raced (a push refused and retried)"
    print(f"\ntwo writers, 30 writes: {len(refused)} pushes refused and retried on top of the other's; none lost")


def test_a_rewrite_of_one_file_by_two_writers_keeps_the_last_and_both_histories(hub, tmp_path):
    a, b = clone(hub, tmp_path, "a"), clone(hub, tmp_path, "b")
    a.write("requests/x.json", b"1", "a: x=1")
    b.write("requests/y.json", b"2", "b: y=2")  # b's clone is behind: refused, then reapplied on top of a's
    b.write("requests/x.json", b"3", "b: x=3")
    assert a.read("requests/x.json") == b"3" and a.read("requests/y.json") == b"2"
    assert b.delete(["requests/x.json", "requests/missing.json"], "b: drop x") == 1
    assert a.list() == ["requests/y.json"]


def test_a_push_cut_off_after_the_remote_took_it_is_not_written_twice(hub, tmp_path):
    a = clone(hub, tmp_path, "a")
    # the remote moves its ref, then its receive-pack dies before reporting: the client sees a failed push
    hook(
        hub,
        "reference-transaction",
        f'[ "$1" = committed ] && [ ! -e "{tmp_path}/cut-once" ] && '
        f'touch "{tmp_path}/cut-once" && kill -9 $PPID\nexit 0\n',
    )
    a.write("requests/x.json", b"whole", "a: x")
    assert (tmp_path / "cut-once").exists(), "the push must have been cut off"
    assert hub.files(REPO) == ["requests/x.json"]
    assert commits(hub).count("a: x") == 1


def test_a_push_refused_half_way_is_sent_again(hub, tmp_path):
    a = clone(hub, tmp_path, "a")
    # the objects arrive, the ref is not moved (pre-receive refuses twice), then the remote takes it
    hook(
        hub,
        "pre-receive",
        f'n=$(cat "{tmp_path}/refusals" 2>/dev/null || echo 0)\n'
        f'[ "$n" -ge 2 ] && exit 0\necho $((n + 1)) > "{tmp_path}/refusals"\n'
        'echo "refused half-way" >&2\nexit 1\n',
    )
    a.write("requests/x.json", b"whole", "a: x")
    assert (tmp_path / "refusals").read_text().strip() == "2"
    assert hub.files(REPO) == ["requests/x.json"] and commits(hub).count("a: x") == 1


def test_a_remote_that_keeps_refusing_names_the_file_and_keeps_what_it_had(hub, tmp_path):
    a = clone(hub, tmp_path, "a", max_attempts=3, sleep=lambda s: None)
    a.write("requests/kept.json", b"kept", "a: kept")
    hook(hub, "pre-receive", 'echo "the hub is read-only" >&2\nexit 1\n')
    with pytest.raises(StoreWriteError, match=r"requests/new\.json could not be pushed after 3 attempts.*read-only"):
        a.write("requests/new.json", b"new", "a: new")
    assert hub.files(REPO) == ["requests/kept.json"] and a.list() == ["requests/kept.json"]
    assert a.read("requests/kept.json") == b"kept"


def test_a_space_and_its_worker_on_the_hub_stores_keep_each_others_writes(tmp_path):
    """Two replicas take submissions while a worker on a third clone judges them: every request and every
    results file is in the remote at the end, and a fresh clone sees the same queue."""
    api = FakeHfApi(tmp_path / "hub")
    space_a, space_b, worker_side = (
        SpaceStores.hub(api, "org", clone_root=tmp_path / who, fetch_after_s=0)
        for who in ("space-a", "space-b", "worker")
    )
    bench = make_bench()
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
    (r1,) = queue(tmp_path / "a", space_a, bench, [("alice", "model-one")])
    with ScriptedServer(judge_reply) as srv:
        llm = LLM()
        llm.register(srv.model_config("scripted/judge-a"))
        w = worker_for(worker_side, tmp_path, llm, ["scripted/judge-a"], bench, settings=("standalone",))
        results = []

        def judge_all() -> None:
            while (rep := w.run_once()) is not None:
                results.append(rep)

        t = threading.Thread(target=judge_all)
        t.start()
        (r2,) = queue(tmp_path / "b", space_b, bench, [("bob", "model-two")])  # while the worker writes
        t.join()
        w.new_pass()
        judge_all()
    fresh = SpaceStores.hub(api, "org", clone_root=tmp_path / "fresh")
    done = {r.request_id: r for r in fresh.requests.all()}
    assert set(done) == {r1.request_id, r2.request_id}
    assert {r.status for r in done.values()} == {"finished"}
    published = sorted(p for r in done.values() for p in r.results_files)
    assert api.files("org/rq-bench-results") == published and len(published) == 2
    assert len(fresh.results.load()[0]) == 2


def test_git_is_what_the_hub_backend_runs():
    assert subprocess.run(["git", "--version"], capture_output=True).returncode == 0
