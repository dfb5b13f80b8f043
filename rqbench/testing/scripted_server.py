"""A scripted OpenAI-compatible HTTP server on loopback, for tests and fault injection.

Faults are injected where real ones happen, at the HTTP level: status codes with
Retry-After, 5xx, slow replies past the client's timeout, dropped connections,
truncated or non-JSON bodies. The LLM layer and litellm run unpatched against it.
A responder sees each request's step as the LLM layer tagged it (``req.step``),
so it never has to guess the step from the prompt's wording or the schema. It
returns the reply's text, or a ``ScriptedReply`` to script the finish reason as
well (``"length"``: a reply cut at the reply budget).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rqbench.llm.client import STEP_HEADER
from rqbench.llm.config import ModelConfig
from rqbench.testing.scripted_batches import BATCH_PATHS, ScriptedBatches


class ScriptedRequest(dict):
    """A request body as received, plus the step tag the LLM layer sent with it (``X-RQBench-Step``)."""

    def __init__(self, body: dict[str, Any], step_tag: str | None):
        super().__init__(body)
        self.step_tag = step_tag

    @property
    def step(self) -> str:
        """The step asked for; a re-ask (tagged ``<step>:reask``) is the same step."""
        if not self.step_tag:
            raise LookupError(f"request carries no {STEP_HEADER} header; was it sent through rqbench.llm.LLM?")
        return self.step_tag.split(":", 1)[0]


@dataclass(frozen=True)
class ScriptedReply:
    """A reply with the finish reason the server reports for it ("stop", or "length" for one cut at max_tokens)."""

    content: str
    finish_reason: str = "stop"


Responder = Callable[[ScriptedRequest], "str | ScriptedReply"]


@dataclass
class Fault:
    """One scripted misbehaviour. kind: status, slow, hang, reset, truncated, not_json, empty, reply.

    ``slow`` answers after ``seconds``; ``hang`` never answers and drops the connection after ``seconds``,
    so the client sees an error whether or not its own timeout fired first on a loaded machine.
    """

    kind: str
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    content: str = ""  # for kind="reply": a well-formed completion with this text (e.g. the wrong JSON shape)
    finish_reason: str = "stop"  # for kind="reply"/"empty": e.g. "length", a reply cut at the budget


UsageExtra = Callable[[dict[str, Any], int], dict[str, Any]]


def completion_body(
    content: str,
    model: str = "scripted",
    prompt_tokens: int = 10,
    usage_extra: dict[str, Any] | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": max(1, len(content) // 4),
            "total_tokens": prompt_tokens + max(1, len(content) // 4),
        },
    }
    body["usage"].update(usage_extra or {})
    return body


def _prompt_text(req: dict[str, Any]) -> str:
    return "".join(f"\x1e{m.get('role', '')}\x1f{m.get('content') or ''}" for m in req.get("messages", []))


def prefix_cache_usage(style: str = "openai", min_tokens: int = 1024) -> UsageExtra:
    """A provider-like prompt cache: the longest prefix (in characters / 4) shared with an earlier prompt.

    ``style`` picks the usage fields the provider sends: ``openai`` (and Gemini)
    ``prompt_tokens_details.cached_tokens``; ``deepseek`` ``prompt_cache_hit_tokens``
    and ``prompt_cache_miss_tokens``; ``anthropic`` ``cache_read_input_tokens`` and
    ``cache_creation_input_tokens``.
    """
    seen: list[str] = []
    lock = threading.Lock()

    def usage(req: dict[str, Any], prompt_tokens: int) -> dict[str, Any]:
        text = _prompt_text(req)
        with lock:
            shared = max((len(os.path.commonprefix([text, old])) for old in seen), default=0)
            seen.append(text)
        cached = min(prompt_tokens, shared // 4)
        cached = cached if cached >= min_tokens else 0
        if style == "openai":
            return {"prompt_tokens_details": {"cached_tokens": cached}}
        if style == "deepseek":
            return {"prompt_cache_hit_tokens": cached, "prompt_cache_miss_tokens": prompt_tokens - cached}
        if style == "anthropic":
            return {"cache_read_input_tokens": cached, "cache_creation_input_tokens": prompt_tokens - cached}
        raise ValueError(f"unknown usage style {style!r}")

    return usage


class ScriptedServer:
    """Answers chat completions with ``responder(request) -> content``, after any queued faults."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        fault_plan: Callable[[int], Fault | None] | None = None,
        usage_extra: UsageExtra | None = None,
    ):
        self.responder = responder or (lambda req: "{}")
        self.fault_plan = fault_plan
        self.usage_extra = usage_extra
        self.faults: deque[Fault] = deque()
        self.requests: list[ScriptedRequest] = []
        self._lock = threading.Lock()
        self.batches = ScriptedBatches(self)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                return

            def do_GET(self) -> None:  # health check, like llama.cpp's /v1/models
                if self.path.startswith(BATCH_PATHS):
                    self._send(*server.batches.handle("GET", self.path, dict(self.headers), b""))
                    return
                self._send(200, json.dumps({"object": "list", "data": [{"id": "scripted"}]}).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                if self.path.startswith(BATCH_PATHS):
                    self._send(*server.batches.handle("POST", self.path, dict(self.headers), raw))
                    return
                req = ScriptedRequest(json.loads(raw or b"{}"), self.headers.get(STEP_HEADER))
                with server._lock:
                    n = len(server.requests)
                    server.requests.append(req)
                    fault = server.faults.popleft() if server.faults else None
                if fault is None and server.fault_plan is not None:
                    fault = server.fault_plan(n)
                if fault is not None and self._fault(fault):
                    return
                self._send(200, json.dumps(server.complete(req)).encode())

            def _fault(self, f: Fault) -> bool:
                if f.kind == "status":
                    body = json.dumps({"error": {"message": f"scripted {f.status}", "type": "scripted"}}).encode()
                    self._send(f.status, body, f.headers)
                    return True
                if f.kind == "slow":
                    time.sleep(f.seconds)
                    return False
                if f.kind == "hang":
                    time.sleep(f.seconds)
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return True
                if f.kind == "reset":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return True
                if f.kind == "truncated":
                    body = json.dumps(completion_body('{"scores": [')).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return True
                if f.kind == "not_json":
                    self._send(200, b"<html>upstream error</html>", {"content-type": "text/html"})
                    return True
                if f.kind in ("empty", "reply"):
                    self._send(200, json.dumps(completion_body(f.content, finish_reason=f.finish_reason)).encode())
                    return True
                raise ValueError(f"unknown fault kind {f.kind!r}")

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                hdrs = {"content-type": "application/json", **(headers or {})}
                for k, v in hdrs.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class QuietServer(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                # a client that hangs up mid-reply (a reset fault, a killed process) is expected here
                import sys

                exc = sys.exc_info()[1]
                if not isinstance(exc, (ConnectionError, BrokenPipeError)):
                    super().handle_error(request, client_address)

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def complete(self, req: dict[str, Any]) -> dict[str, Any]:
        """The completion body for a request: the responder's content and finish reason, usage as a provider
        would count it."""
        reply = self.responder(req)
        if not isinstance(reply, ScriptedReply):
            reply = ScriptedReply(reply)
        prompt_tokens = sum(len(m.get("content") or "") for m in req.get("messages", [])) // 4
        extra = self.usage_extra(req, prompt_tokens) if self.usage_extra else None
        return completion_body(reply.content, req.get("model", "scripted"), prompt_tokens, extra, reply.finish_reason)

    def complete_line(self, body: dict[str, Any], step: str | None) -> dict[str, Any]:
        """``complete`` for one line of a batch, whose step tag travels in its ``custom_id``."""
        return self.complete(ScriptedRequest(body, step))

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def model_config(self, name: str = "scripted/test", **overrides: Any) -> ModelConfig:
        fields: dict[str, Any] = dict(
            name=name,
            litellm_model="openai/scripted",
            api_base=self.api_base,
            api_key="test-key",
            max_concurrency=4,
            timeout_s=5.0,
            max_retries=4,
            backoff_base_s=0.01,
            backoff_max_s=0.2,
            json_mode="json_object_schema",
        )
        fields.update(overrides)
        return ModelConfig(**fields)
