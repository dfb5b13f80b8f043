"""The LLM layer against a scripted OpenAI-compatible server: cache, re-ask, retries, faults, log."""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import threading
import time

import pytest

from rqbench.llm import LLM, CallStore, DryRun, LLMCallFailed
from rqbench.records import StandaloneNoveltyReply
from rqbench.testing.scripted_server import Fault

GOOD = json.dumps({"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 1, "non_obviousness": 3}]})
MESSAGES = [{"role": "system", "content": "judge"}, {"role": "user", "content": "[0] Does X hold?"}]


def make_llm(tmp_path, srv, **cfg):
    llm = LLM(CallStore(tmp_path / "calls.db"))
    llm.register(srv.model_config(**cfg))
    return llm


def ask(llm, messages=MESSAGES, step="novelty_standalone"):
    return asyncio.run(llm.ask("scripted/test", step, messages, StandaloneNoveltyReply, prompt_hash="b2:test"))


def test_second_identical_call_is_served_from_cache(tmp_path, scripted_server):
    scripted_server.responder = lambda req: GOOD
    llm = make_llm(tmp_path, scripted_server)
    first = ask(llm)
    second = ask(llm)
    assert first.reply.scores[0].non_obviousness == 3
    assert not first.cached and second.cached
    assert len(scripted_server.requests) == 1
    rows = llm.store.summary()
    assert rows[0]["requests"] == 1 and rows[0]["cache_hits"] == 1


def test_cache_survives_a_new_process_store(tmp_path, scripted_server):
    scripted_server.responder = lambda req: GOOD
    ask(make_llm(tmp_path, scripted_server))
    again = ask(make_llm(tmp_path, scripted_server))  # a fresh LLM and connection on the same file
    assert again.cached and len(scripted_server.requests) == 1


def test_schema_is_sent_as_response_format(tmp_path, scripted_server):
    scripted_server.responder = lambda req: GOOD
    ask(make_llm(tmp_path, scripted_server))
    fmt = scripted_server.requests[0]["response_format"]
    assert fmt["type"] == "json_object"
    assert "scores" in json.dumps(fmt["schema"])
    assert "rule_corrections" not in json.dumps(fmt["schema"])
    assert scripted_server.requests[0]["temperature"] == 0.0


def test_invalid_reply_is_reasked_once_quoting_the_error(tmp_path, scripted_server):
    replies = iter(['{"scores": [{"relevance": 1}]}', GOOD])
    scripted_server.responder = lambda req: next(replies)
    answer = ask(make_llm(tmp_path, scripted_server))
    assert answer.reasked
    reask = scripted_server.requests[1]["messages"]
    assert reask[-2]["role"] == "assistant"
    assert "originality" in reask[-1]["content"] and "Field required" in reask[-1]["content"]


def test_twice_invalid_is_a_named_failure_and_not_an_answer(tmp_path, scripted_server):
    scripted_server.responder = lambda req: "I think it is quite novel."
    llm = make_llm(tmp_path, scripted_server)
    with pytest.raises(LLMCallFailed) as err:
        ask(llm)
    assert err.value.reason == "invalid_reply"
    assert len(scripted_server.requests) == 2
    # a rerun pays nothing and fails the same way
    with pytest.raises(LLMCallFailed):
        ask(llm)
    assert len(scripted_server.requests) == 2
    # --retry-failed asks again, and the new valid reply replaces the failure
    scripted_server.responder = lambda req: GOOD
    retry = LLM(llm.store, retry_failed=True)
    retry.register(scripted_server.model_config())
    answer = ask(retry)
    assert answer.reply.scores[0].originality == 2
    assert len(scripted_server.requests) == 3


@pytest.mark.parametrize(
    "fault",
    [
        Fault("status", 429, {"retry-after": "0.3"}),
        Fault("status", 500),
        Fault("status", 503),
        Fault("reset"),
        Fault("truncated"),
        Fault("not_json"),
        Fault("empty"),
    ],
    ids=["429-retry-after", "500", "503", "reset", "truncated", "not-json", "empty"],
)
def test_transient_faults_are_retried(tmp_path, scripted_server, fault):
    scripted_server.responder = lambda req: GOOD
    scripted_server.faults.extend([fault, fault])
    llm = make_llm(tmp_path, scripted_server)
    t0 = time.monotonic()
    answer = ask(llm)
    assert answer.reply.scores[0].originality == 2
    assert len(scripted_server.requests) == 3
    if fault.headers.get("retry-after"):
        assert time.monotonic() - t0 >= 0.55  # two waits of 0.3 s, honoured over the tiny backoff
    statuses = [r[0] for r in sqlite3.connect(tmp_path / "calls.db").execute("SELECT status FROM calls ORDER BY id")]
    assert statuses[-1] == "ok" and all(s.startswith("error:") for s in statuses[:-1]) and len(statuses) == 3


def test_timeout_is_retried(tmp_path, scripted_server):
    scripted_server.responder = lambda req: GOOD
    scripted_server.faults.append(Fault("slow", seconds=1.5))
    llm = make_llm(tmp_path, scripted_server, timeout_s=0.5)
    assert ask(llm).reply.scores[0].gap_addressing == 1
    assert len(scripted_server.requests) == 2


def test_client_errors_are_not_retried(tmp_path, scripted_server):
    scripted_server.faults.append(Fault("status", 400))
    with pytest.raises(LLMCallFailed) as err:
        ask(make_llm(tmp_path, scripted_server))
    assert err.value.reason == "BadRequestError"
    assert len(scripted_server.requests) == 1


def test_retries_give_up_with_the_reason(tmp_path, scripted_server):
    scripted_server.fault_plan = lambda n: Fault("status", 500)
    with pytest.raises(LLMCallFailed) as err:
        ask(make_llm(tmp_path, scripted_server, max_retries=2))
    assert err.value.reason == "InternalServerError"
    assert len(scripted_server.requests) == 3


def test_concurrency_is_bounded_per_model(tmp_path, scripted_server):
    live, peak, lock = [0], [0], threading.Lock()

    def slow(req):
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.15)
        with lock:
            live[0] -= 1
        return GOOD

    scripted_server.responder = slow
    llm = make_llm(tmp_path, scripted_server, max_concurrency=2)

    async def many():
        return await asyncio.gather(
            *[
                llm.ask(
                    "scripted/test",
                    "s",
                    [{"role": "user", "content": f"q{i}"}],
                    StandaloneNoveltyReply,
                    prompt_hash="h",
                )
                for i in range(6)
            ]
        )

    assert len(asyncio.run(many())) == 6
    assert peak[0] == 2


def test_dry_run_counts_without_sending(tmp_path, scripted_server):
    scripted_server.responder = lambda req: GOOD
    real = make_llm(tmp_path, scripted_server)
    ask(real)  # one call already cached
    dry = LLM(real.store, dry_run=True)
    dry.register(scripted_server.model_config())
    for content in ("[0] Does X hold?", "[0] Does Y hold?", "[0] Does Z hold?"):
        with pytest.raises(DryRun):
            ask(dry, [MESSAGES[0], {"role": "user", "content": content}])
    assert dry.estimate.calls == 2 and dry.estimate.cached == 1
    assert dry.estimate.tokens_in > 0 and dry.estimate.by_step == {"novelty_standalone": 2}
    assert "2 calls to send" in dry.estimate.line()
    assert len(scripted_server.requests) == 1


def test_cache_key_ignores_transport_settings_but_not_sampling(tmp_path, scripted_server):
    llm = make_llm(tmp_path, scripted_server)
    base = scripted_server.model_config()
    k = llm.cache_key(base, "s", MESSAGES, {}, "h")
    assert k == llm.cache_key(
        base.model_copy(update={"timeout_s": 1.0, "api_base": "http://x"}), "s", MESSAGES, {}, "h"
    )
    assert k != llm.cache_key(base.model_copy(update={"temperature": 0.7}), "s", MESSAGES, {}, "h")
    assert k != llm.cache_key(base, "s", MESSAGES, {}, "other-prompt-set")


def test_cache_key_is_stable_across_versions(tmp_path, scripted_server):
    """A changed key would silently re-pay every cached call: this golden value must not move."""
    llm = make_llm(tmp_path, scripted_server)
    cfg = scripted_server.model_config(name="fixed")
    assert llm.cache_key(cfg, "s", MESSAGES, {"type": "object"}, "h") == "b2:db10b981732ab76eba215b0f9c7229fc"


def test_api_key_is_never_stored(tmp_path, scripted_server):
    scripted_server.responder = lambda req: GOOD
    llm = make_llm(tmp_path, scripted_server, api_key="sk-secret-do-not-log")
    ask(llm)
    dump = "\n".join(sqlite3.connect(tmp_path / "calls.db").iterdump())
    assert "sk-secret-do-not-log" not in dump
    assert "sk-secret-do-not-log" not in repr(llm.model("scripted/test"))


def test_migrations_apply_once(tmp_path):
    CallStore(tmp_path / "c.db").close()
    store = CallStore(tmp_path / "c.db")
    from rqbench.llm.store import MIGRATIONS

    names = [r[0] for r in store._db.execute("SELECT name FROM _migrations")]
    assert names == [name for name, _ in MIGRATIONS] and names[0] == "m001_responses_and_calls"
    assert len(set(names)) == len(names)
    assert "m004_response_finish_reason" in names


def test_a_cache_from_before_finish_reasons_migrates_and_still_reads(tmp_path):
    """A calls.db written before m004 keeps its replies; they read back with no finish reason."""
    import sqlite3 as sq

    from rqbench.llm.store import m001_responses_and_calls

    path = tmp_path / "old.db"
    with sq.connect(path) as db:
        db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied REAL)")
        m001_responses_and_calls(db)
        db.execute("INSERT INTO _migrations VALUES ('m001_responses_and_calls', 0)")
        db.execute("INSERT INTO responses VALUES ('k', 'm', 's', '{}', 'old text', 1, 2, 0.0, 0)")
    store = CallStore(path)
    hit = store.get("k")
    assert hit is not None and hit.text == "old text" and hit.finish_reason is None
    store.put(
        "k2", model="m", step="s", request={}, text="", tokens_in=1, tokens_out=9, cost_usd=None, finish_reason="length"
    )
    assert store.get("k2").finish_reason == "length"


