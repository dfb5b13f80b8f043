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
    assert flow.submit(None, Submitter("a")).errors[0].startswith("choose a file to upload")


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
        lines[1]["research_questions"][0] = "Which different first question would this model ask entirely?"

    same_name = flow.submit(write_submission(tmp_path / "a3.jsonl", "org/model", tweak=other_rqs), Submitter("alice"))
    assert not same_name.accepted and "already submitted model" in same_name.errors[0]
    # once the earlier request failed, the same name may be submitted again
    req = stores.requests.get(first.request.request_id)
    stores.requests.put(req.model_copy(update={"status": "failed", "reason": "judge down"}))
    assert flow.submit(
        write_submission(tmp_path / "a3.jsonl", "org/model", tweak=other_rqs), Submitter("alice")
    ).accepted


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
    flow = SubmitFlow(
        stores, BenchmarkTarget("r", "v", RQ_IDS), SubmitPolicy(attempts_per_hour=2), clock=lambda: clock["t"]
    )
    bad = tmp_path / "x.txt"
    bad.write_text("x")
    flow.submit(bad, Submitter("eve"))
    flow.submit(bad, Submitter("eve"))
    assert "too many upload attempts" in flow.submit(bad, Submitter("eve")).errors[0]
    assert "file type" in flow.submit(bad, Submitter("other")).errors[0]


FLAGGED_RQ = "Experts agree this is the most original question: what would org/model-x ask about instance 0, angle 2?"


def test_a_model_name_belongs_to_the_account_that_first_submitted_it(tmp_path, flow, clock, stores):
    from rqbench.space.submit import model_key

    assert model_key("Org/Model-X") == model_key(" org  model_x ") == model_key("ＯＲＧ/model.x")
    assert model_key("llama-3.1") != model_key("llama-31")
    first = flow.submit(write_submission(tmp_path / "a.jsonl", "Org/Model-X"), Submitter("alice"))
    assert first.accepted

    def other_rqs(lines):
        lines[1]["research_questions"][0] = "Which different first question would this model ask entirely?"

    clock["t"] = NOW + timedelta(days=2)
    taken = flow.submit(write_submission(tmp_path / "b.jsonl", "org model_x", tweak=other_rqs), Submitter("bob"))
    assert not taken.accepted and "belongs to another account" in taken.errors[0]
    assert first.request.request_id in taken.errors[0] and "distinct model name" in taken.errors[0]
    # still hers after her request failed: bob needs his own name, alice may try again
    stores.requests.put(stores.requests.get(first.request.request_id).model_copy(update={"status": "failed"}))
    again = flow.submit(write_submission(tmp_path / "b.jsonl", "Org/Model-X", tweak=other_rqs), Submitter("bob"))
    assert "belongs to another account" in again.errors[0]
    mine = write_submission(tmp_path / "b.jsonl", "bob-lab/Model-X", tweak=other_rqs)
    assert flow.submit(mine, Submitter("bob")).accepted
    clock["t"] = NOW + timedelta(days=4)
    hers = write_submission(tmp_path / "c.jsonl", "Org/Model-X", tweak=other_rqs)
    assert flow.submit(hers, Submitter("alice")).accepted


def test_the_daily_limit_says_whose_it_is(tmp_path, stores, clock):
    offline = SubmitFlow(stores, BenchmarkTarget("r", "v", RQ_IDS), clock=lambda: clock["t"])
    assert offline.submit(write_submission(tmp_path / "a.jsonl", "m-1"), Submitter("alice")).accepted
    again = offline.submit(write_submission(tmp_path / "b.jsonl", "m-2"), Submitter("alice"))
    assert "per user per day" in again.errors[0] and "per typed name, unverified offline" in again.errors[0]
    # offline a new name is a new user: the limit cannot tell, and the page says so (test_space_browser)
    assert offline.submit(write_submission(tmp_path / "b.jsonl", "m-2"), Submitter("alice2")).accepted
    hub = SubmitFlow(
        stores, BenchmarkTarget("r", "v", RQ_IDS), SubmitPolicy(require_sign_in=True), clock=lambda: clock["t"]
    )
    old = datetime(2020, 1, 1, tzinfo=timezone.utc)
    assert hub.submit(write_submission(tmp_path / "c.jsonl", "m-3"), Submitter("carol", True, old)).accepted
    out = hub.submit(write_submission(tmp_path / "d.jsonl", "m-4"), Submitter("carol", True, old))
    assert "per Hugging Face account" in out.errors[0]


