"""The Annotate tab: blind pairwise judgments of non-obviousness, skips, export and deletion of one's own.

Which side shows the author-anchored RQ is settled per annotator and pair by
``rqbench.space.annotate``; the page never says which is which. The background
papers (title, abstract, section outline and text) stand beside the two RQs,
and the rubric beside the questions asked is the judges' own text
(``rqbench.prompts.rubric_scale``).
"""

import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gradio as gr

from rqbench.prompts import rubric_scale
from rqbench.space import annotate as an
from rqbench.space import browse, html_table
from rqbench.space.agreement_view import MATRIX_NOTE, annotation_matrices, matrix_cells
from rqbench.space.html_table import Cell, Header
from rqbench.space.tabs.common import banner_update, demo_banner, html_block, identity, section_accordions

if TYPE_CHECKING:
    from rqbench.space.ui import SpaceConfig, SpaceData

SOURCE_BOUND_CHOICES = ["not rated", "0", "1", "2", "3"]
CHOICE_LABELS = {"A is more non-obvious": "left", "B is more non-obvious": "right", "Tie": "tie"}


def rubric_texts() -> tuple[str, str]:
    """The non-obviousness and source-boundedness scales, as the judges' prompts state them."""
    return (
        rubric_scale("novelty_standalone", "non_obviousness:"),
        rubric_scale("narrowness_standalone", "Source-boundedness ("),
    )


# Above the pair's papers, and what the column shows before the first pair (a static text: the papers' render runs
# only when a pair is chosen)
PAIR_HINT = (
    "Tick your field(s) and press **Start / next pair**: the background papers of "
    "the pair appear below, and its two research questions on the right."
)
# In place of the whole annotating area when the stored results give no pair: what is missing, what would fill it
NO_PAIRS = (
    "Nothing to annotate yet: no stored results give a pair. A pair is the author-anchored research question "
    "beside a model's research question that a judge has scored, so pairs appear here once a submission has been "
    "judged (the worker judges the queue on the Submit tab, or rqbench evaluate writes results into this Space's "
    "store)."
)
# In the boxes a pair fills, before the first one is shown
BEFORE_START = "Tick your field(s) and press Start / next pair."
RQ_PLACEHOLDER = "A research question of the pair appears here once you press Start / next pair."


@dataclass
class AnnotateTab:
    """The field choices, the banner and the agreement tables, all of which follow the stored results."""

    config: "SpaceConfig"
    data: "SpaceData"
    fields: gr.CheckboxGroup
    agreement: gr.HTML
    matrix: gr.HTML
    banner: gr.HTML
    work: gr.Column
    empty: gr.HTML

    @property
    def reload_outputs(self) -> list[Any]:
        return [self.fields, self.agreement, self.matrix, self.banner, self.work, self.empty]

    def reloaded(self) -> tuple:
        """After ``data.refresh()``: the sub-fields that have pairs, the agreement tables, the banner; with no pair,
        the sentence saying so in place of the annotating area."""
        names = {p.model for p in self.data.pairs} | {r.judge.label for r in self.data.results}
        fields = an.subfields(self.data.pairs)
        return (
            gr.CheckboxGroup(choices=[(browse.subfield_label(f), f) for f in fields]),
            agreement_table(self.config, self.data),
            matrix_html(self.config, self.data),
            banner_update(names),
            gr.update(visible=bool(fields)),
            gr.update(value="" if fields else empty_html(), visible=not fields),
        )


def empty_html() -> str:
    """``NO_PAIRS`` in the tables' empty style."""
    return html_table.render_table([], [], empty=NO_PAIRS)


def agreement_table(config: "SpaceConfig", data: "SpaceData") -> str:
    """How often each judge's pick matches the annotators', from every stored judgment (the leaderboard's column)."""
    cells = an.agreement_cells(config.stores.annotations.judgments(), data.results)
    headers = [
        Header("Model"),
        Header("Setting"),
        Header("Judge"),
        Header("Agreement %", kind="num", title="Share of (annotator, instance) picks the judge matched"),
        Header("Picks", kind="num"),
    ]
    rows = [
        [
            Cell(str(model)),
            Cell(str(setting)),
            Cell(str(judge)),
            Cell(f"{value:.1f}", note=ci, kind="num"),
            Cell(str(n), kind="num"),
        ]
        for model, setting, judge, value, ci, n in an.agreement_rows(cells)
    ]
    return html_table.render_table(
        headers, rows, empty="No annotations yet: agreement appears with the first judgment."
    )


