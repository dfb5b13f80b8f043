"""What keeps secrets out of pages and logs, what keeps a name from passing for another, and what limits how
much and how fast one user can push at the Space."""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
import unicodedata
from collections import deque
from typing import TYPE_CHECKING, Any

from rqbench.llm.config import public_label

if TYPE_CHECKING:
    from rqbench.records import JudgeBoardFile, ResultsFile

# Environment variables whose values must never appear on a page or in a log line.
SECRET_ENV = re.compile(r"(TOKEN|API_KEY|SECRET|PASSWORD)$")
# Token shapes worth hiding even when they did not come from our environment.
TOKEN_SHAPES = re.compile(r"\b(hf_[A-Za-z0-9]{20,}|sk-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,})\b")


# A model spec with options, ``name@key=value,...`` (values run to a space, a quote, ';' or ')').
MODEL_SPEC = re.compile(r"(?<![\w.@/-])([\w][\w./:-]*@\w+=[^\s,;)'\"]*(?:,\w+=[^\s,;)'\"]*)*)")


def hide_model_options(text: str) -> str:
    """Every model spec in ``text`` with only its public options (``public_label``)."""
    return MODEL_SPEC.sub(lambda m: public_label(m.group(1)), text)


# An absolute path on the host (three parts or more, not inside a URL): a page names the file and its folder,
# not the disk it is on.
_LOCAL_PATH = re.compile(r"(?<![\w:/.~-])/(?:[\w.@+~-]{1,255}/){1,64}([\w.@+~-]{1,255}/[\w.@+~-]{1,255})")


def hide_local_paths(text: str) -> str:
    """``text`` with every absolute host path shortened to its last two parts
    (``/srv/x/store/requests/a.json`` -> ``…/requests/a.json``)."""
    return _LOCAL_PATH.sub(lambda m: "…/" + m.group(1), text)


def redact(text: str) -> str:
    """``text`` with every secret from the environment, anything shaped like an API token, every option of a
    model spec that says how the model is reached (``api_base``, retries, ...) and every absolute host path
    replaced, dropped or shortened."""
    for name, value in os.environ.items():
        if SECRET_ENV.search(name) and value and len(value) >= 6:
            text = text.replace(value, f"<{name} hidden>")
    return hide_local_paths(TOKEN_SHAPES.sub("<token hidden>", hide_model_options(text)))


def _public_strings(value: Any) -> Any:
    if isinstance(value, str):
        return hide_model_options(value)
    if isinstance(value, dict):
        return {k: _public_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_public_strings(v) for v in value]
    return value


def public_results(results: ResultsFile) -> ResultsFile:
    """A results file as it may be published or shown: the judge under its public label, and the run's
    settings and protocol notes (which quote the judge specs) with model specs' private options dropped.
    The judged instances, raw replies included, are left exactly as they are."""
    label = public_label(results.judge.label)
    protocol = results.protocol
    if protocol is not None:
        protocol = protocol.model_validate(_public_strings(protocol.model_dump(mode="json")))
    update = {
        "judge": results.judge.model_copy(update={"label": label}),
        "protocol": protocol,
        "settings": _public_strings(results.settings),
    }
    return results.model_copy(update=update)


def public_board(board: JudgeBoardFile) -> JudgeBoardFile:
    """A judge-board file as it may be shown: the judge under its public label, as ``public_results`` does."""
    return board.model_copy(update={"judge": board.judge.model_copy(update={"label": public_label(board.judge.label)})})


class AttemptLimiter:
    """At most ``limit`` attempts per key in any ``window_s`` seconds (uploads, validations)."""

    def __init__(self, limit: int, window_s: float, clock=time.monotonic):
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        now = self.clock()
        with self._lock:
            q = self._seen.setdefault(key, deque())
            while q and now - q[0] >= self.window_s:
                q.popleft()
            if len(q) >= self.limit:
                return False
            q.append(now)
            return True

    def retry_in(self, key: str) -> float:
        q = self._seen.get(key)
        if not q:
            return 0.0
        return max(0.0, self.window_s - (self.clock() - q[0]))


def printable(text: str) -> str:
    """``text`` safe to send to a page: a lone surrogate (which no JSON encoder accepts) becomes U+FFFD, and
    control characters other than line breaks and tabs go."""
    if text.isascii() and text.isprintable():
        return text
    out = []
    for c in text:
        cat = unicodedata.category(c)
        if cat == "Cs":
            out.append("\ufffd")
        elif cat != "Cc" or c in "\n\t":
            out.append(c)
    return "".join(out)


