"""What Gradio keeps of each visitor, cut to what this Space uses.

Gradio's ``SessionState`` holds a session's component objects and ``gr.State`` values, and besides them a copy of
every component's configuration, rewritten with each value an event reads or writes. The copy serves one feature,
the deep-link button (``gr.DeepLinkButton``, whose route saves a session's page to a file). This Space has no such
button: its links are ``?rq_id=`` and ``?tab=``, read from the address. Yet Gradio built the copy for every new
visitor (all of the page's components, the baked opening view's HTML included) and kept in it every table page, RQ
and figure the visitor was shown, for each of the sessions it keeps: a fifth of the Space's CPU under a crowd, and
most of its memory growth (docs/benchmarks.md, "The Space under a crowd").

``LeanSessionState`` is Gradio's session state without that copy; ``install`` makes Gradio's session holder create
it. ``/gradio_api/deep_link`` then saves a page with no components. The test of this module fails if a Gradio
upgrade gives its session state a field this one lacks.
"""

from __future__ import annotations

import datetime
import os
from copy import copy
from typing import Any

from gradio import state_holder
from gradio.components import State


class LeanSessionState(state_holder.SessionState):
    """Gradio's ``SessionState`` less the per-session configuration copy (``config_values`` stays empty)."""

    def __init__(self, blocks: Any):  # Gradio's fields, less the eager copy of every component's configuration
        self.blocks_config = copy(blocks.default_config)
        self.config_values: dict[int, Any] = {}
        self.state_data: dict[int, Any] = {}
        self._state_ttl: dict[int, Any] = {}
        self.is_closed = False
        self.STATE_TTL_WHEN_CLOSED = 1 if os.getenv("GRADIO_IS_E2E_TEST", None) else 3600

    def __setitem__(self, key: int, value: Any) -> None:
        block = self.blocks_config.blocks.get(key)
        if isinstance(block, State):
            self._state_ttl[key] = (block.time_to_live, datetime.datetime.now())
            self.state_data[key] = value
        else:
            self.blocks_config.blocks[key] = value

    def _update_config(self, key: int) -> None:
        """Gradio refreshes the copy here after an event updated a component; there is no copy."""

    def _update_value_in_config(self, key: int, value: Any) -> None:
        """Gradio writes each value an event read or wrote into the copy here; there is no copy."""


def install() -> None:
    """Every session Gradio's holder creates from now on is a ``LeanSessionState`` (idempotent)."""
    state_holder.SessionState = LeanSessionState  # type: ignore[misc]