def matrix_html(config: "SpaceConfig", data: "SpaceData") -> str:
    """Who agrees with whom, per (model, setting): annotators and judges, as the expert study's matrix."""
    found = annotation_matrices(config.stores.annotations.judgments(), data.results, n_boot=config.n_boot)
    if not found:
        return html_table.render_table([], [], empty="No annotations yet: the matrix appears with the first judgment.")
    parts = []
    keys = sorted(found)
    for key in keys:
        matrix, names = found[key]
        headers, rows = matrix_cells(matrix, names)
        parts.append(
            f'<div class="rqb-block">Who agrees with whom on {escape(key[0])} ({escape(key[1])} judges)</div>'
            + html_table.render_table(headers, rows, caption=MATRIX_NOTE if key == keys[-1] else "", sticky_first=False)
        )
    return "".join(parts)


@dataclass
class _Widgets:
    """The tab's components, as ``_layout`` places them."""

    banner: gr.HTML
    name: gr.Textbox
    fields: gr.CheckboxGroup
    start: gr.Button
    status: gr.Textbox
    pair: gr.State
    shown_at: gr.State
    left: gr.Textbox
    right: gr.Textbox
    choice: gr.Radio
    sb_left: gr.Radio
    sb_right: gr.Radio
    comment: gr.Textbox
    save: gr.Button
    skip: gr.Button
    agreement: gr.HTML
    matrix: gr.HTML
    work: gr.Column
    empty: gr.HTML
    export: gr.Button
    export_file: gr.File
    confirm: gr.Checkbox
    delete: gr.Button


def _pair_papers(config: "SpaceConfig", data: "SpaceData", pair_id: str | None) -> None:
    """The background papers of the pair being judged (title, abstract, outline, section text); nothing without one."""
    pair = next((p for p in data.pairs if p.pair_id == pair_id), None)
    if pair is None:  # the column's hint (PAIR_HINT) says what to do
        return
    ref = browse.InstanceRef(pair.rq_id, pair.arxiv_id, pair.subfield, "", pair.background_paper_ids)
    views = browse.paper_views(ref, config.library)
    gr.Markdown(f"**Background papers** ({len(views)}): the only context both questions may use.")
    for k, pv in enumerate(views):
        with gr.Group():
            gr.Textbox(
                value=pv.title,
                label=f"Paper {k + 1}: {pv.paper_id}",
                interactive=False,
                elem_classes=["an-paper-title"],
            )
            gr.Textbox(value=pv.abstract, label="Abstract", interactive=False, max_lines=8)
            outline = " · ".join(name or "(unnamed section)" for name, _ in pv.sections)
            gr.Textbox(
                value=outline or "(no section text in the dataset)",
                label="Sections",
                interactive=False,
                elem_classes=["an-outline"],
            )
            with gr.Accordion("Section text", open=False):
                section_accordions(pv.sections)


