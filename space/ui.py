"""The Gradio Blocks of the Space: Leaderboard, Submit, Browse, Plots, Annotate and About tabs.

Each tab, its widgets and its handlers, is a module of ``rqbench.space.tabs``;
this module holds the page: its configuration, the data every tab reads, and
the events that span tabs (Refresh, the page load and its ``?rq_id=`` link).
``build_app(config)`` has no side effects beyond building the page, so tests
and ``rqbench space`` build it with their own stores; ``space/app.py`` builds
it from the environment on a Hugging Face Space. Every text from a paper or a
submission goes into a Textbox or a ``str`` table cell, never into Markdown
or HTML.
"""

import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradio as gr
from rqbench.evaluate.summary import COMBINED, SummaryRow, summarize
from rqbench.space import annotate as an
from rqbench.space import browse, tabs
from rqbench.space import leaderboard as lb
from rqbench.space.safety import UploadGate, redact
from rqbench.space.stores import SpaceStores
from rqbench.space.submit import BenchmarkTarget, SubmitPolicy

from rqbench.records import CitedPaper, ResultsFile

log = logging.getLogger(__name__)

TAB_IDS = ("leaderboard", "submit", "browse", "plots", "annotate", "about")


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


class SpaceData:
    """Results, summary rows and derived tables, recomputed only when the stored results change."""

    def __init__(self, config: SpaceConfig):
        self.config = config
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self.results: list[ResultsFile] = []
        self.problems: list[str] = []
        self.rows: list[SummaryRow] = []
        self.table = lb.build_table([])
        self.pairs: list[an.Pair] = []
        self.index: dict[str, browse.InstanceRef] = {}

    def refresh(self) -> "SpaceData":
        with self._lock:
            results, problems = self.config.stores.results.load()
            judgments = self.config.stores.annotations.judgments()
            key = (
                tuple(sorted((r.submission_hash, r.judge.label, r.judge.setting, r.created_at.isoformat())
                             for r in results)),
                tuple(j.judgment_id for j in judgments),
            )  # fmt: skip
            if key == self._key:
                return self
            self.results, self.problems = results, problems
            try:
                self.rows = summarize(results, n_boot=self.config.n_boot) if results else []
            except ValueError as exc:  # two files for one judge, mixed revisions: say which, show nothing wrong
                self.problems = [*problems, f"results could not be summarised: {exc}"]
                self.rows = []
            cells = an.agreement_cells(judgments, results) if judgments else {}
            self.table = lb.build_table(self.rows, cells)
            self.pairs = an.build_pairs(results, judgments)
            self.index = browse.index_instances(results)
            self._key = key
            return self

    def judge_choices(self) -> list[str]:
        """The judges in the table, the combined judge first (the Leaderboard and Plots pickers)."""
        return sorted({COMBINED, *lb.choices(self.table)["judges"]}, key=lambda j: (j != COMBINED, j))


def build_app(config: SpaceConfig) -> gr.Blocks:
    """The whole Space as one Blocks object: the tabs (``rqbench.space.tabs``), then the events that span them."""
    data = SpaceData(config)

    with gr.Blocks(title=config.title, analytics_enabled=False) as demo:
        gr.Markdown(f"# {config.title}\nResearch-question generation, judged for novelty and narrowness. "
                    "Every figure is recomputed from the stored results files.")  # fmt: skip
        if config.on_hub:
            gr.LoginButton()
        with gr.Tabs(selected="leaderboard", elem_id="tabs") as strip:
            board = tabs.leaderboard.build(data)
            queue = tabs.submit.build(config)
            browser = tabs.browse.build(config, data)
            charts = tabs.plots.build(data)
            annotation = tabs.annotate.build(config, data)
            tabs.about.build(config)

        # -- the Refresh button: re-read the stores, then every tab's choices and tables
        def load_all(q, js, ss, vs, ts, gs, ci, by, asc):
            data.refresh()
            return (*board.reloaded(q, js, ss, vs, ts, gs, ci, by, asc), *charts.reloaded(),
                    *annotation.reloaded(), *browser.reloaded())  # fmt: skip

        load_outputs = [*board.reload_outputs, *charts.reload_outputs, *annotation.reload_outputs,
                        *browser.reload_outputs]  # fmt: skip
        board.refresh.click(load_all, board.controls, load_outputs)

        # -- page load, with the ?rq_id= deep link
        def on_load(q, js, ss, vs, ts, gs, ci, by, asc, request: gr.Request):
            base = load_all(q, js, ss, vs, ts, gs, ci, by, asc)
            rq_id = request.query_params.get("rq_id") if request is not None else None
            link = browser.deep_link(rq_id)
            if link is None:
                return (*base, gr.Tabs(), gr.Dropdown(), gr.Dropdown(), *charts.figures(),
                        tabs.submit.queue_rows(config))  # fmt: skip
            subfield, paper, rq = link  # this sub-field replaces the refresh's (the last of load_outputs)
            return (*base[:-1], subfield, gr.Tabs(selected="browse"), paper, rq, *charts.figures(),
                    tabs.submit.queue_rows(config))  # fmt: skip

        demo.load(on_load, board.controls, [*load_outputs, strip, browser.paper, browser.rq, charts.scatter,
                                            charts.bars, queue.requests])  # fmt: skip
    return demo


