"""A small, polite HTTP client for the public APIs the builder reads (arXiv, Semantic Scholar).

Both APIs ask callers to pace themselves and to back off when told to. This
module does that once: a minimum interval between request starts, retries with
exponential backoff on 429, 5xx, timeouts and dropped connections, and
``Retry-After`` honoured when the server sends it. Failures raise
:class:`HttpError` with the method, URL, status and the start of the body; request
headers (which may carry an API key) are never logged or put in messages.

When the very first request of a client cannot reach its host at all (the name
does not resolve, the connection is refused, the network is unreachable), the
network is taken to be absent: :class:`NetworkUnavailable` names the host and the
class of error at once, instead of retrying for a minute.

An optional on-disk cache of successful responses lets a long crawl resume after
a crash without asking the server twice for what it already answered.
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import httpx

from rqbench.io import atomic_open, write_atomic
from rqbench.retry_after import retry_after_seconds  # re-exported for the clients

log = logging.getLogger(__name__)

C = TypeVar("C", bound="ApiClient")
T = TypeVar("T")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
USER_AGENT = "rq-bench/0.1 (https://github.com/rq-bench; research benchmark builder)"
BODY_EXCERPT = 300


@dataclass
class _Refused:
    """One try answered with a status the caller does not take: retried when RETRY_STATUSES holds it."""

    resp: httpx.Response
    where: str  # the URL as the log and the error show it
    message: str  # the error's words when it is not retried (or no retry is left)


class HttpError(RuntimeError):
    """A request that failed for good: after the retries, or with a status we do not retry."""

    def __init__(self, method: str, url: str, status: int | None, message: str, body: str = ""):
        self.method = method
        self.url = url
        self.status = status
        self.body = body
        where = f"{method} {url}"
        status_txt = f"HTTP {status}" if status is not None else "no response"
        excerpt = f"; body: {body[:BODY_EXCERPT]!r}" if body else ""
        super().__init__(f"{where}: {status_txt}: {message}{excerpt}")


class NetworkUnavailable(HttpError):
    """The first request to a host found no way there: no name resolution, a refused connection, no route."""

    def __init__(self, method: str, url: str, host: str, reason: str, detail: str):
        self.host, self.reason = host, reason
        super().__init__(
            method,
            url,
            None,
            f"cannot reach {host}: {reason} ({detail}); the network looks absent "
            "or the host is down, so the request was not retried",
        )


_UNREACHABLE_ERRNOS = {errno.ENETUNREACH: "the network is unreachable", errno.EHOSTUNREACH: "no route to the host"}


def unreachable_reason(exc: BaseException) -> str | None:
    """What says the host cannot be reached at all, from an httpx error's chain of causes; None for anything else
    (a timeout, a dropped connection, a broken body), which may pass and is worth a retry."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, socket.gaierror):
            return "its name could not be resolved (DNS)"
        if isinstance(cause, ConnectionRefusedError):
            return "the connection was refused"
        if isinstance(cause, OSError) and cause.errno in _UNREACHABLE_ERRNOS:
            return _UNREACHABLE_ERRNOS[cause.errno]
        inner = [a for a in getattr(cause, "args", ()) if isinstance(a, BaseException)]
        cause = cause.__cause__ or cause.__context__ or (inner[0] if inner else None)
    return None