def unstorable_characters(text: str) -> str | None:
    """Why ``text`` cannot be a stored name (a lone surrogate, a control or an invisible format character), or None."""
    for i, c in enumerate(text):
        cat = unicodedata.category(c)
        if cat in ("Cs", "Cc", "Cf", "Co", "Cn"):
            kind = {
                "Cs": "a lone surrogate",
                "Cc": "a control character",
                "Cf": "an invisible format character",
                "Co": "a private-use character",
                "Cn": "an unassigned code point",
            }[cat]
            return f"{kind} (U+{ord(c):04X}) at position {i + 1}"
    return None


# Characters that draw nothing, or draw as a space, without being a control or format character: Hangul
# fillers, the braille blank, combining joiners and variation selectors (Default_Ignorable_Code_Point in
# Unicode's DerivedCoreProperties, less the Cf/Cc categories ``unstorable_characters`` already refuses).
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0") | frozenset(
    chr(c) for c in [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]
)


# What a public name (a model's, a user's) may hold besides letters, combining marks and digits of any script and the
# plain space: the punctuation model ids and settings use (``org/model-3.1``, ``local@temperature=0.8``,
# ``name (revised)``). Markup and quoting characters (< > & " ` { } | \ and the rest) are refused: a name is shown on
# every page, and a name that looks like markup is a probe, never a model (docs/space.md, "Names").
NAME_PUNCTUATION = frozenset("-_.,:;/@+=#()[]'~!")


def name_problem(text: str, *, what: str, max_chars: int) -> str | None:
    """Why ``text`` cannot be a public name (a model's or a user's): empty, longer than ``max_chars``, an
    invisible, bidirectional-control, control or unassigned character, a space other than U+0020, or a character
    outside letters, marks, digits, the space and ``NAME_PUNCTUATION``; or None.
    """
    if not text.strip():
        return f"the {what} is empty"
    if len(text) > max_chars:
        return f"the {what} is {len(text):,} characters long; at most {max_chars}"
    if text != text.strip():
        return f"the {what} starts or ends with a space"
    why = unstorable_characters(text)
    if why is None:
        for i, c in enumerate(text):
            if c in _INVISIBLE:
                why = f"an invisible character (U+{ord(c):04X}) at position {i + 1}"
            elif unicodedata.category(c) in ("Zs", "Zl", "Zp") and c != " ":
                why = f"a space other than the plain space (U+{ord(c):04X}) at position {i + 1}"
            if why:
                break
    if why is None:
        for i, c in enumerate(text):
            if c != " " and c not in NAME_PUNCTUATION and unicodedata.category(c)[0] not in "LMN":
                allowed = " ".join(sorted(NAME_PUNCTUATION))
                return (
                    f"the {what} contains {c!r} at position {i + 1}; a name holds letters, digits, spaces and "
                    f"{allowed} only"
                )
        return None
    return f"the {what} contains {why}; use visible letters, digits and punctuation only"


@functools.lru_cache(maxsize=16384)
def _homoglyphs(char: str) -> tuple[str, ...]:
    """What Unicode's confusables data (confusable_homoglyphs' copy) says ``char`` can pass for."""
    from confusable_homoglyphs import confusables

    found = confusables.is_confusable(char, greedy=True, preferred_aliases=[])
    return tuple(h["c"] for f in found or () for h in f["homoglyphs"])


@functools.lru_cache(maxsize=16384)
def _prototype(char: str) -> str:
    """The character (or sequence) ``char`` is confusable with in Unicode's table, the same for every member
    of one set of look-alikes: Cyrillic 'А' -> 'A', '1' and 'I' -> 'l', 'm' -> 'rn'. The table maps each
    look-alike to one prototype, so a character with several look-alikes is itself the prototype."""
    seen = _homoglyphs(char)
    if len(seen) != 1:
        return char
    other = seen[0]
    if len(other) > 1 or len(_homoglyphs(other)) > 1:
        return other
    return min(char, other, key=ord)  # a pair: either could be the prototype, so both take the same one


def confusable_fold(text: str) -> str:
    """``text`` with every character replaced by its confusables prototype (Unicode TR39's skeleton idea):
    two names that read the same on a page fold to the same string."""
    return "".join(_prototype(c) for c in text)


def confusable_key(name: str) -> str:
    """The form under which two names read as one: compatibility-folded, confusables-folded before and after
    case folding (so 'ModeI' with a capital I and 'Mode1' meet 'Model', and 'MODEL' meets 'model')."""
    return confusable_fold(confusable_fold(unicodedata.normalize("NFKC", name)).casefold())


class BodyTooLarge(Exception):
    """A request body without a Content-Length grew past the limit while it was read."""


# Every request body but a file upload: an event's inputs (a search, a name, a comment, file references).
MAX_EVENT_BYTES = 128 * 1024


