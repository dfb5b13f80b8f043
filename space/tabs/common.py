"""What more than one tab needs: who the user is, a background paper's sections, the demo-model banner, tables."""

from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING

import gradio as gr

from rqbench.demo import banner_text
from rqbench.space.html_table import TABLE_CSS

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig

# The keyword arguments of an event that only shows what is already computed (a page of the table, an RQ, a figure
# drawn once per data version) and changes nothing: it runs outside Gradio's queue, one HTTP request
# (``POST .../run/predict``) instead of a join and an event stream, the queue's bookkeeping that made a crowd's
# filters wait (docs/benchmarks.md, "The Space under a crowd"). Such an event has no stream to carry a toast
# (``gr.Warning``): what it must say goes into its own output. While one runs, only a visitor's latest edit waits.
READ_ONLY = {"queue": False, "trigger_mode": "always_last"}
# A read-only event whose every output is already what the page shows (HTML strings, a whole page number): Gradio's
# postprocessing of each output (a hop to a worker thread, a search of the HTML for script tags, a walk through it for
# files) is skipped. An output that needs it (a figure, a table component) must not be given this.
AS_SHOWN = {**READ_ONLY, "postprocess": False}


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


def section_reader(sections: Iterable[tuple[str, str]], key: str) -> None:
    """The section names on one line of buttons, and the chosen section's text below (a Textbox, never Markdown)."""
    texts = {name or "(unnamed section)": text for name, text in sections}
    if not texts:
        return
    pick = gr.Radio(choices=list(texts), value=None, label="Read a section", key=f"{key}-pick")
    shown = gr.Textbox(visible=False, show_label=False, interactive=False, max_lines=20, key=f"{key}-text")
    pick.change(lambda name: gr.Textbox(value=texts.get(name, ""), visible=bool(name)), pick, shown, **READ_ONLY)


def section_accordions(sections: Iterable[tuple[str, str]]) -> None:
    """One folded accordion per section; the text goes into a Textbox, never Markdown."""
    for name, text in sections:
        with gr.Accordion(name or "(unnamed section)", open=False):
            gr.Textbox(value=text, show_label=False, interactive=False, max_lines=20)


BANNER_CSS = """
.rqb-demo { border: 1px solid #d9a400; background: #fff6d6; color: #4a3b00; border-radius: 6px; padding: 8px 12px;
  font-size: 13px; line-height: 1.4; }
"""


def banner_html(names: Iterable[str], *, lead: str | None = None) -> str:
    """The demo-model banner as HTML (escaped), or an empty string when none of ``names`` is a demo model."""
    text = banner_text(names) if lead is None else banner_text(names, lead=lead)
    if not text:
        return ""
    return f'<div class="rqb-demo" role="note"><strong>Demo model: not results.</strong> {escape(text)}</div>'


def demo_banner(tab: str, names: Iterable[str] = (), *, lead: str | None = None) -> gr.HTML:
    """The banner at the top of a tab; the page load fills it (``banner_update``) and hides it when empty."""
    value = banner_html(names, lead=lead)
    return gr.HTML(
        value=value,
        visible=bool(value),
        elem_id=f"demo-banner-{tab}",
        elem_classes=["demo-banner"],
        css_template=BANNER_CSS,
        js_on_load=None,
    )


def banner_update(names: Iterable[str]) -> gr.HTML:
    value = banner_html(names)
    return gr.HTML(value=value, visible=bool(value))


def html_block(elem_id: str, value: str = "", *, max_height: int = 720, visible: bool = True) -> gr.HTML:
    """An HTML component styled for ``rqbench.space.html_table`` tables, scrolling past ``max_height`` pixels."""
    css = TABLE_CSS.replace("var(--rqb-max-height, 720px)", f"{max_height}px")
    return gr.HTML(
        value=value, elem_id=elem_id, css_template=css, js_on_load=None, apply_default_css=False, visible=visible
    )
