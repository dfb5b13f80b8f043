"""Cached input tokens: read from each provider's usage fields, logged, priced at the cache rate; and the dry run's model."""

from __future__ import annotations

import asyncio
import json

import litellm
import pytest

from rqbench.llm import LLM, CallStore, DryRun
from rqbench.llm.estimate import CACHE_RULES, PrefixCacheModel, PriceBook
from rqbench.llm.usage import usage_of
from rqbench.records import StandaloneNoveltyReply
from rqbench.testing.scripted_server import ScriptedServer, prefix_cache_usage

GOOD = json.dumps({"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 1, "non_obviousness": 3}]})
SYSTEM = {"role": "system", "content": "You judge research questions against their background. " * 200}


def messages(i: int) -> list[dict[str, str]]:
    return [SYSTEM, {"role": "user", "content": f"[0] Does variant {i} hold?"}]


def ask(llm: LLM, model: str, i: int):
    return asyncio.run(llm.ask(model, "novelty_standalone", messages(i), StandaloneNoveltyReply, prompt_hash="h"))


@pytest.mark.parametrize("style", ["openai", "deepseek", "anthropic"])
def test_cached_tokens_are_logged_from_each_providers_usage_fields(tmp_path, style):
    with ScriptedServer(lambda req: GOOD, usage_extra=prefix_cache_usage(style, min_tokens=64)) as srv:
        llm = LLM(CallStore(tmp_path / "calls.db"))
        llm.register(srv.model_config(name="openai/gpt-4o", litellm_model="openai/gpt-4o"))
        ask(llm, "openai/gpt-4o", 0)
        ask(llm, "openai/gpt-4o", 1)
    rows = llm.store._db.execute(
        "SELECT tokens_in, tokens_cached, tokens_cache_write, cost_usd FROM calls ORDER BY id"
    ).fetchall()
    (in0, cached0, _, _), (in1, cached1, write1, cost1) = rows
    assert cached0 == 0 and cached1 > 0.9 * in1  # the second call shares the long system prompt
    assert write1 == (in1 - cached1 if style == "anthropic" else None)
    price = litellm.model_cost["gpt-4o"]
    out = llm.store._db.execute("SELECT tokens_out FROM calls ORDER BY id").fetchall()[1][0]
    # Anthropic-style cache writes are billed at the cache-write rate, which for gpt-4o is its input rate
    expected = (in1 - cached1) * price["input_cost_per_token"] + cached1 * price["cache_read_input_token_cost"]
    expected += out * price["output_cost_per_token"]
    assert cost1 == pytest.approx(expected, rel=1e-9)
    full = in1 * price["input_cost_per_token"] + out * price["output_cost_per_token"]
    assert cost1 < 0.7 * full  # the discount is really applied


def test_usage_of_reads_plain_dicts_as_batch_files_carry_them():
    assert usage_of({"prompt_tokens": 100, "completion_tokens": 5, "prompt_cache_hit_tokens": 64}).cached == 64
    u = usage_of({"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 80}})
    assert (u.tokens_in, u.cached, u.billed_in) == (100, 80, 20)
    assert usage_of(None).tokens_in is None


def test_calls_cli_shows_billed_and_cached_input_tokens(tmp_path, capsys):
    from rqbench.cli import main

    with ScriptedServer(lambda req: GOOD, usage_extra=prefix_cache_usage("openai", min_tokens=64)) as srv:
        llm = LLM(CallStore(tmp_path / "calls.db"))
        llm.register(srv.model_config(name="openai/gpt-4o", litellm_model="openai/gpt-4o"))
        ask(llm, "openai/gpt-4o", 0)
        ask(llm, "openai/gpt-4o", 1)
    row = llm.store.summary()[0]
    assert row["tokens_in"] == row["tokens_in_billed"] + row["tokens_in_cached"] and row["tokens_in_cached"] > 0
    assert main(["calls", "--db", str(tmp_path / "calls.db")]) == 0
    out = capsys.readouterr().out
    head, line = out.splitlines()[0].split(), [ln for ln in out.splitlines() if "gpt-4o" in ln][0].split()
    assert "in_billed" in head and "in_cached" in head
    assert line[head.index("in_billed")] == str(row["tokens_in_billed"])
    assert line[head.index("in_cached")] == str(row["tokens_in_cached"])


# -- the dry run's prefix-cache model ---------------------------------------------------


def test_prefix_model_counts_the_longest_prefix_sent_before_to_the_same_model():
    m = PrefixCacheModel(block_bytes=64)
    rule = CACHE_RULES["openai"]
    assert m.cached_tokens("a", messages(0), 2000, rule) == 0  # nothing sent before
    second = m.cached_tokens("a", messages(1), 2000, rule)
    shared, total = len(json.dumps(SYSTEM["content"])) - 2, sum(len(x["content"]) for x in messages(1))
    assert 0.9 * 2000 * shared / total <= second <= 2000
    assert m.cached_tokens("b", messages(2), 2000, rule) == 0  # another model has its own cache
    short = [{"role": "system", "content": "x" * 300}, {"role": "user", "content": "y"}]
    m.cached_tokens("a", short, 100, rule)
    assert m.cached_tokens("a", short, 100, rule) == 0  # under the provider's minimum: not cached


def test_prefix_model_minimum_is_per_provider():
    m = PrefixCacheModel(block_bytes=64)
    short = [{"role": "system", "content": "x" * 1200}, {"role": "user", "content": "y"}]
    m.shared_prefix_bytes("s", short)
    assert m.cached_tokens("s", short, 300, CACHE_RULES["deepseek"]) >= 64  # DeepSeek caches from 64 tokens
    assert m.cached_tokens("s", short, 300, CACHE_RULES["openai"]) == 0  # OpenAI from 1,024
    assert m.cached_tokens("s", short, 300, CACHE_RULES["anthropic"]) == 0  # under Anthropic's 1,024-token minimum


def test_price_book_matches_litellm_per_call():
    book = PriceBook()
    for model in ("deepseek/deepseek-v4-pro", "gemini/gemini-3.1-pro-preview"):
        for n_in, cached in ((5000, 4000), (250_000, 100_000)):
            r = book.rates(model, n_in)
            c_in, c_out = litellm.cost_per_token(
                model=model, prompt_tokens=n_in, completion_tokens=700, cache_read_input_tokens=cached
            )
            mine = (n_in - cached) * r.full + cached * r.cached + 700 * r.out
            assert mine == pytest.approx(c_in + c_out, rel=1e-9)
    assert book.rates("openai/no-such-model", 100) is None


def test_dry_run_line_shows_billed_and_cached_tokens_and_three_prices(tmp_path):
    dry = LLM(CallStore(tmp_path / "calls.db"), dry_run=True)
    from rqbench.llm.config import ModelConfig

    dry.register(ModelConfig(name="deepseek/deepseek-v4-pro", litellm_model="deepseek/deepseek-v4-pro"))
    for i in range(4):
        with pytest.raises(DryRun):
            ask(dry, "deepseek/deepseek-v4-pro", i)
    est = dry.estimate
    assert est.calls == 4 and 0 < est.tokens_in_cached < est.tokens_in
    assert est.cost_usd < est.cost_naive_usd and est.cost_batch_usd == pytest.approx(est.cost_usd)  # no batch API
    line = est.line()
    assert f"~{est.tokens_in_billed} billed in full, ~{est.tokens_in_cached} from the provider's prefix cache" in line
    assert "with prefix caching" in line and "without" in line

    gem = LLM(CallStore(tmp_path / "calls.db"), dry_run=True, batch=True)
    gem.register(ModelConfig(name="g", litellm_model="gemini/gemini-3.1-pro-preview"))
    for i in range(4):
        with pytest.raises(DryRun):
            ask(gem, "g", i)
    assert gem.estimate.cost_batch_usd < gem.estimate.cost_usd < gem.estimate.cost_naive_usd
    assert "by batch" in gem.estimate.line()
