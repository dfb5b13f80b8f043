"""The Space under a crowd: simulated visitors on loopback, against a static file server in the same run.

The Space is the real ``rqbench space`` process on a store of 1,000 leaderboard rows (500 synthetic
models x 2 settings, one judge, through the real results store: ``fill_results_store``) and the 500
finished requests behind them (the Submit tab's queue, which every page load lists), with its own
temporary and upload folders so that every file it writes is counted. Visitors speak HTTP and Gradio's
queue API as the page does (``POST /gradio_api/queue/join``, then the session's event stream
``GET /gradio_api/queue/data``); each visit is what a person does:

- ``open``: what a browser does to show the page's data: ``GET /`` (the page and its configuration, which
  carries the opening view where the Space bakes it in), then each load event that runs on the server (none
  where the page's only load event runs in the browser; one, the page-load handler, before issue 36). The
  page's scripts and stylesheets, the same bytes for every visitor, are left out; so is Gradio's heartbeat
  stream, which a page with state holds open either way;
- ``browse``: an RQ picked on the Browse tab (the RQ picker's change events), the opening RQ then another
  of the same paper (the picker's choices);
- ``filter``: two model searches typed into the leaderboard (the search box's change event);
- ``plots``: the Plots tab opened (its select event draws both figures for the combined judge);
- ``judges``: the Judges tab opened, where the page has one.

The crowd's visitors speak HTTP through aiohttp (its C parser: on httpx, 100 visitors took a whole core of the
machine they share with the Space); the calibration visit and the hostile requests use httpx.

The baseline is a static file server (starlette ``StaticFiles`` on uvicorn, the server Gradio runs on)
holding, for each action, the very bytes the Space answered in a calibration visit; the same number of
visitors fetch them with the same pauses. Ratios are Space over static, per action, at the same
number of visitors, measured one right after the other. "queued" is how long an action's events
waited before they started: from sending the join to the stream's ``process_starts``. For a page
load event, the first event of a new session, that includes the join itself, during which Gradio builds
the session's copy of the page's component configuration on its event loop.

Then, on the same Space: the soak (visits until 10,000 requests in all, the Space's RSS taken along
the way), hostile requests (searches of 100,000, 700,000 and 4 Mi characters; a burst of 2 MB uploads
and one over the cap), and
the files its temporary and upload folders gained. One request is one action above (one GET, or one
queue event and its stream). Every phase stops at its request budget or its time limit, whichever
comes first, and the whole run at ``--max-seconds``.

Run: ``.venv/bin/python benchmarks/space_load.py`` (8 minutes on a quiet 2-core machine, more on a busy one);
``--smoke`` checks the script on a tiny store in a minute or two (its figures mean nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rqbench.testing.synthetic import fill_results_store, instance_ids

ACTIONS = ("open", "browse", "filter", "plots", "judges")
N_INSTANCES = 4  # per results file (fill_results_store's default)
JOIN = "/gradio_api/queue/join"
STREAM = "/gradio_api/queue/data"
# where the page sends an event that is outside the queue (the dependency's ``queue`` is false): one POST, the
# reply in its body, as Gradio's client does for ``queue=False``
DIRECT = "/gradio_api/run/predict"
UPLOAD = "/gradio_api/upload"
# the goals of issue 36, by crowd size (a size not listed is held to the loosest)
OPEN_P50_RATIO = {10: 5.0, 50: 5.0, 100: 10.0}
FILTER_P95_S = {10: 1.0, 50: 1.0, 100: 2.0}


# --------------------------------------------------------------------------
# the two servers
# --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_static(folder: Path, port: int) -> None:
    """The baseline: a folder of files, served by starlette on uvicorn (what Gradio itself runs on)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    app = Starlette(routes=[Mount("/", app=StaticFiles(directory=folder))])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


