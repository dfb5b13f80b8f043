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
    """At most ``n`` holders at once; a freed slot goes to the queued waiter with the smallest priority (FIFO on ties).

    A waiter is a future: ``enqueue`` grants it a slot at once when one is free, or
    queues it; ``release`` hands the slot straight to the best queued waiter. Waiters
    can be created first and queued later (a follower is queued when its leader is
    answered, just before the leader's slot is released, so it can take that slot).
    """

    def __init__(self, n: int):
        if n < 1:
            raise ValueError("concurrency must be >= 1")
        self._free = n
        self._waiters: list[tuple[tuple[int, ...], int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def enqueue(self, priority: tuple[int, ...], fut: asyncio.Future[None]) -> None:
        if self._free > 0:  # a free slot means nobody is queued: release hands slots straight to waiters
            self._free -= 1
            fut.set_result(None)
        else:
            heapq.heappush(self._waiters, (priority, next(self._order), fut))

    async def wait(self, fut: asyncio.Future[None]) -> None:
        """Wait for ``fut``'s slot; a waiter cancelled just as its slot was granted passes the slot on."""
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()
            raise

    async def acquire(self, priority: tuple[int, ...]) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.enqueue(priority, fut)
        await self.wait(fut)

    def release(self) -> None:
        while self._waiters:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():  # a cancelled waiter's future is done: skipped
                fut.set_result(None)
                return
        self._free += 1


class InstanceScheduler:
    """Runs each instance's calls family by family, leaders first, sharing ``concurrency`` slots by instance order.

    Priority is (instance, family, leader or follower, position): on a one-slot
    server (llama.cpp's Python server) that is instance by instance and, within
    one, family by family, each leader straight followed by its followers, so the
    slot's prompt is reused by every sibling; with more slots, the other families'
    leaders run while a family's leader fills the cache.
    """

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
        loop = asyncio.get_running_loop()
        families: dict[Hashable, int] = {}
        followers: dict[int, list[tuple[tuple[int, ...], asyncio.Future[None]]]] = {}
        plan = []
        for pos, item in enumerate(items):
            key = family(item)
            fam = families.setdefault(key, len(families))
            role = LEADER if fam not in followers else FOLLOWER
            fut: asyncio.Future[None] = loop.create_future()
            priority = (instance, fam, role, pos)
            if role == LEADER:
                followers[fam] = []
                self._slots.enqueue(priority, fut)
            else:  # queued when its leader is answered (or has failed): then its prefix is in the cache
                followers[fam].append((priority, fut))
            plan.append((fam, role, fut))

        async def one(pos: int, item: T) -> R:
            fam, role, fut = plan[pos]
            await self._slots.wait(fut)
            try:
                return await call(item)
            finally:
                if role == LEADER:
                    for priority, waiting in followers[fam]:
                        self._slots.enqueue(priority, waiting)
                self._slots.release()

        return list(await asyncio.gather(*(one(i, item) for i, item in enumerate(items))))
