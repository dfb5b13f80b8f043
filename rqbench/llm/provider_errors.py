"""Which provider errors are worth another try, and how long the provider asked us to wait.

Shared by direct calls (``rqbench.llm.client``) and batch submission (``rqbench.llm.batch``):
rate limits, 5xx, timeouts, dropped connections and broken bodies are transient; a request
the provider refuses (bad request, auth, context too long, content policy) is not, since
sending it again cannot help.
"""

from __future__ import annotations

import asyncio
import json

from rqbench.retry_after import retry_after_seconds

_TRANSIENT = (
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "APIConnectionError",
    "Timeout",
    "BadGatewayError",
    "APIError",
    "JSONDecodeError",
)
MAX_RETRY_AFTER_S = 600.0


def retry_after_of(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (its Retry-After header), when it said."""
    headers = None
    resp = getattr(exc, "response", None)
    if resp is not None:
        headers = getattr(resp, "headers", None)
    headers = headers or getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    return retry_after_seconds(headers.get("retry-after") or headers.get("Retry-After"))


def is_rate_limit(exc: BaseException) -> bool:
    return type(exc).__name__ == "RateLimitError" or getattr(exc, "status_code", None) == 429


def is_transient(exc: BaseException) -> bool:
    name = type(exc).__name__
    if name in ("BadRequestError", "AuthenticationError", "NotFoundError", "PermissionDeniedError",
                "ContextWindowExceededError", "ContentPolicyViolationError", "UnprocessableEntityError"):
        return False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500 and status not in (408, 409, 429):
        return False
    return name in _TRANSIENT or isinstance(exc, (asyncio.TimeoutError, ConnectionError, json.JSONDecodeError))
