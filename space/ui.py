"""The Gradio Blocks of the Space: Expert study, Leaderboard, Judges, Browse, Plots, Annotate, Submit and About tabs.

Each tab, its widgets and its handlers, is a module of ``rqbench.space.tabs``;
this module holds the page: its configuration, the data every tab reads, and
the events that span tabs (Refresh, the page load and its ``?rq_id=`` and ``?tab=`` links).
``build_app(config)`` has no side effects beyond building the page, so tests
and ``rqbench space`` build it with their own stores; ``space/app.py`` builds
it from the environment on a Hugging Face Space. Every text from a paper or a
submission goes into a Textbox or a ``str`` table cell, never into Markdown
or HTML.
"""

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import gradio as gr

from rqbench.evaluate.benchmark.trial import one_run_each
from rqbench.evaluate.judge_board.board import Board, make_board
from rqbench.evaluate.judge_board.expert_pool import make_pool
from rqbench.evaluate.metrics.summary import summarize
from rqbench.evaluate.metrics.summary_row import COMBINED, SummaryRow
from rqbench.evaluate.report.length_control import length_by_row
from rqbench.io import RecordError
from rqbench.records import CitedPaper, JudgeBoardFile, ResultsFile, dataset_label
from rqbench.space import annotate as an
from rqbench.space import browse, bundles, downloads, progress_view, session_state, tabs
from rqbench.space import expert_study as es
from rqbench.space import leaderboard as lb
from rqbench.space.baked import BakedPage, FreshPage
from rqbench.space.expert_pool import load_pool
from rqbench.space.memo import Recent, ViewCache
from rqbench.space.safety import AttemptLimiter, UploadGate, public_board, public_results, redact
from rqbench.space.static_assets import KeptAssets
from rqbench.space.stores import SpaceStores
from rqbench.space.submit import BenchmarkTarget, SubmitPolicy
from rqbench.space.tabs.common import banner_update

log = logging.getLogger(__name__)

TAB_IDS = ("expert-study", "leaderboard", "judges", "browse", "plots", "annotate", "submit", "about")
DEFAULT_WORKER_JUDGES = "local,local@temperature=0.7"


def worker_judges_from_env() -> tuple[str, ...]:
    """The judges the background worker uses (``RQB_WORKER_JUDGES``, comma-separated)."""
    return tuple(j.strip() for j in os.environ.get("RQB_WORKER_JUDGES", DEFAULT_WORKER_JUDGES).split(",") if j.strip())


@dataclass
class SpaceConfig:
    """What one running Space needs. ``on_hub`` turns on sign-in and the account-age check."""

    stores: SpaceStores
    target: BenchmarkTarget | None = None
    library: Mapping[str, CitedPaper] = field(default_factory=dict)
    policy: SubmitPolicy = field(default_factory=SubmitPolicy)
    on_hub: bool = False
    hub_api: Any = None
    validator: Any = None
    title: str = "RQ-Bench"
    n_boot: int = 500
    dataset_note: str = ""
    # The expert-study file; None: RQB_EXPERT_STUDY, else the shared fixtures (rqbench.space.expert_study).
    expert_study: Path | None = None
    # The judges a queued submission gets (the Submit tab's banner says when they are demo models).
    worker_judges: tuple[str, ...] = ()
    # A page load looks at the stores (lists results, annotations and requests with each file's stamp, and reads
    # the new and changed files) at most this often; under a crowd every other page load is served from what the
    # last look found. The Refresh button always looks.
    recheck_after_s: float = 5.0
    # The progress file of ``rqbench start``'s background job: a panel above the tabs shows it (progress_view).
    progress_file: Path | None = None


