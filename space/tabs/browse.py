"""The Browse tab: sub-field, paper and RQ pickers, the background papers, and every judge's scores.

An RQ can be opened directly with ``?rq_id=`` (``deep_link``); the link box shows that address.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import gradio as gr
import pandas as pd
from rqbench.space import browse
from rqbench.space.tabs.common import section_accordions

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig, SpaceData


@dataclass
class BrowseTab:
    """The three pickers: the refresh fills the sub-fields, a deep link sets all three."""

    data: "SpaceData"
    subfield: gr.Dropdown
    paper: gr.Dropdown
    rq: gr.Dropdown

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.subfield]

    def reloaded(self) -> tuple:
        """After ``data.refresh()``: the sub-fields present."""
        return (gr.Dropdown(choices=browse.subfield_choices(self.data.index)),)

    def deep_link(self, rq_id: str | None) -> tuple | None:
        """The pickers set to ``rq_id`` (sub-field, paper, RQ), or None when no such RQ is stored."""
        data = self.data
        ref = data.index.get(rq_id or "")
        if ref is None:
            return None
        papers = browse.paper_choices(data.index, ref.subfield)
        rqs = browse.rq_choices(data.index, ref.arxiv_id)
        return (
            gr.Dropdown(choices=browse.subfield_choices(data.index), value=ref.subfield),
            gr.Dropdown(choices=papers, value=ref.arxiv_id),
            gr.Dropdown(choices=rqs, value=ref.rq_id),
        )


def build(config: "SpaceConfig", data: "SpaceData") -> BrowseTab:
    """The tab; picking a sub-field narrows the papers, a paper narrows the RQs, an RQ fills the rest."""
    with gr.Tab("Browse", id="browse", elem_id="tab-browse"):
        with gr.Row():
            b_sub = gr.Dropdown(label="Sub-field", choices=[], elem_id="br-subfield")
            b_paper = gr.Dropdown(label="Paper", choices=[], elem_id="br-paper")
            b_rq = gr.Dropdown(label="RQ", choices=[], elem_id="br-rq")
        b_link = gr.Textbox(label="Link to this RQ", interactive=False, elem_id="br-link")
        b_gt = gr.Textbox(label="Author-anchored RQ", interactive=False, elem_id="br-gt")

        @gr.render(inputs=[b_rq])
        def _papers(rq_id):
            ref = data.index.get(rq_id or "")
            if ref is None:
                gr.Textbox(value="Pick an RQ to see its background papers.", show_label=False,
                           interactive=False)  # fmt: skip
                return
            for k, pv in enumerate(browse.paper_views(ref, config.library)):
                with gr.Accordion(f"Background paper {k + 1}: {pv.paper_id}", open=True):
                    gr.Textbox(value=pv.title, label="Title", interactive=False, elem_classes=["br-title"])
                    gr.Textbox(value=pv.abstract, label=f"Abstract (text level: {pv.text_level})",
                               interactive=False, max_lines=8)  # fmt: skip
                    section_accordions(pv.sections)

        b_scores = gr.Dataframe(label="Each model's five RQs, with every judge's scores and reasons",
                                interactive=False, wrap=True, datatype="str", elem_id="br-scores")  # fmt: skip
        b_gt_scores = gr.Dataframe(label="The author-anchored RQ's scores", interactive=False, wrap=True,
                                   datatype="str", elem_id="br-gt-scores")  # fmt: skip

    def pick_subfield(sub):
        papers = browse.paper_choices(data.index, sub)
        return gr.Dropdown(choices=papers, value=papers[0] if papers else None)

    def pick_paper(arxiv_id):
        rqs = browse.rq_choices(data.index, arxiv_id) if arxiv_id else []
        return gr.Dropdown(choices=rqs, value=rqs[0] if rqs else None)

    def pick_rq(rq_id, request: gr.Request):
        ref = data.index.get(rq_id or "")
        if ref is None:
            return "", "", pd.DataFrame(), pd.DataFrame()
        base = ""
        if request is not None:
            base = str(request.request.base_url) if hasattr(request, "request") else ""
        link = f"{base}?rq_id={rq_id}"
        return (link, ref.gt_text, browse.scores_table(data.results, rq_id),
                browse.gt_scores_table(data.results, rq_id))  # fmt: skip

    b_sub.input(pick_subfield, b_sub, b_paper)
    b_paper.input(pick_paper, b_paper, b_rq)
    b_rq.change(pick_rq, b_rq, [b_link, b_gt, b_scores, b_gt_scores])
    return BrowseTab(data, b_sub, b_paper, b_rq)
