"""What keeps the Space steady under a crowd (issue 24, item 1), as behaviour, never timed:
computed views cached per version of the data and recomputed when the store changes, a page load
that looks at the stores at most every few seconds, long search strings cut with a message, the
CSV download served from memory (no file per render), uploads deleted once submitted, and, on a
launched app, bounded session state and no file written by page loads and filter changes.

The figures (latency against a static server, RSS, files written) come from
``benchmarks/space_load.py``.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from types import SimpleNamespace

import httpx
import pytest
from asgi_get import asgi_get

from rqbench.space import downloads
from rqbench.space import leaderboard as lb
from rqbench.space.memo import Recent, ViewCache
from rqbench.space.stores import SpaceStores
from rqbench.space.ui import SpaceConfig, SpaceData, build_app
from rqbench.testing.synthetic import make_results


def page_fn(demo, name: str):
    return next(f for f in demo.fns.values() if f.name == name)


def load_page(demo, query: str = "") -> tuple:
    """The page-load handler's reply; ``query``: the page address's query string (a link), as the page's script
    hands it over (the handler's last input)."""
    load = page_fn(demo, "page_load")
    *view, _ = [b.value for b in load.inputs]
    return load.fn(*view, query)


def render(demo, search: str = "", **_) -> tuple[str, str, int]:
    """A search typed into the leaderboard: (its first page, the CSV link, the page number)."""
    fn = page_fn(demo, "first_page")
    values = [b.value for b in fn.inputs]
    values[0] = search
    return fn.fn(*values)


@pytest.fixture
def stores(tmp_path) -> SpaceStores:
    stores = SpaceStores.local(tmp_path / "store")
    for model in ("model-a", "model-b"):
        stores.results.put(make_results(model, n_instances=2))
    return stores


# --------------------------------------------------------------------------
# the caches
# --------------------------------------------------------------------------


def test_a_view_is_computed_once_per_version_even_when_a_crowd_asks_at_once():
    cache: ViewCache[str] = ViewCache(max_entries=4)
    calls = []
    gate = threading.Event()

    def compute():
        calls.append(1)
        gate.wait(5)  # everyone else arrives while the first computes
        return "table"

    out = []
    threads = [threading.Thread(target=lambda: out.append(cache.get(1, "default", compute))) for _ in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    gate.set()
    for t in threads:
        t.join(5)
    assert out == ["table"] * 8 and len(calls) == 1
    assert cache.get(1, "default", lambda: "other") == "table"
    assert cache.get(2, "default", lambda: "new version") == "new version"  # a new version drops the old views
    assert len(cache) == 1
    for k in range(6):
        cache.get(2, k, lambda k=k: k)
    assert len(cache) == 4  # least recently used dropped


def test_a_failed_computation_is_not_kept():
    cache: ViewCache[int] = ViewCache()

    def boom():
        raise ValueError("no")

    with pytest.raises(ValueError):
        cache.get(1, "k", boom)
    assert cache.get(1, "k", lambda: 3) == 3


def test_a_recent_value_is_kept_for_its_age_and_dropped_when_invalidated():
    now = [0.0]
    reads = []
    recent = Recent(lambda: reads.append(1) or len(reads), max_age_s=5, clock=lambda: now[0])
    assert recent.get() == 1 and recent.get() == 1
    now[0] = 4.9
    assert recent.get() == 1
    now[0] = 5.0
    assert recent.get() == 2
    recent.invalidate()
    assert recent.get() == 3 and len(reads) == 3


# --------------------------------------------------------------------------
# the page's handlers: cached per version, recomputed when the store changes
# --------------------------------------------------------------------------


def test_a_page_load_looks_at_the_stores_at_most_every_few_seconds_and_refresh_always(stores, monkeypatch):
    now = [100.0]
    data = SpaceData(SpaceConfig(stores=stores, n_boot=50, recheck_after_s=5), clock=lambda: now[0])
    listings, request_reads = [], []
    real_paths, real_requests = stores.results.stamps, stores.requests.load
    monkeypatch.setattr(stores.results, "stamps", lambda: listings.append(1) or real_paths())
    monkeypatch.setattr(stores.requests, "load", lambda: request_reads.append(1) or real_requests())
    data.refresh(recent=True)
    data.unreadable()
    looks = len(listings)  # the listing, and the read that follows it
    assert looks >= 1 and data.version == 1 and len(request_reads) == 1
    stores.results.put(make_results("model-c", n_instances=2))
    for _ in range(20):  # a crowd within the same few seconds
        data.refresh(recent=True)
        data.unreadable()
    assert len(listings) == looks and len(request_reads) == 1 and data.version == 1
    now[0] += 5
    data.refresh(recent=True)
    assert len(listings) > looks and data.version == 2  # the new file is seen on the next look
    assert {r.submission.model for r in data.results} == {"model-a", "model-b", "model-c"}
    data.unreadable()
    assert len(request_reads) == 2
    looks = len(listings)
    data.refresh()  # the Refresh button: always looks, and reads the requests again
    data.unreadable()
    assert len(listings) > looks and len(request_reads) == 3 and data.version == 2  # nothing changed: same version


def test_readers_do_not_queue_behind_a_slow_look_at_the_stores(stores, monkeypatch):
    """While one thread walks the stores, a page load or tab (``recent=True``) gets the data as it stands at once;
    the Refresh button (and the very first look) still waits for a look of its own."""
    now = [100.0]
    data = SpaceData(SpaceConfig(stores=stores, n_boot=50, recheck_after_s=5), clock=lambda: now[0])
    data.refresh(recent=True)
    assert data.version == 1
    walking, release = threading.Event(), threading.Event()
    real = stores.results.stamps

    def slow_stamps():
        walking.set()
        release.wait(10)
        return real()

    monkeypatch.setattr(stores.results, "stamps", slow_stamps)
    stores.results.put(make_results("model-c", n_instances=2))
    now[0] += 5
    looker = threading.Thread(target=data.refresh, kwargs={"recent": True})
    looker.start()
    assert walking.wait(10)
    t0 = time.perf_counter()
    for _ in range(50):
        assert data.refresh(recent=True).version == 1  # the data as it stands, without waiting
    assert time.perf_counter() - t0 < 1.0
    release.set()
    looker.join(10)
    assert data.version == 2 and {r.submission.model for r in data.results} >= {"model-c"}


def test_the_table_is_rendered_once_per_view_and_again_when_the_store_changes(stores, monkeypatch):
    from rqbench.space.tabs import leaderboard as tab

    config = SpaceConfig(stores=stores, n_boot=50, recheck_after_s=0)
    demo = build_app(config)
    drawn = []
    real = tab.table_html
    monkeypatch.setattr(
        tab, "table_html", lambda table, view, *page: drawn.append(view.search) or real(table, view, *page)
    )
    first = load_page(demo)
    again = load_page(demo)
    assert drawn == [""]  # the second visitor gets the first one's table
    assert first[0] is again[0] and "model-a" in first[0]
    one = render(demo, "model-b")
    assert render(demo, "model-b") == one and drawn == ["", "model-b"] and "model-a" not in one[0]
    stores.results.put(make_results("model-b2", n_instances=2))
    load_page(demo)  # the page load's look finds the new file: a new version
    fresh = render(demo, "model-b")
    assert "model-b2" in fresh[0] and drawn == ["", "model-b", "", "model-b"]


def test_plots_and_browse_tables_are_drawn_once_per_version(stores, monkeypatch):
    from rqbench.space import browse as browse_data
    from rqbench.space import plots as plot_code

    demo = build_app(SpaceConfig(stores=stores, n_boot=50, recheck_after_s=0))
    load_page(demo)
    drawn = []
    real = plot_code.novelty_vs_narrowness
    monkeypatch.setattr(plot_code, "novelty_vs_narrowness", lambda rows, **kw: drawn.append(1) or real(rows, **kw))
    draw = page_fn(demo, "draw_both")
    first = draw.fn("combined", "standalone", "non_obviousness")
    second = draw.fn("combined", "standalone", "non_obviousness")
    assert len(drawn) == 1 and first[0]["value"] is second[0]["value"] and first[0]["value"].type == "matplotlib"
    scanned = []
    real_models = browse_data.models_for
    monkeypatch.setattr(browse_data, "models_for", lambda res, rq: scanned.append(rq) or real_models(res, rq))
    pick = page_fn(demo, "pick_rq")
    rq_id = make_results("x", n_instances=2).instances[0].rq_id
    a = pick.fn(rq_id, None)
    b = pick.fn(rq_id, None)
    assert scanned == [rq_id] and a[3] is b[3] and "model-a" in a[3]
    stores.results.put(make_results("model-c", n_instances=2))
    load_page(demo)
    draw.fn("combined", "standalone", "non_obviousness")
    assert "model-c" in pick.fn(rq_id, None)[3] and len(drawn) == 2 and len(scanned) == 2


def test_figures_are_drawn_one_at_a_time_whichever_threads_ask():
    """pyplot is not thread-safe, and the Plots and Judges events run on many threads at once (no lane of one), so the
    drawing itself is locked."""
    import threading
    import time

    from rqbench.space import plots

    busy, most, lock = [0], [0], threading.Lock()

    def draw():
        with lock:
            busy[0] += 1
            most[0] = max(most[0], busy[0])
        time.sleep(0.02)
        with lock:
            busy[0] -= 1
        return "figure"

    threads = [threading.Thread(target=plots.drawn, args=(draw, str.upper)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == [1] and plots.drawn(draw, str.upper) == "FIGURE"


def test_the_judges_plot_is_drawn_once_per_version(stores, monkeypatch):
    """10 visitors opening the Judges tab at once drew with pyplot from several threads (matplotlib's mathtext
    raised ParseException, 29 errors of 156 in benchmarks/space_load.py): one drawing per data version, under the
    drawing lock (test_figures_are_drawn_one_at_a_time_whichever_threads_ask)."""
    from rqbench.space.tabs import judges as tab

    demo = build_app(SpaceConfig(stores=stores, n_boot=50, recheck_after_s=0))
    load_page(demo)
    drawn = []
    real = tab.agreement_cost_figure
    monkeypatch.setattr(tab, "agreement_cost_figure", lambda board: drawn.append(1) or real(board))
    monkeypatch.setattr(tab, "nothing_placed", lambda board: "")  # no judge-board run here: draw the empty plot
    opened = page_fn(demo, "opened")
    first = opened.fn()
    second = opened.fn()
    plot = first[3]["value"]  # banner, table, pool, then the plot
    assert len(drawn) == 1 and plot is second[3]["value"] and plot.type == "matplotlib"
    stores.results.put(make_results("model-c", n_instances=2))
    load_page(demo)
    opened.fn()
    assert len(drawn) == 2


# --------------------------------------------------------------------------
# a small page load: the table paged, the queue and Browse filled when opened
# --------------------------------------------------------------------------


def model_cells(html: str) -> list[str]:
    """The model names in a table page's rows, in order (the reference row's too)."""
    import re

    return [m.strip() for m in re.findall(r'<td class="[^"]*first[^"]*"[^>]*>(?:<div[^>]*>)?([^<]+)', html)]


def test_the_page_load_carries_one_page_of_the_table_and_every_row_stays_reachable(tmp_path):
    from rqbench.space.tabs import leaderboard as tab
    from rqbench.testing.synthetic import fill_results_store

    stores = fill_results_store(tmp_path / "store", 30, with_requests=True)  # 60 model rows and the reference
    demo = build_app(SpaceConfig(stores=stores, n_boot=20, recheck_after_s=0))
    load = page_fn(demo, "page_load")
    out = dict(zip((getattr(b, "elem_id", None) for b in load.outputs), load_page(demo)))
    first = out["leaderboard-table"]
    assert len(model_cells(first)) == tab.PAGE_ROWS and "Rows 1-50 of 61 (page 1 of 2" in first
    assert out["lb-page"] == 1
    # the queue and the Browse pickers wait for their tab: the page load leaves them as they are
    assert all(
        isinstance(out[k], dict) and out[k].get("__type__") == "update" and len(out[k]) == 1
        for k in ("requests-table", "br-subfield", "br-paper", "br-rq")
    ), out["requests-table"]
    # Next, then past the end: the last page, the 61st row on it
    view = [b.value for b in page_fn(demo, "first_page").inputs]
    nxt = page_fn(demo, "next_page")
    html, _, at = nxt.fn(*view, 1)
    assert at == 2 and len(model_cells(html)) == 11 and "Rows 51-61 of 61 (page 2 of 2" in html
    assert nxt.fn(*view, 5)[2] == 2 and nxt.fn(*view, "")[2] == 2  # kept within the pages
    everyone = set(model_cells(first)) | set(model_cells(html))
    assert {f"model-{m:03d}" for m in range(30)} <= everyone
    # sorting and searching cover every row, not the page shown: the search lands on page 1
    last = [m for m in model_cells(html) if m.startswith("model-")][-1]
    found, _, at = render(demo, last)
    assert at == 1 and model_cells(found) == [last, last] and "2 row(s)." in found  # its two settings
    sort_fn = page_fn(demo, "first_page")
    values = [b.value for b in sort_fn.inputs]
    values[7], values[8] = "Model", True  # sort by name, ascending
    ordered = model_cells(sort_fn.fn(*values)[0])
    assert [m for m in ordered if m.startswith("model-")][:3] == ["model-000", "model-000", "model-001"]
    values[8] = False
    assert [m for m in model_cells(sort_fn.fn(*values)[0]) if m.startswith("model-")][0] == "model-029"


def test_the_browse_pickers_and_the_queue_are_filled_when_their_tab_opens(tmp_path):
    from rqbench.testing.synthetic import fill_results_store

    stores = fill_results_store(tmp_path / "store", 3, with_requests=True)
    demo = build_app(SpaceConfig(stores=stores, n_boot=20, recheck_after_s=60))
    load_page(demo)
    queue = page_fn(demo, "queue_shown").fn()
    assert len(queue) == 3 and page_fn(demo, "queue_shown").fn() is queue  # one table per read of the store
    opening = page_fn(demo, "first_opening")
    sub, paper, rq = opening.fn(None)
    first = make_results("x", n_instances=2).instances[0].rq_id
    assert rq.value == first and paper.value and sub.value
    other = make_results("x", n_instances=2).instances[1].rq_id
    assert all(u == {"__type__": "update"} for u in opening.fn(other))  # a pick already made is kept
    # ?tab=submit and ?rq_id= are filled by the page load itself
    load = page_fn(demo, "page_load")
    ids = [getattr(b, "elem_id", None) for b in load.outputs]
    linked = dict(zip(ids, load_page(demo, "?tab=submit")))
    assert len(linked["requests-table"]) == 3
    linked = dict(zip(ids, load_page(demo, f"?rq_id={other}")))
    assert linked["br-rq"].value == other and linked["tabs"].selected == "browse"


# --------------------------------------------------------------------------
# long search strings
# --------------------------------------------------------------------------


def test_a_search_of_700000_characters_is_cut_with_a_message_not_a_crash(stores):
    demo = build_app(SpaceConfig(stores=stores, n_boot=50))
    load_page(demo)
    html, link, _ = render(demo, "model-" + "x" * 700_000)
    # the search runs outside the queue (no toast): the notice is above the table, once
    assert html.count(f"first {downloads.MAX_SEARCH_CHARS} characters") == 1 and 'id="lb-cut"' in html
    assert "No results match these filters." in html and len(link) < 2000
    again = render(demo, "MODEL-A")[0]
    assert again.count("model-a") >= 1 and "lb-cut" not in again  # an uncut search shows no notice


def test_the_table_filter_matches_no_name_with_a_search_far_longer_than_every_name(stores):
    from rqbench.evaluate.metrics.summary import summarize

    results, _ = stores.results.load()
    table = lb.build_table(summarize(results, n_boot=20))
    assert lb.filter_table(table, lb.View(search="x" * 700_000)).empty  # Arrow refused such patterns
    assert set(lb.filter_table(table, lb.View(search="Model-B"))["Model"]) == {"model-b"}


# --------------------------------------------------------------------------
# the CSV download, from memory
# --------------------------------------------------------------------------


def test_the_csv_link_carries_the_view_and_the_route_serves_its_rows_from_memory(stores, tmp_path, monkeypatch):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # where the page wrote a CSV per render
    demo = build_app(SpaceConfig(stores=stores, n_boot=50))
    load_page(demo)
    view = lb.View(
        search="model-b",
        judges=(),
        settings=("standalone",),
        groups=("model", "headline", "provenance"),
        sort_by="Best@5 non-obviousness",
        ascending=True,
    )
    assert downloads.view_from_query(_query(downloads.view_query(view))) == view
    _, link, _ = render(demo, "model-b")
    href = link.split('href="')[1].split('"')[0].replace("&amp;", "&")
    assert href.startswith("leaderboard.csv?")  # relative: it works wherever the Space is served
    client = TestClient(Starlette(routes=[downloads.csv_route(demo.space_data)]))
    r = client.get("/" + href)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert "attachment" in r.headers["content-disposition"]
    shown = lb.render(demo.space_data.table, lb.View(search="model-b"))
    assert r.content == lb.to_csv(shown) and b"model-a" not in r.content
    hostile = client.get("/leaderboard.csv", params={"q": "x" * 5_000, "group": ["nope"], "sort": "os.system"})
    assert hostile.status_code == 200 and hostile.content.count(b"\n") == 1  # the header line: nothing matched
    assert list((tmp_path / "tmp").iterdir()) == []  # no file written for any of it


def _query(qs: str) -> dict[str, list[str]]:
    from urllib.parse import parse_qs

    return parse_qs(qs, keep_blank_values=True)


# --------------------------------------------------------------------------
# uploads: deleted once stored, kept while a refused one may be sent again
# --------------------------------------------------------------------------


def test_a_refused_upload_stays_for_the_retry_and_discarding_touches_only_gradios_folder(stores, tmp_path, monkeypatch):
    from rqbench.space.tabs.submit import discard_uploads

    uploads = tmp_path / "gradio"
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(uploads))
    (uploads / "abc123").mkdir(parents=True)
    upload = uploads / "abc123" / "submission.jsonl"
    upload.write_text('{"kind": "metadata", "model": "m"}\n')
    outside = tmp_path / "mine.jsonl"
    outside.write_text("{}\n")
    demo = build_app(SpaceConfig(stores=stores, n_boot=50))
    submit = page_fn(demo, "do_submit")
    message, _, outcome = submit.fn([str(upload), str(outside)], "alice", False, None)
    assert not outcome["accepted"]  # closed (no benchmark loaded): the page still lists the file for a retry
    assert upload.exists()
    discard_uploads([str(upload), str(outside)])  # what an accepted submission's handler does
    assert not upload.exists() and not (uploads / "abc123").exists() and uploads.is_dir()
    assert outside.exists()  # only Gradio's upload folder is touched


# --------------------------------------------------------------------------
# on a launched app: bounded sessions, no file per render
# --------------------------------------------------------------------------


class Visitor:
    """Gradio's event API over HTTP, as the page speaks it: an event outside the queue is one POST to
    ``run/predict``; a queued one is joined, and the session's stream read until it completes."""

    def __init__(self, base: str, config: dict, session: str):
        self.base, self.session = base, session
        self.deps = config["dependencies"]
        comps = {c["id"]: c for c in config["components"]}
        self.by_elem = {c.get("props", {}).get("elem_id"): cid for cid, c in comps.items()}
        self.values = {cid: c.get("props", {}).get("value") for cid, c in comps.items()}

    def events(self, elem_id: str | None, event: str) -> list[dict]:
        target = self.by_elem.get(elem_id) if elem_id else None
        return [d for d in self.deps if any(n == event and (elem_id is None or t == target) for t, n in d["targets"])]

    def fire(self, deps: list[dict], overrides: dict[int, object] | None = None) -> list[dict]:
        """Each event's completion message (``success``, ``output``), direct ones as the queue's would read."""
        ids, done = set(), []

        def body(dep: dict) -> dict:
            return {
                "data": [(overrides or {}).get(i, self.values.get(i)) for i in dep["inputs"]],
                "fn_index": dep["id"],
                "trigger_id": dep["targets"][0][0],
                "session_hash": self.session,
                "event_data": None,
            }

        for dep in (d for d in deps if d.get("queue") is False):
            r = httpx.post(f"{self.base}/gradio_api/run/predict", timeout=60, json=body(dep))
            done.append({"success": r.status_code == 200, "output": r.json()})
        for dep in (d for d in deps if d.get("queue") is not False):
            r = httpx.post(f"{self.base}/gradio_api/queue/join", timeout=60, json=body(dep))
            assert r.status_code == 200, r.text
            ids.add(r.json()["event_id"])
        if not ids:
            return done
        with httpx.stream(
            "GET", f"{self.base}/gradio_api/queue/data", params={"session_hash": self.session}, timeout=60
        ) as r:
            for line in r.iter_lines():
                if line.startswith("data:"):
                    msg = json.loads(line[5:])
                    if msg.get("msg") == "process_completed":
                        done.append(msg)
                        ids.discard(msg.get("event_id"))
                    if not ids or msg.get("msg") == "close_stream":
                        break
        return done


@pytest.fixture
def launched(stores, tmp_path, monkeypatch):
    """The Space as ``rqbench space`` serves it (``with_queue`` and ``launch_options``), with 3 sessions kept
    and its own temporary and upload folders."""
    import socket

    from rqbench.space import ui

    monkeypatch.setattr(ui, "SESSION_CAPACITY", 3)
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    config = SpaceConfig(stores=stores, n_boot=50)
    demo = build_app(config)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ui.with_queue(demo).launch(
        server_name="127.0.0.1",
        server_port=port,
        prevent_thread_lock=True,
        quiet=True,
        **ui.launch_options(config, demo),
    )
    try:
        yield SimpleNamespace(
            demo=demo, url=f"http://127.0.0.1:{port}", folders=(tmp_path / "gradio", tmp_path / "tmp")
        )
    finally:
        demo.close()


def page_config(base: str) -> dict:
    """The configuration ``GET /`` carries in its HTML (``window.gradio_config``), what the page starts from."""
    html = httpx.get(base + "/", timeout=60).text
    embedded = html.split("window.gradio_config = ", 1)[1].split(";</script>", 1)[0]
    return json.loads(embedded)


def value_of(config: dict, elem_id: str) -> object:
    return next(c["props"].get("value") for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id)


def _files(folders) -> list[str]:
    """Every file under the folders."""
    found = []
    for folder in folders:
        for dirpath, _, names in os.walk(folder):
            found += [os.path.join(dirpath, n) for n in names]
    return sorted(found)


def test_page_loads_and_filter_changes_write_no_file_and_sessions_stay_bounded(launched):
    config = httpx.get(launched.url + "/config", timeout=60).json()
    first = Visitor(launched.url, config, "first-visitor")
    opened = page_config(launched.url)  # a page open: the opening view is in the page
    link = value_of(opened, "lb-download")
    assert all(
        m["success"]
        for m in first.fire(
            first.events("br-rq", "change"),
            {first.by_elem["br-rq"]: make_results("x", n_instances=2).instances[1].rq_id},
        )
    )
    before = _files(launched.folders)
    for k in range(8):
        v = Visitor(launched.url, config, f"visitor-{k}")
        assert httpx.get(launched.url + "/", timeout=60).status_code == 200
        done = v.fire(v.events("lb-search", "change"), {v.by_elem["lb-search"]: f"model-{'ab'[k % 2]}"})
        assert done and all(m["success"] for m in done)
        html = done[0]["output"]["data"][0]
        assert f"model-{'ab'[k % 2]}" in html
    assert _files(launched.folders) == before  # no CSV, no cached copy: not one file per render
    sessions = launched.demo.state_holder.session_data
    assert len(sessions) <= 3 and "first-visitor" not in sessions
    # the first visitor's session is gone; their next pick on the Browse tab still works (the page's value is taken)
    rq_id = make_results("x", n_instances=2).instances[0].rq_id
    done = first.fire(first.events("br-rq", "change"), {first.by_elem["br-rq"]: rq_id})
    assert done and all(m["success"] for m in done), done
    # the page's CSV link is served by the launched app, from memory
    href = link.split('href="')[1].split('"')[0].replace("&amp;", "&")
    r = httpx.get(f"{launched.url}/{href}", timeout=60)
    assert r.status_code == 200 and b"model-a" in r.content and b"model-b" in r.content
    assert _files(launched.folders) == before


def test_a_4_mb_search_is_refused_before_it_is_read_and_an_upload_burst_is_limited(launched):
    config = httpx.get(launched.url + "/config", timeout=60).json()
    v = Visitor(launched.url, config, "hostile")
    (dep,) = v.events("lb-search", "change")
    data = [v.values.get(i) for i in dep["inputs"]]
    data[0] = "x" * (4 * 1024 * 1024)
    for route in ("run/predict", "queue/join"):  # the page's route for the search, and the queue's
        r = httpx.post(
            f"{launched.url}/gradio_api/{route}",
            timeout=60,
            json={"data": data, "fn_index": dep["id"], "session_hash": "hostile"},
        )
        assert r.status_code == 413 and "over the limit" in r.text
    assert "hostile" not in launched.demo.state_holder.session_data  # never reached the session state
    codes = [
        httpx.post(
            f"{launched.url}/gradio_api/upload", files={"files": (f"f{k}.jsonl", b"{}\n" * 1000)}, timeout=60
        ).status_code
        for k in range(12)
    ]
    assert codes[:10] == [200] * 10 and codes[10:] == [429, 429]
    r = httpx.post(f"{launched.url}/gradio_api/upload", files={"files": ("f.jsonl", b"{}\n")}, timeout=60)
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0 and "too many uploads" in r.text


def test_a_requests_store_outage_leaves_the_queue_empty_and_the_page_served(stores, monkeypatch):
    demo = build_app(SpaceConfig(stores=stores, n_boot=50))

    def outage():
        raise OSError("the Hub is down")

    monkeypatch.setattr(stores.requests, "load", outage)
    load = page_fn(demo, "page_load")
    out = dict(zip((getattr(b, "elem_id", None) for b in load.outputs), load_page(demo)))
    assert "model-a" in out["leaderboard-table"]
    assert "the requests store cannot be listed" in out["about-unreadable"].value
    queue = page_fn(demo, "queue_shown")
    assert queue.fn().empty  # the Submit tab, opened: an empty queue, not an error


def test_the_api_page_lists_the_submit_event_only(stores):
    """Every page view embeds the API description: the page's own events are callable as the page calls them, but
    only Submit is the Space's API (docs/space.md)."""
    demo = build_app(SpaceConfig(stores=stores, n_boot=20))
    assert list(demo.get_api_info()["named_endpoints"]) == ["/submit"]
    assert {f.api_visibility for f in demo.fns.values() if f.api_name != "submit"} == {"undocumented"}


# --------------------------------------------------------------------------
# a page open: static, no queue (issue 36)
# --------------------------------------------------------------------------


def test_a_plain_page_open_joins_no_queue_and_carries_the_opening_view(launched, monkeypatch):
    """A page open is ``GET /`` and what the browser does with it: it must carry the leaderboard's first page, and
    no event of the page may reach the queue on open (the page's load event runs in the browser only, and sends
    nothing without a link). A server-side count of queue joins: 0."""
    queue = launched.demo._queue
    joins = []
    real_push = queue.push

    async def counted(body, request, username):
        joins.append(body.fn_index)
        return await real_push(body, request, username)

    monkeypatch.setattr(queue, "push", counted)
    opened = page_config(launched.url)
    assert "model-a" in value_of(opened, "leaderboard-table") and "model-b" in value_of(opened, "leaderboard-table")
    assert "leaderboard.csv?" in value_of(opened, "lb-download")
    on_open = [d for d in opened["dependencies"] if any(event == "load" for _, event in d["targets"])]
    assert on_open and not any(d["backend_fn"] for d in on_open)  # what the browser runs on open: no Python
    httpx.get(launched.url + "/config", timeout=60)
    assert joins == []
    # a link is the one page open that runs an event: the page's script hands its query string to "page-link"
    v = Visitor(launched.url, opened, "linked")
    done = v.fire(v.events("page-link", "change"), {v.by_elem["page-link"]: "?tab=submit"})
    assert done and all(m["success"] for m in done) and len(joins) == 1


def test_the_baked_page_follows_the_store_without_a_restart(tmp_path):
    """A results file added after the first page: the next page (past ``recheck_after_s``) carries it; nothing
    changed, the page is not rewritten."""
    stores = SpaceStores.local(tmp_path / "store")
    stores.results.put(make_results("model-a", n_instances=2))
    demo = build_app(SpaceConfig(stores=stores, n_boot=20, recheck_after_s=0))
    table = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "leaderboard-table")

    def baked_table() -> str:
        return next(c["props"]["value"] for c in demo.config["components"] if c["id"] == table._id)

    assert "model-a" not in baked_table()  # built, never baked: the page has no data yet
    assert demo.baked_page.bake() and "model-a" in baked_table() and "model-z" not in baked_table()
    assert not demo.baked_page.bake()  # the same data: the page stands
    stores.results.put(make_results("model-z", n_instances=2))
    assert demo.baked_page.bake() and "model-z" in baked_table()
    assert table.value == baked_table()  # the component itself holds it too (a session's events start from it)
    # the baked view is the page load's own reply for a page without a link
    out = dict(zip((getattr(b, "elem_id", None) for b in page_fn(demo, "page_load").outputs), load_page(demo)))
    assert out["leaderboard-table"] == baked_table()


def test_an_update_is_written_into_a_component_as_its_constructor_would_hold_it():
    import gradio as gr

    from rqbench.space.baked import apply, changes_of

    assert changes_of(gr.skip()) == {} and changes_of("<p>x</p>") == {"value": "<p>x</p>"}
    assert changes_of(gr.update(visible=False)) == {"visible": False}
    picker = gr.Dropdown(choices=["a"], value="a", label="Judge", render=False)
    assert not apply(picker, gr.skip()) and picker.choices == [("a", "a")]
    assert apply(picker, gr.Dropdown(choices=["a", "b"]))
    # the constructor turns each plain choice into a (label, value) pair; the label and value stay as built
    assert picker.choices == [("a", "a"), ("b", "b")] and picker.value == "a" and picker.label == "Judge"
    page = gr.Number(value=1, precision=0, render=False)
    assert apply(page, 2.6) and page.value == 3  # precision 0: 2.6 is shown as 3, as Gradio's postprocess rounds
    note = gr.Textbox(value="", visible=False, render=False)
    assert apply(note, gr.Textbox(value="a.json: field x", visible=True))
    assert note.visible is True and note.value == "a.json: field x" and note.constructor_args["visible"] is True


def test_the_page_is_built_once_per_bake_address_and_query():
    """FreshPage keeps Gradio's answer per bake, address and query: the same bytes again, an ETag and a 304 for it;
    a new bake, another address, another query or a personal page is built anew."""
    from rqbench.space.baked import FreshPage

    built, version = [], [1]

    async def gradio(scope, receive, send):
        built.append(scope["path"])
        page = f"page v{version[0]} for {dict(scope['headers'])[b'host'].decode()} {scope['query_string']!r}"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": page.encode()})

    fresh = FreshPage(gradio, bake=lambda: None, version=lambda: version[0])
    first = asgi_get(fresh)
    assert asgi_get(fresh) == first and len(built) == 1
    etag = first[1][b"etag"]
    assert first[1][b"content-length"] == str(len(first[2])).encode()
    status, headers, body = asgi_get(fresh, headers={b"host": b"a.example", b"if-none-match": etag})
    assert status == 304 and body == b"" and headers[b"etag"] == etag
    assert b"b.example" in asgi_get(fresh, headers={b"host": b"b.example"})[2]  # another address: its own page
    assert b"tab=submit" in asgi_get(fresh, query=b"tab=submit")[2]  # another query: its own page
    personal = {b"host": b"a.example", b"cookie": b"access-token-1=x"}
    asgi_get(fresh, headers=personal)
    asgi_get(fresh, headers=personal)
    assert len(built) == 5  # a page with Gradio's sign-in cookie is never kept
    version[0] = 2  # a new bake: the kept pages are stale
    assert b"page v2" in asgi_get(fresh)[2] and len(built) == 6
    assert asgi_get(fresh, path="/gradio_api/info")  # anything else passes through untouched
    assert built[-1] == "/gradio_api/info"


def test_a_crowd_arriving_during_a_slow_look_at_the_data_gets_the_kept_page_at_once():
    """One look at the data at a time: requests that arrive while it runs, with a page kept for the current bake,
    are answered from it without waiting; the look itself runs once."""
    import asyncio
    import threading

    from rqbench.space.baked import FreshPage

    looks, release = [], threading.Event()

    def slow_bake():
        looks.append(1)
        if len(looks) > 1:
            release.wait(10)  # the stores are slow to walk this time

    async def gradio(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"the page"})

    fresh = FreshPage(gradio, bake=slow_bake, version=lambda: 1)
    assert asgi_get(fresh)[2] == b"the page"  # the first look, and the page kept

    async def crowd():
        sent: list[list[dict]] = [[] for _ in range(20)]
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/",
            "query_string": b"",
            "scheme": "http",
            "root_path": "",
            "headers": [(b"host", b"a.example")],
        }

        async def receive():
            return {"type": "http.request", "body": b""}

        def sender(i):
            async def send(message):
                sent[i].append(message)

            return send

        slow = asyncio.create_task(fresh(scope, receive, sender(0)))
        await asyncio.sleep(0.2)  # the slow look is under way
        await asyncio.wait_for(asyncio.gather(*(fresh(scope, receive, sender(i)) for i in range(1, 20))), 2)
        answered_during_look = sum(1 for m in sent[1:] if m and m[0]["status"] == 200)
        release.set()
        await slow
        return answered_during_look

    assert asyncio.run(crowd()) == 19
    assert len(looks) == 2  # the first request's look and the slow one: the other 19 started none


