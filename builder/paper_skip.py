"""The one error a builder stage raises for a paper it cannot use.

A skip is not a crash: the build records ``reason`` (a short snake_case name
that a manifest can count) and ``detail`` (which file, which line, what was
wrong) and moves on to the next paper.
"""

from __future__ import annotations

import re

_REASON_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class PaperSkipped(Exception):
    """A paper that cannot be used, with a countable reason and a readable detail."""

    def __init__(self, reason: str, detail: str = "") -> None:
        if not _REASON_RE.match(reason):
            raise ValueError(f"skip reason must be snake_case, got {reason!r}")
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.reason, self.detail))
