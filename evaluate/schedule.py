"""The order judge calls go out in: instance by instance, one call of each shared prefix first.

A prefix cache (a provider's, vLLM's, llama.cpp's) only serves a call the prefix
that an earlier call has already been processed with. The calls of one instance
fall into prefix families (same step, same background: ``JudgeRequest.shared_prefix``).
So each family sends one leader first and the rest once the leader is answered,
and a free slot goes to the earliest instance with a call ready: an instance's
calls run close together while its prefix is warm, and a later instance only takes
a slot that would otherwise stand idle (while an earlier one waits on its leaders),
so the wall time stays that of ``concurrency`` calls in flight.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

LEADER, FOLLOWER = 0, 1


class PrioritySlots:
    """At most ``n`` holders at once; a freed slot goes to the waiter with the smallest priority (FIFO on ties)."""

    def __init__(self, n: int):
        if n < 1:
            raise ValueError("concurrency must be >= 1")
        self._free = n
        self._waiters: list[tuple[tuple[int, ...], int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, priority: tuple[int, ...]) -> None:
        if self._free > 0:  # a free slot means nobody waits: release hands slots straight to waiters
            self._free -= 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._order), fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # the slot was handed over as we were cancelled: pass it on
                self.release()
            raise

    def release(self) -> None:
        while self._waiters:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():  # a cancelled waiter's future is done: skipped
                fut.set_result(None)
                return
        self._free += 1


class InstanceScheduler:
    """Runs each instance's calls with leaders first, sharing ``concurrency`` slots across instances by instance order."""

    def __init__(self, concurrency: int):
        self._slots = PrioritySlots(concurrency)

    async def run(
        self,
        instance: int,
        items: Sequence[T],
        family: Callable[[T], Hashable],
        call: Callable[[T], Awaitable[R]],
    ) -> list[R]:
        """Results of ``call`` over ``items`` (in their order); ``instance`` is the instance's rank in the run."""
        leaders: dict[Hashable, asyncio.Event] = {}
        roles = []
        for item in items:
            key = family(item)
            if key in leaders:
                roles.append((FOLLOWER, leaders[key]))
            else:
                leaders[key] = asyncio.Event()
                roles.append((LEADER, leaders[key]))

        async def one(pos: int, item: T) -> R:
            role, done = roles[pos]
            if role == FOLLOWER:
                await done.wait()  # its prefix is in the cache once the leader is answered (or has failed)
            await self._slots.acquire((instance, role, pos))
            try:
                return await call(item)
            finally:
                self._slots.release()
                if role == LEADER:
                    done.set()

        return list(await asyncio.gather(*(one(i, item) for i, item in enumerate(items))))