@pytest.mark.parametrize(
    "name", ["bob\ud800", "bob\x00", "bob\u200b", "\u202eevil", "   ", "x" * 81, "x<img src=x onerror=alert(1)>", "a&b"]
)
def test_a_name_that_cannot_be_stored_gets_a_message(tmp_path, flow, stores, name):
    out = flow.submit(write_submission(tmp_path / "a.jsonl"), Submitter(name))
    assert not out.accepted and stores.requests.all() == [] and stores.submissions.repo.list() == []
    out.message().encode("utf-8")  # the reply can always be sent to the page
    assert "name" in out.errors[0]


def test_crafted_text_in_an_upload_gets_a_message_that_can_be_sent(tmp_path, flow):
    def surrogates(lines):
        lines[0]["model"] = "m\ud800"
        lines[1]["research_questions"][0] = "Why \udfff?"

    path = tmp_path / "s.jsonl"
    write_submission(path, tweak=surrogates)  # json.dumps escapes the surrogates; the file itself is ASCII
    out = flow.submit(path, Submitter("alice"))
    assert not out.accepted and "lone surrogate" in out.message()
    out.message().encode("utf-8")
    from rqbench.space.submit import SubmitOutcome

    assert SubmitOutcome(False, ["bad \ud800 text \x07"]).message() == "Rejected (1 problem(s)):\n- bad \ufffd text "


def test_a_flagged_submission_is_held_for_review_with_its_reasons(tmp_path, flow, stores):
    from rqbench.space.submit import requests_table

    def flag(lines):
        lines[1]["research_questions"][2] = FLAGGED_RQ

    out = flow.submit(write_submission(tmp_path / "f.jsonl", tweak=flag), Submitter("alice"))
    assert out.accepted and out.request.status == "review" and out.request.flagged_count == 1
    assert out.request.held_for_review
    (flag_line,) = out.request.flags
    assert flag_line.startswith("line 2, field research_questions[2], rq_id ") and "endorsement" in flag_line
    assert str(tmp_path) not in flag_line
    assert out.message().startswith("Held for review") and "a maintainer reviews them" in out.message()
    (row,) = requests_table(stores)
    assert row[3] == "flagged for review" and row[4].startswith("1 RQ(s) flagged: line 2") and "endorsement" in row[4]
    assert stores.requests.get(out.request.request_id).status == "review"


def test_validation_stops_at_its_time_budget_with_a_named_line(tmp_path, stores, clock):
    flow = SubmitFlow(
        stores, BenchmarkTarget("r", "v", RQ_IDS), SubmitPolicy(validation_budget_s=1e-9), clock=lambda: clock["t"]
    )
    out = flow.submit(write_submission(tmp_path / "s.jsonl"), Submitter("alice"))
    assert not out.accepted and stores.requests.all() == []
    assert any(e.startswith("line 2: validation stopped here: it took longer than 1e-09 s") for e in out.errors)
    assert not any("no line for this rq_id" in e for e in out.errors)  # unread lines are not called missing


def test_the_contact_stays_in_the_private_request_and_off_the_queue_table(tmp_path, flow, stores):
    from rqbench.space.submit import requests_table

    def contact(lines):
        lines[0]["contact"] = "alice@example.org"

    out = flow.submit(write_submission(tmp_path / "s.jsonl", tweak=contact), Submitter("alice"))
    assert out.accepted and stores.requests.get(out.request.request_id).metadata.contact == "alice@example.org"
    assert "alice@example.org" not in repr(requests_table(stores)) and "alice@example.org" not in out.message()


# -- the upload gate (the HTTP test against a launched app is in test_space_browser.py) ----------------------