class SpaceData:
    """Results, summary rows and derived tables, recomputed only when the stored results change.

    ``version`` counts those recomputations: what a tab derives from the data is cached under it
    (``rqbench.space.memo.ViewCache``). ``requests`` is the requests store as a page load last read it.
    """

    def __init__(self, config: SpaceConfig, clock: Callable[[], float] = time.monotonic):
        self.config, self.clock = config, clock
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self.version = 0
        self._checked_at: float | None = None
        self.requests = Recent(lambda: self.config.stores.requests.load(), config.recheck_after_s, clock)
        self.results: list[ResultsFile] = []
        self.all_results: list[ResultsFile] = []  # every file the rows are summarised from, trials included
        self.problems: list[str] = []
        self.rows: list[SummaryRow] = []
        self.table = lb.build_table([])
        self.pairs: list[an.Pair] = []
        self.index: dict[str, browse.InstanceRef] = {}
        self.board: Board = make_board(make_pool([]), [])
        self.board_problems: list[str] = []
        self._listing: dict[str, str] | None = None
        self._read: tuple[list[ResultsFile], list[str]] = ([], [])

    def _results(self) -> tuple[list[ResultsFile], list[str]]:
        """The stored results: read again (only the new and changed files: ``ResultsStore.load``) when a file was
        added, removed or changed since the last look (its stamp: ``FileRepo.stamps``)."""
        listing = self.config.stores.results.stamps()
        if listing != self._listing:
            results, problems = self.config.stores.results.load()
            self._read = ([public_results(r) for r in results], problems)  # judges by their public labels only
            self._listing = listing
        return self._read

    def refresh(self, *, recent: bool = False) -> "SpaceData":
        """Look at the stores and recompute what changed. ``recent``: a look less than ``recheck_after_s`` ago
        stands (page loads, tabs opened), and so does the data as it is while another thread is looking (under a
        crowd, every reader used to queue behind the one walking the stores); without it the stores are looked at
        now (the Refresh button). A reader never sees a half-made version: ``version`` is raised last."""
        if recent and self._checked_at is not None:
            if not self._lock.acquire(blocking=False):
                return self
            self._lock.release()
        with self._lock:
            now = self.clock()
            if recent and self._checked_at is not None and now - self._checked_at < self.config.recheck_after_s:
                return self
            self._checked_at = now
            if not recent:
                self.requests.invalidate()
            results, problems = self._results()
            judgments = self.config.stores.annotations.judgments()
            store = self.config.stores.judge_board
            boards, board_problems = store.load() if store is not None else ([], [])
            key = (
                tuple((self._listing or {}).items()),  # every results file by its stamp: an edit in place counts
                tuple(j.judgment_id for j in judgments),
                tuple(sorted((f.judge.label, f.judge.prompt_set.hash, f.created_at.isoformat()) for f in boards)),
            )
            if key == self._key:
                return self
            # the leaderboard's rows from every file, a trial's apart; everything else (agreement, annotation pairs,
            # Browse, the judge board) reads each submission, judge and setting once (evaluate/benchmark/trial.py)
            self.results, self.problems = one_run_each(results), problems
            self.all_results = list(results)
            try:
                self.rows = summarize(results, n_boot=self.config.n_boot) if results else []
            except ValueError as exc:  # two files for one judge, mixed revisions: say which, show nothing wrong
                self.problems = [*problems, f"results could not be summarised: {exc}"]
                self.rows = []
            cells = an.agreement_cells(judgments, self.results) if judgments else {}
            corrected = an.expert_corrected_cells(judgments, self.results) if judgments else {}
            lengths = length_by_row(self.results, n_boot=self.config.n_boot) if self.rows else {}
            self.table = lb.build_table(self.rows, cells, corrected, lengths)
            self.pairs = an.build_pairs(self.results, judgments)
            self.index = browse.index_instances(self.results)
            self.board, self.board_problems = self._board(self.results, judgments, boards, board_problems)
            self._key = key
            self.version += 1
            return self

    def unreadable(self) -> list[str]:
        """Every stored file the page could not read (results and requests from their last reads), by path."""
        try:
            bad_requests = [str(u) for u in self.requests.get()[1]]
        except Exception as exc:  # an outage of the requests store: say so, and keep serving the rest
            log.warning("requests store unreadable: %s", exc)
            bad_requests = [
                f"{self.config.stores.requests.repo.name}: the requests store cannot be listed ({type(exc).__name__})"
            ]
        stores = self.config.stores
        roots = {f"{stores.results.repo.name}/", f"{stores.requests.repo.name}/"}

        def in_store(line: str) -> str:  # a path in the store, not on the host's disk
            for root in roots:
                line = line.replace(root, "")
            return line

        return [in_store(line) for line in (*self.problems, *bad_requests)]

    def _board(
        self, results: list[ResultsFile], judgments: list, boards: list[JudgeBoardFile], problems: list[str]
    ) -> tuple[Board, list[str]]:
        """The judge board on the pool as it stands: the study file's pairs and every annotated pair; judges by
        their public labels only."""
        boards = [public_board(b) for b in boards]
        study = es.study_path(self.config.expert_study)
        try:
            pool = load_pool(study, judgments, results, self.config.library)
        except (RecordError, ValueError) as exc:  # a broken study file: the annotated pairs still count
            problems = [*problems, f"the expert-study file could not be read: {exc}"]
            pool = load_pool(None, judgments, results, self.config.library)
        try:
            return make_board(pool, boards, n_boot=self.config.n_boot), problems
        except ValueError as exc:  # two files for one judge and prompt set
            return make_board(pool, [], n_boot=self.config.n_boot), [*problems, f"judge board: {exc}"]

    def model_names(self) -> set[str]:
        """Every generator name and judge label behind the figures shown (for the demo-model banner)."""
        return {r.submission.model for r in self.results} | {r.judge.label for r in self.results}

    def judge_choices(self) -> list[str]:
        """The judges in the table, the combined judge first (the Leaderboard and Plots pickers)."""
        return sorted({COMBINED, *lb.choices(self.table)["judges"]}, key=lambda j: (j != COMBINED, j))


