"""The Browse tab: sub-field, paper and RQ pickers, the background papers, and every judge's scores.

Its pickers are filled when the tab is first opened, on the first RQ (the page
load does not carry them); ``?rq_id=`` opens it on that one instead
(``deep_link``), and the link box shows that address. An RQ's models and score
tables are computed once per version of the data (``ViewCache``). With no
stored instance the pickers and tables are hidden and ``NO_INSTANCES`` says
what is missing.
"""

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING, Any

import gradio as gr

from rqbench.demo import is_demo_model
from rqbench.space import browse, html_table
from rqbench.space.memo import ViewCache
from rqbench.space.tabs.common import READ_ONLY, banner_update, demo_banner, html_block, section_reader

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig, SpaceData

# In place of the pickers and tables when no stored results hold an instance
NO_INSTANCES = (
    "Nothing to browse yet: no stored results hold an instance. An instance (its background papers, the "
    "author-anchored RQ and each model's five RQs with every judge's scores) appears here once a model's "
    "submission has been judged: the worker judges the queue on the Submit tab, or rqbench evaluate writes "
    "results into this Space's store."
)


def subfield_picker(index, value: str | None = None) -> gr.Dropdown:
    """The sub-field picker's update: each sub-field by its label, and under it why one is not recorded."""
    choices = [(browse.subfield_label(s), s) for s in browse.subfield_choices(index)]
    if value is None:
        return gr.Dropdown(choices=choices)
    return gr.Dropdown(choices=choices, value=value, info=browse.subfield_note(value))


@dataclass
class BrowseTab:
    """The three pickers and the banner: the refresh fills the sub-fields, the page load sets all three."""

    data: "SpaceData"
    subfield: gr.Dropdown
    paper: gr.Dropdown
    rq: gr.Dropdown
    banner: gr.HTML
    work: gr.Column
    empty: gr.HTML

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.banner, self.work, self.empty, self.subfield]

    def reloaded(self) -> tuple:
        """After ``data.refresh()``: the banner, ``NO_INSTANCES`` in place of the rest when nothing is stored, and
        the sub-fields present (the sub-field last: a link replaces it)."""
        some = bool(self.data.index)
        return (
            banner_update(self.data.model_names()),
            gr.update(visible=some),
            gr.update(value="" if some else html_table.render_table([], [], empty=NO_INSTANCES), visible=not some),
            subfield_picker(self.data.index),
        )

    def deep_link(self, rq_id: str | None) -> tuple | None:
        """The pickers set to ``rq_id`` (sub-field, paper, RQ), or None when no such RQ is stored."""
        data = self.data
        ref = data.index.get(rq_id or "")
        if ref is None:
            return None
        papers = browse.paper_choices(data.index, ref.subfield)
        return (
            subfield_picker(data.index, ref.subfield),
            gr.Dropdown(choices=papers, value=ref.arxiv_id),
            gr.Dropdown(choices=browse.rq_labels(data.index, ref.arxiv_id), value=ref.rq_id),
        )

    def opening(self) -> tuple | None:
        """The pickers set to the first RQ, which the tab shows until a visitor picks another."""
        return self.deep_link(browse.first_rq(self.data.index))


MODELS_SHOWN = 6  # blocks drawn at first; the Models picker shows others


def candidates_html(data: "SpaceData", rq_id: str, models: list[str]) -> str:
    """One table per model: its name (and whether it is a demo model), then its RQs with every judge's scores."""
    blocks = browse.candidates_tables(data.results, rq_id, models)
    if not blocks:
        return html_table.render_table([], [], empty="No model is picked, or none has RQs for this instance.")
    parts = []
    for k, b in enumerate(blocks):
        demo = " (demo model)" if is_demo_model(b.model) else ""
        caption = browse.SCORE_KEY if k == len(blocks) - 1 else ""
        parts.append(
            f'<div class="rqb-block">{escape(b.model)}{demo}</div>'
            + html_table.render_table(b.headers, b.rows, caption=caption, sticky_first=False)
        )
    return "".join(parts)


