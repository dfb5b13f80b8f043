"""Replay recorded HTTP exchanges on 127.0.0.1, so API clients are tested against real responses offline.

It loads the two recording formats of ``../shared/fixtures``: the arXiv
``{url, status_code, body}`` JSON records and vcrpy YAML cassettes. A request
matches a recording when its method, path, query parameters (order-free) and
JSON body (parsed, so key order and spacing do not matter) are equal. Tests may
also add routes of their own (a paged feed, an e-print blob) and inject faults
(429 with Retry-After, 500, a stall longer than the client's timeout) that are
served before the recorded answer. Unmatched requests get a 404 whose body says
so, and are kept in ``unmatched`` for the test to check.
"""

from __future__ import annotations

import copy
import json
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import yaml

ATOM = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}


def split_feed(xml: bytes, per_page: int, *, entries: slice | None = None) -> list[tuple[int, bytes]]:
    """A recorded arXiv feed's real entries re-paged as arXiv would page them: ``[(start, page_xml), ...]``.

    ``entries`` picks a subset of the recorded entries first; totalResults is the
    number of entries kept, so a client paging through sees a consistent feed.
    """
    ET.register_namespace("", ATOM["atom"])
    ET.register_namespace("arxiv", ATOM["arxiv"])
    ET.register_namespace("opensearch", ATOM["opensearch"])
    root = ET.fromstring(xml)
    found = root.findall("atom:entry", ATOM)
    for e in found:
        root.remove(e)
    chosen = found[entries] if entries is not None else found
    root.find("opensearch:totalResults", ATOM).text = str(len(chosen))
    pages = []
    for start in range(0, max(len(chosen), 1), per_page):
        page = copy.deepcopy(root)
        page.find("opensearch:startIndex", ATOM).text = str(start)
        page.find("opensearch:itemsPerPage", ATOM).text = str(per_page)
        for e in chosen[start : start + per_page]:
            page.append(copy.deepcopy(e))
        pages.append((start, ET.tostring(page, encoding="utf-8", xml_declaration=True)))
    return pages


def pick_entries(xml: bytes, ids: list[str]) -> bytes:
    """A recorded arXiv feed holding only the recorded entries of ``ids`` (in that order), as arXiv answers an
    ``id_list`` lookup: one page, totalResults the entries kept. Entries are real; none is written here."""
    ET.register_namespace("", ATOM["atom"])
    ET.register_namespace("arxiv", ATOM["arxiv"])
    ET.register_namespace("opensearch", ATOM["opensearch"])
    root = ET.fromstring(xml)
    found = root.findall("atom:entry", ATOM)
    for e in found:
        root.remove(e)
    by_id = {e.find("atom:id", ATOM).text.split("/abs/", 1)[-1].rsplit("v", 1)[0]: e for e in found}
    chosen = [by_id[i] for i in ids]
    for tag, value in (("totalResults", len(chosen)), ("startIndex", 0), ("itemsPerPage", len(chosen))):
        root.find(f"opensearch:{tag}", ATOM).text = str(value)
    root.extend(chosen)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def _norm_query(query: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(parse_qsl(query, keep_blank_values=True)))


def _norm_body(body: bytes | str | None):
    if body is None or body == b"" or body == "":
        return None
    raw = body.encode("utf-8") if isinstance(body, str) else body
    try:
        return ("json", json.dumps(json.loads(raw), sort_keys=True))
    except ValueError:
        return ("raw", raw)


@dataclass
class Route:
    method: str
    path: str
    query: tuple[tuple[str, str], ...] | None  # None: any query
    body: object  # normalised request body, None for none
    status: int
    content: bytes
    headers: dict[str, str] = field(default_factory=dict)
    source: str = ""


@dataclass
class Fault:
    method: str
    path_prefix: str
    status: int | None  # None: stall without answering in time
    remaining: int
    retry_after: str | None = None
    delay_s: float = 0.0


@dataclass
class SeenRequest:
    method: str
    path: str
    query: tuple[tuple[str, str], ...]
    headers: dict[str, str]
    body: bytes
    at: float
    answered: int