@dataclass
class Server:
    name: str
    url: str
    proc: subprocess.Popen

    def rss_mb(self) -> float:
        """The server's resident memory (VmRSS), in MB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError(f"{self.name}: no VmRSS for pid {self.proc.pid}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start(
    name: str, cmd: list[str], port: int, env: dict[str, str], log: Path, ready_s: float, ready_path: str = "/"
) -> Server:
    """Start a server process and wait until ``GET ready_path`` answers 200."""
    proc = subprocess.Popen(cmd, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + ready_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{name} exited with {proc.returncode}; its log: {log}\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + ready_path, timeout=5).status_code == 200:
                return Server(name, url, proc)
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit(f"{name} did not answer on {url} within {ready_s:.0f}s; its log: {log}")


def folder_usage(*folders: Path) -> tuple[int, int]:
    """(files, bytes) under the folders."""
    files = size = 0
    for folder in folders:
        for dirpath, _, names in os.walk(folder):
            for n in names:
                try:
                    size += os.lstat(os.path.join(dirpath, n)).st_size
                    files += 1
                except FileNotFoundError:
                    continue
    return files, size


# --------------------------------------------------------------------------
# what a visitor sends: the page's events, read from its config
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    fn_index: int
    trigger_id: int | None
    inputs: tuple[int, ...]
    queued: bool = True  # False: the page posts it directly (``DIRECT``), no join and no stream


@dataclass
class Plan:
    """The page's events a visitor fires, by action, and each component's starting value."""

    values: dict[int, Any]
    events: dict[str, list[Event]]
    search_id: int
    rq_ids: list[str]

    @classmethod
    def from_config(cls, config: dict, rq_ids: list[str]) -> Plan:
        comps = {c["id"]: c for c in config["components"]}
        by_elem = {c.get("props", {}).get("elem_id"): c["id"] for c in comps.values() if c.get("props")}
        values = {cid: c.get("props", {}).get("value") for cid, c in comps.items()}

        def triggered(elem_id: str | None, event: str) -> list[Event]:
            target = by_elem.get(elem_id) if elem_id else None
            found = []
            for dep in config["dependencies"]:
                if not dep.get("backend_fn", True):  # runs in the browser only: nothing reaches the server
                    continue
                queued = dep.get("queue") is not False if config.get("enable_queue", True) else False
                for tid, name in dep["targets"]:
                    if name == event and (elem_id is None or tid == target):
                        found.append(Event(dep["id"], tid, tuple(dep["inputs"]), queued))
                        break
            return found

        events = {
            "open": triggered(None, "load"),
            "browse": triggered("br-rq", "change"),
            "filter": triggered("lb-search", "change"),
            "plots": triggered("tab-plots", "select"),
            "judges": triggered("tab-judges", "select"),
        }
        missing = [a for a in ("browse", "filter", "plots") if not events[a]]
        if missing:
            raise SystemExit(f"the page has no event for {', '.join(missing)}: the benchmark needs updating")
        return cls(values, events, by_elem["lb-search"], rq_ids)

    def data(self, event: Event, overrides: dict[int, Any]) -> list[Any]:
        return [overrides.get(i, self.values.get(i)) for i in event.inputs]


# --------------------------------------------------------------------------
# measurements
# --------------------------------------------------------------------------


@dataclass
class Tally:
    """Latencies (seconds) and errors per action, and how many requests were made."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    # of each answered action, the seconds its events waited in Gradio's queue (join to "process_starts")
    waits: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    requests: int = 0

    def add(self, action: str, seconds: float, error: str | None) -> None:
        self.requests += 1
        if error is None:
            self.latencies[action].append(seconds)
        else:
            self.errors[action].append(error)

    def n_errors(self) -> int:
        return sum(len(v) for v in self.errors.values())


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.0f}"


# --------------------------------------------------------------------------
# visitors
# --------------------------------------------------------------------------


class HttpxHttp:
    """The visitors' HTTP on httpx: the calibration visit and the hostile requests, whose refusals are read from
    httpx's own error names (``CUT_OFF``)."""

    def __init__(self, client: httpx.AsyncClient):
        self.client = client

    async def get(self, url: str, timeout: float) -> tuple[int, bytes]:
        r = await self.client.get(url, timeout=timeout)
        return r.status_code, r.content

    async def post_json(self, url: str, body: dict, timeout: float) -> tuple[int, bytes]:
        r = await self.client.post(url, json=body, timeout=timeout)
        return r.status_code, r.content

    @contextlib.asynccontextmanager
    async def lines(self, url: str, timeout: float) -> AsyncIterator[tuple[int, AsyncIterator[str]]]:
        async with self.client.stream("GET", url, timeout=timeout) as r:
            yield r.status_code, r.aiter_lines()


