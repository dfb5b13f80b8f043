"""The Space's stores: one test body, run against the local folder and the Hub backend.

The Hub backend is the real one (``HubRepo``: repositories made through ``HfApi``, then read and written
with git). A fake ``HfApi`` stands in for the Hub's API: its ``endpoint`` is a local folder, and
``create_repo`` makes a bare git repository there with the Hub's first commit, so every read and write
goes through real git. Concurrent writers and half-way pushes are in ``tests/test_git_stores.py``.
"""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest

from rqbench.records import ResultsFile, SubmissionMetadata
from rqbench.space.records import HumanJudgment, Skip, SubmissionRequest
from rqbench.space.stores import LocalRepo, SpaceStores, StoreError
from rqbench.testing.synthetic import make_results


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


class FakeHfApi:
    """The slice of ``huggingface_hub.HfApi`` the stores call (``create_repo``, ``endpoint``, ``token``); each
    dataset repository is a bare git repository under ``root`` holding the Hub's initial commit."""

    def __init__(self, root: Path):
        self.root = root
        self.endpoint = root.as_uri()
        self.token = "hf_fake_token_never_sent_over_file_urls"
        self.private: dict[str, bool] = {}
        self.calls: list[tuple[str, str]] = []

    def create_repo(self, repo_id, *, repo_type=None, private=None, exist_ok=False, token=None):
        assert repo_type == "dataset"
        self.calls.append(("create_repo", repo_id))
        bare = self.root / "datasets" / repo_id
        if bare.exists():
            if not exist_ok:
                raise RuntimeError("exists")
            return
        self.private[repo_id] = bool(private)
        bare.mkdir(parents=True)
        git("init", "-q", "--bare", "-b", "main", str(bare))
        seed = self.root / "seed" / repo_id
        seed.mkdir(parents=True)
        git("init", "-q", "-b", "main", cwd=seed)
        (seed / ".gitattributes").write_text("*.parquet filter=lfs diff=lfs merge=lfs -text\n")
        git("add", "-A", cwd=seed)
        git("-c", "user.name=hub", "-c", "user.email=hub@localhost", "commit", "-q", "-m", "initial commit", cwd=seed)
        git("push", "-q", str(bare), "main", cwd=seed)

    def files(self, repo_id: str) -> list[str]:
        """What the remote repository holds now (read with git, not through the store under test)."""
        out = git("ls-tree", "-r", "--name-only", "main", cwd=self.root / "datasets" / repo_id)
        return sorted(f for f in out.splitlines() if f != ".gitattributes")


@pytest.fixture(params=["local", "hub"])
def stores(request, tmp_path) -> SpaceStores:
    if request.param == "local":
        return SpaceStores.local(tmp_path / "store")
    api = FakeHfApi(tmp_path / "hub")
    s = SpaceStores.hub(api, "org", clone_root=tmp_path / "clones")
    s.api = api  # type: ignore[attr-defined]
    return s


def _request(rid: str, status: str = "pending") -> SubmissionRequest:
    now = datetime(2026, 5, 1, tzinfo=timezone.utc)
    return SubmissionRequest(
        request_id=rid,
        user="alice",
        submission_hash="b2:" + rid,
        metadata=SubmissionMetadata(model="m/" + rid),
        submission_file=f"submissions/alice/{rid}.jsonl",
        dataset_repo="local/x",
        dataset_revision="v1",
        instances=3,
        status=status,
        submitted_at=now,
        updated_at=now,
    )


def _judgment(annotator: str, rq_id: str, n: int) -> HumanJudgment:
    return HumanJudgment(
        judgment_id=f"j{n}",
        annotator=annotator,
        rq_id=rq_id,
        subfield="cs.CL",
        model="m",
        submission_hash="b2:1",
        left="gt",
        choice="right",
        winner="model",
        seconds=4.5,
        dataset_repo="local/x",
        dataset_revision="v1",
        created_at=datetime(2026, 5, 1, 12, n, tzinfo=timezone.utc),
    )


def test_requests_round_trip_and_status_update(stores):
    stores.requests.put(_request("aaa"))
    stores.requests.put(_request("bbb"))
    req = stores.requests.get("aaa")
    assert req is not None and req.status == "pending"
    stores.requests.put(req.model_copy(update={"status": "failed", "reason": "judge x: timeout"}))
    got = {r.request_id: r for r in stores.requests.all()}
    assert got["aaa"].status == "failed" and got["aaa"].reason == "judge x: timeout"
    assert got["bbb"].status == "pending"
    assert stores.requests.get("missing") is None