# multipart headers and boundaries around the one file of an upload
UPLOAD_OVERHEAD_BYTES = 64 * 1024


def launch_options(config: SpaceConfig) -> dict[str, Any]:
    """Keyword arguments for ``demo.launch``: uploads capped before they are read, and signed in on the Hub.

    Gradio's ``max_file_size`` refuses a file part over the cap as it streams (HTTP 413) and deletes
    what it wrote; ``UploadGate`` refuses a body whose declared length is over the cap plus the
    multipart overhead before reading any of it, cuts off an undeclared one, and on the Hub refuses
    ``/upload`` without a Hugging Face sign-in (Gradio's own upload check is all-or-nothing).
    """
    from starlette.middleware import Middleware

    gate = Middleware(UploadGate, max_body_bytes=config.policy.max_bytes + UPLOAD_OVERHEAD_BYTES,
                      require_sign_in=config.on_hub)  # fmt: skip
    return {"max_file_size": config.policy.max_bytes, "app_kwargs": {"middleware": [gate]}}


def worker_thread(worker, interval_s: float) -> tuple[threading.Thread, threading.Event]:
    """Run a ``Worker`` in the background (the Space's schedule); set the event to stop it."""
    stop = threading.Event()
    t = threading.Thread(target=worker.run, kwargs={"interval_s": interval_s, "stop": stop}, daemon=True,
                         name="rqbench-worker")  # fmt: skip
    t.start()
    return t, stop


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def config_from_env(
    store: str | Path | None = None, results: str | Path | None = None, dataset: str | None = None
) -> SpaceConfig:
    """The configuration a Space (``SPACE_ID`` set) or ``rqbench space`` runs with.

    Hub: stores in ``RQB_SPACE_OWNER``'s dataset repos (``HF_TOKEN`` secret), sign-in required.
    Offline: the local store folder, no sign-in. The benchmark comes from ``--dataset`` or
    ``RQB_DATASET`` (+ ``RQB_DATASET_REVISION``), else the local sample; without one the
    Space still shows results but closes submissions.
    """
    from rqbench.evaluate.dataset import DatasetError, load_benchmark

    on_hub = bool(os.environ.get("SPACE_ID"))
    stores = SpaceStores.from_env(store, results)
    ref = dataset or os.environ.get("RQB_DATASET")
    target, library, note = None, {}, ""
    try:
        bench = load_benchmark(ref, revision=os.environ.get("RQB_DATASET_REVISION"))
        target = BenchmarkTarget(bench.repo, bench.revision, tuple(bench.rq_ids))
        library, note = bench.papers, f"Benchmark: {bench.repo}@{bench.revision} ({len(bench.instances)} instances)."
    except (DatasetError, FileNotFoundError, ValueError) as exc:
        note = f"Benchmark not loaded: {redact(str(exc))}"
        log.warning(note)
    hub_api = None
    if on_hub and os.environ.get("HF_TOKEN"):
        from huggingface_hub import HfApi

        hub_api = HfApi(token=os.environ["HF_TOKEN"])
    policy = SubmitPolicy(require_sign_in=on_hub, min_account_age_days=int(os.environ.get("RQB_MIN_ACCOUNT_DAYS", "7")))
    return SpaceConfig(stores=stores, target=target, library=library, policy=policy, on_hub=on_hub, hub_api=hub_api,
                       dataset_note=note)  # fmt: skip


def start_background_worker(config: SpaceConfig, *, dataset: str | None = None) -> threading.Event | None:
    """On a Space (or with ``RQB_SPACE_WORKER=1``), judge pending requests every ``RQB_WORKER_INTERVAL`` seconds."""
    if not (config.on_hub or env_flag("RQB_SPACE_WORKER")):
        return None
    from rqbench.space.worker import Worker, evaluate_judge

    from rqbench import paths

    judges = [j for j in os.environ.get("RQB_WORKER_JUDGES", "local,local@temperature=0.7").split(",") if j]
    judge = evaluate_judge(judges, ["standalone", "comparative"], dataset=dataset or os.environ.get("RQB_DATASET"))
    worker = Worker(config.stores, judge, work_dir=paths.home() / "space-work")
    _, stop = worker_thread(worker, float(os.environ.get("RQB_WORKER_INTERVAL", "300")))
    log.info("background worker %s started", worker.worker_id)
    return stop
