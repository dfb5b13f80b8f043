"""The Leaderboard tab: filters, column groups and sorting over the summary table, and its CSV download."""

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gradio as gr
import pandas as pd
from rqbench.evaluate.summary import COMBINED
from rqbench.space import leaderboard as lb
from rqbench.space.safety import redact

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceData


@dataclass
class LeaderboardTab:
    """What the page-wide refresh needs: the view controls (``render``'s inputs, in order), the judge
    filter whose choices follow the data, the outputs it fills, and the Refresh button."""

    data: "SpaceData"
    controls: list[Any]
    judges: gr.Dropdown
    table: gr.Dataframe
    download: gr.DownloadButton
    problems: gr.Textbox
    refresh: gr.Button
    render: Callable[..., tuple[gr.Dataframe, str]]

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.table, self.download, self.problems, self.judges]

    def reloaded(self, *view: Any) -> tuple:
        """After ``data.refresh()``: the table for the current view, the unreadable files, the judges present."""
        tbl, csv = self.render(*view)
        prob = gr.Textbox(value=redact("\n".join(self.data.problems)), visible=bool(self.data.problems))
        return tbl, csv, prob, gr.Dropdown(choices=self.data.judge_choices())


def _display(df: pd.DataFrame) -> pd.DataFrame:
    """Missing figures as empty cells rather than NaN."""
    return df.astype(object).where(df.notna(), None)


def _datatypes(columns: list[str]) -> list[str]:
    numeric = set(lb.numeric_columns())
    return ["number" if c in numeric else "str" for c in columns]


def _csv_file(df: pd.DataFrame) -> str:
    folder = Path(tempfile.gettempdir()) / "rqbench-space"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"leaderboard-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}.csv"
    path.write_bytes(lb.to_csv(df))
    return str(path)


def build(data: "SpaceData") -> LeaderboardTab:
    """The tab, with its filters re-rendering the table as they change."""
    with gr.Tab("Leaderboard", id="leaderboard", elem_id="tab-leaderboard"):
        with gr.Row():
            search = gr.Textbox(label="Search model", placeholder="model name", elem_id="lb-search", scale=2)
            judges = gr.Dropdown(label="Judge", multiselect=True, value=[COMBINED], choices=[COMBINED],
                                 allow_custom_value=True, elem_id="lb-judge")  # fmt: skip
            settings = gr.Dropdown(label="Setting", multiselect=True, value=[],
                                   choices=["standalone", "comparative"], elem_id="lb-setting")  # fmt: skip
            variants = gr.Dropdown(label="Prompt variant", multiselect=True, value=[],
                                   choices=["original", "revised", "custom"], elem_id="lb-variant")  # fmt: skip
            types = gr.Dropdown(label="Model type", multiselect=True, value=[],
                                choices=["open", "closed", "unknown"], elem_id="lb-type")  # fmt: skip
        with gr.Row():
            groups = gr.CheckboxGroup(label="Columns", choices=[g for g in lb.GROUPS if g != "model"],
                                      value=[g for g in lb.DEFAULT_GROUPS if g != "model"],
                                      elem_id="lb-groups")  # fmt: skip
            show_ci = gr.Checkbox(label="95% CI beside each figure", value=True, elem_id="lb-ci")
            sort_by = gr.Dropdown(label="Sort by", choices=["(default)", *lb.numeric_columns(), "Model"],
                                  value="(default)", elem_id="lb-sort")  # fmt: skip
            ascending = gr.Checkbox(label="Ascending", value=False, elem_id="lb-asc")
            refresh = gr.Button("Refresh", elem_id="lb-refresh")
        table = gr.Dataframe(label="Leaderboard", interactive=False, elem_id="leaderboard-table",
                             wrap=False, max_height=700, pinned_columns=1)  # fmt: skip
        download = gr.DownloadButton("Download CSV", elem_id="lb-download")
        problems = gr.Textbox(label="Results files that could not be read", visible=False, interactive=False,
                              elem_id="lb-problems")  # fmt: skip

    controls = [search, judges, settings, variants, types, groups, show_ci, sort_by, ascending]

    def render_table(q, js, ss, vs, ts, gs, ci, by, asc):
        view = lb.View(search=q or "", judges=tuple(js or ()), settings=tuple(ss or ()), variants=tuple(vs or ()),
                       model_types=tuple(ts or ()), groups=("model", *(gs or ())), show_ci=bool(ci),
                       sort_by=None if by in (None, "", "(default)") else by, ascending=bool(asc))  # fmt: skip
        df = lb.render(data.table, view)
        return gr.Dataframe(value=_display(df), datatype=_datatypes(list(df.columns))), _csv_file(df)

    search.submit(render_table, controls, [table, download])
    for comp in (judges, settings, variants, types, groups, show_ci, sort_by, ascending):
        comp.change(render_table, controls, [table, download])
    search.change(render_table, controls, [table, download])
    return LeaderboardTab(data, controls, judges, table, download, problems, refresh, render_table)