def _layout(config: "SpaceConfig", data: "SpaceData") -> _Widgets:
    """The tab's page: who is annotating, the pair's papers beside its two RQs and the rubric, agreement, own data."""
    non_obvious_rubric, source_bound_rubric = rubric_texts()
    with gr.Tab("Annotate", id="annotate", elem_id="tab-annotate"):
        banner = demo_banner("annotate")
        gr.Markdown(
            "Compare two research questions about the same background papers. One was reconstructed from "
            "the real paper that cites them, one written by a model; which is which is not shown. Read the "
            "papers on the left, then say which question is more non-obvious, using the judges' own rubric."
        )
        # with no pair to annotate, the page load hides the whole area and shows NO_PAIRS instead
        empty = html_block("an-empty", visible=False)
        pair_state = gr.State(None)
        shown_state = gr.State(None)
        with gr.Column(elem_id="an-work") as work:
            with gr.Row(equal_height=True):
                name = gr.Textbox(label="Your name (offline only)", visible=not config.on_hub, elem_id="an-name")
                fields = gr.CheckboxGroup(label="Your field(s)", choices=[], elem_id="an-fields")
                start = gr.Button("Start / next pair", elem_id="an-start", scale=0, min_width=160)
            status = gr.Textbox(label="Status", interactive=False, placeholder=BEFORE_START, elem_id="an-status")
            with gr.Row():
                with gr.Column(scale=1, elem_id="an-papers"):
                    gr.Markdown(PAIR_HINT, elem_id="an-hint")
                    # on a new pair only, not on page load, when there is no pair yet (see tabs/browse.py)
                    gr.render(inputs=[pair_state], triggers=[pair_state.change])(
                        lambda pair_id: _pair_papers(config, data, pair_id)
                    )
                with gr.Column(scale=1):
                    left = gr.Textbox(
                        label="Research question A",
                        interactive=False,
                        lines=3,
                        placeholder=RQ_PLACEHOLDER,
                        elem_id="an-left",
                    )
                    right = gr.Textbox(
                        label="Research question B",
                        interactive=False,
                        lines=3,
                        placeholder=RQ_PLACEHOLDER,
                        elem_id="an-right",
                    )
                    choice = gr.Radio(
                        label="Which is more non-obvious?", choices=list(CHOICE_LABELS), elem_id="an-choice"
                    )
                    gr.Textbox(
                        value=non_obvious_rubric,
                        label="Non-obviousness: the judges' rubric",
                        interactive=False,
                        lines=5,
                        elem_id="an-rubric-nonobv",
                    )
                    with gr.Row():
                        sb_left = gr.Radio(
                            label="Source-boundedness of A (optional)",
                            choices=SOURCE_BOUND_CHOICES,
                            value="not rated",
                            elem_id="an-sb-left",
                        )
                        sb_right = gr.Radio(
                            label="Source-boundedness of B (optional)",
                            choices=SOURCE_BOUND_CHOICES,
                            value="not rated",
                            elem_id="an-sb-right",
                        )
                    with gr.Accordion(
                        "Source-boundedness: the judges' rubric (0 broad, 3 bound to one paper)", open=False
                    ):
                        gr.Textbox(
                            value=source_bound_rubric,
                            show_label=False,
                            interactive=False,
                            lines=5,
                            elem_id="an-rubric-sb",
                        )
                    comment = gr.Textbox(label="Comment (optional)", elem_id="an-comment")
                    with gr.Row():
                        save = gr.Button("Save judgment", variant="primary", elem_id="an-save")
                        skip = gr.Button("Skip this pair", elem_id="an-skip")
        gr.Markdown(
            "**Agreement.** How often each judge picks what the annotators picked (the leaderboard's human "
            "agreement column); then who agrees with whom, computed as in the expert study."
        )
        agreement = html_block("agreement-table", max_height=500)
        matrix = html_block("agreement-matrix", max_height=500)
        with gr.Accordion("Your judgments", open=False):
            export = gr.Button("Export my judgments", elem_id="an-export")
            export_file = gr.File(label="Export", interactive=False, elem_id="an-export-file")
            confirm = gr.Checkbox(label="Yes, delete all my judgments", value=False, elem_id="an-confirm")
            delete = gr.Button("Delete my judgments", variant="stop", elem_id="an-delete")
    return _Widgets(
        banner,
        name,
        fields,
        start,
        status,
        pair_state,
        shown_state,
        left,
        right,
        choice,
        sb_left,
        sb_right,
        comment,
        save,
        skip,
        agreement,
        matrix,
        work,
        empty,
        export,
        export_file,
        confirm,
        delete,
    )


