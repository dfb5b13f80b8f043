"""The Plots tab: novelty against narrowness for one judge, and win/tie/lose bars per judge."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gradio as gr
from rqbench.evaluate.summary import COMBINED
from rqbench.space import plots

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceData


@dataclass
class PlotsTab:
    """The judge picker (its choices follow the data) and the two figures the page load draws."""

    data: "SpaceData"
    judge: gr.Dropdown
    scatter: gr.Plot
    bars: gr.Plot

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.judge]

    def reloaded(self) -> tuple:
        """After ``data.refresh()``: the judges present, the combined judge picked."""
        return (gr.Dropdown(choices=self.data.judge_choices(), value=COMBINED),)

    def figures(self) -> tuple:
        """Both figures with their default choices."""
        return plots.novelty_vs_narrowness(self.data.rows), plots.verdict_bars(self.data.rows)


def build(data: "SpaceData") -> PlotsTab:
    """The tab; each picker redraws its own figure."""
    with gr.Tab("Plots", id="plots", elem_id="tab-plots"):
        p_judge = gr.Dropdown(label="Judge", choices=[COMBINED], value=COMBINED, elem_id="pl-judge")
        p_scatter = gr.Plot(label="Novelty against narrowness", elem_id="pl-scatter")
        with gr.Row():
            p_setting = gr.Dropdown(label="Setting", choices=["standalone", "comparative"], value="standalone")
            p_dim = gr.Dropdown(label="Dimension", value="non_obviousness",
                                choices=["non_obviousness", "originality", "gap_addressing",
                                         "source_bound_score", "diagnostic_test_score"])  # fmt: skip
        p_bars = gr.Plot(label="Win / tie / lose per judge", elem_id="pl-bars")

    def draw_scatter(judge):
        return plots.novelty_vs_narrowness(data.rows, judge=judge or COMBINED)

    def draw_bars(setting, dim):
        return plots.verdict_bars(data.rows, setting=setting, dimension=dim)

    p_judge.change(draw_scatter, p_judge, p_scatter)
    p_setting.change(draw_bars, [p_setting, p_dim], p_bars)
    p_dim.change(draw_bars, [p_setting, p_dim], p_bars)
    return PlotsTab(data, p_judge, p_scatter, p_bars)
