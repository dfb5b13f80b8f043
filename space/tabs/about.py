"""The About tab: how the board is made, and which store and benchmark this Space runs on."""

from dataclasses import dataclass
from typing import TYPE_CHECKING

import gradio as gr

from rqbench.space.safety import printable, redact
from rqbench.space.tabs.common import demo_banner

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

**Demo models.** The embedded model (`local`, SmolLM2-135M) runs every step offline without API keys; it follows
the output format but does not judge. A banner marks every tab whose figures or examples come from it, or from a
model named in `RQB_DEMO_MODELS`: those figures are not results.
"""


@dataclass
class AboutTab:
    """The banner and the list of stored files the Space could not read, which the page load fills."""

    banner: gr.HTML
    unreadable: gr.Textbox


def unreadable_update(lines: list[str]) -> gr.Textbox:
    """The stored files that could not be read, each with its path and why (hidden when there are none)."""
    text = "\n".join(printable(redact(line)) for line in lines)
    return gr.Textbox(
        value=text,
        visible=bool(lines),
        label=f"Stored files this Space could not read ({len(lines)}): every other row is shown",
    )


def build(config: "SpaceConfig", notes: str = "") -> AboutTab:
    """The tab; ``notes`` are what the page could not show (a missing expert-study file)."""
    with gr.Tab("About", id="about", elem_id="tab-about"):
        banner = demo_banner("about")
        gr.Markdown(ABOUT)
        text = redact(f"Store: {config.stores.backend}. {config.dataset_note}") + (f"\n{notes}" if notes else "")
        gr.Textbox(value=text, label="This Space", interactive=False, elem_id="about-space")
        unreadable = gr.Textbox(
            label="Stored files this Space could not read",
            visible=False,
            interactive=False,
            lines=3,
            max_lines=20,
            elem_id="about-unreadable",
        )
    return AboutTab(banner, unreadable)
