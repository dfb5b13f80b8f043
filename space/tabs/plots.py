"""The Plots tab: novelty against narrowness, and win/tie/lose bars, for one judge.

The figures are drawn when the tab is opened (and when a picker changes), not
on page load: a visitor who never opens the tab never waits for them. Each
figure is drawn once per version of the data and kept as the image Gradio
sends (``ViewCache``); drawing runs one at a time (matplotlib's pyplot is not
thread-safe, and one drawing keeps a core busy). A figure with nothing to show
is not drawn: a sentence (``plots.scatter_empty``, ``plots.bars_empty``) takes
its place and says which results would fill it.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gradio as gr

from rqbench.evaluate.criteria import CRITERIA, headline
from rqbench.evaluate.criteria import DIMENSIONS as DIMENSION_OF
from rqbench.evaluate.metrics.summary_row import COMBINED
from rqbench.space import html_table, plots
from rqbench.space.memo import ViewCache
from rqbench.space.tabs.common import READ_ONLY, banner_update, demo_banner, html_block

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceData

# the bars' dimensions, as (label, name): of each criterion that scores candidates one by one, those that pick a
# best RQ (novelty's), or else all of its own (narrowness's, a declared criterion's)
DIMENSIONS = [
    (DIMENSION_OF[name][1].label, name)
    for c in CRITERIA.values()
    if c.per_candidate
    for name in (c.tie_break or tuple(d.name for d in c.dimensions))
]


@dataclass
class PlotsTab:
    """The judge picker (its choices follow the data), the banner, and the two figures."""

    data: "SpaceData"
    judge: gr.Dropdown
    banner: gr.HTML
    scatter: gr.Plot
    bars: gr.Plot

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.judge, self.banner]

    def reloaded(self) -> tuple:
        """After ``data.refresh()``: the judges present, the combined judge picked, and the banner."""
        return gr.Dropdown(choices=self.data.judge_choices(), value=COMBINED), banner_update(self.data.model_names())


def build(data: "SpaceData") -> PlotsTab:
    """The tab; opening it draws both figures, each picker redraws what it changes."""
    with gr.Tab("Plots", id="plots", elem_id="tab-plots") as tab:
        banner = demo_banner("plots")
        with gr.Row():
            # its choices come with the page load, in the visitor's session (see the Browse tab's pickers)
            p_judge = gr.Dropdown(
                label="Judge", choices=[COMBINED], value=COMBINED, elem_id="pl-judge", allow_custom_value=True
            )
            p_setting = gr.Dropdown(
                label="Setting (bars)", choices=["standalone", "comparative"], value="standalone", elem_id="pl-setting"
            )
            p_dim = gr.Dropdown(
                label="Dimension (bars)", value=headline("novelty"), choices=DIMENSIONS, elem_id="pl-dim"
            )
        p_scatter = gr.Plot(label="Novelty against narrowness (standalone)", elem_id="pl-scatter")
        p_scatter_empty = html_block("pl-scatter-empty", visible=False)
        p_bars = gr.Plot(label="Win / tie / lose against the author-anchored RQ", elem_id="pl-bars")
        p_bars_empty = html_block("pl-bars-empty", visible=False)

    drawn = ViewCache(max_entries=32)

    def image(plot: gr.Plot, key: tuple, empty, draw) -> tuple[Any, str]:
        """(the figure as the image Gradio sends, or None; the sentence shown instead, or ""), once per version.

        ``Plot.postprocess`` also closes the figure. A figure ``empty`` finds nothing for is not drawn.
        """
        version, rows = data.version, data.rows  # the version first (see the leaderboard tab)

        def make() -> tuple[Any, str]:
            why = empty(rows)
            return (None, why) if why else (plots.drawn(lambda: draw(rows), plot.postprocess), "")

        return drawn.get(version, key, make)

    def shown(figure: tuple[Any, str]) -> tuple[Any, str]:
        """The plot's update and the sentence's HTML: one of the two is on the page."""
        img, why = figure
        note = html_table.render_table([], [], empty=why) if why else ""
        return gr.update(value=img, visible=img is not None), gr.update(value=note, visible=bool(why))

    def draw_scatter(judge):
        judge = judge or COMBINED
        return shown(
            image(
                p_scatter,
                ("scatter", judge),
                lambda rows: plots.scatter_empty(rows, judge=judge),
                lambda rows: plots.novelty_vs_narrowness(rows, judge=judge),
            )
        )

    def draw_bars(judge, setting, dim):
        judge = judge or COMBINED
        return shown(
            image(
                p_bars,
                ("bars", judge, setting, dim),
                lambda rows: plots.bars_empty(rows, judge=judge, setting=setting, dimension=dim),
                lambda rows: plots.verdict_bars(rows, judge=judge, setting=setting, dimension=dim),
            )
        )

    def draw_both(judge, setting, dim):
        return *draw_scatter(judge), *draw_bars(judge, setting, dim)

    pickers = [p_judge, p_setting, p_dim]
    both = [p_scatter, p_scatter_empty, p_bars, p_bars_empty]
    # drawn one at a time (plots.DRAWING), whichever event asks; a figure already drawn is handed out at once
    tab.select(draw_both, pickers, both, **READ_ONLY)
    # .input: the page load's new judge choices draw nothing; only a visitor's pick does
    p_judge.input(draw_both, pickers, both, **READ_ONLY)
    p_setting.input(draw_bars, pickers, [p_bars, p_bars_empty], **READ_ONLY)
    p_dim.input(draw_bars, pickers, [p_bars, p_bars_empty], **READ_ONLY)
    return PlotsTab(data, p_judge, banner, p_scatter, p_bars)