def test_calls_cli_prints_a_summary(tmp_path, scripted_server, capsys):
    from rqbench.cli import main

    scripted_server.responder = lambda req: GOOD
    llm = make_llm(tmp_path, scripted_server)
    ask(llm)
    ask(llm)
    assert main(["calls", "--db", str(tmp_path / "calls.db")]) == 0
    out = capsys.readouterr().out
    assert "scripted/test" in out and "novelty_standalone" in out
    line = [ln for ln in out.splitlines() if "scripted/test" in ln][0].split()
    assert line[2:4] == ["1", "1"]  # one request, one cache hit


def test_calls_cli_filters_by_run_and_time_lists_runs_and_adds_up(tmp_path, scripted_server, capsys):
    """Issue 23, item 5: a job's printed run id finds its calls; --since keeps a window; the total row adds up."""
    from rqbench.cli import main
    from rqbench.llm.calls_cli import parse_since

    scripted_server.responder = lambda req: GOOD
    first = make_llm(tmp_path, scripted_server)
    ask(first)
    second = LLM(CallStore(tmp_path / "calls.db"), run_id="second-run")
    second.register(scripted_server.model_config())
    ask(second)  # a cache hit
    ask(second, [*MESSAGES[:1], {"role": "user", "content": "[0] Does Y hold?"}])
    assert first.run_note() == f"run id {first.run_id} (rqbench calls --run {first.run_id} lists its calls)"
    db = ["--db", str(tmp_path / "calls.db")]

    def rows(*args: str) -> list[list[str]]:
        assert main(["calls", *db, *args]) == 0
        return [ln.split() for ln in capsys.readouterr().out.splitlines()]

    table = rows("--run", "second-run")
    assert [r[:4] for r in table if r[0] in ("scripted/test", "total")] == [
        ["scripted/test", "novelty_standalone", "1", "1"],
        ["total", "all", "1", "1"],
    ]
    assert [r[:4] for r in rows() if r[0] == "total"] == [["total", "all", "2", "1"]]
    runs = rows("--runs")
    assert runs[0][0] == "run_id" and [r[0] for r in runs[1:]] == ["second-run", first.run_id]  # newest first
    assert runs[1][5:8] == ["1", "1", "0"] and runs[1][-1] == "scripted/test"
    assert [r[0] for r in rows("--since", "1h") if r[0] == "total"] == ["total"]
    assert rows("--since", "2999-01-01") == [["no", "calls", "logged", "in", str(tmp_path / "calls.db")]]
    assert parse_since("90m", now=10_000.0) == 10_000.0 - 5400 and parse_since("2d", now=0.0) == -172800.0
    with pytest.raises(argparse.ArgumentTypeError, match="neither a span"):
        parse_since("yesterday")


