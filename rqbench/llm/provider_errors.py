"""Which provider errors are worth another try, how long the provider asked us to wait, and which mean no connection.

Shared by direct calls (``rqbench.llm.client``) and batch submission (``rqbench.llm.batch``):
rate limits, 5xx, timeouts, dropped connections and broken bodies are transient; a request
the provider refuses (bad request, auth, context too long, content policy) is not, since
sending it again cannot help. A connection that could not be made at all (refused, no DNS
answer, no route, a connect timeout) is transient for one call, but when no call to that
address has ever been answered it is what the client's circuit breaker stops a run on
(``is_connect_failure``).
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


# Exceptions, anywhere in an error's chain, that say the connection itself was never made. litellm wraps them
# (an openai-compatible provider's "Connection error." arrives as litellm's InternalServerError), and openai's
# APIConnectionError alone is not enough: a connection dropped mid-reply is one too, and that server answered.
_CONNECT_FAILURES = (
    "ConnectError",
    "ConnectTimeout",
    "ClientConnectorError",
    "ClientConnectorDNSError",
    "ClientConnectorSSLError",
    "ClientConnectorCertificateError",
    "ConnectionTimeoutError",
    "ConnectionRefusedError",
    "gaierror",
)
# What a provider wrapper says when it re-raises a connect failure without chaining it.
_CONNECT_PHRASES = (
    "Cannot connect to host",
    "Connection refused",
    "Connect call failed",
    "Name or service not known",
    "nodename nor servname",
    "Temporary failure in name resolution",
    "getaddrinfo failed",
    "No route to host",
    "Network is unreachable",
    "All connection attempts failed",
)


def is_connect_failure(exc: BaseException) -> bool:
    """Whether the request never reached a server: refused, unresolved, unroutable, or timed out connecting."""
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        if type(node).__name__ in _CONNECT_FAILURES:
            return True
        node = node.__cause__ or node.__context__
    return type(exc).__name__ == "APIConnectionError" and any(p in str(exc) for p in _CONNECT_PHRASES)


def is_transient(exc: BaseException) -> bool:
    name = type(exc).__name__
    if name in (
        "BadRequestError",
        "AuthenticationError",
        "NotFoundError",
        "PermissionDeniedError",
        "ContextWindowExceededError",
        "ContentPolicyViolationError",
        "UnprocessableEntityError",
    ):
        return False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500 and status not in (408, 409, 429):
        return False
    return name in _TRANSIENT or isinstance(exc, (asyncio.TimeoutError, ConnectionError, json.JSONDecodeError))