class AiohttpHttp:
    """The crowd's HTTP on aiohttp (installed with litellm), whose C parser keeps 100 visitors from taking a core of
    the machine they share with the Space: on httpx they used a whole one, which a real crowd, on its own machines,
    takes from no server. The Space and the static server are visited through the same client."""

    def __init__(self, visitors: int):
        self.visitors = visitors
        self.session: Any = None

    async def __aenter__(self) -> "AiohttpHttp":
        import aiohttp

        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=2 * self.visitors + 8),
            timeout=aiohttp.ClientTimeout(total=60),
            read_bufsize=2**23,  # an event stream's line holds an event's whole output (a plot: hundreds of kB)
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.session.close()

    def _timeout(self, seconds: float) -> Any:
        import aiohttp

        return aiohttp.ClientTimeout(total=seconds)

    async def get(self, url: str, timeout: float) -> tuple[int, bytes]:
        async with self.session.get(url, timeout=self._timeout(timeout)) as r:
            return r.status, await r.read()

    async def post_json(self, url: str, body: dict, timeout: float) -> tuple[int, bytes]:
        async with self.session.post(url, json=body, timeout=self._timeout(timeout)) as r:
            return r.status, await r.read()

    @contextlib.asynccontextmanager
    async def lines(self, url: str, timeout: float) -> AsyncIterator[tuple[int, AsyncIterator[str]]]:
        async with self.session.get(url, timeout=self._timeout(timeout)) as r:

            async def each() -> AsyncIterator[str]:
                async for raw in r.content:
                    yield raw.decode("utf-8").rstrip("\r\n")

            yield r.status, each()


class SpaceVisitor:
    """One person's visit to the Space over Gradio's queue API (a new session per visit)."""

    def __init__(self, http: HttpxHttp | AiohttpHttp, base: str, plan: Plan, timeout_s: float):
        self.http, self.base, self.plan, self.timeout_s = http, base, plan, timeout_s
        self.session = ""
        self.captured: dict[str, bytes] = {}
        self.waited = 0.0

    def new_session(self) -> None:
        self.session = "".join(random.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=11))

    async def page(self) -> bytes:
        status, content = await self.http.get(self.base + "/", self.timeout_s)
        if status != 200:
            raise RuntimeError(f"page HTTP {status}")
        return content

    async def events(
        self, action: str, overrides: dict[int, Any] | None = None, events: list[Event] | None = None
    ) -> bytes:
        """Send the action's events as the page does: each one outside the queue as one POST; the queued ones joined,
        then the session's stream read until each has completed (``self.waited``: the seconds from the first join to
        the last queued event's start; 0 when none is queued)."""
        pending: set[str] = set()
        joined = time.perf_counter()
        self.waited = 0.0
        received = bytearray()
        chosen = events if events is not None else self.plan.events[action]

        def body(ev: Event) -> dict:
            return {
                "data": self.plan.data(ev, overrides or {}),
                "event_data": None,
                "fn_index": ev.fn_index,
                "trigger_id": ev.trigger_id,
                "session_hash": self.session,
            }

        for ev in (e for e in chosen if not e.queued):
            status, content = await self.http.post_json(self.base + DIRECT, body(ev), self.timeout_s)
            if status != 200:
                raise RuntimeError(f"direct event HTTP {status}: {content[:160].decode(errors='replace')}")
            received += content
        if all(not e.queued for e in chosen):
            return bytes(received)
        joined = time.perf_counter()
        for ev in (e for e in chosen if e.queued):
            status, content = await self.http.post_json(self.base + JOIN, body(ev), self.timeout_s)
            if status != 200:
                raise RuntimeError(f"join HTTP {status}: {content[:160].decode(errors='replace')}")
            pending.add(json.loads(content)["event_id"])
        failures = []
        url = f"{self.base}{STREAM}?session_hash={self.session}"
        async with self.http.lines(url, self.timeout_s) as (status, stream):
            if status != 200:
                raise RuntimeError(f"stream HTTP {status}")
            async for line in stream:
                if not line.startswith("data:"):
                    continue
                received += line.encode() + b"\n"
                msg = json.loads(line[5:])
                kind = msg.get("msg")
                if kind == "process_starts":
                    self.waited = time.perf_counter() - joined
                if kind == "process_completed":
                    pending.discard(msg.get("event_id"))
                    if not msg.get("success"):
                        failures.append(str(msg.get("output", {}).get("error") or msg.get("title") or "error")[:160])
                elif kind == "unexpected_error":
                    failures.append(f"unexpected error: {msg.get('message')}"[:160])
                    break
                if not pending or kind == "close_stream":
                    break
        if failures:
            raise RuntimeError("; ".join(failures))
        if pending:
            raise RuntimeError(f"the stream closed with {len(pending)} event(s) unanswered")
        return bytes(received)

    async def act(self, action: str, tally: Tally, **kw: Any) -> bytes | None:
        t = time.perf_counter()
        try:
            out = await asyncio.wait_for(self._act(action, **kw), self.timeout_s)
        except Exception as exc:  # a failed action is what the benchmark counts: keep going, say what it was
            tally.add(action, time.perf_counter() - t, f"{type(exc).__name__}: {exc}"[:200] or type(exc).__name__)
            return None
        tally.add(action, time.perf_counter() - t, None)
        if action != "open" or self.plan.events["open"]:
            tally.waits[action].append(self.waited)
        return out

    async def _act(self, action: str, search: str = "", rq_id: str = "") -> bytes:
        if action == "open":  # the page, then the load events that run on the server (if any)
            page = await self.page()
            return page + await self.events("open") if self.plan.events["open"] else page
        if action == "filter":
            return await self.events("filter", {self.plan.search_id: search})
        if action == "browse":
            return await self.events("browse", {ev.inputs[0]: rq_id for ev in self.plan.events["browse"]})
        return await self.events(action)


