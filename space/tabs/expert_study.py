"""The Expert study tab: what RQ-Bench is about, shown on the paper's own printed examples.

It is the first tab when the study file is found: one paragraph of context,
who picked which RQ and how often the raters agree, then the ten samples with
the two RQs side by side and the four verdicts. Without the file there is no
tab; ``build`` returns the note that the About tab prints instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import gradio as gr

from rqbench.io import RecordError
from rqbench.space import expert_study as es
from rqbench.space import html_table
from rqbench.space.agreement_view import MATRIX_NOTE, matrix_cells
from rqbench.space.tabs.common import html_block

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig

log = logging.getLogger(__name__)

CONTEXT = (
    "**RQ-Bench** asks a model to read the papers a real paper built on (its *background papers*) and to propose "
    "five research questions (RQs). LLM judges then score each RQ for novelty (originality, gap addressing, "
    "non-obviousness) and narrowness, and compare the best of the five with the *author-anchored RQ*: the "
    "question the real paper went on to study. Can such judges be trusted? In the paper's expert study, two "
    "domain experts and two LLM judges each saw the author-anchored RQ and gpt-5.5's best RQ, unlabelled, and "
    "picked the more non-obvious one. The experts mostly preferred the author-anchored RQ; the LLM judges mostly "
    "preferred gpt-5.5's. Below are the ten samples the paper prints, with every rater's pick."
)


def build(config: "SpaceConfig") -> str:
    """The tab when the study file can be read; otherwise no tab, and the returned note says why."""
    path = es.study_path(config.expert_study)
    if path is None or not path.is_file():
        where = es.display_path(path) if path is not None else f"$RQB_SHARED/{es.SHARED_FILE}"
        note = (
            f"The Expert study tab is not shown: {where} was not found "
            f"(set {es.EXPERT_STUDY_ENV} to the file of {es.SOURCE})."
        )
        log.info(note)
        return note
    with gr.Tab("Expert study", id="expert-study", elem_id="tab-expert-study"):
        gr.Markdown(CONTEXT)
        try:
            study = es.load_study(path, n_boot=config.n_boot)
        except (RecordError, ValueError) as exc:
            gr.Textbox(
                value=str(exc), label="The expert-study file could not be read", interactive=False, elem_id="es-problem"
            )
            return f"The expert-study file {es.display_path(path)} could not be read."
        names = {r: es.rater_label(r) for r in study.raters}
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                gr.Markdown("**How often two raters picked the same RQ** (10 samples)")
                headers, rows = matrix_cells(study.matrix, names)
                html_block("es-matrix", html_table.render_table(headers, rows, caption=MATRIX_NOTE, sticky_first=False))
            with gr.Column(scale=2):
                gr.Markdown("**Which RQ each rater found more non-obvious**")
                headers, rows = es.wins_table(study)
                html_block("es-wins", html_table.render_table(headers, rows, sticky_first=False))
        gr.Markdown("**The ten samples**: the background paper, the two RQs side by side, and each rater's pick")
        headers, rows = es.samples_table(study)
        table = html_table.render_table(
            headers, rows, caption=f"Source: {es.SOURCE}; read from {es.display_path(path)}.", sticky_first=False
        )
        html_block("es-samples", table, max_height=100_000)
    return ""
