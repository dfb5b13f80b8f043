"""The leaderboard's CSV download, served from memory: ``GET /leaderboard.csv?<the view>``.

The link under the table carries the view a visitor chose (search, filters, column groups, sort) in
its query string, and the route renders those rows from the table in memory, each figure and its CI
in separate columns. Nothing is written to disk: before this, every render of the table wrote a new
CSV file, and Gradio copied each into its cache (about 3,000 files in one load test).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from html import escape
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from rqbench.space import leaderboard as lb
from rqbench.space.memo import ViewCache

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceData

CSV_PATH = "/leaderboard.csv"
FILE_NAME = "rq-bench-leaderboard.csv"
LINK_TEXT = "Download CSV (the rows shown, figures and CIs in separate columns)"
# A model search longer than this is cut (model names are capped at 100 characters when submitted).
MAX_SEARCH_CHARS = 200
# Longer lists in a query string are cut: no filter has this many values.
MAX_VALUES = 64


def capped_search(text: str) -> tuple[str, bool]:
    """The search as the table uses it (cut to ``MAX_SEARCH_CHARS``), and whether it was cut."""
    return text[:MAX_SEARCH_CHARS], len(text) > MAX_SEARCH_CHARS


def view_query(view: lb.View) -> str:
    """The query string that stands for ``view`` (the link's), read back by ``view_from_query``."""
    pairs: list[tuple[str, str]] = [("q", view.search)]
    pairs += [("judge", j) for j in view.judges] or [("judge", "")]
    pairs += [("setting", s) for s in view.settings]
    pairs += [("variant", v) for v in view.variants]
    pairs += [("type", t) for t in view.model_types]
    pairs += [("group", g) for g in view.groups]
    if view.sort_by:
        pairs += [("sort", view.sort_by), ("asc", "1" if view.ascending else "0")]
    if view.clean_only:
        pairs.append(("clean", "1"))
    if view.trials:
        pairs.append(("trials", "1"))
    return urlencode(pairs)


def view_from_query(params: Mapping[str, Sequence[str]]) -> lb.View:
    """The view a link's query names. Unknown column groups and sort columns are dropped; any other value
    just matches nothing; lists and the search are capped."""

    def values(name: str) -> tuple[str, ...]:
        return tuple(v for v in params.get(name, ())[:MAX_VALUES] if v)

    groups = tuple(g for g in values("group") if g in lb.GROUPS) or lb.DEFAULT_GROUPS
    sort = next(iter(values("sort")), None)
    return lb.View(
        search=capped_search(next(iter(params.get("q", ())), ""))[0],
        judges=values("judge"),
        settings=values("setting"),
        variants=values("variant"),
        model_types=values("type"),
        groups=groups,
        show_ci=True,
        sort_by=sort if sort in lb.numeric_columns() or sort == "Model" else None,
        ascending=next(iter(values("asc")), "0") == "1",
        clean_only=next(iter(values("clean")), "0") == "1",
        trials=next(iter(values("trials")), "0") == "1",
    )


def link_html(view: lb.View) -> str:
    """The download link for the rows of ``view`` (relative, so it works wherever the Space is served)."""
    href = escape(f"{CSV_PATH.lstrip('/')}?{view_query(view)}")
    return f'<a class="rqb-download" href="{href}" download="{FILE_NAME}">{escape(LINK_TEXT)}</a>'


def csv_bytes(data: "SpaceData", view: lb.View, cache: ViewCache[bytes] | None = None) -> bytes:
    """The CSV of ``view``'s rows, every figure and its CI in separate columns, from the table in memory."""

    def compute() -> bytes:
        return lb.to_csv(lb.render(data.table, replace(view, show_ci=True)))

    return compute() if cache is None else cache.get(data.version, view, compute)


def csv_route(data: "SpaceData"):
    """The ``GET /leaderboard.csv`` route (starlette), for ``demo.launch(app_kwargs={"routes": [...]})``."""
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    cache: ViewCache[bytes] = ViewCache(max_entries=8)

    async def download(request: Request) -> Response:
        params = {k: request.query_params.getlist(k) for k in request.query_params.keys()}
        body = await run_in_threadpool(csv_bytes, data, view_from_query(params), cache)
        return Response(
            body,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{FILE_NAME}"'},
        )

    return Route(CSV_PATH, download, methods=["GET"])
