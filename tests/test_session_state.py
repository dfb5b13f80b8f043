"""The Space's lean session state: Gradio's fields, the session's components and state, no configuration copy."""

from __future__ import annotations

import gradio as gr
from gradio import state_holder

from rqbench.space import session_state
from rqbench.space.session_state import LeanSessionState


def _demo() -> gr.Blocks:
    with gr.Blocks() as demo:
        box = gr.Textbox(value="start")
        kept = gr.State(value={"n": 0})
        shown = gr.HTML()
        box.change(lambda q, s: (f"<p>{q}</p>", s), [box, kept], [shown, kept])
    return demo


def _gradios(demo):
    """Gradio's own session state, whatever ``install`` did to the module's name."""
    return LeanSessionState.__mro__[1](demo)


def test_it_has_every_field_of_gradios_session_state():
    """A Gradio upgrade that gives its session state a new field fails here, not in a visitor's session."""
    demo = _demo()
    assert set(vars(LeanSessionState(demo))) == set(vars(_gradios(demo)))


def test_components_and_state_are_kept_and_nothing_is_copied():
    demo = _demo()
    lean, real = LeanSessionState(demo), _gradios(demo)
    assert real.config_values and lean.config_values == {}  # Gradio copies every component's configuration
    box_id, state_id, html_id = (b._id for b in demo.blocks.values() if isinstance(b, (gr.Textbox, gr.State, gr.HTML)))
    # a gr.State value is the session's own, a deep copy of its starting value
    assert lean[state_id] == {"n": 0} and lean[state_id] is not demo.blocks[state_id].value
    lean[state_id] = {"n": 1}
    assert lean[state_id] == {"n": 1} and _gradios(demo)[state_id] == {"n": 0}
    # a component an event replaced is the session's own; the page's stays as built
    replaced = gr.Textbox(value="mine", render=False)
    lean[box_id] = replaced
    assert lean[box_id] is replaced and demo.blocks[box_id].value == "start"
    # the hooks that fill Gradio's copy keep nothing here
    lean._update_value_in_config(html_id, "<p>" + "x" * 100_000 + "</p>")
    lean._update_config(box_id)
    assert lean.config_values == {}


def test_install_makes_gradios_holder_create_lean_sessions():
    session_state.install()
    demo = _demo()
    holder = state_holder.StateHolder()
    holder.set_blocks(demo)
    assert isinstance(holder["visitor"], LeanSessionState)