class StaticVisitor:
    """The same visit against the static server: each action fetches the bytes the Space answered."""

    def __init__(self, http: HttpxHttp | AiohttpHttp, base: str, timeout_s: float):
        self.http, self.base, self.timeout_s = http, base, timeout_s

    def new_session(self) -> None:
        pass

    async def act(self, action: str, tally: Tally, **_: Any) -> bytes | None:
        t = time.perf_counter()
        try:
            status, content = await self.http.get(f"{self.base}/{action}.txt", self.timeout_s)
            if status != 200:
                raise RuntimeError(f"static HTTP {status}")
        except Exception as exc:
            tally.add(action, time.perf_counter() - t, f"{type(exc).__name__}: {exc}"[:200])
            return None
        tally.add(action, time.perf_counter() - t, None)
        return content


def visit_script(plan: Plan, rng: random.Random, n_models: int) -> list[tuple[str, dict[str, str]]]:
    """One visit: the page opened, the opening RQ, two searches, another RQ, the plots, the judges."""
    steps: list[tuple[str, dict[str, str]]] = [("open", {}), ("browse", {"rq_id": plan.rq_ids[0]})]
    for _ in range(2):
        steps.append(("filter", {"search": f"model-{rng.randrange(n_models):03d}"[: rng.choice((7, 8, 9))]}))
    steps.append(("browse", {"rq_id": rng.choice(plan.rq_ids)}))
    steps.append(("plots", {}))
    if plan.events["judges"]:
        steps.append(("judges", {}))
    return steps


async def crowd(
    make_visitor: Callable[[], Any],
    plan: Plan,
    *,
    visitors: int,
    budget: int,
    think_s: float,
    deadline: float,
    n_models: int,
    seed: int,
    on_request: Callable[[int], None] | None = None,
) -> Tally:
    """``visitors`` people visiting at once (arrivals spread over a second), each visit after visit, pausing
    about ``think_s`` between actions, until ``budget`` requests are made or the deadline passes."""
    tally = Tally()

    async def person(k: int) -> None:
        rng = random.Random(f"{seed}:{k}")
        await asyncio.sleep(rng.random())
        visitor = make_visitor()
        while tally.requests < budget and time.monotonic() < deadline:
            visitor.new_session()
            for action, kw in visit_script(plan, rng, n_models):
                if tally.requests >= budget or time.monotonic() >= deadline:
                    return
                await visitor.act(action, tally, **kw)
                if on_request is not None:
                    on_request(tally.requests)
                if think_s:
                    await asyncio.sleep(rng.expovariate(1 / think_s))

    await asyncio.gather(*(person(k) for k in range(visitors)))
    return tally