def build(config: "SpaceConfig", data: "SpaceData") -> BrowseTab:
    """The tab; picking a sub-field narrows the papers, a paper narrows the RQs, an RQ fills the rest."""
    with gr.Tab("Browse", id="browse", elem_id="tab-browse") as tab:
        banner = demo_banner("browse")
        gr.Markdown(
            "One instance: the papers the models read, the question the real paper pursued (the "
            "author-anchored RQ), and each model's five RQs with every judge's scores and reasons."
        )
        empty = html_block("br-empty", visible=False)  # NO_INSTANCES, when nothing is stored
        with gr.Column(elem_id="br-work") as work:
            # The pickers' choices come with the page load and live in the visitor's session, which Gradio may drop
            # under a crowd (ui.SESSION_CAPACITY); a value from the page is then still taken (the handlers look it up).
            with gr.Row():
                b_sub = gr.Dropdown(
                    label="Sub-field", choices=[], elem_id="br-subfield", scale=1, allow_custom_value=True
                )
                b_paper = gr.Dropdown(
                    label="Source paper (arXiv id)", choices=[], elem_id="br-paper", scale=1, allow_custom_value=True
                )
                b_rq = gr.Dropdown(
                    label="Instance (its author-anchored RQ)",
                    choices=[],
                    elem_id="br-rq",
                    scale=3,
                    allow_custom_value=True,
                )
            with gr.Row():
                b_gt = gr.Textbox(label="Author-anchored RQ", interactive=False, elem_id="br-gt", scale=3)
                b_link = gr.Textbox(label="Link to this RQ", interactive=False, elem_id="br-link", scale=1)

            # Drawn when the RQ changes only: Gradio also re-renders on page load by default, and an empty render is
            # still a queued event that resends the block's configuration (8-20 ms of the Space's CPU per page open).
            # The page load sets the RQ, which fires this change. Outside the queue like the pickers (READ_ONLY):
            # Gradio's page applies a render that comes back from a direct POST as it does one from the queue.
            @gr.render(inputs=[b_rq], triggers=[b_rq.change], **READ_ONLY)
            def _papers(rq_id):
                ref = data.index.get(rq_id or "")
                if ref is None:
                    return
                views = browse.paper_views(ref, config.library)
                with gr.Accordion(f"The {len(views)} background paper(s) the models read", open=True):
                    for k, pv in enumerate(views):
                        with gr.Group():
                            gr.Textbox(
                                value=f"{pv.title}\n\n{pv.abstract}".strip(),
                                label=f"Background paper {k + 1}: {pv.paper_id} (title and abstract; text level: "
                                f"{pv.text_level})",
                                interactive=False,
                                max_lines=6,
                                elem_classes=["br-title"],
                            )
                            section_reader(pv.sections, key=f"br-{rq_id}-{k}")

            gr.Markdown("**Each model's RQs**, the author-anchored RQ (GT) first, with every judge's scores:")
            b_models = gr.Dropdown(
                label="Models shown",
                multiselect=True,
                choices=[],
                value=[],
                elem_id="br-models",
                allow_custom_value=True,
            )
            b_scores = html_block("br-scores", max_height=100_000)

    per_rq = ViewCache(max_entries=64)

    def models_of(rq_id: str) -> list[str]:
        version = data.version  # before the data (see the leaderboard tab)
        return per_rq.get(version, ("models", rq_id), lambda: browse.models_for(data.results, rq_id))

    def scores_of(rq_id: str, models: list[str]) -> str:
        version = data.version
        return per_rq.get(version, ("scores", rq_id, tuple(models)), lambda: candidates_html(data, rq_id, models))

    def pick_subfield(sub):
        papers = browse.paper_choices(data.index, sub)
        return gr.Dropdown(choices=papers, value=papers[0] if papers else None), gr.Dropdown(
            info=browse.subfield_note(sub)
        )

    def pick_paper(arxiv_id):
        rqs = browse.rq_labels(data.index, arxiv_id) if arxiv_id else []
        return gr.Dropdown(choices=rqs, value=rqs[0][1] if rqs else None)

    def pick_rq(rq_id, request: gr.Request):
        ref = data.index.get(rq_id or "")
        if ref is None:
            return "", "", gr.Dropdown(choices=[], value=[]), ""
        base = ""
        if request is not None:
            base = str(request.request.base_url) if hasattr(request, "request") else ""
        models = models_of(rq_id)
        shown = models[:MODELS_SHOWN]
        label = (
            f"Models shown ({len(shown)} of {len(models)}; pick others here)"
            if len(models) > len(shown)
            else ("Models shown")
        )
        return (
            f"{base}?rq_id={rq_id}",
            ref.gt_text,
            gr.Dropdown(choices=models, value=shown, label=label),
            scores_of(rq_id, shown),
        )

    def pick_models(rq_id, models):
        return scores_of(rq_id or "", list(models or []))

    def first_opening(rq_id):
        """The first opening fills the pickers on the first RQ (which draws its tables); later ones keep the pick."""
        if rq_id and rq_id in data.index:
            return gr.skip(), gr.skip(), gr.skip()
        pickers = BrowseTab(data, b_sub, b_paper, b_rq, banner, work, empty).opening()
        return pickers if pickers is not None else (gr.skip(), gr.skip(), gr.skip())

    tab.select(first_opening, b_rq, [b_sub, b_paper, b_rq], **READ_ONLY)
    b_sub.input(pick_subfield, b_sub, [b_paper, b_sub], **READ_ONLY).then(pick_paper, b_paper, b_rq, **READ_ONLY)
    b_paper.input(pick_paper, b_paper, b_rq, **READ_ONLY)
    b_rq.change(pick_rq, b_rq, [b_link, b_gt, b_models, b_scores], **READ_ONLY)
    b_models.input(pick_models, [b_rq, b_models], b_scores, **READ_ONLY)
    return BrowseTab(data, b_sub, b_paper, b_rq, banner, work, empty)
