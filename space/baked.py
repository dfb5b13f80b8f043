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

import logging
import threading
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


class FreshPage:
    """ASGI middleware: before Gradio builds the page (``GET /``, ``/config``), the page is baked for the data
    as it stands (``BakedPage.bake``, in a worker thread: it may read the stores). Every other request passes,
    ``HEAD /`` included: Gradio's launch asks it with a 3 s timeout, and the first bake reads every results file."""

    def __init__(self, app: Any, bake: Callable[[], Any]):
        self.app, self._bake = app, bake

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] in PAGE_PATHS:
            try:
                await anyio.to_thread.run_sync(self._bake)
            except Exception:  # the page goes out as last baked: a store outage must not close the Space
                log.exception("the page could not be brought up to date; serving it as last baked")
        await self.app(scope, receive, send)