def client_for(visitors: int) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=2 * visitors + 8, max_keepalive_connections=2 * visitors + 8)
    return httpx.AsyncClient(limits=limits, timeout=60)


# --------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------


def print_phase(n: int, space: Tally, static: Tally, seconds: float) -> dict[str, float]:
    """The per-action table for one crowd size; returns the p50 ratios."""
    print(
        f"\n{n} visitors: {space.requests} requests to the Space in {seconds:.0f}s, {space.n_errors()} errors; "
        f"{static.requests} to the static server, {static.n_errors()} errors"
    )
    print(
        f"  {'action':<10} {'n':>5} {'err':>4} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} | {'static p50':>10} "
        f"{'p95':>6} | {'p50 ratio':>9} {'p95 ratio':>9} | {'queued p50':>10} {'p95':>6}"
    )
    ratios = {}
    for action in ACTIONS:
        lat, base = space.latencies.get(action, []), static.latencies.get(action, [])
        errs = space.errors.get(action, [])
        if not lat and not errs:
            continue
        p50, p95, p99 = (percentile(lat, q) for q in (50, 95, 99))
        b50, b95 = percentile(base, 50), percentile(base, 95)
        r50 = p50 / b50 if base and lat else float("nan")
        r95 = p95 / b95 if base and lat else float("nan")
        ratios[action] = r50
        waits = space.waits.get(action, [])
        w50, w95 = percentile(waits, 50), percentile(waits, 95)
        print(
            f"  {action:<10} {len(lat):>5} {len(errs):>4} {ms(p50):>8} {ms(p95):>8} {ms(p99):>8} | {ms(b50):>10} "
            f"{ms(b95):>6} | {r50:>8.1f}x {r95:>8.1f}x | {ms(w50):>10} {ms(w95):>6}"
        )
    for action, errs in space.errors.items():
        print(f"  errors in {action}: {len(errs)}, e.g. {errs[0]}")
    return ratios


async def calibrate(space: Server, plan: Plan, static_dir: Path, timeout_s: float) -> dict[str, int]:
    """One visit by one visitor: the Space computes its tables, and each action's answer becomes a static file."""
    async with client_for(1) as client:
        v = SpaceVisitor(HttpxHttp(client), space.url, plan, timeout_s)
        v.new_session()
        tally = Tally()
        sizes = {}
        for action, kw in (
            ("open", {}),
            ("browse", {"rq_id": plan.rq_ids[0]}),
            ("filter", {"search": "model-00"}),
            ("plots", {}),
            ("judges", {}),
        ):
            if action == "judges" and not plan.events["judges"]:
                continue
            out = await v.act(action, tally, **kw)
            if out is None:
                raise SystemExit(f"the calibration visit failed at {action}: {tally.errors[action][0]}")
            (static_dir / f"{action}.txt").write_bytes(out)
            sizes[action] = len(out)
    return sizes


# how httpx names a request the server answered and closed before the body was sent
CUT_OFF = ("ReadError", "WriteError", "RemoteProtocolError")


async def status_of_headers(base: str, path: str, length: int, *, multipart: bool = False) -> str:
    """The status a server answers to a POST's headers alone (declaring ``length`` bytes), before any body."""
    url = httpx.URL(base)
    kind = "multipart/form-data; boundary=x" if multipart else "application/json"
    reader, writer = await asyncio.open_connection(url.host, url.port)
    try:
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {url.host}\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {length}\r\n\r\n".encode()
        )
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 10)
        return line.decode().split(" ")[1] if line else "none (closed)"
    except asyncio.TimeoutError:
        return "none within 10 s (the body was awaited)"
    finally:
        writer.close()