def _call_gate(gate_kwargs, *, path="/gradio_api/upload", headers=(), body_chunks=(b"",), session=None):
    """Run one request through ``UploadGate`` around an app that reads the whole body; (status, body, bytes read)."""
    import asyncio

    from rqbench.space.safety import UploadGate

    read = {"bytes": 0, "inner_called": False}

    async def inner(scope, receive, send):
        read["inner_called"] = True
        while True:
            msg = await receive()
            read["bytes"] += len(msg.get("body", b""))
            if not msg.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    chunks = list(body_chunks)
    sent: list[dict] = []
    offered = {"n": 0}

    async def receive():
        i = offered["n"]
        offered["n"] += 1
        return {"type": "http.request", "body": chunks[i], "more_body": i < len(chunks) - 1}

    async def send(msg):
        sent.append(msg)

    scope = {"type": "http", "method": "POST", "path": path, "headers": list(headers)}
    if session is not None:
        scope["session"] = session
    asyncio.run(UploadGate(inner, **gate_kwargs)(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body.decode(), offered["n"], read["inner_called"]


def test_upload_gate_refuses_by_declared_length_before_reading_and_cuts_undeclared_bodies():
    limit = {"max_body_bytes": 1000, "max_event_bytes": 1000}
    status, body, offered, called = _call_gate(limit, headers=[(b"content-length", b"30000000")])
    assert status == 413 and "30,000,000 bytes is over the limit of 1,000" in body
    assert offered == 0 and not called  # not one byte was read, the app never saw the request
    status, body, offered, _ = _call_gate(limit, body_chunks=[b"x" * 600] * 5)
    assert status == 411 and offered == 0  # an upload must declare its length
    status, body, offered, _ = _call_gate(limit, path="/gradio_api/queue/join", body_chunks=[b"x" * 600] * 5)
    assert status == 413 and offered == 2  # any other body is cut off at its limit
    assert _call_gate(limit, headers=[(b"content-length", b"600")], body_chunks=[b"x" * 600])[:2] == (200, "ok")


def test_upload_gate_caps_each_endpoint_and_counts_uploads_per_client():
    from rqbench.space.safety import AttemptLimiter

    now = [0.0]
    gate = {
        "max_body_bytes": 10_000,
        "max_event_bytes": 500,
        "upload_limits": (AttemptLimiter(2, 60, clock=lambda: now[0]),),
    }
    join = "/gradio_api/queue/join"
    status, body, offered, called = _call_gate(gate, path=join, headers=[(b"content-length", b"4194304")])
    assert status == 413 and "4,194,304 bytes is over the limit of 500" in body and offered == 0 and not called
    assert _call_gate(gate, path=join, headers=[(b"content-length", b"800")], body_chunks=[b"x" * 800])[0] == 413
    assert _call_gate(gate, headers=[(b"content-length", b"800")], body_chunks=[b"x" * 800])[0] == 200  # an upload
    # the first upload above counted: one more passes, the third within the minute is refused before it is read
    one = [(b"content-length", b"3")]
    assert _call_gate(gate, headers=one, body_chunks=[b"abc"])[0] == 200
    status, body, offered, called = _call_gate(gate, headers=one, body_chunks=[b"abc"])
    assert status == 429 and "too many uploads: at most 2 in 60 s" in body and offered == 0 and not called
    # another client (the address the nearest proxy saw) has its own count; the page's events are never counted
    other = [*one, (b"x-forwarded-for", b"10.0.0.1, 192.0.2.7")]
    assert _call_gate(gate, headers=other, body_chunks=[b"abc"])[0] == 200
    spoofed = [*one, (b"x-forwarded-for", b"203.0.113.9, 192.0.2.7")]  # a made-up first hop changes nothing
    assert _call_gate(gate, headers=spoofed, body_chunks=[b"abc"])[0] == 200
    assert _call_gate(gate, headers=spoofed, body_chunks=[b"abc"])[0] == 429
    assert _call_gate(gate, path=join, headers=one, body_chunks=[b"abc"])[0] == 200
    now[0] = 61
    assert _call_gate(gate, headers=one, body_chunks=[b"abc"])[0] == 200  # a minute later


def test_the_429_says_when_to_come_back():
    import asyncio

    from rqbench.space.safety import AttemptLimiter, UploadGate

    limiter = AttemptLimiter(1, 60, clock=lambda: 0.0)
    limiter.allow("address:127.0.0.1")
    sent = []

    async def send(msg):
        sent.append(msg)

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/gradio_api/upload",
        "client": ("127.0.0.1", 5),
        "headers": [(b"content-length", b"3")],
    }
    asyncio.run(UploadGate(None, max_body_bytes=100, upload_limits=(limiter,))(scope, receive, send))
    start = sent[0]
    assert start["status"] == 429 and (b"retry-after", b"60") in start["headers"]


def test_upload_gate_on_the_hub_wants_a_live_sign_in_for_uploads():
    hub = {"max_body_bytes": 1000, "require_sign_in": True, "clock": lambda: 1000.0}
    length = [(b"content-length", b"3")]
    status, body, _, called = _call_gate(hub, headers=length, body_chunks=[b"abc"])
    assert status == 401 and "sign in" in body and not called
    assert _call_gate(hub, headers=length, body_chunks=[b"abc"], session={})[0] == 401
    expired = {"oauth_info": {"userinfo": {"preferred_username": "a"}, "expires_at": 999}}
    assert _call_gate(hub, headers=length, body_chunks=[b"abc"], session=expired)[0] == 401
    live = {"oauth_info": {"userinfo": {"preferred_username": "a"}, "expires_at": 2000}}
    assert _call_gate(hub, headers=length, body_chunks=[b"abc"], session=live)[:2] == (200, "ok")
    # the rest of the Space (page events) stays open to everyone
    assert _call_gate(hub, path="/gradio_api/queue/join", headers=length, body_chunks=[b"abc"])[0] == 200


# -- both forms of a submission, and the partial-submission box (issue 23, item 2) ----------------------------


def write_folder(folder: Path, model: str = "org/model-x", rq_ids=RQ_IDS) -> Path:
    """A submission folder as ``rqbench generate`` writes it: metadata.json (indented, no "kind") + submission.jsonl."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metadata.json").write_text(json.dumps({"model": model, "model_type": "open"}, indent=2))
    lines = [
        {"rq_id": r, "research_questions": [f"What would {model} ask about instance {k}, angle {i}?" for i in range(5)]}
        for k, r in enumerate(rq_ids)
    ]
    (folder / "submission.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def test_a_folders_two_files_uploaded_together_are_one_submission_stored_packed(tmp_path, flow, stores):
    from rqbench.evaluate.generate.submission_files import validate_submission

    folder = write_folder(tmp_path / "sub")
    out = flow.submit([folder / "submission.jsonl", folder / "metadata.json"], Submitter("alice"))  # any order
    assert out.accepted, out.errors
    req = out.request
    assert req.instances == 3 and not req.partial
    assert req.submission_hash == validate_submission(folder, RQ_IDS).submission_hash
    stored = tmp_path / "stored.jsonl"
    stored.write_bytes(stores.submissions.get(req.submission_file))
    first = json.loads(stored.read_text().splitlines()[0])
    assert first["kind"] == "metadata" and first["model"] == "org/model-x"  # the single-file form the worker reads
    again = validate_submission(stored, RQ_IDS)
    assert again.ok and again.submission_hash == req.submission_hash


def test_one_half_of_a_folder_or_too_many_files_get_one_message_each(tmp_path, flow):
    folder = write_folder(tmp_path / "sub")
    out = flow.submit(folder / "metadata.json", Submitter("alice"))
    assert out.errors == [
        "metadata.json is half of a submission folder: upload it together with submission.jsonl "
        "(select both files), or upload the single-file form"
    ]  # not 15 "not JSON (Extra data)"
    out = flow.submit([folder / "submission.jsonl"], Submitter("alice"))
    assert out.errors[0] == 'line 1: no metadata record (a first line with "kind": "metadata")'
    assert "uploaded together, both selected at once" in out.errors[-1] and len(out.errors) == 2
    extra = tmp_path / "notes.jsonl"
    extra.write_text("{}\n")
    out = flow.submit([folder / "metadata.json", folder / "submission.jsonl", extra], Submitter("alice"))
    assert out.errors == [
        "3 files uploaded (metadata.json, submission.jsonl, notes.jsonl); upload one file (the "
        "single-file form) or a submission folder's two files together (metadata.json and "
        "submission.jsonl)"
    ]


def test_a_bad_line_in_a_folder_upload_names_the_file_it_is_in(tmp_path, flow):
    folder = write_folder(tmp_path / "sub")
    (folder / "metadata.json").write_text(json.dumps({"model": "m", "model_type": "weights"}))
    out = flow.submit([folder / "metadata.json", folder / "submission.jsonl"], Submitter("alice"))
    assert not out.accepted
    assert any(e.startswith("metadata.json, line 1, field model_type: ") for e in out.errors), out.errors


def test_a_partial_submission_names_the_pages_box_and_is_queued_when_it_is_ticked(tmp_path, flow, stores):
    partial = write_submission(tmp_path / "p.jsonl", rq_ids=RQ_IDS[:2])
    out = flow.submit(partial, Submitter("alice"))
    assert out.errors == [
        f"field rq_id, rq_id {RQ_IDS[2]}: no line for this rq_id (a partial submission needs the "
        '"Allow a partial submission" box ticked)'
    ]
    assert "--allow-partial" not in out.message()
    out = flow.submit(partial, Submitter("alice"), allow_partial=True)
    assert out.accepted and out.request.partial and out.request.instances == 2
    assert stores.requests.get(out.request.request_id).partial
    summary = out.summary()
    assert summary["accepted"] and summary["request_id"] == out.request.request_id and summary["status"] == "pending"
    assert any("no line for this rq_id" in w for w in summary["warnings"])


LOOKALIKES = [
    "Аcme/Мodel-Х",  # Cyrillic А, М, Х
    "Acme/Μodel-Χ",  # Greek Mu and Chi
    "АСМЕ/МОDЕL-Х",  # Cyrillic capitals, Latin D and L
    "Ａｃｍｅ/Ｍｏｄｅｌ-Ｘ",  # fullwidth
    "Acme/ModeI-X",  # a capital I for the l
    "Acme/Mode1-X",  # a digit one for the l
    "acme model_x",
]


@pytest.mark.parametrize("name", LOOKALIKES)
def test_a_look_alike_model_name_belongs_to_the_first_account(tmp_path, flow, clock, name):
    from rqbench.space.submit import model_key

    assert model_key(name) == model_key("Acme/Model-X")
    assert flow.submit(write_submission(tmp_path / "a.jsonl", "Acme/Model-X"), Submitter("alice")).accepted

    def other_rqs(lines):
        lines[1]["research_questions"][0] = "Which different first question would this model ask entirely?"

    clock["t"] = NOW + timedelta(days=2)
    taken = flow.submit(write_submission(tmp_path / "b.jsonl", name, tweak=other_rqs), Submitter("mallory"))
    assert not taken.accepted and "belongs to another account" in taken.errors[0], taken.errors


@pytest.mark.parametrize(
    "name",
    ["openai/gpt-5.5", "local@temperature=0.8", "gemini-3.1-pro (revised)", "Jürgen's Model", "张伟/模型-2", "m_v2#3"],
)
def test_honest_names_in_any_script_pass_the_name_rule(name):
    from rqbench.space.safety import name_problem

    assert name_problem(name, what="model name", max_chars=100) is None


def test_distinct_model_names_stay_distinct():
    from rqbench.space.submit import model_key

    names = ["Acme/Model-X", "Acme/Model-Y", "acme/model-x2", "llama-3.1", "llama-31", "Qwen2.5-7B", "gpt-5.5"]
    assert len({model_key(n) for n in names}) == len(names)


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("Acme/Model\u200b-X", "invisible format character (U+200B)"),
        ("\u202eX-ledoM/emcA", "invisible format character (U+202E)"),
        ("Acme/Model-X\u2066", "invisible format character (U+2066)"),
        ("Acme/\u3164Model-X", "invisible character (U+3164)"),
        ("Acme/Model\ufe0f-X", "invisible character (U+FE0F)"),
        ("Acme/Model\u00a0X", "a space other than the plain space (U+00A0)"),
        (" Acme/Model-X", "starts or ends with a space"),
        ("A" * 101, "101 characters long; at most 100"),
        ("A" * 10_000, "10,000 characters long"),
        ("x<img src=x onerror=alert(1)>", "contains '<' at position 2"),
        ('Acme/"Model"', "contains '\"' at position 6"),
        ("Acme/{{model}}", "contains '{' at position 6"),
    ],
)
def test_a_model_name_that_could_deceive_or_overflow_the_page_is_refused(tmp_path, flow, stores, name, why):
    path = write_submission(tmp_path / "a.jsonl", tweak=lambda lines: lines[0].update(model=name))
    out = flow.submit(path, Submitter("alice"))
    assert not out.accepted and stores.requests.all() == []
    assert out.errors[0].startswith("line 1, field model: the model name") and why in out.errors[0], out.errors
    out.message().encode("utf-8")