def test_a_look_at_a_store_reads_a_file_again_only_when_it_changed(stores, monkeypatch):
    for rid in ("aaa", "bbb", "ccc"):
        stores.requests.put(_request(rid))
    reads, broken = [], set()
    real = stores.requests.repo.read

    def read(path):
        reads.append(path)
        if path in broken:
            raise OSError(5, "Input/output error")
        return real(path)

    monkeypatch.setattr(stores.requests.repo, "read", read)
    assert [r.request_id for r in stores.requests.all()] == ["aaa", "bbb", "ccc"] and len(reads) == 3
    assert len(stores.requests.all()) == 3 and len(reads) == 3  # nothing changed: nothing read
    stores.requests.put(_request("bbb").model_copy(update={"status": "failed", "reason": "judge x: timeout"}))
    got = {r.request_id: r for r in stores.requests.all()}
    assert reads[3:] == ["requests/bbb.json"] and got["bbb"].status == "failed"
    # a read the disk refused is named, and tried again on the next look
    stores.requests.put(_request("ddd"))
    broken.add("requests/ddd.json")
    good, bad = stores.requests.load()
    assert len(good) == 3 and [u.path for u in bad] == ["requests/ddd.json"] and "cannot be read" in bad[0].problem
    broken.clear()
    good, bad = stores.requests.load()
    assert len(good) == 4 and bad == [] and reads[-2:] == ["requests/ddd.json", "requests/ddd.json"]
    # a damaged file stays named, without a read, until it changes; a file removed is gone from the next look
    stores.requests.repo.write("requests/eee.json", b'{"request_id": ', "damaged")
    assert [u.path for u in stores.requests.load()[1]] == ["requests/eee.json"]
    n = len(reads)
    assert [u.path for u in stores.requests.load()[1]] == ["requests/eee.json"] and len(reads) == n
    stores.requests.repo.delete(["requests/eee.json", "requests/aaa.json"], "remove")
    good, bad = stores.requests.load()
    assert sorted(r.request_id for r in good) == ["bbb", "ccc", "ddd"] and bad == []


def test_results_round_trip(stores):
    a = make_results("model-a", n_instances=3)
    b = make_results("model-b", judge="judge-b", setting="comparative", n_instances=3)
    pa, pb = stores.results.put(a), stores.results.put(b)
    assert pa != pb
    loaded, problems = stores.results.load()
    assert problems == []
    assert sorted(r.submission.model for r in loaded) == ["model-a", "model-b"]
    assert next(r for r in loaded if r.submission.model == "model-a") == a
    # the same submission and judge overwrites, never duplicates
    stores.results.put(a)
    assert len(stores.results.load()[0]) == 2


def test_submissions_store_bytes_exactly(stores):
    path = stores.submissions.put("b2:abc", "alice", b'{"kind": "metadata"}\n')
    assert stores.submissions.get(path) == b'{"kind": "metadata"}\n'


def test_annotations_append_export_delete(stores):
    stores.annotations.append(_judgment("h-alice", "2501.10000_rq0", 1))
    stores.annotations.append(_judgment("h-alice", "2501.10000_rq1", 2))
    stores.annotations.append(_judgment("h-bob", "2501.10000_rq0", 3))
    stores.annotations.skip(
        Skip(
            annotator="h-alice", rq_id="2501.10001_rq0", model="m", created_at=datetime(2026, 5, 1, tzinfo=timezone.utc)
        )
    )
    assert len(stores.annotations.judgments()) == 3
    assert [j.rq_id for j in stores.annotations.judgments("h-alice")] == ["2501.10000_rq0", "2501.10000_rq1"]
    exported = stores.annotations.export("h-alice").decode().splitlines()
    assert len(exported) == 2 and all(HumanJudgment.model_validate_json(line) for line in exported)
    assert stores.annotations.delete_annotator("h-alice") == 2
    assert [j.annotator for j in stores.annotations.judgments()] == ["h-bob"]
    assert stores.annotations.skips("h-alice") == []


def test_hub_backend_keeps_raw_uploads_private(tmp_path):
    api = FakeHfApi(tmp_path / "hub")
    s = SpaceStores.hub(api, "org", clone_root=tmp_path / "clones", fetch_after_s=0)
    assert api.private == {
        "org/rq-bench-requests": True,
        "org/rq-bench-results": False,
        "org/rq-bench-submissions": True,
        "org/rq-bench-annotations": True,
    }
    s.submissions.put("b2:abc", "alice", b"x")
    s.results.put(make_results("m", n_instances=1))
    assert api.files("org/rq-bench-submissions") == ["submissions/alice/abc.jsonl"]
    assert api.files("org/rq-bench-results") and all(
        p.startswith("results/") for p in api.files("org/rq-bench-results")
    )
    assert not any("submissions" in p for p in api.files("org/rq-bench-results"))
    assert s.results.repo.name == "hf://datasets/org/rq-bench-results"
    assert "hf_fake" not in s.results.repo.remote  # the token travels in a header, never in the URL


