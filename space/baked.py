"""The page as Gradio hands it out, with the data already in it: a page open that costs what a static page costs.

Gradio answers ``GET /`` (and ``/config``) with a deep copy of ``Blocks.config``, built from each component's
constructor values. A page whose figures come from a load event makes every visitor join the queue and read an
event stream before they see a row. ``BakedPage`` instead writes the opening view (the leaderboard's first page,
the banners, the pickers' choices, the About tab's note) into those components and into ``Blocks.config`` once per
version of the data, so the HTML of ``GET /`` already carries it. ``FreshPage``, a small ASGI middleware, asks for
a new bake before Gradio builds a page (at most one look at the stores every few seconds, as page loads did), so
a store that changes without a restart still shows.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import anyio
import gradio as gr
from gradio.blocks import Block, BlocksConfig

log = logging.getLogger(__name__)

# The paths whose answer Gradio builds from ``Blocks.config``: the page itself and its configuration
PAGE_PATHS = frozenset({"/", "/config", "/config/"})


def changes_of(update: Any) -> dict[str, Any]:
    """What a handler's return value for one output changes, as constructor arguments: a component
    (``gr.Dropdown(choices=...)``), an update dict (``gr.update(visible=False)``, ``gr.skip()``: nothing) or a
    bare value."""
    if isinstance(update, Block):
        return dict(update.constructor_args)
    if isinstance(update, dict) and update.get("__type__") == "update":
        return {k: v for k, v in update.items() if k != "__type__"}
    return {"value": update}


def apply(component: gr.components.Component, update: Any) -> bool:
    """Write ``update`` into ``component`` as if it had been built with it (the value postprocessed, choices
    normalised, as Gradio does for an event's update); True when something changed."""
    changes = changes_of(update)
    if not changes:
        return False
    kwargs = {**component.constructor_args, **changes, "render": False}
    fresh = type(component)(**kwargs)  # the constructor normalises what it is given; nothing of it is rendered
    for name in changes:
        setattr(component, name, getattr(fresh, name))
    component.constructor_args.update(changes)
    return True


class BakedPage:
    """The opening view of the page written into its components, recomputed when ``key()`` changes.

    ``reply()`` gives one update per component of ``outputs`` (what the opening view shows in each); ``key()``
    names the version of the data that reply comes from, and is cheap (it is asked on every page open)."""

    def __init__(
        self,
        demo: gr.Blocks,
        outputs: Sequence[gr.components.Component],
        reply: Callable[[], Sequence[Any]],
        key: Callable[[], Hashable],
    ):
        self.demo, self.outputs, self.reply, self.key = demo, list(outputs), reply, key
        self._baked: Hashable = None
        self._ever = False
        self._lock = threading.Lock()
        self.bakes = 0  # how many times the page was rewritten (tests, the benchmark's notes)

    def bake(self) -> bool:
        """Bring the page up to the data's current version; True when it was rewritten. One bake at a time: a
        crowd arriving after a change waits for the one bake and finds the page rewritten."""
        with self._lock:
            key = self.key()
            if self._ever and key == self._baked:
                return False
            updates = list(self.reply())
            if len(updates) != len(self.outputs):
                raise ValueError(f"the opening view has {len(updates)} updates for {len(self.outputs)} components")
            changed = [c for c, u in zip(self.outputs, updates, strict=True) if apply(c, u)]
            self._write_config(changed)
            self._baked, self._ever = key, True
            self.bakes += 1
            return True

    def _write_config(self, changed: list[gr.components.Component]) -> None:
        """Replace each changed component's entry in ``Blocks.config`` (what ``GET /`` copies), one entry at a
        time: a page built meanwhile gets each entry whole, old or new."""
        config = getattr(self.demo, "config", None)
        if not config or not changed:
            return
        ids = {c._id: c for c in changed}
        entries = config.get("components", [])
        for i, entry in enumerate(entries):
            component = ids.get(entry.get("id"))
            if component is not None:
                entries[i] = BlocksConfig.config_for_block(component._id, [], component)


# What Gradio's page depends on besides the baked data: the address it was asked at (the page's root URL is built
# from these headers) and the query (``?rq_id=``, ``?tab=``, Gradio's ``?page=``). A request carrying Gradio's own
# sign-in cookie (``access-token-*``) is never answered from the cache: its page names the user.
_ADDRESS_HEADERS = (b"host", b"x-forwarded-host", b"x-forwarded-proto", b"x-forwarded-port", b"x-forwarded-prefix")
_PERSONAL = b"access-token"
# Answers kept per bake: one per address and query a crowd repeats (about 300 kB each), the least recent dropped
CACHED_PAGES = 32


class FreshPage:
    """ASGI middleware: before Gradio builds the page (``GET /``, ``/config``), the page is baked for the data
    as it stands (``BakedPage.bake``, in a worker thread: it may read the stores). Every other request passes,
    ``HEAD /`` included: Gradio's launch asks it with a 3 s timeout, and the first bake reads every results file.

    Gradio builds the page anew for every request (a deep copy of the page's configuration, its root URL written
    into every component, the template rendered): the same bytes for everyone between two bakes. With ``version``
    (the bake's count) the first answer per bake, address and query is kept and sent again as it is, with an
    ``ETag``, gzipped (once) for a client that accepts it; a browser that revalidates with ``If-None-Match`` gets
    304."""

    def __init__(self, app: Any, bake: Callable[[], Any], version: Callable[[], Hashable] | None = None):
        self.app, self._bake, self._version = app, bake, version
        self._pages: OrderedDict[tuple, tuple[int, list, bytes, bytes | None]] = OrderedDict()
        self._baking: anyio.Event | None = None  # set while one request brings the page up to date

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if not (scope["type"] == "http" and scope["method"] == "GET" and scope["path"] in PAGE_PATHS):
            await self.app(scope, receive, send)
            return
        await self._bring_up_to_date(scope)
        key = self._key(scope)
        kept = self._pages.get(key) if key is not None else None
        if kept is not None:
            self._pages.move_to_end(key)
            await self._send_kept(scope, send, *kept)
            return
        if key is None:
            await self.app(scope, receive, send)
            return
        start: dict = {}
        body = bytearray()

        async def keep(message: dict) -> None:
            """Hold the page until its last byte, then send it as kept (with its ETag), or as built."""
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            if self._cacheable(start):
                await self._send_kept(scope, send, *self._store(key, start, bytes(body)))
                return
            await send(start)
            await send({"type": "http.response.body", "body": bytes(body)})

        await self.app(scope, receive, keep)

    async def _bring_up_to_date(self, scope: dict) -> None:
        """One look at the data at a time, in a worker thread. A request that arrives during a look, with a page
        already kept for the current bake, goes out with that page (it is at most that look behind) instead of
        queueing another look; without one it waits for the look in flight."""
        if self._baking is not None:
            key = self._key(scope)
            if key is not None and key in self._pages:
                return
            await self._baking.wait()
            return
        self._baking = anyio.Event()
        try:
            await anyio.to_thread.run_sync(self._bake)
        except Exception:  # the page goes out as last baked: a store outage must not close the Space
            log.exception("the page could not be brought up to date; serving it as last baked")
        finally:
            self._baking.set()
            self._baking = None

    def _key(self, scope: dict) -> tuple | None:
        """The cache key of a page request, or None where it must be built (no version; a personal page)."""
        if self._version is None:
            return None
        headers = dict(scope.get("headers") or ())
        if _PERSONAL in headers.get(b"cookie", b""):
            return None
        address = tuple(headers.get(h, b"") for h in _ADDRESS_HEADERS)
        where = (scope.get("scheme"), scope.get("root_path", ""), scope["path"], scope.get("query_string", b""))
        return (self._version(), *where, *address)

    @staticmethod
    def _cacheable(start: dict) -> bool:
        return start.get("status") == 200 and not any(k.lower() == b"set-cookie" for k, _ in start.get("headers", ()))

    def _store(self, key: tuple, start: dict, body: bytes) -> tuple[int, list, bytes, bytes | None]:
        """Keep a built page, with its ETag and, unless Gradio already encoded it, its gzip form (made once here:
        Gradio compresses only paths with a file extension, so the page left as 300 kB of plain HTML)."""
        version = key[0]
        for old in [k for k in self._pages if k[0] != version]:  # a new bake: the old pages are stale
            del self._pages[old]
        etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'.encode()
        own = start.get("headers", ())
        encoded = any(k.lower() == b"content-encoding" for k, _ in own)
        headers = [(k, v) for k, v in own if k.lower() not in (b"etag", b"content-length", b"vary")]
        headers += [(b"etag", etag), (b"vary", b"accept-encoding")]
        packed = None if encoded else gzip.compress(body, compresslevel=6, mtime=0)
        self._pages[key] = kept = (int(start["status"]), headers, body, packed)
        while len(self._pages) > CACHED_PAGES:
            self._pages.popitem(last=False)
        return kept

    @staticmethod
    async def _send_kept(
        scope: dict, send: Callable, status: int, headers: list, body: bytes, packed: bytes | None
    ) -> None:
        asked = dict(scope.get("headers") or ())
        etag = next(v for k, v in headers if k == b"etag")
        if packed is not None and takes_gzip(asked.get(b"accept-encoding", b"")):
            etag = etag[:-1] + b'-gzip"'  # another representation: its own tag
            headers = [(k, etag if k == b"etag" else v) for k, v in headers] + [(b"content-encoding", b"gzip")]
            body = packed
        tags = [t.strip() for t in asked.get(b"if-none-match", b"").split(b",") if t.strip()]
        if etag in tags or b"*" in tags:
            kept = [(k, v) for k, v in headers if k in (b"etag", b"cache-control", b"vary")]
            await send({"type": "http.response.start", "status": 304, "headers": kept})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [*headers, (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def takes_gzip(accept_encoding: bytes) -> bool:
    """Whether an ``Accept-Encoding`` header accepts gzip (by name or ``*``, with a quality above 0)."""
    for part in accept_encoding.decode("latin-1").lower().split(","):
        name, _, params = part.strip().partition(";")
        quality = params.strip().removeprefix("q=") if params.strip().startswith("q=") else "1"
        try:
            accepted = float(quality) > 0
        except ValueError:
            accepted = False
        if name.strip() in ("gzip", "*") and accepted:
            return True
    return False
