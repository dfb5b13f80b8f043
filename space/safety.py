"""What keeps secrets out of pages and logs, and what limits how fast one user can push work at the Space."""

from __future__ import annotations

import os
import re
import threading
import time
from collections import deque

# Environment variables whose values must never appear on a page or in a log line.
SECRET_ENV = re.compile(r"(TOKEN|API_KEY|SECRET|PASSWORD)$")
# Token shapes worth hiding even when they did not come from our environment.
TOKEN_SHAPES = re.compile(r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,})\b")


def redact(text: str) -> str:
    """``text`` with every secret from the environment, and anything shaped like an API token, replaced."""
    for name, value in os.environ.items():
        if SECRET_ENV.search(name) and value and len(value) >= 6:
            text = text.replace(value, f"<{name} hidden>")
    return TOKEN_SHAPES.sub("<token hidden>", text)


class AttemptLimiter:
    """At most ``limit`` attempts per key in any ``window_s`` seconds (uploads, validations)."""

    def __init__(self, limit: int, window_s: float, clock=time.monotonic):
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = self.clock()
        with self._lock:
            q = self._seen.setdefault(key, deque())
            while q and now - q[0] >= self.window_s:
                q.popleft()
            if len(q) >= self.limit:
                return False
            q.append(now)
            return True

    def retry_in(self, key: str) -> float:
        q = self._seen.get(key)
        if not q:
            return 0.0
        return max(0.0, self.window_s - (self.clock() - q[0]))