class _Handlers:
    """What each button does: start, save, skip, export and delete, each answering with the next pair or a status."""

    def __init__(self, config: "SpaceConfig", data: "SpaceData"):
        self.config, self.data = config, data

    def agreement(self) -> tuple:
        return agreement_table(self.config, self.data), matrix_html(self.config, self.data)

    def _annotator(self, profile, name) -> tuple[str | None, str]:
        user, problem = identity(self.config, profile, name)
        return (an.annotator_id(user), "") if user else (None, problem)

    def _pair(self, pair_id):
        return next((p for p in self.data.pairs if p.pair_id == pair_id), None)

    def next_for(self, annotator: str, fields):
        self.data.refresh(recent=True)
        store = self.config.stores.annotations
        mine = store.judgments(annotator)
        pair = an.next_pair(
            self.data.pairs,
            annotator=annotator,
            fields=fields,
            judgments=store.judgments(),
            skips=store.skips(annotator),
        )
        if pair is None:
            named = ", ".join(map(browse.subfield_label, fields))
            done = f"No more pairs in {named} for you. You have made {len(mine)} judgment(s). Thank you!"
            return None, None, "", "", done
        left, right = an.shown_texts(annotator, pair)
        status = (
            f"Pair {len(mine) + 1} ({browse.subfield_label(pair.subfield)}). You have made {len(mine)} judgment(s)."
        )
        return pair.pair_id, datetime.now(timezone.utc).isoformat(), left, right, status

    def start(self, name, fields, profile: gr.OAuthProfile | None):
        annotator, problem = self._annotator(profile, name)
        if annotator is None:
            return None, None, "", "", problem
        if not fields:
            return None, None, "", "", "Choose at least one field."
        return self.next_for(annotator, fields)

    def save(self, name, fields, pair_id, shown_at, choice, sb_l, sb_r, comment, profile: gr.OAuthProfile | None):
        annotator, problem = self._annotator(profile, name)
        pair = self._pair(pair_id)
        if annotator is None or pair is None or choice not in CHOICE_LABELS:
            msg = problem or ("Press 'Start / next pair' first." if pair is None else "Pick A, B or Tie first.")
            return (
                pair_id,
                shown_at,
                gr.Textbox(),
                gr.Textbox(),
                msg,
                *self.agreement(),
                gr.Radio(),
                gr.Radio(),
                gr.Radio(),
                gr.Textbox(),
            )
        j = an.make_judgment(
            annotator,
            pair,
            CHOICE_LABELS[choice],
            shown_at=datetime.fromisoformat(shown_at),
            source_bound_left=None if sb_l in (None, "not rated") else int(sb_l),
            source_bound_right=None if sb_r in (None, "not rated") else int(sb_r),
            comment=comment or "",
        )
        self.config.stores.annotations.append(j)
        nxt = self.next_for(annotator, fields or [pair.subfield])
        reset = gr.Radio(value=None), gr.Radio(value="not rated"), gr.Radio(value="not rated"), gr.Textbox(value="")
        return (*nxt[:4], "Saved. " + nxt[4], *self.agreement(), *reset)

    def skip(self, name, fields, pair_id, profile: gr.OAuthProfile | None):
        annotator, problem = self._annotator(profile, name)
        pair = self._pair(pair_id)
        if annotator is None or pair is None:
            return pair_id, None, gr.Textbox(), gr.Textbox(), problem or "Nothing to skip."
        self.config.stores.annotations.skip(an.make_skip(annotator, pair))
        return self.next_for(annotator, fields or [pair.subfield])

    def export(self, name, profile: gr.OAuthProfile | None):
        annotator, problem = self._annotator(profile, name)
        if annotator is None:
            return None, problem
        folder = Path(tempfile.mkdtemp(prefix="rqbench-export-"))
        path = folder / "my-judgments.jsonl"
        path.write_bytes(self.config.stores.annotations.export(annotator))
        n = len(self.config.stores.annotations.judgments(annotator))
        return str(path), f"Exported {n} judgment(s)."

    def delete(self, name, confirm, profile: gr.OAuthProfile | None):
        annotator, problem = self._annotator(profile, name)
        if annotator is None:
            return problem, *self.agreement(), gr.Checkbox()
        if not confirm:
            return "Tick the box to confirm the deletion.", *self.agreement(), gr.Checkbox()
        n = self.config.stores.annotations.delete_annotator(annotator)
        return f"Deleted {n} judgment(s).", *self.agreement(), gr.Checkbox(value=False)


def build(config: "SpaceConfig", data: "SpaceData") -> AnnotateTab:
    """The tab: its page, and its buttons wired to their handlers."""
    w = _layout(config, data)
    h = _Handlers(config, data)
    pair_outputs = [w.pair, w.shown_at, w.left, w.right, w.status]
    w.start.click(h.start, [w.name, w.fields], pair_outputs)
    w.save.click(
        h.save,
        [w.name, w.fields, w.pair, w.shown_at, w.choice, w.sb_left, w.sb_right, w.comment],
        [*pair_outputs, w.agreement, w.matrix, w.choice, w.sb_left, w.sb_right, w.comment],
    )
    w.skip.click(h.skip, [w.name, w.fields, w.pair], pair_outputs)
    w.export.click(h.export, [w.name], [w.export_file, w.status])
    w.delete.click(h.delete, [w.name, w.confirm], [w.status, w.agreement, w.matrix, w.confirm])
    return AnnotateTab(config, data, w.fields, w.agreement, w.matrix, w.banner, w.work, w.empty)
