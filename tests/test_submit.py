"""The upload flow with the real validator: checks, every error with its line, limits, duplicates, the request."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from rqbench.space.stores import SpaceStores
from rqbench.space.submit import (
    BenchmarkTarget,
    SubmitFlow,
    SubmitPolicy,
    Submitter,
    account_created_at,
)
from rqbench.testing.synthetic import instance_ids

NOW = datetime(2026, 5, 10, 12, 0, tzinfo=timezone.utc)
RQ_IDS = tuple(r for r, _, _ in instance_ids(3))


def write_submission(path: Path, model: str = "org/model-x", *, rq_ids=RQ_IDS, tweak=None) -> Path:
    lines = [{"kind": "metadata", "model": model, "model_type": "open", "prompt_variant": "original"}]
    for k, rq_id in enumerate(rq_ids):
        qs = [f"What would {model} ask about instance {k}, angle {i}?" for i in range(5)]
        lines.append({"rq_id": rq_id, "research_questions": qs, "gaps": ["a gap"]})
    if tweak:
        tweak(lines)
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def stores(tmp_path):
    return SpaceStores.local(tmp_path / "store")


@pytest.fixture
def clock():
    now = {"t": NOW}
    return now


@pytest.fixture
def flow(stores, clock):
    return SubmitFlow(stores, BenchmarkTarget("local/rq-bench-sample", "v0.1.0", RQ_IDS), clock=lambda: clock["t"])


def test_valid_submission_becomes_a_pending_request(tmp_path, flow, stores):
    out = flow.submit(write_submission(tmp_path / "s.jsonl"), Submitter("alice"))
    assert out.accepted, out.errors
    req = out.request
    assert req.status == "pending" and req.instances == 3 and req.user == "alice"
    assert req.submission_hash.startswith("b2:") and req.dataset_revision == "v0.1.0"
    assert stores.requests.get(req.request_id) == req
    assert stores.submissions.get(req.submission_file) == (tmp_path / "s.jsonl").read_bytes()
    assert "Queued" in out.message() and req.request_id in out.message()


def test_every_error_is_listed_with_its_line(tmp_path, flow, stores):
    def break_it(lines):
        lines[1]["research_questions"][2] = "not a question"
        lines[2]["research_questions"] = lines[2]["research_questions"][:3]
        lines[3]["rq_id"] = "9999.99999_rq0"

    out = flow.submit(write_submission(tmp_path / "bad.jsonl", tweak=break_it), Submitter("alice"))
    assert not out.accepted
    text = "\n".join(out.errors)
    assert "line 2" in text and "line 3" in text and "line 4" in text
    assert len(out.errors) >= 4  # three bad lines plus the rq_id left uncovered
    assert str(tmp_path) not in text  # the upload's temporary path is not shown
    assert stores.requests.all() == []


def test_file_type_size_and_binary_checks(tmp_path, stores, clock):
    flow = SubmitFlow(stores, BenchmarkTarget("r", "v", RQ_IDS), SubmitPolicy(max_bytes=200), clock=lambda: clock["t"])
    csv = tmp_path / "s.csv"
    csv.write_text("a,b\n")
    assert "file type '.csv' not accepted" in flow.submit(csv, Submitter("a")).errors[0]
    big = write_submission(tmp_path / "big.jsonl")
    assert "over the limit of 200" in flow.submit(big, Submitter("a")).errors[0]
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b'{"kind": "metadata"}\x00\x01')
    assert "binary" in flow.submit(binary, Submitter("a")).errors[0]
    assert flow.submit(None, Submitter("a")).errors == ["choose a file to upload"]


def test_one_submission_per_user_per_day(tmp_path, flow, clock):
    assert flow.submit(write_submission(tmp_path / "a.jsonl", "m-1"), Submitter("alice")).accepted
    out = flow.submit(write_submission(tmp_path / "b.jsonl", "m-2"), Submitter("alice"))
    assert not out.accepted and "per user per day" in out.errors[0]
    assert flow.submit(write_submission(tmp_path / "c.jsonl", "m-3"), Submitter("bob")).accepted
    clock["t"] = NOW + timedelta(days=1, minutes=1)
    assert flow.submit(write_submission(tmp_path / "b.jsonl", "m-2"), Submitter("alice")).accepted


def test_duplicates_by_hash_and_by_model_name(tmp_path, flow, clock, stores):
    first = flow.submit(write_submission(tmp_path / "a.jsonl", "Org/Model"), Submitter("alice"))
    assert first.accepted
    clock["t"] = NOW + timedelta(days=2)
    same_file = flow.submit(write_submission(tmp_path / "a2.jsonl", "Org/Model"), Submitter("bob"))
    assert not same_file.accepted and "already submitted (request" in same_file.errors[0]
    clock["t"] = NOW + timedelta(days=4)

    def other_rqs(lines):
        lines[1]["research_questions"][0] = "A different first question entirely?"

    same_name = flow.submit(write_submission(tmp_path / "a3.jsonl", "org/model", tweak=other_rqs), Submitter("alice"))
    assert not same_name.accepted and "already submitted model" in same_name.errors[0]
    # once the earlier request failed, the same name may be submitted again
    req = stores.requests.get(first.request.request_id)
    stores.requests.put(req.model_copy(update={"status": "failed", "reason": "judge down"}))
    assert flow.submit(write_submission(tmp_path / "a3.jsonl", "org/model", tweak=other_rqs), Submitter("alice")).accepted


class FakeUserApi:
    """``HfApi.get_user_overview`` returns a User whose unknown keys (createdAt) become attributes."""

    def __init__(self, created: str | None):
        self.created = created

    def get_user_overview(self, username):
        from huggingface_hub.hf_api import User

        data = {"user": username, "fullname": username, "avatarUrl": ""}
        if self.created:
            data["createdAt"] = self.created
        return User(**data)


def test_hub_sign_in_and_account_age(tmp_path, stores, clock):
    policy = SubmitPolicy(require_sign_in=True, min_account_age_days=7)
    flow = SubmitFlow(stores, BenchmarkTarget("r", "v", RQ_IDS), policy, clock=lambda: clock["t"])
    path = write_submission(tmp_path / "s.jsonl")
    assert "sign in" in flow.submit(path, Submitter("anon", signed_in=False)).errors[0]
    young = account_created_at(FakeUserApi("2026-05-08T10:00:00.000Z"), "newbie")
    assert young == datetime(2026, 5, 8, 10, tzinfo=timezone.utc)
    out = flow.submit(path, Submitter("newbie", signed_in=True, account_created=young))
    assert not out.accepted and "at least 7 days old" in out.errors[0]
    assert "could not confirm" in flow.submit(path, Submitter("x", signed_in=True)).errors[0]
    assert account_created_at(FakeUserApi(None), "x") is None
    old = account_created_at(FakeUserApi("2020-01-01T00:00:00Z"), "veteran")
    assert flow.submit(path, Submitter("veteran", signed_in=True, account_created=old)).accepted


def test_attempts_are_rate_limited(tmp_path, stores, clock):
    flow = SubmitFlow(stores, BenchmarkTarget("r", "v", RQ_IDS), SubmitPolicy(attempts_per_hour=2),
                      clock=lambda: clock["t"])  # fmt: skip
    bad = tmp_path / "x.txt"
    bad.write_text("x")
    flow.submit(bad, Submitter("eve"))
    flow.submit(bad, Submitter("eve"))
    assert "too many upload attempts" in flow.submit(bad, Submitter("eve")).errors[0]
    assert "file type" in flow.submit(bad, Submitter("other")).errors[0]