def test_broken_file_is_reported_with_path_and_field(tmp_path):
    s = SpaceStores.local(tmp_path)
    good = make_results("m", n_instances=1)
    s.results.put(good)
    bad = good.model_dump(mode="json")
    bad["judge"]["setting"] = "sideways"
    (tmp_path / "results" / "broken.json").write_text(__import__("json").dumps(bad))
    (tmp_path / "results" / "report.json").write_text('{"kind": "something.else"}')
    loaded, problems = s.results.load()
    assert len(loaded) == 1
    assert len(problems) == 1 and "broken.json" in problems[0] and "judge.setting" in problems[0]
    (tmp_path / "requests").mkdir()
    (tmp_path / "requests" / "x.json").write_text('{"kind": "rqbench.request"}')
    assert s.requests.all() == []  # one damaged request never takes the queue down with it
    (bad,) = s.requests.load()[1]
    assert bad.path == "requests/x.json" and "SubmissionRequest" in str(bad) and str(tmp_path) in str(bad)
    with pytest.raises(StoreError, match=r"requests/x.json.*SubmissionRequest"):
        s.requests.get("x")


def test_store_paths_cannot_escape(tmp_path):
    repo = LocalRepo(tmp_path / "s")
    for bad in ("../x", "/etc/passwd", "a//b", "a/./b", ""):
        with pytest.raises(ValueError, match="plain relative path"):
            repo.write(bad, b"x", "m")


def test_results_folder_of_evaluate_runs_is_read_in_place(tmp_path):
    """``rqbench space --results DIR`` reads results files wherever evaluate put them."""
    folder = tmp_path / "results-out" / "run1"
    folder.mkdir(parents=True)
    r = make_results("m", n_instances=2)
    (folder / "m__judge-a.json").write_text(r.model_dump_json())
    s = SpaceStores.local(tmp_path / "store", results_root=tmp_path / "results-out")
    loaded, problems = s.results.load()
    assert loaded == [r] and problems == []


def test_results_never_carry_the_submitters_contact(stores, tmp_path):
    """Results files are public: the contact is dropped when one is made, stored, or read from an old file."""
    r = make_results("model-c", n_instances=2)
    made = ResultsFile.model_validate(
        {**r.model_dump(), "submission": {**r.submission.model_dump(), "contact": "c@x.org"}}
    )
    assert made.submission.contact == ""  # a ResultsFile made with one drops it
    copied = r.model_copy(update={"submission": r.submission.model_copy(update={"contact": "c@x.org"})})
    assert "c@x.org" not in copied.model_dump_json() and "c@x.org" not in json.dumps(copied.model_dump(mode="json"))
    stores.results.put(copied)  # a copy skips validation, but is never written with it
    assert b"c@x.org" not in stores.results.repo.read(stores.results.path_for(r))
    raw = r.model_dump(mode="json")
    raw["submission"]["contact"] = "c@example.org"  # a file written before the rule
    path = stores.results.path_for(r)
    stores.results.repo.write(path, json.dumps(raw).encode(), "an old results file")
    (loaded,), problems = stores.results.load()
    assert problems == [] and loaded.submission.contact == ""
    assert "c@example.org" not in loaded.model_dump_json()
    stores.results.put(ResultsFile.model_validate(raw))  # rewritten through the store: gone from the file too
    assert b"c@example.org" not in stores.results.repo.read(path)


def test_a_request_keeps_review_state_and_old_files_still_load(stores):
    req = _request("rev").model_copy(
        update={"status": "review", "flags": ["line 2: claims a score"], "flagged_count": 3}
    )
    stores.requests.put(req)
    got = stores.requests.get("rev")
    assert got.status == "review" and got.flags == ["line 2: claims a score"] and got.held_for_review
    old = _request("old").model_dump(mode="json")
    for key in ("flags", "flagged_count", "reviewed_by", "reviewed_at", "review_note"):
        old.pop(key)
    stores.requests.repo.write("requests/old.json", json.dumps(old).encode(), "a request from before review")
    assert stores.requests.get("old").flagged_count == 0 and not stores.requests.get("old").held_for_review