def test_retry_failed_asks_the_reask_afresh_too(tmp_path, scripted_server):
    scripted_server.responder = lambda req: "not json"
    llm = make_llm(tmp_path, scripted_server)
    with pytest.raises(LLMCallFailed):
        ask(llm)
    # the provider now fails the first answer again but gets the re-ask right
    scripted_server.responder = lambda req: GOOD if len(req["messages"]) > 2 else "not json"
    retry = LLM(llm.store, retry_failed=True)
    retry.register(scripted_server.model_config())
    answer = ask(retry)
    assert answer.reasked and answer.reply.scores[0].non_obviousness == 3
    assert len(scripted_server.requests) == 4


def test_per_candidate_arrays_are_pinned_to_the_candidate_count(tmp_path, scripted_server):
    from rqbench.records import ComparativeNoveltyReply

    one = {"relevance": 1, "originality": 1, "gap_addressing": 1, "non_obviousness": 1}
    scripted_server.responder = lambda req: json.dumps({"scores": [one] * 3, "ranking": [0, 1, 2]})
    llm = make_llm(tmp_path, scripted_server)
    answer = asyncio.run(
        llm.ask(
            "scripted/test",
            "novelty_comparative",
            MESSAGES,
            ComparativeNoveltyReply,
            prompt_hash="h",
            context={"n_candidates": 3},
        )
    )
    assert len(answer.reply.scores) == 3
    scores = scripted_server.requests[0]["response_format"]["schema"]["properties"]["scores"]
    assert scores["minItems"] == scores["maxItems"] == 3


