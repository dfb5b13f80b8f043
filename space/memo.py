"""Values the Space computes once and hands to every visitor who asks for the same thing.

Under a crowd the same few views are asked for over and over: the default leaderboard, the
combined judge's plots, the queue. ``ViewCache`` keeps what was computed from one version of the
stored data (a new version drops the rest); ``Recent`` keeps one value for a few seconds (a store
listing). Both compute a missing value once: visitors who ask while it is being computed wait for
that result instead of computing it again, so a crowd arriving after a change pays for one
computation, not one each.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")


def _settle(future: Future, compute: Callable[[], T]) -> None:
    try:
        future.set_result(compute())
    except BaseException as exc:  # the waiters get the same error; the caller drops the entry
        future.set_exception(exc)


class ViewCache(Generic[T]):
    """At most ``max_entries`` values computed from one data version, least recently used dropped first."""

    def __init__(self, max_entries: int = 32):
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, Future] = OrderedDict()
        self._version: Hashable = None
        self._lock = threading.Lock()

    def get(self, version: Hashable, key: Hashable, compute: Callable[[], T]) -> T:
        """The value for ``key`` at ``version``, computed by ``compute`` when nobody has it yet."""
        with self._lock:
            if version != self._version:
                self._entries.clear()
                self._version = version
            future = self._entries.get(key)
            owner = future is None
            if owner:
                future = Future()
                self._entries[key] = future
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
        if owner:
            _settle(future, compute)
            if future.exception() is not None:
                with self._lock:
                    if self._entries.get(key) is future:
                        del self._entries[key]
        return future.result()

    def __len__(self) -> int:
        return len(self._entries)


class Recent(Generic[T]):
    """One value, recomputed when it is older than ``max_age_s`` or was invalidated; ``stamped`` also gives
    which computation it came from (a count), the version to cache what is derived from it under."""

    def __init__(self, compute: Callable[[], T], max_age_s: float, clock: Callable[[], float] = time.monotonic):
        self.compute, self.max_age_s, self.clock = compute, max_age_s, clock
        self._current: tuple[int, Future] | None = None  # (which computation, its result)
        self._at = 0.0
        self._count = 0
        self._lock = threading.Lock()

    def get(self) -> T:
        return self.stamped()[1]

    def stamped(self) -> tuple[int, T]:
        with self._lock:
            current = self._current
            owner = current is None or (current[1].done() and self.clock() - self._at >= self.max_age_s)
            if owner:
                self._count += 1
                current = self._current = (self._count, Future())
                self._at = self.clock()
        count, future = current
        if owner:
            _settle(future, self.compute)
            if future.exception() is not None:
                self.invalidate(future)
        return count, future.result()

    def invalidate(self, only: Future | None = None) -> None:
        """The next ``get`` computes afresh (after a write this process made, say)."""
        with self._lock:
            if self._current is not None and (only is None or self._current[1] is only):
                self._current = None