async def hostile(
    space: Server,
    plan: Plan,
    uploads_dir: Path,
    *,
    searches: int,
    uploads: int,
    upload_bytes: int,
    cap_bytes: int,
    timeout_s: float,
) -> None:
    """Long search strings (RSS after each), then a burst of uploads and one over the cap (files left)."""
    print("\nhostile requests")
    async with client_for(2) as client:
        for size in (100_000, 700_000, 4 * 1024 * 1024):
            before = space.rss_mb()
            outcomes: dict[str, int] = defaultdict(int)
            for _ in range(searches):
                v = SpaceVisitor(HttpxHttp(client), space.url, plan, timeout_s)
                v.new_session()
                tally = Tally()
                out = await v.act("filter", tally, search="model-" + "x" * size)
                error = tally.errors["filter"][0] if out is None else ""
                refused = re.search(r"(?:join|direct event) HTTP (\d+)", error)
                if out is not None:
                    # a toast on the queue's stream, or the notice the page shows above the table
                    warned = any(mark in out for mark in (b'"level":"warning"', b'"level": "warning"', b"lb-cut"))
                    outcomes["answered, with a warning" if warned else "answered"] += 1
                elif refused:
                    outcomes[f"refused: HTTP {refused.group(1)}"] += 1
                elif error.startswith(CUT_OFF):
                    # refused before its body was read: ask again with the headers alone to read the status
                    path = JOIN if plan.events["filter"][0].queued else DIRECT
                    outcomes[f"refused: HTTP {await status_of_headers(space.url, path, size)}"] += 1
                else:
                    outcomes[error[:90]] += 1
            grown = (space.rss_mb() - before) / max(searches, 1)
            said = "; ".join(f"{n}x {what}" for what, n in outcomes.items())
            print(f"  search of {size:,} characters x{searches}: {said}; Space RSS {grown:+.1f} MB per request")
        before_files = folder_usage(uploads_dir)[0]
        statuses: dict[str, int] = defaultdict(int)
        t = time.perf_counter()
        blob = os.urandom(upload_bytes)
        for k in range(uploads):
            try:
                r = await client.post(
                    space.url + UPLOAD, files={"files": (f"burst-{k}.jsonl", blob)}, timeout=timeout_s
                )
                statuses[str(r.status_code)] += 1
            except httpx.TransportError as exc:  # answered and closed before the body was sent: read the status
                if not type(exc).__name__.startswith(CUT_OFF):
                    raise
                statuses[await status_of_headers(space.url, UPLOAD, upload_bytes, multipart=True)] += 1
        took = time.perf_counter() - t
        kept = folder_usage(uploads_dir)[0] - before_files
        said = ", ".join(f"{n}x HTTP {code}" for code, n in sorted(statuses.items()))
        print(
            f"  {uploads} uploads of {upload_bytes / 1e6:.1f} MB in {took:.1f}s from one client: {said}; "
            f"{kept} file(s) left in the upload folder (uploaded, never submitted)"
        )
        before_files = folder_usage(uploads_dir)[0]
        over = await upload_outcome(client, space.url + UPLOAD + "?upload_id=over", cap_bytes + 20_000, timeout_s)
        kept = folder_usage(uploads_dir)[0] - before_files
        print(f"  one upload 20 KB over the {cap_bytes / 2**20:.0f} MB cap: {over}; {kept} file(s) left")