def test_a_subset_of_candidates_holds_at_most_one_entry_per_candidate():
    from rqbench.llm.client import reply_schema
    from rqbench.records import OverlapReply

    props = reply_schema(OverlapReply, {"n_candidates": 6})["properties"]
    assert props["pairwise_scores"]["minItems"] == props["pairwise_scores"]["maxItems"] == 6
    assert props["covering_subset_indices"]["maxItems"] == 6 and "minItems" not in props["covering_subset_indices"]
    assert "maxItems" not in reply_schema(OverlapReply, None)["properties"]["covering_subset_indices"]


def test_retry_failed_is_a_per_call_choice_that_defaults_to_the_llms(tmp_path, scripted_server):
    scripted_server.responder = lambda req: "not json"
    llm = make_llm(tmp_path, scripted_server)
    with pytest.raises(LLMCallFailed):
        ask(llm)
    assert len(scripted_server.requests) == 2  # the answer and its re-ask, both cached as they are
    scripted_server.responder = lambda req: GOOD
    with pytest.raises(LLMCallFailed):
        ask(llm)  # the LLM's own setting (off): the cached failure stands
    assert len(scripted_server.requests) == 2
    answer = asyncio.run(
        llm.ask(
            "scripted/test",
            "novelty_standalone",
            MESSAGES,
            StandaloneNoveltyReply,
            prompt_hash="b2:test",
            retry_failed=True,
        )
    )
    assert answer.reply.scores[0].non_obviousness == 3 and len(scripted_server.requests) == 3
    assert llm.retry_failed is False
    # and an LLM set to retry can be told not to for one call
    scripted_server.responder = lambda req: "not json"
    other = [{"role": "system", "content": "judge"}, {"role": "user", "content": "[0] Does Y hold?"}]
    with pytest.raises(LLMCallFailed):
        ask(llm, other)
    retrying = LLM(llm.store, retry_failed=True)
    retrying.register(scripted_server.model_config())
    sent = len(scripted_server.requests)
    with pytest.raises(LLMCallFailed):
        asyncio.run(
            retrying.ask(
                "scripted/test",
                "novelty_standalone",
                other,
                StandaloneNoveltyReply,
                prompt_hash="b2:test",
                retry_failed=False,
            )
        )
    assert len(scripted_server.requests) == sent


# --------------------------------------------------------------------------
# replies cut at the reply budget, and the vendor's default temperature
# --------------------------------------------------------------------------


