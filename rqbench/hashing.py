"""Content hashes: blake2b over canonical JSON, so a key is stable across runs and versions.

Changing the canonical form changes every hash (and so every cache key): don't.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and compact separators; the one form we hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(value: Any, *, size: int = 16) -> str:
    """``b2:<hex>`` of the canonical JSON of ``value`` (bytes are hashed as they are)."""
    data = value if isinstance(value, bytes) else canonical_json(value).encode("utf-8")
    return "b2:" + hashlib.blake2b(data, digest_size=size).hexdigest()
