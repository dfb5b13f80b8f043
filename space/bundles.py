"""Each leaderboard row's reproduction bundle as a download: ``GET /bundle/<row id>.zip``.

A bundle is made once per row and data version (``SpaceData.version``) into a folder of its own,
by the route on a thread outside Gradio's queue, and then served as a static file to everyone
who asks; a new version starts a new folder and removes the old one. It is the file
``rqbench bundle`` writes (``evaluate/bundle/bundle.py``): made from the Space's call log, refused when
the log lacks a call or does not reproduce the row, and the refusal is what the link answers.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import threading
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from rqbench.evaluate.bundle.bundle import BundleError, RowSource, make_bundle, row_key, summary_settings
from rqbench.evaluate.metrics.summary_row import SummaryRow
from rqbench.io import RecordError
from rqbench.llm.client import CallNotCached
from rqbench.space.safety import redact

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceData

log = logging.getLogger(__name__)

BUNDLE_PATH = "/bundle/{row_id}.zip"
LINKS_TITLE = "Reproduction bundles for the rows on this page (the row's calls and inputs; rqbench rescore FILE)"


def row_id(row: SummaryRow) -> str:
    """A model row's id in its download's address (empty for a row with no bundle: reference rows)."""
    if row.row_kind != "model" or row.provenance.submission_hash is None:
        return ""
    return hashlib.sha256(row_key(row).model_dump_json().encode()).hexdigest()[:20]


def links_html(page: pd.DataFrame, id_column: str) -> str:
    """One download link per model row of the page, named by its model, setting and judge."""
    items = [
        f'<li><a href="{escape(BUNDLE_PATH.lstrip("/").format(row_id=rid))}" download>'
        f"{escape(str(r['Model']))} · {escape(str(r['Setting']))} · {escape(str(r['Judge']))}</a></li>"
        for _, r in page.iterrows()
        if (rid := str(r.get(id_column) or ""))
    ]
    if not items:
        return ""
    return f'<details class="rqb-bundles"><summary>{escape(LINKS_TITLE)}</summary><ul>{"".join(items)}</ul></details>'


class BundleShelf:
    """The bundles of the current data version, made on first request and kept as files."""

    def __init__(self, data: SpaceData, root: Path, calls_db: Path):
        self.data, self.root, self.calls_db = data, root, calls_db
        self._lock = threading.Lock()
        self._bench = None

    def _benchmark(self):
        if self._bench is None:
            from rqbench.evaluate.benchmark.source import load_benchmark

            target = self.data.config.target
            if target is None:
                raise BundleError("this Space has no benchmark loaded, so its rows cannot be bundled")
            self._bench = load_benchmark(target.repo, revision=target.revision)
        return self._bench

    def get(self, rid: str) -> Path:
        """The row's bundle file, made now if this version has none yet; ``BundleError`` says why there is none."""
        from rqbench.llm.store import CallStore
        from rqbench.prompts import load_prompt_set

        with self._lock:  # one maker at a time: a crowd asking for one row makes it once
            version, rows, results = self.data.version, self.data.rows, self.data.all_results
            folder = self.root / f"v{version}"
            path = folder / f"{rid}.zip"
            if path.is_file():
                return path
            row = next((r for r in rows if r.subfield is None and row_id(r) == rid), None)
            if row is None:
                raise BundleError(f"no leaderboard row {rid} in this version of the data")
            for old in self.root.glob("v*"):
                if old != folder:
                    shutil.rmtree(old, ignore_errors=True)
            if not self.calls_db.is_file():
                raise BundleError("this Space has no call log, so its rows cannot be bundled")
            settings = summary_settings(n_boot=self.data.config.n_boot)
            store = CallStore(self.calls_db)
            try:
                source = RowSource(results, self._benchmark(), load_prompt_set(), store, settings)
                make_bundle(row, source, path)
            except CallNotCached as exc:
                raise BundleError(f"the Space's call log lacks a call behind this row ({exc})") from exc
            except RecordError as exc:
                raise BundleError(str(exc)) from exc
            finally:
                store.close()
            return path


def bundle_route(shelf: BundleShelf):
    """The ``GET /bundle/<row id>.zip`` route (starlette), for ``demo.launch(app_kwargs={"routes": [...]})``."""
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import FileResponse, PlainTextResponse, Response
    from starlette.routing import Route

    async def download(request: Request) -> Response:
        rid = request.path_params["row_id"]
        if not rid.isalnum():
            return PlainTextResponse("no such row", status_code=404)
        try:
            path = await run_in_threadpool(shelf.get, rid)
        except BundleError as exc:
            log.warning("bundle %s: %s", rid, exc)
            return PlainTextResponse(f"no bundle for this row: {redact(str(exc))}", status_code=404)
        return FileResponse(path, media_type="application/zip", filename=f"rq-bench-row-{rid}.zip")

    return Route("/bundle/{row_id}.zip", download, methods=["GET"])
