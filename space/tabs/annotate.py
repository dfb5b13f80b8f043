"""The Annotate tab: blind pairwise judgments of non-obviousness, skips, export and deletion of one's own.

Which side shows the author-anchored RQ is settled per annotator and pair by
``rqbench.space.annotate``; the page never says which is which.
"""

import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gradio as gr
import pandas as pd
from rqbench.space import annotate as an
from rqbench.space import browse
from rqbench.space.tabs.common import identity, section_accordions

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig, SpaceData

SOURCE_BOUND_CHOICES = ["not rated", "0", "1", "2", "3"]
CHOICE_LABELS = {"A is more non-obvious": "left", "B is more non-obvious": "right", "Tie": "tie"}


@dataclass
class AnnotateTab:
    """The field choices and the agreement table, both of which follow the stored results."""

    config: "SpaceConfig"
    data: "SpaceData"
    fields: gr.CheckboxGroup
    agreement: gr.Dataframe

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.fields, self.agreement]

    def reloaded(self) -> tuple:
        """After ``data.refresh()``: the sub-fields that have pairs, and the agreement table."""
        return gr.CheckboxGroup(choices=an.subfields(self.data.pairs)), agreement_table(self.config, self.data)


def agreement_table(config: "SpaceConfig", data: "SpaceData") -> pd.DataFrame:
    """How often each judge's pick matches the annotators', from every stored judgment."""
    cells = an.agreement_cells(config.stores.annotations.judgments(), data.results)
    return pd.DataFrame(an.agreement_rows(cells), columns=an.AGREEMENT_COLUMNS)


