"""Errors a team meets on the way to a leaderboard row, each named without a traceback (issue 23, item 4).

An unknown ``--revision`` lists the tags there are; a Hub dataset id without a network says the Hub
cannot be reached and how to use a local copy; ``build --arxiv-query`` without a network fails at
once, naming the host and the class of error, where it used to retry for 45 s.
"""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from fake_build import write_build

from rqbench.builder.http import NetworkUnavailable, PoliteClient, unreachable_reason
from rqbench.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _no_traceback(got) -> None:
    assert "Traceback" not in got.out + got.err, got


@pytest.fixture
def published(tmp_path):
    """A local dataset repository with one release, v0.1.0, as ``rqbench publish --to DIR`` leaves it."""
    from rqbench.dataset_card.card_base import CardSettings
    from rqbench.dataset_card.publish import publish
    from rqbench.dataset_card.repo import LocalGitTarget

    repo = tmp_path / "repo"
    publish(write_build(tmp_path / "b1"), "0.1.0", LocalGitTarget(repo), CardSettings(target="local", repo=str(repo)))
    return repo


@pytest.mark.parametrize("job", ["validate", "generate", "judge", "submit"])
def test_an_unknown_revision_lists_the_tags_there_are(published, tmp_path, capsys, job):
    args = {
        "validate": ["validate", str(tmp_path)],
        "generate": ["generate", "--out", str(tmp_path / "g")],
        "judge": ["judge", str(tmp_path)],
        "submit": ["submit", str(tmp_path)],
    }[job]
    assert main([*args, "--dataset", str(published), "--revision", "v9.9.9"]) == 2
    got = capsys.readouterr()
    _no_traceback(got)
    assert f"rqbench {job}: {published}: revision 'v9.9.9' not found (tags: v0.1.0); --revision takes a tag" in got.err


def test_a_hub_id_with_the_hub_offline_says_so_and_how_to_use_a_local_copy(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert main(["validate", str(tmp_path), "--dataset", "org/rq-bench"]) == 2
    got = capsys.readouterr()
    _no_traceback(got)
    assert (
        "rqbench validate: dataset org/rq-bench: the Hugging Face Hub cannot be reached (HF_HUB_OFFLINE is set), "
        "and no copy of it is cached on this machine; use a local copy instead: --dataset DIR"
    ) in got.err
    assert "rqbench publish --to DIR" in got.err and "rqbench setup-sample" in got.err


def test_a_hub_id_without_a_network_names_the_connection_error(tmp_path, capsys, monkeypatch):
    """What snapshot_download raises when the Hub's name does not resolve (as measured on this machine)."""
    import huggingface_hub
    import huggingface_hub.constants
    from huggingface_hub.errors import LocalEntryNotFoundError

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)

    def offline(**kw):
        raise LocalEntryNotFoundError(
            "Got: ConnectError: [Errno -2] Name or service not known\nAn error happened "
            "while trying to locate the files on the Hub, and we cannot find the "
            "appropriate snapshot folder for the specified revision on the local disk."
        )

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    assert main(["generate", "--out", str(tmp_path / "g"), "--dataset", "org/rq-bench", "--revision", "v1.0.0"]) == 2
    got = capsys.readouterr()
    _no_traceback(got)
    assert (
        "dataset org/rq-bench: the Hugging Face Hub cannot be reached (ConnectError: [Errno -2] Name or service "
        "not known), and no copy of it at revision 'v1.0.0' is cached on this machine"
    ) in got.err


def test_an_unknown_hub_revision_lists_the_hubs_tags(monkeypatch):
    import huggingface_hub
    from huggingface_hub.errors import RevisionNotFoundError
    from huggingface_hub.hf_api import GitRefInfo, GitRefs

    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark

    def missing(**kw):
        req = httpx.Request("GET", "https://huggingface.co/api/datasets/org/rq-bench/revision/v9")
        raise RevisionNotFoundError("404 Revision Not Found", response=httpx.Response(404, request=req))

    def refs(self, repo_id, **kw):
        tag = GitRefInfo(name="v0.1.0", ref="refs/tags/v0.1.0", target_commit="a" * 40)
        return GitRefs(branches=[], converts=[], tags=[tag])

    monkeypatch.setattr(huggingface_hub, "snapshot_download", missing)
    monkeypatch.setattr(huggingface_hub.HfApi, "list_repo_refs", refs)
    with pytest.raises(DatasetError, match=r"revision 'v9' not found on the Hub \(tags: v0.1.0\); --revision takes"):
        load_benchmark("org/rq-bench", "v9")