async def upload_outcome(client: httpx.AsyncClient, url: str, size: int, timeout_s: float) -> str:
    """What the Space did with an upload of ``size`` bytes: its status, or that it closed the connection (a server
    refusing a body it will not read may answer and close while the body is still being sent)."""
    try:
        r = await client.post(url, files={"files": ("over.jsonl", os.urandom(size))}, timeout=timeout_s)
    except httpx.TransportError as exc:
        if not type(exc).__name__.startswith(CUT_OFF):
            raise
        return f"refused (connection closed: {type(exc).__name__})"
    return f"HTTP {r.status_code}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    ap.add_argument("--visitors", default="10,50,100,300", help="crowd sizes, comma-separated (default 10,50,100,300)")
    ap.add_argument("--budget", type=int, default=1500, help="requests per crowd size (at least 8 per visitor)")
    ap.add_argument("--soak", type=int, default=10_000, help="requests in all before the last RSS reading")
    ap.add_argument("--soak-visitors", type=int, default=50)
    ap.add_argument("--think", type=float, default=0.5, help="mean pause between a visitor's actions, seconds")
    ap.add_argument("--models", type=int, default=500, help="synthetic models (x2 settings = leaderboard rows)")
    ap.add_argument("--phase-seconds", type=float, default=300, help="time limit of each phase")
    ap.add_argument("--max-seconds", type=float, default=2400, help="time limit of the whole run")
    ap.add_argument("--timeout", type=float, default=60, help="a request unanswered this long is an error")
    ap.add_argument("--serve-static", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_static is not None:
        serve_static(args.serve_static, args.port)
        return
    sys.stdout.reconfigure(line_buffering=True)  # each phase's lines as it ends, also into a file
    if args.smoke:
        args.visitors, args.budget, args.soak, args.soak_visitors, args.models = "3", 30, 80, 3, 20
        args.think, args.phase_seconds = 0.05, 120
    crowds = [int(x) for x in args.visitors.split(",") if x.strip()]
    run_started = time.monotonic()
    deadline = run_started + args.max_seconds
    uptime = Path("/proc/loadavg").read_text().split()[:3]
    print(f"machine: {os.cpu_count()} cores, load average {' '.join(uptime)} (1, 5, 15 min) at the start")

    run = Path(tempfile.mkdtemp(prefix="rqb-space-load-"))
    (run / "space-tmp").mkdir()
    (run / "static").mkdir()
    t = time.perf_counter()
    fill_results_store(run / "store", args.models, with_requests=True)
    print(
        f"store: {args.models * 2} results files ({args.models} models x 2 settings, one judge) and "
        f"{args.models} finished requests in {time.perf_counter() - t:.0f}s"
    )

    env = {
        **os.environ,
        "TMPDIR": str(run / "space-tmp"),
        "GRADIO_TEMP_DIR": str(run / "gradio"),
        "RQB_HOME": str(run / "home"),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("SPACE_ID", None)
    watched = (run / "space-tmp", run / "gradio")
    space_port, static_port = free_port(), free_port()
    space = start(
        "the Space",
        [sys.executable, "-m", "rqbench", "space", "--store", str(run / "store"), "--port", str(space_port)],
        space_port,
        env,
        run / "space.log",
        300,
    )
    static = None
    try:
        config = httpx.get(space.url + "/config", timeout=60).json()
        ids = instance_ids(N_INSTANCES)  # the Browse tab opens on the first paper; its RQs are the RQ picker's choices
        plan = Plan.from_config(config, [r for r, arxiv_id, _ in ids if arxiv_id == ids[0][1]])
        rss_start = space.rss_mb()
        t = time.perf_counter()
        sizes = asyncio.run(calibrate(space, plan, run / "static", args.timeout))
        print(
            f"calibration visit (the Space reads and summarises the store): {time.perf_counter() - t:.1f}s; "
            + ", ".join(f"{a} {n / 1e3:.0f} kB" for a, n in sizes.items())
        )
        if not plan.events["judges"]:
            print("judges: this page has no Judges tab, so visits skip it")
        static = start(
            "the static server",
            [sys.executable, __file__, "--serve-static", str(run / "static"), "--port", str(static_port)],
            static_port,
            env,
            run / "static.log",
            60,
            ready_path="/open.txt",
        )
        files0, bytes0 = folder_usage(*watched)
        rss_warm = space.rss_mb()
        print(
            f"Space RSS {rss_start:.0f} MB at start, {rss_warm:.0f} MB after the calibration visit; "
            f"its temporary folders hold {files0} files"
        )

        total = 0
        p50_ratios: dict[int, dict[str, float]] = {}
        errors: dict[int, int] = {}
        filter_p95: dict[int, float] = {}
        rss_log: list[tuple[int, float]] = [(0, rss_warm)]
        for n in crowds:
            budget = max(args.budget, 8 * n)
            phase_deadline = min(deadline, time.monotonic() + args.phase_seconds)
            t = time.monotonic()

            async def both(n=n, budget=budget, phase_deadline=phase_deadline, t=t):
                async with AiohttpHttp(n) as http:
                    sp = await crowd(
                        lambda: SpaceVisitor(http, space.url, plan, args.timeout),
                        plan,
                        visitors=n,
                        budget=budget,
                        think_s=args.think,
                        deadline=phase_deadline,
                        n_models=args.models,
                        seed=n,
                    )
                took = time.monotonic() - t
                st_deadline = min(deadline, time.monotonic() + args.phase_seconds)
                async with AiohttpHttp(n) as http:
                    st = await crowd(
                        lambda: StaticVisitor(http, static.url, args.timeout),
                        plan,
                        visitors=n,
                        budget=budget,
                        think_s=args.think,
                        deadline=st_deadline,
                        n_models=args.models,
                        seed=n,
                    )
                return sp, st, took

            sp, st, took = asyncio.run(both())
            total += sp.requests
            p50_ratios[n] = print_phase(n, sp, st, took)
            errors[n] = sp.n_errors()
            filter_p95[n] = percentile(sp.latencies.get("filter", []), 95)
            rss_log.append((total, space.rss_mb()))
            print(f"  Space RSS after {total} requests: {rss_log[-1][1]:.0f} MB")
            if time.monotonic() >= deadline:
                print("the run's time limit is reached: later crowd sizes are skipped")
                break

        if total < args.soak and time.monotonic() < deadline:
            step = max(1, (args.soak - total) // 5)
            marks = {total + step * k for k in range(1, 6)}

            def note_rss(done: int, base: int = total) -> None:
                if base + done in marks:
                    rss_log.append((base + done, space.rss_mb()))

            async def soak():
                async with AiohttpHttp(args.soak_visitors) as http:
                    return await crowd(
                        lambda: SpaceVisitor(http, space.url, plan, args.timeout),
                        plan,
                        visitors=args.soak_visitors,
                        budget=args.soak - total,
                        think_s=args.think,
                        deadline=deadline,
                        n_models=args.models,
                        seed=7,
                        on_request=note_rss,
                    )

            t = time.monotonic()
            tally = asyncio.run(soak())
            total += tally.requests
            rss_log.append((total, space.rss_mb()))
            print(
                f"\nsoak: {tally.requests} requests by {args.soak_visitors} visitors in {time.monotonic() - t:.0f}s, "
                f"{tally.n_errors()} errors"
            )
        files1, bytes1 = folder_usage(*watched)
        print("Space RSS (MB) by requests served: " + ", ".join(f"{n}: {mb:.0f}" for n, mb in sorted(set(rss_log))))
        half = [mb for n, mb in rss_log if n >= total / 2]
        print(
            f"Space RSS: {rss_warm:.0f} MB after warm-up, {rss_log[-1][1]:.0f} MB after {total} requests "
            f"({rss_log[-1][1] - rss_warm:+.0f} MB; {half[-1] - half[0]:+.0f} MB over the second half)"
        )
        print(
            f"disk: the Space's temporary and upload folders gained {files1 - files0} files "
            f"({(bytes1 - bytes0) / 1e6:+.1f} MB) over {total} requests"
        )

        cap = 8 * 1024 * 1024
        asyncio.run(
            hostile(
                space,
                plan,
                run / "gradio",
                searches=1 if args.smoke else 3,
                uploads=3 if args.smoke else 20,
                upload_bytes=100_000 if args.smoke else 2_000_000,
                cap_bytes=cap,
                timeout_s=args.timeout,
            )
        )
        files2, bytes2 = folder_usage(*watched)
        print(
            f"disk after the hostile requests: {files2 - files0} files ({(bytes2 - bytes0) / 1e6:+.1f} MB) "
            f"more than before the crowds"
        )

        print("\ngoals (issue 36)")
        for n in crowds:
            if n in errors and n >= 100:
                print(f"  no error at {n} visitors: {'met' if errors[n] == 0 else 'NOT met'} ({errors[n]} errors)")
        for n, p95 in filter_p95.items():
            limit = FILTER_P95_S.get(n, max(FILTER_P95_S.values()))
            print(
                f"  p95 of a filter change within {limit:g} s at {n} visitors: "
                f"{'met' if p95 <= limit else 'NOT met'} ({p95:.2f}s)"
            )
        for n, ratios in p50_ratios.items():
            r, limit = ratios.get("open", float("nan")), OPEN_P50_RATIO.get(n, max(OPEN_P50_RATIO.values()))
            print(
                f"  a page open's p50 within {limit:g}x the static server at {n} visitors: "
                f"{'met' if r <= limit else 'NOT met'} ({r:.1f}x)"
            )
        load = Path("/proc/loadavg").read_text().split()[:3]
        print(f"machine: load average {' '.join(load)} at the end; the run took {time.monotonic() - run_started:.0f}s")
    finally:
        space.stop()
        if static is not None:
            static.stop()
        shutil.rmtree(run, ignore_errors=True)


if __name__ == "__main__":
    main()