HEADER = (
    "Research-question generation, judged for novelty and narrowness: models read the papers a real paper "
    "built on and propose research questions; LLM judges score them against the question the paper's authors "
    "pursued. Every figure is recomputed from the stored results files."
)


# The page's script on open: the address's query string when it holds a link (an RQ or a tab), else nothing, so
# that a plain page open sends no request of its own
LINK_JS = """() => {
  const query = new URLSearchParams(window.location.search);
  return query.get("rq_id") || query.get("tab") ? window.location.search : undefined;
}"""

UNKNOWN_RQ = "This benchmark has no RQ {rq_id!r}: the link may be from another release. Browse shows its first RQ."


def build_app(config: SpaceConfig) -> gr.Blocks:
    """The whole Space as one Blocks object: the tabs (``rqbench.space.tabs``), then the events that span them."""
    data = SpaceData(config)

    with gr.Blocks(title=config.title, analytics_enabled=False, delete_cache=DELETE_CACHE) as demo:
        gr.Markdown(f"# {config.title}\n{HEADER}")
        panel = progress_view.build(config.progress_file) if config.progress_file is not None else None
        if config.on_hub:
            gr.LoginButton()
        with gr.Tabs(elem_id="tabs") as strip:  # the first tab opens: the leaderboard, what most visitors came for
            board = tabs.leaderboard.build(data)
            study_note = tabs.expert_study.build(config)
            judges = tabs.judges.build(data)
            browser = tabs.browse.build(config, data)
            charts = tabs.plots.build(data)
            annotation = tabs.annotate.build(config, data)
            queue = tabs.submit.build(config, data)
            about = tabs.about.build(config, study_note)

        # -- the Refresh button: re-read the stores, then every tab's choices, tables and banners
        def reload_all(*view):
            return (
                *board.reloaded(*view),
                *judges.reloaded(),
                *charts.reloaded(),
                *annotation.reloaded(),
                banner_update(data.model_names()),
                *browser.reloaded(),
            )

        def load_all(*view):
            data.refresh()
            return reload_all(*view)

        load_outputs = [
            *board.reload_outputs,
            *judges.reload_outputs,
            *charts.reload_outputs,
            *annotation.reload_outputs,
            about.banner,
            *browser.reload_outputs,
        ]
        board.refresh.click(load_all, board.controls, load_outputs)
        if panel is not None:  # a background step ended: its results may have landed
            panel.change(load_all, board.controls, load_outputs)

        # -- page open: what a visitor sees first, the leaderboard's first page (not the whole table), is written
        # into the page itself once per version of the data (``rqbench.space.baked``): ``GET /`` carries it, and a
        # plain page open joins no queue. The Browse pickers and the queue are filled when their tab is opened.
        # A link (``?rq_id=`` opens Browse on that RQ, ``?tab=`` selects a tab, and a tab selected that way is
        # filled) is the one page open that runs an event: the page's script hands the link to ``link``, whose
        # change runs ``page_load``.
        def page_reply(view: tuple, rq_id: str | None, tab: str | None, requests: list) -> tuple:
            base = reload_all(*view)
            link = browser.deep_link(rq_id)
            tab = "browse" if link is not None or rq_id else tab
            if link is None and tab == "browse":  # an unknown ?rq_id= opens Browse on its first RQ, and says so
                link = browser.opening()
            pickers = link if link is not None else (gr.skip(), gr.skip(), gr.skip())
            selected = gr.Tabs(selected=tab) if tab in TAB_IDS else gr.Tabs()
            return (
                *base[:-1],
                *pickers,
                selected,
                tabs.submit.queue_rows(lambda: requests) if tab == "submit" else gr.skip(),
                tabs.about.unreadable_update(data.unreadable()),
            )

        # A crowd's links get one reply per (data version, read of the requests store, view, link): computed
        # once, and the same objects for everyone (Gradio keeps a reference per session, not a copy).
        page_replies = ViewCache(max_entries=16)
        link = gr.Textbox(visible="hidden", elem_id="page-link", show_label=False, container=False)

        def page_load(q, js, ss, vs, ts, gs, ci, by, asc, cl, run, page, query):
            """The page opened by a link: the opening view as the baked page has it, and the link's tab and
            Browse pickers (``query``: the page address's query string, as the page's script read it)."""
            data.refresh(recent=True)
            view = (q, js, ss, vs, ts, gs, ci, by, asc, cl, run, page)
            params = {k: v[0] for k, v in parse_qs(str(query or "").lstrip("?")).items()}
            rq_id, tab = params.get("rq_id"), params.get("tab")
            if rq_id and browser.deep_link(rq_id) is None:
                gr.Warning(UNKNOWN_RQ.format(rq_id=rq_id[:80]))
            version = data.version  # before the data (see the leaderboard tab)
            try:
                read, (requests, _) = data.requests.stamped()
            except Exception as exc:  # an outage: the queue shows empty, the About tab says why (unreadable())
                log.warning("the request queue cannot be read: %s", redact(str(exc)))
                return page_reply(view, rq_id, tab, [])
            key = (tuple(tuple(v) if isinstance(v, list) else v for v in view), rq_id, tab)
            return page_replies.get((version, read), key, lambda: page_reply(view, rq_id, tab, requests))

        page_outputs = [*load_outputs, browser.paper, browser.rq, strip, queue.requests, about.unreadable]
        demo.load(None, None, link, js=LINK_JS)  # in the browser only: no request unless the address has a link
        link.change(page_load, [*board.controls, link], page_outputs)

        # The opening view baked into the page: what ``page_load`` gives a page without a link, less what it
        # leaves alone there (Browse's sub-field picker, its paper and RQ, the tab, the queue)
        opening_view = tuple(c.value for c in board.controls)
        skipped = {id(browser.reload_outputs[-1]), id(browser.paper), id(browser.rq), id(strip), id(queue.requests)}
        baked_outputs = [c for c in page_outputs if id(c) not in skipped]

        def opening_reply() -> list:
            reply = page_reply(opening_view, None, None, [])
            return [u for c, u in zip(page_outputs, reply, strict=True) if id(c) not in skipped]

        def page_version() -> tuple:
            """The version of what the opening view shows: the data's, and the unreadable files the About tab
            names (from the requests store's last read, at most every ``recheck_after_s``; an outage says so)."""
            data.refresh(recent=True)
            return data.version, tuple(data.unreadable())

        baked = BakedPage(demo, baked_outputs, opening_reply, page_version)
        # The Space's API is the Submit button's event (docs/space.md, "The API"); every other event is the page's
        # own plumbing, callable as the page calls it but left out of the API description, which every page view
        # embeds (154 of its 337 kB, and most of the time Gradio took to serve it).
        for fn in demo.fns.values():
            if fn.api_name != tabs.submit.API_NAME:
                fn.api_visibility = "undocumented"
    demo.space_data = data  # what the Space's own routes read (launch_options: the CSV download)
    demo.baked_page = baked  # what launch_options' middleware brings up to date before each page is built
    return demo


