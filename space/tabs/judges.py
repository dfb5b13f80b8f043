"""The Judges tab: every judge configuration a row, ranked by how often it agrees with experts.

The board is ``SpaceData.board``: the judge-board results files in the store
(``rqbench judge-board``) against the expert pool as it stands, the paper's A.6
pairs and every pair annotated in this Space, so it follows new annotations.
It is drawn on page load and refresh, and again whenever the tab is opened
(after annotating, say). A demo judge (the embedded model) brings the banner.
When the plot would place no judge, a sentence (``nothing_placed``) says why
in its place.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gradio as gr

from rqbench.evaluate.report.judge_board_plot import agreement_cost_figure, nothing_placed
from rqbench.evaluate.report.judge_board_section import COLUMNS, pool_line
from rqbench.space import html_table, judges_view, stability_view
from rqbench.space.memo import ViewCache
from rqbench.space.plots import drawn as drawn_figure
from rqbench.space.safety import redact
from rqbench.space.tabs.common import READ_ONLY, banner_update, demo_banner, html_block

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceData

INTRO = (
    "Can an LLM judge stand in for experts on scientific novelty? Each row is one judge configuration (a model, "
    "its settings and its prompt set), asked the paper's comparative non-obviousness question on every pair "
    "experts compared: the author-anchored RQ against a model's RQ, shown in both orders. Rows are ranked by "
    "how often the judge's pick matches the experts' majority; the dashed row is how often two experts agree "
    "with each other, the ceiling. The paper's two judges are rows too, with the verdicts it published on its "
    "ten printed pairs. Add a judge with `rqbench judge-board --judge MODEL`."
)


STABILITY_INTRO = (
    "### Do the judges rank the models alike?\n"
    "A ranking one judge gives and another reverses is not a finding. Each model's rank under each judge, the ranks "
    "its interval allows, and Kendall's tau between the judges' rankings, from the stored results."
)
LENGTH_INTRO = (
    "### How much does each judge prefer length?\n"
    "A longer research question says more, and a judge can take detail for novelty. Each model's win rate before and "
    "after holding its questions' length equal to the author-anchored one's."
)
SUSCEPTIBILITY_INTRO = (
    "### How far do words added to a research question move each judge?\n"
    "A submitter can append praise, a claimed consensus or a claimed score to a question. The submission screen "
    "catches many such words; what it misses reaches the judge. Each measured judge scored every pair again with "
    "such words added to the model's question."
)
NO_EXPERT_PAIRS = "No expert pairs yet: the paper's study file is missing and nothing is annotated."


def table_html(data: "SpaceData") -> str:
    """The ranked board; with no row, the sentence alone (the caption explains figures there are none of)."""
    headers, rows = judges_view.table(data.board)
    return html_table.render_table(
        headers,
        rows,
        caption=judges_view.CAPTION if rows else "",
        sticky_first=False,
        empty=NO_EXPERT_PAIRS,
    )


def susceptibility_table(board) -> str:
    """Each measured judge under each cue; with none measured, the sentence saying how to measure one."""
    headers, caption = judges_view.susceptibility_html()
    rows = judges_view.susceptibility_cells(board)
    return html_table.render_table(
        headers, rows, caption=caption if rows else "", sticky_first=False, empty=judges_view.NO_SUSCEPTIBILITY
    )


def pool_text(data: "SpaceData") -> str:
    """The pool the board stands on, and what was left out of it or could not be read."""
    lines = [pool_line(data.board)] + data.board.notes + data.board_problems
    return redact("\n".join(lines))


def demo_names(data: "SpaceData") -> list[str]:
    return [r.judge for r in data.board.rows if r.demo]


@dataclass
class JudgesTab:
    """The banner, the table and the pool line, which follow the data; the plot is drawn when opened."""

    data: "SpaceData"
    banner: gr.HTML
    table: gr.HTML
    pool: gr.Textbox

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.banner, self.table, self.pool]

    def reloaded(self) -> tuple:
        """After ``data.refresh()``: the banner for the demo judges, the ranked table, the pool."""
        return banner_update(demo_names(self.data)), table_html(self.data), pool_text(self.data)


def build(data: "SpaceData") -> JudgesTab:
    """The tab; opening it re-reads the stores (new annotations, new runs) and draws the table and the plot."""
    with gr.Tab("Judges", id="judges", elem_id="tab-judges") as tab:
        banner = demo_banner("judges")
        gr.Markdown(INTRO)
        table = html_block("judges-table", max_height=640)
        plot = gr.Plot(label="Agreement with the experts' majority against cost per 1,000 pairs", elem_id="jb-plot")
        unplotted = html_block("jb-plot-empty", visible=False)
        pool = gr.Textbox(label="The expert pool", interactive=False, lines=2, elem_id="jb-pool")
        with gr.Accordion("What each column means", open=False):
            gr.Markdown("\n".join(f"- **{name}**: {what}." for name, what in COLUMNS.items()))
        gr.Markdown(STABILITY_INTRO)
        stability = html_block("judges-stability", max_height=640)
        gr.Markdown(LENGTH_INTRO)
        length = html_block("judges-length", max_height=640)
        gr.Markdown(SUSCEPTIBILITY_INTRO)
        cued = html_block("judges-susceptibility", max_height=640)

    drawn = ViewCache(max_entries=6)  # the plot and the two tables of the current version and the last

    def figure(board) -> tuple:
        """(the plot as the image Gradio sends, or None; the sentence shown instead, or "")."""
        why = nothing_placed(board)
        if why:
            return None, why
        return drawn_figure(lambda: agreement_cost_figure(board), plot.postprocess), ""

    def opened():
        data.refresh(recent=True)
        version, board = data.version, data.board  # the version first (see the leaderboard tab)
        shown = JudgesTab(data, banner, table, pool).reloaded()
        img, why = drawn.get(version, ("judge-board",), lambda: figure(board))
        note = html_table.render_table([], [], empty=why) if why else ""
        rows, results = data.rows, data.results
        ranks = drawn.get(version, ("stability",), lambda: stability_view.stability_html(rows))
        lengths = drawn.get(
            version, ("length",), lambda: stability_view.length_html(results, n_boot=data.config.n_boot)
        )
        return (
            *shown,
            gr.update(value=img, visible=img is not None),
            gr.update(value=note, visible=bool(why)),
            ranks,
            lengths,
            drawn.get(version, ("susceptibility",), lambda: susceptibility_table(board)),
        )

    # drawn one at a time (plots.DRAWING)
    tab.select(opened, None, [banner, table, pool, plot, unplotted, stability, length, cued], **READ_ONLY)
    return JudgesTab(data, banner, table, pool)
