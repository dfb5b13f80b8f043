"""Requests and tokens per minute, per provider, shared by every task and model that calls it.

A sliding window of the last 60 seconds holds what was sent (time, estimated
tokens). A request waits until one more request fits under the requests-per-
minute limit and its tokens (the prompt's estimate plus the reply's
``max_tokens``) fit under the tokens-per-minute limit; a single request larger
than the token limit goes alone into an empty window rather than wait forever.
Waiters are served in arrival order.

Adaptive on 429. A rate-limit reply pauses every caller of the provider for its
Retry-After (or the caller's backoff) and lowers the limits in force by 30%;
without configured limits, the first 429 sets a request limit from the rate the
window was sent at. Each successful request raises them again by 5%, up to what
was configured. A real limit is hit again and again and holds the rate near it;
a stray 429 (providers also send them when busy) is forgotten within a few
dozen requests, so it never throttles a long run to a crawl.

Limits come from model spec options (``gemini/gemini-3.1-pro@rpm=60,tpm=1000000``)
or the environment (``RQB_RPM_GEMINI=60``, ``RQB_TPM_GEMINI=1000000``; provider
upper-cased); where several apply, the smallest wins. Default: none.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable

WINDOW_S = 60.0
DECREASE = 0.7  # per 429
INCREASE = 1.05  # per successful request
MIN_FACTOR = 1 / 16


def env_limits(provider: str) -> tuple[int | None, int | None]:
    """``RQB_RPM_<PROVIDER>`` and ``RQB_TPM_<PROVIDER>`` (None where unset)."""
    name = re.sub(r"[^A-Z0-9]+", "_", provider.upper())

    def read(kind: str) -> int | None:
        raw = os.environ.get(f"RQB_{kind}_{name}")
        if raw is None or not raw.strip():
            return None
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"RQB_{kind}_{name}={raw!r}: expected a whole number per minute") from None
        if value < 1:
            raise ValueError(f"RQB_{kind}_{name}={raw!r}: must be at least 1")
        return value

    return read("RPM"), read("TPM")


def _min(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


class RateLimiter:
    """One provider's window; see the module docstring."""

    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        window_s: float = WINDOW_S,
    ):
        self.rpm, self.tpm = rpm, tpm
        self.clock, self.sleep, self.window = clock, sleep, window_s
        self.factor = 1.0
        self.learned_rpm: int | None = None
        self.paused_until = 0.0
        self.rate_limits = 0  # 429s seen
        self._sent: deque[tuple[float, int]] = deque()
        self._tokens = 0
        self._lock = asyncio.Lock()

    def tighten(self, rpm: int | None, tpm: int | None) -> None:
        """Apply another model's limits for the same provider: the smaller of each wins."""
        self.rpm, self.tpm = _min(self.rpm, rpm), _min(self.tpm, tpm)

    @property
    def limits(self) -> tuple[int | None, int | None]:
        """The (requests, tokens) per window in force now."""
        base_rpm = _min(self.rpm, self.learned_rpm)
        rpm = None if base_rpm is None else max(1, int(base_rpm * self.factor))
        tpm = None if self.tpm is None else max(1, int(self.tpm * self.factor))
        return rpm, tpm

    def _expire(self, now: float) -> None:
        while self._sent and self._sent[0][0] <= now - self.window:
            self._tokens -= self._sent.popleft()[1]

    def _wait_for(self, now: float, tokens: int) -> float:
        if now < self.paused_until:
            return self.paused_until - now
        rpm, tpm = self.limits
        if rpm is not None and len(self._sent) >= rpm:
            return self._sent[len(self._sent) - rpm][0] + self.window - now
        if tpm is not None and self._sent and self._tokens + tokens > tpm:
            freed = 0
            for t, n in self._sent:  # the earliest moment enough tokens have left the window
                freed += n
                if self._tokens - freed + tokens <= tpm:
                    return t + self.window - now
            return self._sent[-1][0] + self.window - now
        return 0.0

    async def acquire(self, tokens: int) -> float:
        """Wait until a request of ``tokens`` may go, record it; the seconds waited."""
        waited = 0.0
        async with self._lock:
            while True:
                now = self.clock()
                self._expire(now)
                wait = self._wait_for(now, tokens)
                if wait <= 0:
                    self._sent.append((now, tokens))
                    self._tokens += tokens
                    return waited
                await self.sleep(wait)
                waited += wait

    def rate_limited(self, wait_s: float) -> None:
        """A 429: pause everyone for ``wait_s`` (the provider's Retry-After, or a backoff) and lower the limits."""
        now = self.clock()
        self.rate_limits += 1
        self.paused_until = max(self.paused_until, now + max(0.0, wait_s))
        if self.rpm is None and self.learned_rpm is None:
            # the rate the window was sent at (per minute; spans under a second count as one second)
            self._expire(now)
            span = max(1.0, now - self._sent[0][0]) if self._sent else self.window
            self.learned_rpm = max(1, math.ceil(len(self._sent) * self.window / span))
        self.factor = max(MIN_FACTOR, self.factor * DECREASE)

    def succeeded(self) -> None:
        """A request went through: raise the lowered limits a step back towards the configured ones."""
        if self.factor < 1.0:
            self.factor = min(1.0, self.factor * INCREASE)