# multipart headers and boundaries around the one file of an upload
UPLOAD_OVERHEAD_BYTES = 64 * 1024
# Gradio's uploads and cached copies older than 30 minutes are deleted, looked for every 5 minutes (a submission
# is checked and stored as it is sent; an upload nobody submitted is abandoned)
DELETE_CACHE = (300, 1800)
# Sessions whose page state Gradio keeps (the components a handler updated, the Browse tab's rendered papers, the
# Annotate tab's pair); past it the least recently active is dropped. Gradio's default (10,000) let memory grow
# with every visitor; a dropped visitor's next event runs on the page's starting state.
SESSION_CAPACITY = 400
# Events of one kind running at once: no limit of their own (Gradio runs at most 40 jobs at once, on threads that
# share the GIL). Every event here is a few milliseconds of Python on data computed once per version; a limit of 4 or
# 8 per kind made the busiest kind, a leaderboard search, wait in line while the others ran (at 100 visitors, 3.5 of
# its 4.2 s p50 in the queue; without: 0.4 of 1.2 s, benchmarks/space_load.py). The Submit event runs one at a
# time (its own ``concurrency_limit``); figures are drawn one at a time under a lock (``plots.DRAWING``).
EVENTS_AT_ONCE = None
# How often a waiting visitor is told their place in the queue. Gradio's default ("auto") tells every waiting visitor
# each time any event starts: under 50 visitors that was hundreds of messages a second, each one serialised and
# written by the Space and read by the page.
QUEUE_STATUS_EVERY_S = 2.0
# Gradio rebuilds a monitoring summary (a pandas frame of the last 10,000 events) after every event: under a crowd
# that took a fifth of the Space's CPU, more as events pile up. Here: every 1,000 events, over the last 1,000.
GRADIO_ANALYTICS = {"GRADIO_ANALYTICS_CACHE_FREQUENCY": "1000", "GRADIO_ANALYTICS_MAX_EVENTS": "1000"}
# Uploads per client (account, else address): 10 a minute, 30 an hour
UPLOADS_PER_MINUTE, UPLOADS_PER_HOUR = 10, 30