def env_float(name: str, default: float) -> float:
    """A float setting from the environment, with a clear error when it is not a number."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"environment variable {name}={raw!r} is not a number") from None


class PoliteClient:
    """httpx with pacing, retries and an optional response cache, for one API host.

    ``sleep`` and ``clock`` are injectable so tests can check the pacing and the
    backoff without waiting for them.
    """

    def __init__(
        self,
        *,
        base_url: str,
        min_interval_s: float = 0.0,
        max_retries: int = 5,
        backoff_s: float = 1.0,
        max_backoff_s: float = 60.0,
        max_retry_after_s: float = 600.0,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        cache_dir: Path | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
    ):
        if min_interval_s < 0:
            raise ValueError(f"min_interval_s must be >= 0, got {min_interval_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.base_url = base_url.rstrip("/")
        self.min_interval_s = min_interval_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.max_retry_after_s = max_retry_after_s
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._sleep = sleep
        self._clock = clock
        self._last_start: float | None = None
        self.responses = 0  # answers received (any status): after one, an unreachable host is worth retrying
        self.requests_sent = 0
        self.cache_hits = 0
        all_headers = {"User-Agent": USER_AGENT}
        all_headers.update(headers or {})
        self._http = httpx.Client(
            headers=all_headers,
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=True,
            transport=transport,
        )

    def __repr__(self) -> str:  # never show headers: they may hold an API key
        return f"PoliteClient(base_url={self.base_url!r}, min_interval_s={self.min_interval_s})"

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "PoliteClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ core

    def url(self, path: str) -> str:
        """An absolute URL: ``path`` as given when it is absolute, else joined to the base URL."""
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.base_url}/{path.lstrip('/')}"

    def _pace(self) -> None:
        """Wait until ``min_interval_s`` has passed since the previous request started."""
        if self._last_start is not None and self.min_interval_s > 0:
            wait = self.min_interval_s - (self._clock() - self._last_start)
            if wait > 0:
                self._sleep(wait)
        self._last_start = self._clock()

    def _backoff(
        self, attempt: int, retry_after: float | None, what: str, url: str, method: str, status: int | None = None
    ) -> None:
        if retry_after is not None:
            if retry_after > self.max_retry_after_s:
                raise HttpError(
                    method,
                    url,
                    status,
                    f"server asks us to wait {retry_after:.0f} s (Retry-After), over the limit of "
                    f"{self.max_retry_after_s:.0f} s; try again later",
                )
            wait = retry_after
        else:
            wait = min(self.max_backoff_s, self.backoff_s * (2**attempt))
        log.info("%s %s: %s; retry %d/%d in %.1f s", method, url, what, attempt + 1, self.max_retries, wait)
        if wait > 0:
            self._sleep(wait)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        ok: tuple[int, ...] = (200,),
        passthrough: tuple[int, ...] = (),
    ) -> httpx.Response:
        """Send one request, paced and retried; return the response when its status is in ``ok`` or ``passthrough``.

        ``passthrough`` statuses (say 404) come back to the caller, who decides what
        they mean; any other status raises :class:`HttpError`.
        """

        def once(attempt: int) -> httpx.Response | _Refused:
            resp = self._http.request(method, url, params=params, json=json_body)
            self.responses += 1
            shown = str(resp.request.url)
            if resp.status_code in ok or resp.status_code in passthrough:
                log.debug("%s %s -> %d", method, shown, resp.status_code)
                return resp
            return _Refused(resp, shown, "unexpected status" + (f" after {attempt + 1} tries" if attempt else ""))

        url = self.url(path)
        return self._retried(method, url, once)

    def _retried(self, method: str, url: str, once: Callable[[int], T | _Refused]) -> T:
        """The one retry loop: ``once(attempt)`` sends one paced request and returns what the caller wants, or
        ``_Refused``; a transport error or a status in RETRY_STATUSES is tried again with backoff (Retry-After
        honoured) up to ``max_retries`` times, anything else raises HttpError."""
        attempt = 0
        while True:
            self._pace()
            self.requests_sent += 1
            try:
                got = once(attempt)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                self._fail_fast(exc, method, url)
                if attempt >= self.max_retries:
                    raise HttpError(
                        method, url, None, f"{type(exc).__name__}: {exc} (after {attempt + 1} tries)"
                    ) from exc
                self._backoff(attempt, None, type(exc).__name__, url, method)
                attempt += 1
                continue
            if not isinstance(got, _Refused):
                return got
            status = got.resp.status_code
            if status in RETRY_STATUSES and attempt < self.max_retries:
                wait = retry_after_seconds(got.resp.headers.get("Retry-After"))
                self._backoff(attempt, wait, f"HTTP {status}", got.where, method, status)
                attempt += 1
                continue
            raise HttpError(method, got.where, status, got.message, _text(got.resp))

    def _fail_fast(self, exc: Exception, method: str, url: str) -> None:
        """Raise NetworkUnavailable when no request of this client was ever answered and ``exc`` says the host
        cannot be reached at all; return (so the caller retries) otherwise."""
        if self.responses:
            return
        reason = unreachable_reason(exc)
        if reason is not None:
            host = httpx.URL(url).host or url
            raise NetworkUnavailable(method, url, host, reason, f"{type(exc).__name__}: {exc}") from exc

    # ------------------------------------------------------------- helpers

    def get_json(self, path: str, *, params: Mapping[str, Any] | None = None, passthrough: tuple[int, ...] = ()) -> Any:
        """GET and decode JSON; a passthrough status returns ``None``."""
        return self._json_call("GET", path, params=params, json_body=None, passthrough=passthrough)

    def post_json(
        self, path: str, body: Any, *, params: Mapping[str, Any] | None = None, passthrough: tuple[int, ...] = ()
    ) -> Any:
        return self._json_call("POST", path, params=params, json_body=body, passthrough=passthrough)

    def _json_call(
        self, method: str, path: str, *, params: Mapping[str, Any] | None, json_body: Any, passthrough: tuple[int, ...]
    ) -> Any:
        key = self._cache_key(method, path, params, json_body)
        cached = self._cache_read(key)
        if cached is not None:
            self.cache_hits += 1
            return cached["json"]
        resp = self.request(method, path, params=params, json_body=json_body, passthrough=passthrough)
        if resp.status_code in passthrough:
            return None
        try:
            data = resp.json()
        except ValueError as exc:
            raise HttpError(
                method, str(resp.request.url), resp.status_code, f"body is not JSON ({exc})", _text(resp)
            ) from exc
        self._cache_write(key, {"url": str(resp.request.url), "json": data})
        return data

    def download(self, path: str, dest: Path) -> httpx.Headers:
        """Stream a body to ``dest``, atomically: a crash or a dropped connection leaves no half file."""

        def once(attempt: int) -> httpx.Headers | _Refused:
            with self._http.stream("GET", url) as resp:
                self.responses += 1
                if resp.status_code == 200:
                    with atomic_open(dest, "wb") as fh:
                        for chunk in resp.iter_bytes():
                            fh.write(chunk)
                    return resp.headers
                resp.read()
                return _Refused(resp, url, "download failed")

        url = self.url(path)
        return self._retried("GET", url, once)

    # --------------------------------------------------------------- cache

    def _cache_key(self, method: str, path: str, params: Mapping[str, Any] | None, body: Any) -> str | None:
        if self.cache_dir is None:
            return None
        ident = json.dumps(
            {
                "m": method,
                "u": self.url(path),
                "p": sorted((str(k), str(v)) for k, v in (params or {}).items()),
                "b": body,
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(ident.encode()).hexdigest()

    def _cache_read(self, key: str | None) -> dict | None:
        if key is None or self.cache_dir is None:
            return None
        f = self.cache_dir / key[:2] / f"{key}.json"
        if not f.exists():
            return None
        try:
            return json.loads(f.read_text(encoding="utf-8"))
        except ValueError:
            log.warning("cached response %s is unreadable; asking the server again", f)
            return None

    def _cache_write(self, key: str | None, entry: dict) -> None:
        if key is None or self.cache_dir is None:
            return
        write_atomic(self.cache_dir / key[:2] / f"{key}.json", json.dumps(entry))


class ApiClient:
    """The base of one public API's client: where it lives, how often we may ask, one :class:`PoliteClient`.

    A subclass names its settings: ``URL_ENV`` / ``DEFAULT_URL`` for the base URL
    and ``INTERVAL_ENV`` / ``DEFAULT_INTERVAL_S`` for the pause between requests.
    An argument wins over the environment, which wins over the default. Any
    other keyword goes to :class:`PoliteClient` (``cache_dir``, ``sleep``,
    ``clock``, ``transport``...). Closing the client closes its connections;
    it is a context manager for that.
    """

    URL_ENV: ClassVar[str]
    DEFAULT_URL: ClassVar[str]
    INTERVAL_ENV: ClassVar[str]
    DEFAULT_INTERVAL_S: ClassVar[float]

    def __init__(
        self,
        *,
        base_url: str | None,
        min_interval_s: float | None,
        timeout_s: float,
        max_retries: int,
        backoff_s: float,
        **http_kwargs: Any,
    ):
        self.base_url = (base_url or os.environ.get(self.URL_ENV) or self.DEFAULT_URL).rstrip("/")
        interval = (
            min_interval_s if min_interval_s is not None else env_float(self.INTERVAL_ENV, self.DEFAULT_INTERVAL_S)
        )
        self.http = PoliteClient(
            base_url=self.base_url,
            min_interval_s=interval,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            **http_kwargs,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self: C) -> C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _text(resp: httpx.Response) -> str:
    try:
        return resp.text
    except Exception as exc:  # a body we cannot decode is still worth naming in the error
        return f"<undecodable body: {exc}>"
