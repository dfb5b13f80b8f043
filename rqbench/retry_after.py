"""Reading a ``Retry-After`` header, shared by the LLM layer and the builder's HTTP clients."""

from __future__ import annotations

import email.utils
import logging
from datetime import datetime, timezone

log = logging.getLogger(__name__)


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass  # not delta-seconds, so it should be an HTTP date
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        log.warning("ignoring unreadable Retry-After header %r", value)
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max(0.0, (when - now).total_seconds())
