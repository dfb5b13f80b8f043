"""What more than one tab needs: who the user is, and a background paper's sections on the page."""

from collections.abc import Iterable
from typing import TYPE_CHECKING

import gradio as gr

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig


def identity(config: "SpaceConfig", profile: gr.OAuthProfile | None, local_name: str) -> tuple[str | None, str]:
    """(user name, problem): the Hub account when on the Hub, the typed name offline."""
    if config.on_hub:
        if profile is None:
            return None, "Sign in with Hugging Face first."
        return profile.username, ""
    name = (local_name or "").strip()
    if not name:
        return None, "Type a name first (offline, no sign-in is needed)."
    return name, ""


def section_accordions(sections: Iterable[tuple[str, str]]) -> None:
    """One folded accordion per section; the text goes into a Textbox, never Markdown."""
    for name, text in sections:
        with gr.Accordion(name or "(unnamed section)", open=False):
            gr.Textbox(value=text, show_label=False, interactive=False, max_lines=20)