def test_a_reply_cut_at_the_budget_is_a_named_truncated_failure_and_never_reasked(tmp_path, scripted_server):
    from rqbench.testing.scripted_server import ScriptedReply

    scripted_server.responder = lambda req: ScriptedReply(GOOD[:30], finish_reason="length")
    llm = make_llm(tmp_path, scripted_server, max_tokens=64)
    with pytest.raises(LLMCallFailed) as err:
        ask(llm)
    assert err.value.reason == "truncated" and err.value.last_text == GOOD[:30]
    assert "max_tokens=64" in err.value.detail and "@max_tokens=N" in err.value.detail
    assert len(scripted_server.requests) == 1  # not re-asked as a format error
    # cached as cut: a rerun pays nothing and fails the same way; the log says truncated both times
    with pytest.raises(LLMCallFailed) as again:
        ask(llm)
    assert again.value.reason == "truncated" and len(scripted_server.requests) == 1
    statuses = [s for (s,) in llm.store._db.execute("SELECT status FROM calls ORDER BY id")]
    assert statuses == ["truncated", "truncated"]
    # --retry-failed asks afresh; a whole reply then answers
    scripted_server.responder = lambda req: GOOD
    llm.retry_failed = True
    assert ask(llm).reply.scores[0].non_obviousness == 3 and len(scripted_server.requests) == 2


def test_a_valid_looking_reply_cut_at_the_budget_is_still_truncated(tmp_path, scripted_server):
    """finish_reason decides, not whether the text happens to parse."""
    from rqbench.testing.scripted_server import ScriptedReply

    scripted_server.responder = lambda req: ScriptedReply(GOOD, finish_reason="length")
    with pytest.raises(LLMCallFailed) as err:
        ask(make_llm(tmp_path, scripted_server))
    assert err.value.reason == "truncated"


def test_an_empty_reply_cut_at_the_budget_is_truncated_not_retried_as_empty(tmp_path, scripted_server):
    """A reasoning model that spends the whole budget thinking returns no text, finish_reason "length"."""
    scripted_server.faults.append(Fault("empty", content="", finish_reason="length"))
    with pytest.raises(LLMCallFailed) as err:
        ask(make_llm(tmp_path, scripted_server))
    assert err.value.reason == "truncated" and err.value.last_text == ""
    assert len(scripted_server.requests) == 1


def test_a_reask_cut_at_the_budget_is_truncated(tmp_path, scripted_server):
    from rqbench.testing.scripted_server import ScriptedReply

    replies = iter(['{"scores": [{"relevance": 1}]}', ScriptedReply('{"scores": [', finish_reason="length")])
    scripted_server.responder = lambda req: next(replies)
    with pytest.raises(LLMCallFailed) as err:
        ask(make_llm(tmp_path, scripted_server))
    assert err.value.reason == "truncated" and len(scripted_server.requests) == 2


def test_the_vendor_default_temperature_is_not_sent_and_is_part_of_the_cache_key(tmp_path, scripted_server):
    scripted_server.responder = lambda req: GOOD
    llm = make_llm(tmp_path, scripted_server)
    vendor = llm.register(scripted_server.model_config(name="scripted/vendor", temperature=None))
    asyncio.run(llm.ask(vendor.name, "novelty_standalone", MESSAGES, StandaloneNoveltyReply, prompt_hash="b2:test"))
    ask(llm)
    assert "temperature" not in scripted_server.requests[0] and scripted_server.requests[1]["temperature"] == 0.0
    assert vendor.cache_identity()["temperature"] is None
    keys = {
        llm.keys_for(n, "novelty_standalone", MESSAGES, StandaloneNoveltyReply, "b2:test")
        for n in ("scripted/test", "scripted/vendor")
    }
    assert len(keys) == 2