def with_queue(demo: gr.Blocks) -> gr.Blocks:
    """``demo`` with its event queue, as ``rqbench space`` and ``app.py`` serve it. Gradio's queue reads its
    analytics settings from the environment when it is made: ``GRADIO_ANALYTICS`` unless the environment says
    otherwise. Sessions are kept lean from here on (``session_state``)."""
    for name, value in GRADIO_ANALYTICS.items():
        os.environ.setdefault(name, value)
    session_state.install()  # no per-visitor copy of the page's configuration (space/session_state.py)
    return demo.queue(default_concurrency_limit=EVENTS_AT_ONCE, status_update_rate=QUEUE_STATUS_EVERY_S)


def launch_options(config: SpaceConfig, demo: gr.Blocks) -> dict[str, Any]:
    """Keyword arguments for ``demo.launch`` (``demo`` from ``build_app``): request sizes capped before they
    are read, uploads rate-limited and signed in on the Hub, session state bounded, the CSV route.

    Gradio's ``max_file_size`` refuses a file part over the cap as it streams (HTTP 413) and deletes
    what it wrote; ``UploadGate`` refuses a body whose declared length is over its endpoint's cap (an
    upload: the cap plus the multipart overhead; an event: ``MAX_EVENT_BYTES``) before reading any of
    it, cuts off an undeclared one, counts uploads per client, and on the Hub refuses ``/upload``
    without a Hugging Face sign-in (Gradio's own upload check is all-or-nothing).
    """
    from starlette.middleware import Middleware

    limits = (AttemptLimiter(UPLOADS_PER_MINUTE, 60), AttemptLimiter(UPLOADS_PER_HOUR, 3600))
    gate = Middleware(
        UploadGate,
        max_body_bytes=config.policy.max_bytes + UPLOAD_OVERHEAD_BYTES,
        upload_limits=limits,
        require_sign_in=config.on_hub,
    )
    from rqbench import paths

    shelf = bundles.BundleShelf(demo.space_data, paths.home() / "space-bundles", paths.calls_db())
    baked = demo.baked_page
    fresh = Middleware(FreshPage, bake=baked.bake, version=lambda: baked.bakes)
    assets = Middleware(KeptAssets)  # Gradio's scripts and stylesheets from memory, cacheable (static_assets.py)
    routes = [downloads.csv_route(demo.space_data), bundles.bundle_route(shelf)]
    if config.progress_file is not None:
        routes.append(progress_view.progress_route(config.progress_file))
    return {
        "max_file_size": config.policy.max_bytes,
        "state_session_capacity": SESSION_CAPACITY,
        "app_kwargs": {"middleware": [gate, fresh, assets], "routes": routes},
    }


