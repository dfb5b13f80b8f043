"""The About tab: how the board is made, and which store and benchmark this Space runs on."""

from typing import TYPE_CHECKING

import gradio as gr

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig

ABOUT = """
**How the board is made.** Each submission's five RQs per instance are judged by LLM judges (standalone: one RQ
per call; comparative: the author-anchored RQ and the five together, unlabelled). Best@5 is the best of the five;
win/tie/lose compare it with the author-anchored RQ. Narrowness figures are lower-is-broader. Intervals are 95%
cluster-bootstrap intervals over source papers. The *combined* judge pools every (instance, judge) verdict.

**Contamination.** A row is flagged when the model's stated knowledge cutoff is after the earliest source paper
it was judged on.

**Human agreement.** Annotators compare the author-anchored RQ with a model's best-of-five RQ on
non-obviousness; the column shows how often each judge's pick matches theirs.
"""


def build(config: "SpaceConfig") -> None:
    """The tab; it has no events."""
    with gr.Tab("About", id="about", elem_id="tab-about"):
        gr.Markdown(ABOUT)
        gr.Textbox(value=f"Store: {config.stores.backend}. {config.dataset_note}", label="This Space",
                   interactive=False)  # fmt: skip