def build(config: "SpaceConfig", data: "SpaceData") -> AnnotateTab:
    """The tab: start, save, skip, export and delete, each answering with the next pair or a status line."""
    with gr.Tab("Annotate", id="annotate", elem_id="tab-annotate"):
        gr.Markdown("Compare two research questions about the same background papers. One was "
                    "reconstructed from a real paper, one written by a model; which is which is not shown.")  # fmt: skip
        a_name = gr.Textbox(label="Your name (offline only)", visible=not config.on_hub, elem_id="an-name")
        a_fields = gr.CheckboxGroup(label="Your field(s)", choices=[], elem_id="an-fields")
        a_start = gr.Button("Start / next pair", elem_id="an-start")
        a_status = gr.Textbox(label="Status", interactive=False, elem_id="an-status")
        pair_state = gr.State(None)
        shown_state = gr.State(None)
        with gr.Row():
            a_left = gr.Textbox(label="Research question A", interactive=False, lines=3, elem_id="an-left")
            a_right = gr.Textbox(label="Research question B", interactive=False, lines=3, elem_id="an-right")

        @gr.render(inputs=[pair_state])
        def _pair_papers(pair_id):
            pair = next((p for p in data.pairs if p.pair_id == pair_id), None)
            if pair is None:
                return
            ref = browse.InstanceRef(pair.rq_id, pair.arxiv_id, pair.subfield, "", pair.background_paper_ids)
            for pv in browse.paper_views(ref, config.library):
                with gr.Accordion(f"Background paper: {pv.paper_id}", open=True):
                    gr.Textbox(value=pv.title, label="Title", interactive=False)
                    gr.Textbox(value=pv.abstract, label="Abstract", interactive=False, max_lines=8)
                    section_accordions(pv.sections)

        a_choice = gr.Radio(label="Which is more non-obvious?", choices=list(CHOICE_LABELS), elem_id="an-choice")
        with gr.Row():
            a_sb_left = gr.Radio(label="Source-boundedness of A (optional, 0 broad - 3 bound)",
                                 choices=SOURCE_BOUND_CHOICES, value="not rated", elem_id="an-sb-left")  # fmt: skip
            a_sb_right = gr.Radio(label="Source-boundedness of B (optional)", choices=SOURCE_BOUND_CHOICES,
                                  value="not rated", elem_id="an-sb-right")  # fmt: skip
        a_comment = gr.Textbox(label="Comment (optional)", elem_id="an-comment")
        with gr.Row():
            a_submit = gr.Button("Save judgment", variant="primary", elem_id="an-save")
            a_skip = gr.Button("Skip this pair", elem_id="an-skip")
        a_agreement = gr.Dataframe(headers=an.AGREEMENT_COLUMNS, label="Human agreement with each judge",
                                   interactive=False, elem_id="agreement-table")  # fmt: skip
        with gr.Accordion("Your judgments", open=False):
            a_export = gr.Button("Export my judgments", elem_id="an-export")
            a_export_file = gr.File(label="Export", interactive=False, elem_id="an-export-file")
            a_confirm = gr.Checkbox(label="Yes, delete all my judgments", value=False, elem_id="an-confirm")
            a_delete = gr.Button("Delete my judgments", variant="stop", elem_id="an-delete")

    def agreement_value():
        return agreement_table(config, data)

    def _annotator(profile, name) -> tuple[str | None, str]:
        user, problem = identity(config, profile, name)
        return (an.annotator_id(user), "") if user else (None, problem)

    def next_for(annotator: str, fields):
        data.refresh()
        store = config.stores.annotations
        mine = store.judgments(annotator)
        pair = an.next_pair(data.pairs, annotator=annotator, fields=fields, judgments=store.judgments(),
                            skips=store.skips(annotator))  # fmt: skip
        if pair is None:
            done = (f"No more pairs in {', '.join(fields)} for you. "
                    f"You have made {len(mine)} judgment(s). Thank you!")  # fmt: skip
            return None, None, "", "", done
        left, right = an.shown_texts(annotator, pair)
        status = f"Pair {len(mine) + 1} ({pair.subfield}). You have made {len(mine)} judgment(s)."
        return pair.pair_id, datetime.now(timezone.utc).isoformat(), left, right, status

    def start(name, fields, profile: gr.OAuthProfile | None):
        annotator, problem = _annotator(profile, name)
        if annotator is None:
            return None, None, "", "", problem
        if not fields:
            return None, None, "", "", "Choose at least one field."
        return next_for(annotator, fields)

    def _reset():
        return gr.Radio(value=None), gr.Radio(value="not rated"), gr.Radio(value="not rated"), gr.Textbox(value="")

    def save(name, fields, pair_id, shown_at, choice, sb_l, sb_r, comment, profile: gr.OAuthProfile | None):
        annotator, problem = _annotator(profile, name)
        pair = next((p for p in data.pairs if p.pair_id == pair_id), None)
        if annotator is None or pair is None or choice not in CHOICE_LABELS:
            msg = problem or ("Press 'Start / next pair' first." if pair is None else "Pick A, B or Tie first.")
            return (pair_id, shown_at, gr.Textbox(), gr.Textbox(), msg, agreement_value(),
                    gr.Radio(), gr.Radio(), gr.Radio(), gr.Textbox())  # fmt: skip
        j = an.make_judgment(
            annotator, pair, CHOICE_LABELS[choice], shown_at=datetime.fromisoformat(shown_at),
            source_bound_left=None if sb_l in (None, "not rated") else int(sb_l),
            source_bound_right=None if sb_r in (None, "not rated") else int(sb_r), comment=comment or "",
        )  # fmt: skip
        config.stores.annotations.append(j)
        nxt = next_for(annotator, fields or [pair.subfield])
        return (*nxt[:4], "Saved. " + nxt[4], agreement_value(), *_reset())

    def skip(name, fields, pair_id, profile: gr.OAuthProfile | None):
        annotator, problem = _annotator(profile, name)
        pair = next((p for p in data.pairs if p.pair_id == pair_id), None)
        if annotator is None or pair is None:
            return pair_id, None, gr.Textbox(), gr.Textbox(), problem or "Nothing to skip."
        config.stores.annotations.skip(an.make_skip(annotator, pair))
        return next_for(annotator, fields or [pair.subfield])

    def export(name, profile: gr.OAuthProfile | None):
        annotator, problem = _annotator(profile, name)
        if annotator is None:
            return None, problem
        folder = Path(tempfile.mkdtemp(prefix="rqbench-export-"))
        path = folder / "my-judgments.jsonl"
        path.write_bytes(config.stores.annotations.export(annotator))
        n = len(config.stores.annotations.judgments(annotator))
        return str(path), f"Exported {n} judgment(s)."

    def delete(name, confirm, profile: gr.OAuthProfile | None):
        annotator, problem = _annotator(profile, name)
        if annotator is None:
            return problem, agreement_value(), gr.Checkbox()
        if not confirm:
            return "Tick the box to confirm the deletion.", agreement_value(), gr.Checkbox()
        n = config.stores.annotations.delete_annotator(annotator)
        return f"Deleted {n} judgment(s).", agreement_value(), gr.Checkbox(value=False)

    pair_outputs = [pair_state, shown_state, a_left, a_right, a_status]
    a_start.click(start, [a_name, a_fields], pair_outputs)
    a_submit.click(
        save, [a_name, a_fields, pair_state, shown_state, a_choice, a_sb_left, a_sb_right, a_comment],
        [*pair_outputs, a_agreement, a_choice, a_sb_left, a_sb_right, a_comment],
    )  # fmt: skip
    a_skip.click(skip, [a_name, a_fields, pair_state], pair_outputs)
    a_export.click(export, [a_name], [a_export_file, a_status])
    a_delete.click(delete, [a_name, a_confirm], [a_status, a_agreement, a_confirm])
    return AnnotateTab(config, data, a_fields, a_agreement)