def test_what_an_answer_cost_is_found_by_its_keys_in_a_later_run(tmp_path, scripted_server):
    """``Answer.keys`` names the first ask and the re-ask; ``CallStore.spent`` finds what each cost when sent,
    also when a later run gets the answer from the cache (the judge board's cost per pair)."""
    replies = iter(['{"scores": [{"relevance": 1}]}', GOOD, '{"scores": []}', '{"scores": []}'])
    scripted_server.responder = lambda req: next(replies)
    llm = make_llm(tmp_path, scripted_server)
    answer = ask(llm)
    assert answer.reasked and answer.reask_key is not None and answer.keys == (answer.key, answer.reask_key)
    spent = llm.store.spent(list(answer.keys))
    assert set(spent) == set(answer.keys)
    assert all(s.latency_s is not None and s.latency_s >= 0 and s.tokens_in for s in spent.values())
    again = ask(make_llm(tmp_path, scripted_server))  # a new run, all from the cache
    assert again.cached and again.keys == answer.keys and llm.store.spent(list(again.keys)) == spent
    with pytest.raises(LLMCallFailed) as failed:  # twice invalid: both keys are named
        ask(llm, messages=[*MESSAGES[:1], {"role": "user", "content": "[0] Does Y hold?"}])
    assert failed.value.reask_key is not None and len(failed.value.keys) == 2
    assert set(llm.store.spent(list(failed.value.keys))) == set(failed.value.keys)
    assert llm.store.spent(["b2:never-asked"]) == {}


# -- the circuit breaker: an address that cannot be reached at all ---------------------------------


def _closed_port_config(**overrides):
    """The scripted server's model configuration, after the server has gone: its port now refuses connections."""
    from rqbench.testing.scripted_server import ScriptedServer

    with ScriptedServer() as srv:
        cfg = srv.model_config(**overrides)
    return cfg


def _ask_many(llm, n: int):
    async def many():
        return await asyncio.gather(
            *[
                llm.ask(
                    "scripted/test",
                    "novelty_standalone",
                    [{"role": "user", "content": f"q{i}"}],
                    StandaloneNoveltyReply,
                    prompt_hash="h",
                )
                for i in range(n)
            ],
            return_exceptions=True,
        )

    return asyncio.run(many())


def test_a_closed_port_stops_every_call_after_one_retry_schedule(tmp_path):
    from rqbench.llm import ProviderUnreachable

    cfg = _closed_port_config(max_retries=2, max_concurrency=4)
    llm = LLM(CallStore(tmp_path / "calls.db"))
    llm.register(cfg)
    t0 = time.monotonic()
    out = _ask_many(llm, 40)
    assert all(isinstance(o, ProviderUnreachable) for o in out), {type(o).__name__ for o in out}
    assert cfg.api_base in str(out[0]) and "failed to connect" in str(out[0])
    attempts = sum(r["failures"] or 0 for r in llm.store.summary())
    # without the breaker: 40 calls x 3 attempts; with it, only the calls already in flight (4) tried at all
    assert 3 <= attempts <= 4 * 3, attempts
    assert time.monotonic() - t0 < 30
    # a later call in the same process is refused at once, with no attempt
    with pytest.raises(ProviderUnreachable):
        ask(llm, messages=[{"role": "user", "content": "one more"}])
    assert sum(r["failures"] or 0 for r in llm.store.summary()) == attempts


def test_an_address_that_answered_once_keeps_failing_call_by_call(tmp_path):
    from rqbench.testing.scripted_server import ScriptedServer

    with ScriptedServer() as srv:
        srv.responder = lambda req: GOOD
        llm = make_llm(tmp_path, srv, max_retries=1)
        assert ask(llm).reply.scores[0].non_obviousness == 3
    # the same address is gone now, but it did answer: each call is one call's failure, as before
    out = _ask_many(llm, 3)
    assert all(isinstance(o, LLMCallFailed) for o in out), {type(o).__name__ for o in out}


def test_a_dropped_connection_is_not_a_failure_to_connect(tmp_path, scripted_server):
    from rqbench.llm.provider_errors import is_connect_failure

    scripted_server.fault_plan = lambda n: Fault("reset")
    with pytest.raises(LLMCallFailed) as err:  # the server took the connection: retried, then one call's failure
        ask(make_llm(tmp_path, scripted_server, max_retries=1))
    assert not is_connect_failure(err.value.__cause__)