class ReplayServer:
    """A threaded loopback server that answers from recordings; use as a context manager."""

    def __init__(self) -> None:
        self.routes: list[Route] = []
        self.faults: list[Fault] = []
        self.requests: list[SeenRequest] = []
        self.unmatched: list[SeenRequest] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ loading

    def add(
        self,
        method: str,
        url: str,
        *,
        status: int = 200,
        content: bytes | str = b"",
        headers: dict[str, str] | None = None,
        request_body: bytes | str | None = None,
        any_query: bool = False,
        source: str = "test",
    ) -> Route:
        """Serve ``content`` for ``method url`` (host ignored; the query must match unless ``any_query``)."""
        parts = urlsplit(url)
        data = content.encode("utf-8") if isinstance(content, str) else content
        route = Route(
            method=method.upper(),
            path=parts.path,
            query=None if any_query else _norm_query(parts.query),
            body=_norm_body(request_body),
            status=status,
            content=data,
            headers=dict(headers or {}),
            source=source,
        )
        with self._lock:
            self.routes.insert(0, route)  # later additions win
        return route

    def load_arxiv_records(self, folder: Path) -> int:
        """Load every ``{url, status_code, body}`` record of the arXiv fixtures.

        The bodies were stored decoded as latin-1; re-encoding them gives the
        original UTF-8 bytes, which is what arXiv sent.
        """
        n = 0
        for f in sorted(Path(folder).glob("*.json")):
            rec = json.loads(f.read_text(encoding="utf-8"))
            self.add(
                "GET",
                rec["url"],
                status=int(rec["status_code"]),
                content=rec["body"].encode("latin-1"),
                headers={"Content-Type": "application/atom+xml; charset=UTF-8"},
                source=f.name,
            )
            n += 1
        return n

    def load_cassette(self, path: Path) -> int:
        """Load the interactions of one vcrpy YAML cassette."""
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        n = 0
        for it in doc.get("interactions", []):
            req, resp = it["request"], it["response"]
            body = resp.get("body", {}).get("string", "")
            headers = {k: v[0] if isinstance(v, list) else v for k, v in (resp.get("headers") or {}).items()}
            keep = {k: v for k, v in headers.items() if k.lower() in ("content-type", "retry-after")}
            self.add(
                req["method"],
                req["uri"],
                status=int(resp["status"]["code"]),
                content=body,
                headers=keep,
                request_body=req.get("body") or None,
                source=Path(path).name,
            )
            n += 1
        return n

    def inject(
        self,
        path_prefix: str,
        status: int | None,
        *,
        count: int = 1,
        method: str = "*",
        retry_after: str | None = None,
        delay_s: float = 0.0,
    ) -> Fault:
        """Answer the next ``count`` matching requests with ``status`` (or, with ``status=None``, stall ``delay_s``)."""
        fault = Fault(method.upper(), path_prefix, status, count, retry_after, delay_s)
        with self._lock:
            self.faults.append(fault)
        return fault

    # ------------------------------------------------------------ serving

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> "ReplayServer":
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt, *args):  # keep test output quiet
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server._answer(self, body)

            do_GET = _handle
            do_POST = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.remaining > 0 and path.startswith(f.path_prefix) and f.method in ("*", method):
                    f.remaining -= 1
                    return f
        return None

    def _find(self, method: str, path: str, query, body) -> Route | None:
        with self._lock:
            for r in self.routes:
                if r.method != method or r.path != path:
                    continue
                if r.query is not None and r.query != query:
                    continue
                if r.body is not None and r.body != _norm_body(body):
                    continue
                return r
        return None

    def _answer(self, h: BaseHTTPRequestHandler, body: bytes) -> None:
        parts = urlsplit(h.path)
        method, path, query = h.command, parts.path, _norm_query(parts.query)
        seen = SeenRequest(method, path, query, {k.lower(): v for k, v in h.headers.items()}, body, time.monotonic(), 0)
        with self._lock:
            self.requests.append(seen)
        fault = self._take_fault(method, path)
        if fault is not None:
            if fault.delay_s:
                time.sleep(fault.delay_s)
            if fault.status is None:
                self._send(h, 504, b'{"error":"stalled by the test"}', {"Content-Type": "application/json"})
                seen.answered = 504
                return
            headers = {"Content-Type": "application/json"}
            if fault.retry_after is not None:
                headers["Retry-After"] = fault.retry_after
            self._send(h, fault.status, json.dumps({"error": f"injected {fault.status}"}).encode(), headers)
            seen.answered = fault.status
            return
        route = self._find(method, path, query, body)
        if route is None:
            with self._lock:
                self.unmatched.append(seen)
            msg = {"error": "no recorded response", "method": method, "path": path, "query": list(query)}
            self._send(h, 404, json.dumps(msg).encode(), {"Content-Type": "application/json", "X-Replay": "unmatched"})
            seen.answered = 404
            return
        self._send(h, route.status, route.content, route.headers)
        seen.answered = route.status

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, content: bytes, headers: dict[str, str]) -> None:
        try:
            h.send_response(status)
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(content)))
            h.end_headers()
            h.wfile.write(content)
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True  # the client gave up (a timeout test); nothing left to tell it


class FakeTime:
    """A clock that only moves when the client sleeps, so pacing is checked without waiting."""

    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.t += s