def worker_thread(worker, interval_s: float) -> tuple[threading.Thread, threading.Event]:
    """Run a ``Worker`` in the background (the Space's schedule); set the event to stop it."""
    stop = threading.Event()
    t = threading.Thread(
        target=worker.run, kwargs={"interval_s": interval_s, "stop": stop}, daemon=True, name="rqbench-worker"
    )
    t.start()
    return t, stop


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def config_from_env(
    store: str | Path | None = None,
    results: str | Path | None = None,
    dataset: str | None = None,
    *,
    sample_pending: bool = False,
) -> SpaceConfig:
    """The configuration a Space (``SPACE_ID`` set) or ``rqbench space`` runs with.

    Hub: stores in ``RQB_SPACE_OWNER``'s dataset repos (``HF_TOKEN`` secret), sign-in required.
    Offline: the local store folder, no sign-in. The benchmark comes from ``--dataset`` or
    ``RQB_DATASET`` (+ ``RQB_DATASET_REVISION``), else the local sample; without one the
    Space still shows results but closes submissions. ``sample_pending``: the offline sample is being built behind
    the page (``rqbench start``), so its absence is the expected state, said as such, not a warning to build it.
    """
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark

    on_hub = bool(os.environ.get("SPACE_ID"))
    stores = SpaceStores.from_env(store, results)
    ref = dataset or os.environ.get("RQB_DATASET")
    target, library, note = None, {}, ""
    try:
        bench = load_benchmark(ref, revision=os.environ.get("RQB_DATASET_REVISION"))
        target = BenchmarkTarget(bench.repo, bench.revision, tuple(bench.rq_ids), bench.name, bench.version)
        library, note = (
            bench.papers,
            (
                f"Benchmark: {dataset_label(bench.name, bench.revision, bench.version)} "
                f"({len(bench.instances)} instances)."
            ),
        )
    except (DatasetError, FileNotFoundError, ValueError) as exc:
        if sample_pending and ref is None:
            note = "Benchmark: the offline sample is being built behind this page; the Space loads it once published."
            log.info(note)
        else:
            note = f"Benchmark not loaded: {redact(str(exc))}"
            log.warning(note)
    hub_api = None
    if on_hub and os.environ.get("HF_TOKEN"):
        from huggingface_hub import HfApi

        hub_api = HfApi(token=os.environ["HF_TOKEN"])
    policy = SubmitPolicy(require_sign_in=on_hub, min_account_age_days=int(os.environ.get("RQB_MIN_ACCOUNT_DAYS", "7")))
    return SpaceConfig(
        stores=stores,
        target=target,
        library=library,
        policy=policy,
        on_hub=on_hub,
        hub_api=hub_api,
        dataset_note=note,
        worker_judges=worker_judges_from_env(),
    )


def start_background_worker(config: SpaceConfig, *, dataset: str | None = None) -> threading.Event | None:
    """On a Space (or with ``RQB_SPACE_WORKER=1``), judge pending requests every ``RQB_WORKER_INTERVAL`` seconds."""
    if not (config.on_hub or env_flag("RQB_SPACE_WORKER")):
        return None
    from rqbench import paths
    from rqbench.space.worker import Worker, evaluate_judge

    judges = list(config.worker_judges or worker_judges_from_env())
    judge = evaluate_judge(judges, ["standalone", "comparative"], dataset=dataset or os.environ.get("RQB_DATASET"))
    worker = Worker(config.stores, judge, work_dir=paths.home() / "space-work")
    _, stop = worker_thread(worker, float(os.environ.get("RQB_WORKER_INTERVAL", "300")))
    log.info("background worker %s started", worker.worker_id)
    return stop