def test_a_kept_page_goes_out_gzipped_to_a_client_that_takes_gzip():
    import gzip

    from rqbench.space.baked import FreshPage

    page = b"<html>" + b"<p>the leaderboard's first page</p>" * 2000 + b"</html>"

    async def gradio(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": page})

    fresh = FreshPage(gradio, bake=lambda: None, version=lambda: 1)
    plain = asgi_get(fresh)
    packed = asgi_get(fresh, headers={b"host": b"a.example", b"accept-encoding": b"gzip, deflate, br"})
    assert plain[2] == page and b"content-encoding" not in plain[1]
    assert packed[1][b"content-encoding"] == b"gzip" and gzip.decompress(packed[2]) == page
    assert len(packed[2]) < len(page) / 10 and packed[1][b"content-length"] == str(len(packed[2])).encode()
    assert packed[1][b"etag"] != plain[1][b"etag"] and packed[1][b"vary"] == b"accept-encoding"
    refused = {b"host": b"a.example", b"accept-encoding": b"gzip;q=0, identity"}
    assert b"content-encoding" not in asgi_get(fresh, headers=refused)[1]
    again = {b"host": b"a.example", b"accept-encoding": b"gzip", b"if-none-match": packed[1][b"etag"]}
    assert asgi_get(fresh, headers=again)[0] == 304
    assert asgi_get(fresh, headers={b"host": b"a.example", b"if-none-match": packed[1][b"etag"]})[0] == 200


def test_the_launched_space_serves_its_front_end_from_memory_and_cacheable(launched):
    """Gradio's scripts go out through ``KeptAssets``: gzipped once, cacheable for a year (hashed names), 304 on
    revalidation (tests/test_static_assets.py tests the middleware alone)."""
    from rqbench.space.static_assets import IMMUTABLE

    page = httpx.get(launched.url + "/", timeout=60).text
    script = page.split('src="./assets/', 1)[1].split('"', 1)[0]
    first = httpx.get(f"{launched.url}/assets/{script}", timeout=60)
    assert first.status_code == 200 and first.headers["cache-control"] == IMMUTABLE.decode()
    assert first.headers["content-encoding"] == "gzip"  # httpx asks for gzip
    again = httpx.get(f"{launched.url}/assets/{script}", headers={"if-none-match": first.headers["etag"]}, timeout=60)
    assert again.status_code == 304


def test_the_launched_page_is_the_same_bytes_until_the_data_changes(launched):
    first = httpx.get(launched.url + "/", timeout=60)
    again = httpx.get(launched.url + "/", timeout=60)
    assert first.status_code == 200 and first.content == again.content and first.headers["etag"]
    revalidated = httpx.get(launched.url + "/", headers={"if-none-match": first.headers["etag"]}, timeout=60)
    assert revalidated.status_code == 304
    assert "model-a" in value_of(page_config(launched.url), "leaderboard-table")
