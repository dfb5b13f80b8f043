"""Per-provider requests and tokens per minute: paced on a fake clock, shared across models, slowed by 429s."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from replay_server import FakeTime

from rqbench.llm import LLM, CallStore
from rqbench.llm.config import hosted_config
from rqbench.llm.ratelimit import RateLimiter, env_limits
from rqbench.records import StandaloneNoveltyReply
from rqbench.testing.scripted_server import Fault

GOOD = json.dumps({"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 1, "non_obviousness": 3}]})


def fake_limiter(fake: FakeTime, **kw) -> RateLimiter:
    async def sleep(s: float) -> None:
        fake.sleep(s)
        await asyncio.sleep(0)

    return RateLimiter(clock=fake.clock, sleep=sleep, **kw)


def start_times(lim: RateLimiter, fake: FakeTime, tokens: list[int]) -> list[float]:
    async def one(n: int) -> float:
        await lim.acquire(n)
        return fake.t

    async def run() -> list[float]:
        return await asyncio.gather(*(one(n) for n in tokens))

    return asyncio.run(run())


def test_requests_per_minute_are_paced_by_a_sliding_window():
    fake = FakeTime()
    assert start_times(fake_limiter(fake, rpm=3), fake, [1] * 7) == [0, 0, 0, 60, 60, 60, 120]


def test_tokens_per_minute_count_prompt_and_reply_tokens():
    fake = FakeTime()
    lim = fake_limiter(fake, tpm=1000)
    assert start_times(lim, fake, [400, 400, 400, 400, 1500]) == [0, 0, 60, 60, 120]  # an oversized one goes alone


def test_no_limits_means_no_waiting():
    fake = FakeTime()
    assert start_times(fake_limiter(fake), fake, [10**6] * 50) == [0] * 50


def test_a_429_pauses_every_caller_and_lowers_the_limit_until_requests_succeed_again():
    fake = FakeTime()
    lim = fake_limiter(fake, rpm=4)
    assert start_times(lim, fake, [1] * 4) == [0] * 4
    fake.t = 61.0
    lim.rate_limited(5.0)  # Retry-After: 5
    assert lim.limits == (2, None)  # 4 x 0.7
    assert start_times(lim, fake, [1] * 3) == [66, 66, 126]  # nobody before the pause ends, then 2 a minute
    for _ in range(8):  # 0.7 x 1.05^8 > 1
        lim.succeeded()
    assert lim.limits == (4, None)  # back to the configured limit, never above it
    for _ in range(100):
        lim.rate_limited(0.0)
    assert lim.limits == (1, None)  # a floor: 1/16 of the limit, at least one request a minute


def test_stray_429s_among_many_successes_do_not_throttle_a_run():
    fake = FakeTime()
    lim = fake_limiter(fake, rpm=600)
    for i in range(300):  # one 429 in 30 requests, as a busy provider sends them
        lim.rate_limited(0.0) if i % 30 == 0 else lim.succeeded()
    assert lim.limits[0] >= 500


def test_without_configured_limits_a_429_learns_one_from_the_window():
    fake = FakeTime()
    lim = fake_limiter(fake)
    start_times(lim, fake, [1] * 10)
    fake.t = 5.0
    lim.rate_limited(0.0)  # 10 requests in 5 s: 120 a minute, lowered by 30%
    assert lim.learned_rpm == 120 and lim.limits == (84, None)
    lim.rate_limited(0.0)
    assert lim.limits == (58, None)


def test_limits_from_spec_options_and_environment_the_smaller_wins(monkeypatch):
    cfg = hosted_config("gemini/gemini-3.1-pro@rpm=60,tpm=1000000")
    assert (cfg.rpm, cfg.tpm) == (60, 1_000_000)
    assert cfg.cache_identity() == hosted_config("gemini/gemini-3.1-pro").cache_identity()  # not in the cache key
    monkeypatch.setenv("RQB_RPM_GEMINI", "30")
    assert env_limits("gemini") == (30, None)
    lim = RateLimiter(*env_limits("gemini"))
    lim.tighten(cfg.rpm, cfg.tpm)
    assert lim.limits == (30, 1_000_000)
    monkeypatch.setenv("RQB_TPM_HOSTED_VLLM", "lots")
    with pytest.raises(ValueError, match="RQB_TPM_HOSTED_VLLM"):
        env_limits("hosted_vllm")


def test_a_429_with_retry_after_holds_back_every_task_of_the_provider(tmp_path, scripted_server):
    """Four concurrent calls, two models of one provider: after the 429, nobody is sent before Retry-After."""
    arrivals: list[float] = []
    lock = threading.Lock()
    limited_at: list[float] = []

    def responder(req):
        with lock:
            arrivals.append(time.monotonic())
        time.sleep(0.05)
        return GOOD

    def plan(n):
        if n == 0:
            limited_at.append(time.monotonic())
            return Fault("status", 429, headers={"Retry-After": "1"})
        return None

    scripted_server.responder = responder
    scripted_server.fault_plan = plan
    llm = LLM(CallStore(tmp_path / "calls.db"))
    llm.register(scripted_server.model_config(name="a"))
    llm.register(scripted_server.model_config(name="b", temperature=0.5))
    msgs = [[{"role": "system", "content": "judge"}, {"role": "user", "content": f"[0] Q{i}?"}] for i in range(4)]

    async def run():
        first = asyncio.ensure_future(llm.ask("a", "s", msgs[0], StandaloneNoveltyReply, prompt_hash="h"))
        while not limited_at:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # the 429 has been answered; now the others arrive
        rest = [llm.ask("ab"[i % 2], "s", msgs[i], StandaloneNoveltyReply, prompt_hash="h") for i in range(1, 4)]
        return await asyncio.gather(first, *rest)

    answers = asyncio.run(run())
    assert len(answers) == 4 and len(arrivals) == 4
    assert min(arrivals) - limited_at[0] >= 0.95  # Retry-After: 1 honoured by all, not just the task that got it
