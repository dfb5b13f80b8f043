"""The Leaderboard tab: filters, column groups and sorting over the summary table, and its CSV download.

The table is one static HTML table (``rqbench.space.html_table``): the headline
figures by default, each with its CI, more column groups on request, and hover
text for headers, CIs, empty cells and the combine rule. "Clean only" switches
every figure to its value over the papers newer than the model's knowledge cutoff.
The table is paged (``PAGE_ROWS`` rows a page, a pager under it): filters and sorting
select and order every row on the server, and the page carries only the rows shown.
Each view's rows are selected once per version of the data, each page rendered once
(``ViewCache``), and handed to every visitor who asks for them; the CSV link under it
(every row the view selects) is served from memory (``downloads``).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gradio as gr
import pandas as pd

from rqbench.evaluate.criteria import DECLARED
from rqbench.evaluate.metrics.summary_row import COMBINED
from rqbench.space import bundles, downloads, html_table
from rqbench.space import leaderboard as lb
from rqbench.space import leaderboard_cells as lb_cells
from rqbench.space.memo import ViewCache
from rqbench.space.safety import redact
from rqbench.space.tabs.common import AS_SHOWN, banner_update, demo_banner, html_block

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceData


@dataclass
class LeaderboardTab:
    """What the page-wide refresh needs: the view controls (``render``'s inputs, in order), the judge
    filter whose choices follow the data, the outputs it fills, and the Refresh button."""

    data: "SpaceData"
    controls: list[Any]
    judges: gr.Dropdown
    table: gr.HTML
    download: gr.HTML
    page: gr.Number
    problems: gr.Textbox
    banner: gr.HTML
    refresh: gr.Button
    render: Callable[..., tuple[str, str]]

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.table, self.download, self.page, self.problems, self.judges, self.banner]

    def reloaded(self, *view: Any) -> tuple:
        """After ``data.refresh()``: the table's page for the current view (and page number), the unreadable
        files, the judges present."""
        tbl, link, page = self.render(*view)
        prob = gr.Textbox(value=redact("\n".join(self.data.problems)), visible=bool(self.data.problems))
        return (
            tbl,
            link,
            page,
            prob,
            gr.Dropdown(choices=self.data.judge_choices()),
            banner_update(self.data.model_names()),
        )


# The column groups a visitor can add to the headline view, with what each holds.
EXTRA_GROUPS = [
    ("win/tie per novelty dimension", "novelty"),
    ("narrowness details", "narrowness"),
    # a criterion declared as data (RQB_CRITERIA) that has columns beyond its headline ones
    *((f"{c.name} details", c.name) for c in DECLARED.values() if not all(col.headline for col in c.columns)),
    ("human agreement", "human agreement"),
    ("length control (win rates with the RQs' length held equal)", "length control"),
    ("diversity of the five RQs", "diversity"),
    ("cost (generation, judging, win points per dollar)", "cost"),
    ("provenance (judges and their details, prompts, dataset, failures, contamination)", "provenance"),
]


# Rows on one page of the table: the page load carries these, not the whole table (1,000 rows: 1.2 MB of HTML)
PAGE_ROWS = 50
# Views whose selected rows are kept per data version (the default view and the searches a crowd repeats), and
# rendered pages (about 60 kB each)
CACHED_VIEWS = 16
CACHED_PAGES = 64
SEARCH_CUT = f"The search was cut to its first {downloads.MAX_SEARCH_CHARS} characters (model names are shorter)."
# Which runs the table ranks: full runs (the leaderboard), or trial runs apart (``View.trials``).
FULL_RUNS = "full runs"
RUNS = {FULL_RUNS: False, "trial runs": True}


def page_count(n_rows: int) -> int:
    return max(1, math.ceil(n_rows / PAGE_ROWS))


def pager_line(page: int, n_rows: int) -> str:
    """Where the page is in the rows the view selects (above the table)."""
    if n_rows <= PAGE_ROWS:
        return f"{n_rows:,} row(s)." if n_rows else ""
    first, last = (page - 1) * PAGE_ROWS + 1, min(page * PAGE_ROWS, n_rows)
    return (
        f"Rows {first:,}-{last:,} of {n_rows:,} (page {page} of {page_count(n_rows)}; Previous, Next or a page "
        "number under the table; search, filters and sorting cover every row)."
    )


def table_html(table: pd.DataFrame, view: lb.View, shown: pd.DataFrame | None = None, page: int = 1) -> str:
    """One page of the table for a view (``shown``: the rows it selects, ``lb_cells.shown_rows``), where that page is
    above it, empty-cell reasons and the combine rule in its caption."""
    shown = lb_cells.shown_rows(table, view) if shown is None else shown
    rows = slice((page - 1) * PAGE_ROWS, page * PAGE_ROWS)
    headers, cells, caption = lb_cells.display(table, view, rows=rows, shown=shown)
    empty = "No results match these filters." if len(table) else "No results yet."
    where = pager_line(page, len(shown))
    return (f'<div class="rqb-pager" id="lb-where">{where}</div>' if where else "") + html_table.render_table(
        headers, cells, caption=caption, empty=empty
    )


def build(data: "SpaceData") -> LeaderboardTab:
    """The tab, with its filters re-rendering the table as they change."""
    with gr.Tab("Leaderboard", id="leaderboard", elem_id="tab-leaderboard"):
        banner = demo_banner("leaderboard")
        gr.Markdown(
            "One row per model, setting and judge. **Best@5**: the best of a model's five RQs per instance, "
            "scored 0-3 (higher is more novel; for source-boundedness lower is broader). **Win / tie / lose**: "
            "how often that best RQ beats the author-anchored RQ. **Overlap@5**: how close the five come to the "
            "author-anchored RQ (0-4). Grey brackets: 95% intervals. **Scored**: the instances of the dataset "
            "revision a row scored; a failed generation counts against the model (a loss), and **†** marks a row a "
            "judge's failed calls left incomplete, with the count. Trial runs (the first instances only) are "
            "listed apart, under Runs. Hover a header or a cell for more."
        )
        gr.Markdown(
            "**Clean only (post-cutoff)**: each model's figures over the papers first published after its "
            "knowledge cutoff, which it cannot have read (the Clean column counts them)."
        )
        with gr.Row(equal_height=True):
            search = gr.Textbox(
                label="Search model",
                placeholder="model name",
                elem_id="lb-search",
                scale=2,
                lines=1,
                max_lines=1,  # a long paste scrolls in one line instead of growing the box
                max_length=downloads.MAX_SEARCH_CHARS,  # the browser cuts a paste; the server cuts API callers
            )
            judges = gr.Dropdown(
                label="Judge",
                multiselect=True,
                value=[COMBINED],
                choices=[COMBINED],
                allow_custom_value=True,
                elem_id="lb-judge",
                scale=2,
            )
            settings = gr.Dropdown(
                label="Setting",
                multiselect=True,
                value=[],
                choices=["standalone", "comparative"],
                elem_id="lb-setting",
                scale=2,
            )
            sort_by = gr.Dropdown(
                label="Sort by",
                choices=["(default)", *lb.numeric_columns(), "Model"],
                value="(default)",
                elem_id="lb-sort",
                scale=2,
            )
            with gr.Column(scale=1, min_width=120):
                ascending = gr.Checkbox(label="Ascending", value=False, elem_id="lb-asc")
                clean = gr.Checkbox(label="Clean only (post-cutoff)", value=False, elem_id="lb-clean")
                refresh = gr.Button("Refresh", elem_id="lb-refresh", size="sm")
        with gr.Accordion("More columns, filters and intervals", open=False, elem_id="lb-more"):
            with gr.Row(equal_height=True):
                groups = gr.CheckboxGroup(
                    label="More columns", choices=EXTRA_GROUPS, value=[], elem_id="lb-groups", scale=3
                )
                variants = gr.Dropdown(
                    label="Prompt variant",
                    multiselect=True,
                    value=[],
                    choices=["original", "revised", "custom"],
                    elem_id="lb-variant",
                )
                types = gr.Dropdown(
                    label="Model type",
                    multiselect=True,
                    value=[],
                    choices=["open", "closed", "unknown"],
                    elem_id="lb-type",
                )
                show_ci = gr.Checkbox(label="95% CI in each cell (always on hover)", value=True, elem_id="lb-ci")
                runs = gr.Radio(
                    label="Runs",
                    choices=list(RUNS),
                    value=FULL_RUNS,
                    elem_id="lb-runs",
                    info="trial runs judged only the first N instances: never ranked beside full runs",
                )
        table = html_block("leaderboard-table", max_height=640)
        with gr.Row(elem_id="lb-pager"):
            previous = gr.Button("Previous", size="sm", elem_id="lb-prev", scale=0, min_width=100)
            page = gr.Number(label="Page", value=1, precision=0, minimum=1, elem_id="lb-page", scale=0, min_width=100)
            following = gr.Button("Next", size="sm", elem_id="lb-next", scale=0, min_width=100)
        download = gr.HTML(elem_id="lb-download", padding=False)
        problems = gr.Textbox(
            label="Results files that could not be read", visible=False, interactive=False, elem_id="lb-problems"
        )

    controls = [search, judges, settings, variants, types, groups, show_ci, sort_by, ascending, clean, runs]

    selections: ViewCache[pd.DataFrame] = ViewCache(CACHED_VIEWS)
    # every row's order per sort key (a handful: the default and the sortable columns each way), per data version:
    # a new search is then a filter of rows already in order (``lb_cells.shown_rows``)
    orders: ViewCache[tuple[pd.DataFrame, pd.Index]] = ViewCache(CACHED_VIEWS)

    def order_of(frame: pd.DataFrame, version: int) -> Callable[[lb.SortKey], pd.Index]:
        """The order of ``frame``'s rows per sort key, kept for its version (and recomputed for any other frame)."""

        def get(key: lb.SortKey) -> pd.Index:
            kept, index = orders.get(version, key, lambda: (frame, lb.ordered(frame, key).index))
            return index if kept is frame else lb.ordered(frame, key).index

        return get

    pages: ViewCache[str] = ViewCache(CACHED_PAGES)

    def render_table(q, js, ss, vs, ts, gs, ci, by, asc, cl, run=FULL_RUNS, page_no=1):
        """(the table's page, the CSV link, the page number shown): ``page_no`` kept within the view's pages."""
        search, cut = downloads.capped_search(str(q or ""))
        view = lb.View(
            search=search,
            judges=tuple(js or ()),
            settings=tuple(ss or ()),
            variants=tuple(vs or ()),
            model_types=tuple(ts or ()),
            groups=("model", "headline", *(gs or ())),
            show_ci=bool(ci),
            sort_by=None if by in (None, "", "(default)") else by,
            ascending=bool(asc),
            clean_only=bool(cl),
            trials=RUNS.get(run, False),
        )
        # the version before the table: refresh() replaces the table first, so a table newer than its key can be
        # cached (and is recomputed under the next key), never one older
        version = data.version
        frame = data.table
        shown = selections.get(version, view, lambda: lb_cells.shown_rows(frame, view, order_of(frame, version)))
        try:
            wanted = int(page_no or 1)
        except (TypeError, ValueError, OverflowError):  # an empty box, or a value the page did not send
            wanted = 1
        at = min(max(wanted, 1), page_count(len(shown)))
        html = pages.get(version, (view, at), lambda: table_html(frame, view, shown, at))
        on_page = shown.iloc[(at - 1) * PAGE_ROWS : at * PAGE_ROWS]
        notice = f'<p class="rqb-notice" id="lb-cut" role="status">{SEARCH_CUT}</p>' if cut else ""
        return notice + html, downloads.link_html(view) + bundles.links_html(on_page, lb.BUNDLE_ID), at

    def first_page(*view):
        return render_table(*view, 1)

    def turn(step: int, name: str):
        def to(*view_and_page):
            *view, page_no = view_and_page
            try:
                current = int(page_no or 1)
            except (TypeError, ValueError, OverflowError):
                current = 1
            return render_table(*view, current + step)

        to.__name__ = name  # the event's name in Gradio's list of functions
        return to

    shown_outputs = [table, download, page]
    paged = [*controls, page]
    # .input, not .change, for the pickers: only a visitor's own edits redraw the table (the page load sets their
    # choices). The search box's .input missed deletions, a cleared box and pastes in Chromium (the table kept its
    # old filter), so the box redraws on .change: no code sets its value, so every change is a visitor's. While
    # they type only the latest pending redraw runs. A new view opens on its first page. Every one of these reads
    # and writes nothing but the page: one HTTP request each, outside the queue, its outputs (two HTML strings and
    # a whole page number) sent as they are (``AS_SHOWN``).
    search.submit(first_page, controls, shown_outputs, **AS_SHOWN)
    search.change(first_page, controls, shown_outputs, **AS_SHOWN)
    for comp in (judges, settings, variants, types, groups, show_ci, sort_by, ascending, clean, runs):
        comp.input(first_page, controls, shown_outputs, **AS_SHOWN)
    previous.click(turn(-1, "previous_page"), paged, shown_outputs, **AS_SHOWN)
    following.click(turn(+1, "next_page"), paged, shown_outputs, **AS_SHOWN)
    page.submit(turn(0, "this_page"), paged, shown_outputs, **AS_SHOWN)
    return LeaderboardTab(data, paged, judges, table, download, page, problems, banner, refresh, render_table)