def test_a_build_folder_takes_only_its_own_revision(tmp_path):
    """A request queued against a build folder records ``build:<id>``; the worker reads it back unless rebuilt."""
    import evaluate_factory as F

    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark

    F.write_build(F.benchmark(2), tmp_path / "build")
    bench = load_benchmark(tmp_path / "build")
    assert bench.revision.startswith("build:")
    assert load_benchmark(tmp_path / "build", bench.revision).rq_ids == bench.rq_ids
    with pytest.raises(DatasetError, match=r"now holds build:\w+, not build:other: the build changed since"):
        load_benchmark(tmp_path / "build", "build:other")
    with pytest.raises(DatasetError, match=r"is a build folder; it has no revisions \(drop --revision\)"):
        load_benchmark(tmp_path / "build", "v1.0.0")


# -- the arXiv API without a network --------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["refused", "no-dns"])
def test_build_from_arxiv_offline_fails_at_once_naming_host_and_cause(tmp_path, capsys, monkeypatch, where):
    if where == "refused":
        host, url, reason = "127.0.0.1", f"http://127.0.0.1:{_free_port()}/api", "the connection was refused"
    else:  # .invalid never resolves (RFC 2606), with a network or without
        host, url, reason = (
            "rqbench-no-such-host.invalid",
            "http://rqbench-no-such-host.invalid/api",
            "its name could not be resolved (DNS)",
        )
    monkeypatch.setenv("RQB_ARXIV_API_URL", url)
    t0 = time.monotonic()
    rc = main(
        [
            "build",
            "--arxiv-query",
            "cat:cs.CL",
            "--from",
            "2025-01-01",
            "--to",
            "2025-01-02",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
        ]
    )
    took = time.monotonic() - t0
    got = capsys.readouterr()
    assert rc == 2
    _no_traceback(got)
    assert f"cannot reach {host}: {reason}" in got.err and "ConnectError" in got.err
    assert "the network looks absent or the host is down, so the request was not retried" in got.err
    assert "--papers DIR" in got.err
    assert took < 15, took  # it used to retry for 45 s; the rest is the job's own start on a busy machine


class _Refusing(httpx.BaseTransport):
    """Refuses connections, after answering ``answers`` requests first."""

    def __init__(self, answers: int = 0):
        self.answers, self.calls = answers, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        if self.calls <= self.answers:
            return httpx.Response(200, json={"ok": True})
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as exc:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request) from exc


def test_only_a_first_request_that_finds_no_way_there_fails_fast():
    sleeps: list[float] = []
    first = PoliteClient(base_url="http://api.example", max_retries=4, sleep=sleeps.append, transport=_Refusing())
    with pytest.raises(NetworkUnavailable, match="cannot reach api.example: the connection was refused") as err:
        first.get_json("q")
    assert err.value.host == "api.example" and sleeps == [] and first.requests_sent == 1
    # once the host has answered, a refused connection may be a restart: retried with backoff as before
    later = PoliteClient(
        base_url="http://api.example", max_retries=2, backoff_s=1.0, sleep=sleeps.append, transport=_Refusing(answers=1)
    )
    assert later.get_json("a") == {"ok": True}
    with pytest.raises(Exception) as err:
        later.get_json("b")
    assert not isinstance(err.value, NetworkUnavailable) and "after 3 tries" in str(err.value)
    assert sleeps == [1.0, 2.0]


def test_a_timeout_or_a_dropped_connection_is_not_taken_for_an_absent_network():
    req = httpx.Request("GET", "http://api.example/q")
    assert unreachable_reason(httpx.ReadTimeout("timed out", request=req)) is None
    assert unreachable_reason(httpx.RemoteProtocolError("peer closed connection", request=req)) is None
    try:
        raise socket.gaierror(-2, "Name or service not known")
    except socket.gaierror as exc:
        dns = httpx.ConnectError("[Errno -2] Name or service not known", request=req)
        dns.__cause__ = exc
    assert unreachable_reason(dns) == "its name could not be resolved (DNS)"