def test_a_grammar_compiling_server_gets_small_integer_ranges_as_enums():
    """llama.cpp ignores an integer's minimum/maximum when it compiles a schema (the embedded judge wrote 237
    on a 0-3 scale): the request carries an enum; the cache key and validation keep the schema itself."""
    from rqbench.llm.client import LLM, grammar_schema
    from rqbench.llm.config import ModelConfig
    from rqbench.records import StandaloneNoveltyReply, reply_json_schema

    schema = reply_json_schema(StandaloneNoveltyReply)
    sent = grammar_schema(schema)
    score = sent["$defs"]["NoveltyScore"]["properties"]
    assert score["relevance"]["enum"] == [0, 1] and score["originality"]["enum"] == [0, 1, 2, 3]
    assert "maximum" not in score["originality"] and "type" not in score["originality"]
    assert schema["$defs"]["NoveltyScore"]["properties"]["originality"]["maximum"] == 3  # the schema is untouched
    assert grammar_schema({"type": "integer", "minimum": 0, "maximum": 100}) == {
        "type": "integer",
        "minimum": 0,
        "maximum": 100,
    }  # a wide range stays a range
    from rqbench.llm.client import reply_schema
    from rqbench.records import OverlapReply

    overlap = grammar_schema(reply_schema(OverlapReply, {"n_candidates": 5}))["properties"]
    assert overlap["covering_subset_indices"]["items"] == {"enum": [0, 1, 2, 3, 4]}
    assert overlap["pairwise_scores"]["items"] == {"enum": [0, 1, 2, 3, 4]}  # the overlap rubric's scale
    from rqbench.records import ComparativeNoveltyReply

    ranked = grammar_schema(reply_schema(ComparativeNoveltyReply, {"n_candidates": 6}))["properties"]
    assert ranked["ranking"]["items"] == {"enum": [0, 1, 2, 3, 4, 5]}
    assert ranked["ranking"]["minItems"] == ranked["ranking"]["maxItems"] == ranked["scores"]["maxItems"] == 6
    local = ModelConfig(name="local/x", litellm_model="openai/local", json_mode="json_object_schema")
    hosted = ModelConfig(name="h", litellm_model="hosted_vllm/x", json_mode="json_schema")
    assert LLM._response_format(local, "s", schema)["schema"] == sent
    assert LLM._response_format(hosted, "s", schema)["json_schema"]["schema"] == schema


def test_a_grammar_compiling_server_gets_each_narrowness_scope_tied_to_its_score():
    """A scope label that contradicts its score is refused; the grammar offers only the pairs that agree, so a
    constrained decoder cannot write the contradiction, in a standalone reply or in each comparative score."""
    import itertools

    from rqbench.llm.client import grammar_schema, reply_schema
    from rqbench.records import (
        DIAGNOSTIC_SCOPES,
        SOURCE_BOUND_SCOPES,
        ComparativeNarrownessReply,
        StandaloneNarrownessReply,
    )

    standalone = grammar_schema(reply_schema(StandaloneNarrownessReply, None))
    comparative = grammar_schema(reply_schema(ComparativeNarrownessReply, {"n_candidates": 6}))
    for variants in (standalone["anyOf"], comparative["$defs"]["NarrownessScore"]["anyOf"]):
        pairs = {
            (
                v["properties"]["source_bound_score"]["enum"][0],
                v["properties"]["source_bound_scope"]["enum"][0],
                v["properties"]["diagnostic_test_score"]["enum"][0],
                v["properties"]["diagnostic_scope"]["enum"][0],
            )
            for v in variants
        }
        assert pairs == {
            (a, SOURCE_BOUND_SCOPES[a], b, DIAGNOSTIC_SCOPES[b]) for a, b in itertools.product(range(4), range(4))
        }
        assert all(v["required"] == variants[0]["required"] for v in variants)
        assert all(len(v["properties"]) == 9 for v in variants)  # every field kept, the reasons included
    assert comparative["properties"]["scores"]["items"] == {"$ref": "#/$defs/NarrownessScore"}
    # what a reply is checked against is unchanged: a contradiction is still refused
    with pytest.raises(ValueError, match="contradicts"):
        StandaloneNarrownessReply.model_validate(
            dict(
                mentions_source_specific_name=0,
                main_object_in_source=1,
                introduces_new_mechanism=1,
                source_bound_score=2,
                diagnostic_test_score=3,
                source_bound_scope="not_source_bound",
                diagnostic_scope="strongly_diagnostic",
            )
        )
    llama_grammar = pytest.importorskip("llama_cpp.llama_grammar")
    for sent in (standalone, comparative):  # llama.cpp compiles it (its fallback would silently drop the schema)
        assert llama_grammar.LlamaGrammar.from_json_schema(json.dumps(sent), verbose=False)._grammar