class UploadGate:
    """ASGI middleware in front of the Space: request bodies over their endpoint's cap, uploads past the
    rate limit and, with ``require_sign_in``, file uploads (``POST .../upload``) without a Hugging Face
    sign-in are refused.

    Caps are per endpoint: a file upload may carry ``max_body_bytes``, every other body (an event's
    inputs: a search string, a name) ``max_event_bytes``, so a 4 MB search string never reaches a
    handler, nor the session state Gradio keeps of each input. A body that declares its length is
    refused from the header, before any of it is read; a file upload must declare it (HTTP 411
    otherwise: browsers always do, and Gradio keeps the partial file of an upload cut off
    mid-stream); any other body sent without a length is counted as it is read and cut off at its
    cap. Gradio's own ``max_file_size`` (set beside it) stops a file part over the cap inside an
    allowed body, and deletes what it wrote. ``upload_limits`` (``AttemptLimiter``s) count uploads per
    client (the signed-in account, else the address the nearest proxy saw): past any of them an upload
    gets 429 with ``Retry-After``, before its body is read. The sign-in check reads the session
    Gradio's OAuth keeps (``oauth_info``, with its expiry); Gradio adds that session middleware
    outside this one.
    """

    def __init__(
        self,
        app: Any,
        *,
        max_body_bytes: int,
        max_event_bytes: int = MAX_EVENT_BYTES,
        upload_limits: tuple[AttemptLimiter, ...] = (),
        require_sign_in: bool = False,
        clock=time.time,
    ):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.max_event_bytes = max_event_bytes
        self.upload_limits = upload_limits
        self.require_sign_in = require_sign_in
        self.clock = clock

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await _plain_response(send, *refusal)
            return
        limit, seen, started = self._cap(scope), 0, False

        async def counted_receive() -> dict:
            nonlocal seen
            message = await receive()
            if message.get("type") == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return message

        async def watched_send(message: dict) -> None:
            nonlocal started
            started = started or message.get("type") == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except BodyTooLarge:
            if started:
                raise
            await _plain_response(send, 413, f"request body is over the limit of {limit:,} bytes")

    @staticmethod
    def _is_upload(scope: dict) -> bool:
        return scope.get("path", "").rstrip("/").endswith("/upload")

    def _cap(self, scope: dict) -> int:
        return self.max_body_bytes if self._is_upload(scope) else self.max_event_bytes

    def _refusal(self, scope: dict) -> tuple[int, str] | tuple[int, str, dict[str, str]] | None:
        length = next((v for k, v in scope.get("headers", ()) if k == b"content-length"), None)
        upload, cap = self._is_upload(scope), self._cap(scope)
        if length is None and upload:  # cut off mid-stream, Gradio would leave the partial file on disk
            return 411, "a file upload must declare its length (Content-Length)"
        if length is not None:
            try:
                size = int(length)
            except ValueError:
                return 400, "Content-Length is not a number"
            if size > cap:
                what = "file upload" if upload else "request body (an event's inputs; files go to /upload)"
                return 413, f"{what} of {size:,} bytes is over the limit of {cap:,}"
        if self.require_sign_in and upload and not self._signed_in(scope):
            return 401, "sign in with Hugging Face to upload"
        if upload:
            key = self._client(scope)
            for limiter in self.upload_limits:
                if not limiter.allow(key):
                    wait = max(1, round(limiter.retry_in(key)))
                    return (
                        429,
                        f"too many uploads: at most {limiter.limit} in {limiter.window_s:.0f} s; try again in {wait} s",
                        {"retry-after": str(wait)},
                    )
        return None

    def _signed_in(self, scope: dict) -> bool:
        return self._account(scope) is not None

    def _account(self, scope: dict) -> str | None:
        """The signed-in Hugging Face account of the request's session (unexpired), if any."""
        session = scope.get("session")
        info = session.get("oauth_info") if isinstance(session, dict) else None
        if not isinstance(info, dict):
            return None
        expires = info.get("expires_at")
        if expires is not None and not (isinstance(expires, int | float) and expires > self.clock()):
            return None
        user = info.get("userinfo")
        name = user.get("preferred_username") if isinstance(user, dict) else None
        return str(name or "signed-in")

    def _client(self, scope: dict) -> str:
        """Who an upload counts against: the signed-in account, else the last X-Forwarded-For address (the one
        the nearest proxy saw: the Hub's), else the connection's peer."""
        account = self._account(scope)
        if account is not None:
            return f"account:{account}"
        forwarded = next((v for k, v in scope.get("headers", ()) if k == b"x-forwarded-for"), b"")
        hops = [h.strip() for h in forwarded.decode("latin-1").split(",") if h.strip()]
        if hops:
            return f"address:{hops[-1]}"
        client = scope.get("client")
        return f"address:{client[0] if client else 'unknown'}"


async def _plain_response(send: Any, status: int, message: str, headers: dict[str, str] | None = None) -> None:
    body = json.dumps({"error": message}).encode("utf-8")
    extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
