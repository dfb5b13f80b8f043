"""The Gradio Blocks of the Space: Leaderboard, Submit, Browse, Plots and Annotate tabs.

``build_app(config)`` has no side effects beyond building the page, so tests
and ``rqbench space`` build it with their own stores; ``space/app.py`` builds
it from the environment on a Hugging Face Space. Every text from a paper or a
submission goes into a Textbox or a ``str`` table cell, never into Markdown
or HTML.
"""

import logging
import os
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd
from rqbench.evaluate.summary import COMBINED, SummaryRow, summarize
from rqbench.space import annotate as an
from rqbench.space import browse, plots
from rqbench.space import leaderboard as lb
from rqbench.space.safety import redact
from rqbench.space.stores import SpaceStores
from rqbench.space.submit import (
    REQUEST_COLUMNS,
    BenchmarkTarget,
    SubmitFlow,
    SubmitPolicy,
    Submitter,
    account_created_at,
    requests_table,
)

from rqbench.records import CitedPaper, ResultsFile

log = logging.getLogger(__name__)

TAB_IDS = ("leaderboard", "submit", "browse", "plots", "annotate", "about")
SOURCE_BOUND_CHOICES = ["not rated", "0", "1", "2", "3"]
CHOICE_LABELS = {"A is more non-obvious": "left", "B is more non-obvious": "right", "Tie": "tie"}


@dataclass
class SpaceConfig:
    """What one running Space needs. ``on_hub`` turns on sign-in and the account-age check."""

    stores: SpaceStores
    target: BenchmarkTarget | None = None
    library: Mapping[str, CitedPaper] = field(default_factory=dict)
    policy: SubmitPolicy = field(default_factory=SubmitPolicy)
    on_hub: bool = False
    hub_api: Any = None
    validator: Any = None
    title: str = "RQ-Bench"
    n_boot: int = 500
    dataset_note: str = ""


class SpaceData:
    """Results, summary rows and derived tables, recomputed only when the stored results change."""

    def __init__(self, config: SpaceConfig):
        self.config = config
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self.results: list[ResultsFile] = []
        self.problems: list[str] = []
        self.rows: list[SummaryRow] = []
        self.table = lb.build_table([])
        self.pairs: list[an.Pair] = []
        self.index: dict[str, browse.InstanceRef] = {}

    def refresh(self) -> "SpaceData":
        with self._lock:
            results, problems = self.config.stores.results.load()
            judgments = self.config.stores.annotations.judgments()
            key = (
                tuple(sorted((r.submission_hash, r.judge.label, r.judge.setting, r.created_at.isoformat())
                             for r in results)),
                tuple(j.judgment_id for j in judgments),
            )  # fmt: skip
            if key == self._key:
                return self
            self.results, self.problems = results, problems
            try:
                self.rows = summarize(results, n_boot=self.config.n_boot) if results else []
            except ValueError as exc:  # two files for one judge, mixed revisions: say which, show nothing wrong
                self.problems = [*problems, f"results could not be summarised: {exc}"]
                self.rows = []
            cells = an.agreement_cells(judgments, results) if judgments else {}
            self.table = lb.build_table(self.rows, cells)
            self.pairs = an.build_pairs(results)
            self.index = browse.index_instances(results)
            self._key = key
            return self


def _display(df: pd.DataFrame) -> pd.DataFrame:
    """Missing figures as empty cells rather than NaN."""
    return df.astype(object).where(df.notna(), None)


def _datatypes(columns: list[str]) -> list[str]:
    numeric = set(lb.numeric_columns())
    return ["number" if c in numeric else "str" for c in columns]


def _csv_file(df: pd.DataFrame) -> str:
    folder = Path(tempfile.gettempdir()) / "rqbench-space"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"leaderboard-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%f}.csv"
    path.write_bytes(lb.to_csv(df))
    return str(path)


def _identity(config: SpaceConfig, profile: gr.OAuthProfile | None, local_name: str) -> tuple[str | None, str]:
    """(user name, problem): the Hub account when on the Hub, the typed name offline."""
    if config.on_hub:
        if profile is None:
            return None, "Sign in with Hugging Face first."
        return profile.username, ""
    name = (local_name or "").strip()
    if not name:
        return None, "Type a name first (offline, no sign-in is needed)."
    return name, ""


def build_app(config: SpaceConfig) -> gr.Blocks:
    """The whole Space as one Blocks object."""
    data = SpaceData(config)
    flow = (
        SubmitFlow(config.stores, config.target, config.policy, **({"validator": config.validator} if config.validator else {}))
        if config.target is not None
        else None
    )

    with gr.Blocks(title=config.title, analytics_enabled=False) as demo:
        gr.Markdown(f"# {config.title}\nResearch-question generation, judged for novelty and narrowness. "
                    "Every figure is recomputed from the stored results files.")  # fmt: skip
        if config.on_hub:
            gr.LoginButton()
        with gr.Tabs(selected="leaderboard", elem_id="tabs") as tabs:
            # ---------------------------------------------------------------- leaderboard
            with gr.Tab("Leaderboard", id="leaderboard", elem_id="tab-leaderboard"):
                with gr.Row():
                    search = gr.Textbox(label="Search model", placeholder="model name", elem_id="lb-search", scale=2)
                    judges = gr.Dropdown(label="Judge", multiselect=True, value=[COMBINED], choices=[COMBINED],
                                         allow_custom_value=True, elem_id="lb-judge")  # fmt: skip
                    settings = gr.Dropdown(label="Setting", multiselect=True, value=[],
                                           choices=["standalone", "comparative"], elem_id="lb-setting")  # fmt: skip
                    variants = gr.Dropdown(label="Prompt variant", multiselect=True, value=[],
                                           choices=["original", "revised", "custom"], elem_id="lb-variant")  # fmt: skip
                    types = gr.Dropdown(label="Model type", multiselect=True, value=[],
                                        choices=["open", "closed", "unknown"], elem_id="lb-type")  # fmt: skip
                with gr.Row():
                    groups = gr.CheckboxGroup(label="Columns", choices=[g for g in lb.GROUPS if g != "model"],
                                              value=[g for g in lb.DEFAULT_GROUPS if g != "model"],
                                              elem_id="lb-groups")  # fmt: skip
                    show_ci = gr.Checkbox(label="95% CI beside each figure", value=True, elem_id="lb-ci")
                    sort_by = gr.Dropdown(label="Sort by", choices=["(default)", *lb.numeric_columns(), "Model"],
                                          value="(default)", elem_id="lb-sort")  # fmt: skip
                    ascending = gr.Checkbox(label="Ascending", value=False, elem_id="lb-asc")
                    refresh = gr.Button("Refresh", elem_id="lb-refresh")
                table = gr.Dataframe(label="Leaderboard", interactive=False, elem_id="leaderboard-table",
                                     wrap=False, max_height=700, pinned_columns=1)  # fmt: skip
                download = gr.DownloadButton("Download CSV", elem_id="lb-download")
                problems = gr.Textbox(label="Results files that could not be read", visible=False, interactive=False,
                                      elem_id="lb-problems")  # fmt: skip

            # ---------------------------------------------------------------- submit
            with gr.Tab("Submit", id="submit", elem_id="tab-submit"):
                if config.target is None:
                    gr.Textbox(value="No benchmark is loaded, so submissions cannot be checked. " + config.dataset_note,
                               label="Submissions are closed", interactive=False)  # fmt: skip
                else:
                    gr.Markdown(
                        f"Upload a JSON Lines submission for **{config.target.repo}@{config.target.revision}** "
                        f"({len(config.target.rq_ids)} instances): a metadata line, then one line per rq_id with "
                        f"five research questions. Limit: {config.policy.max_bytes // (1024 * 1024)} MB, "
                        f"{config.policy.per_user_per_day} submission per user per day. Scores are always "
                        "recomputed by the worker."
                    )
                sub_name = gr.Textbox(label="Your name (offline only)", visible=not config.on_hub, elem_id="sub-name")
                upload = gr.File(label="Submission (.jsonl)", file_types=[".jsonl", ".json"], type="filepath",
                                 elem_id="sub-file")  # fmt: skip
                submit_btn = gr.Button("Submit", variant="primary", elem_id="sub-button",
                                       interactive=config.target is not None)  # fmt: skip
                submit_out = gr.Textbox(label="Result", lines=6, interactive=False, elem_id="sub-result")
                req_refresh = gr.Button("Refresh queue", elem_id="req-refresh")
                req_table = gr.Dataframe(headers=REQUEST_COLUMNS, label="Requests", interactive=False,
                                         elem_id="requests-table", datatype="str")  # fmt: skip

            # ---------------------------------------------------------------- browse
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
                            for name, text in pv.sections:
                                with gr.Accordion(name or "(unnamed section)", open=False):
                                    gr.Textbox(value=text, show_label=False, interactive=False, max_lines=20)

                b_scores = gr.Dataframe(label="Each model's five RQs, with every judge's scores and reasons",
                                        interactive=False, wrap=True, datatype="str", elem_id="br-scores")  # fmt: skip
                b_gt_scores = gr.Dataframe(label="The author-anchored RQ's scores", interactive=False, wrap=True,
                                           datatype="str", elem_id="br-gt-scores")  # fmt: skip

            # ---------------------------------------------------------------- plots
            with gr.Tab("Plots", id="plots", elem_id="tab-plots"):
                p_judge = gr.Dropdown(label="Judge", choices=[COMBINED], value=COMBINED, elem_id="pl-judge")
                p_scatter = gr.Plot(label="Novelty against narrowness", elem_id="pl-scatter")
                with gr.Row():
                    p_setting = gr.Dropdown(label="Setting", choices=["standalone", "comparative"], value="standalone")
                    p_dim = gr.Dropdown(label="Dimension", value="non_obviousness",
                                        choices=["non_obviousness", "originality", "gap_addressing",
                                                 "source_bound_score", "diagnostic_test_score"])  # fmt: skip
                p_bars = gr.Plot(label="Win / tie / lose per judge", elem_id="pl-bars")

            # ---------------------------------------------------------------- annotate
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
                            for name, text in pv.sections:
                                with gr.Accordion(name or "(unnamed section)", open=False):
                                    gr.Textbox(value=text, show_label=False, interactive=False, max_lines=20)

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

            with gr.Tab("About", id="about", elem_id="tab-about"):
                gr.Markdown(_ABOUT)
                gr.Textbox(value=f"Store: {config.stores.backend}. {config.dataset_note}", label="This Space",
                           interactive=False)  # fmt: skip

        # ================================================================ events
        lb_inputs = [search, judges, settings, variants, types, groups, show_ci, sort_by, ascending]

        def render_table(q, js, ss, vs, ts, gs, ci, by, asc):
            view = lb.View(search=q or "", judges=tuple(js or ()), settings=tuple(ss or ()), variants=tuple(vs or ()),
                           model_types=tuple(ts or ()), groups=("model", *(gs or ())), show_ci=bool(ci),
                           sort_by=None if by in (None, "", "(default)") else by, ascending=bool(asc))  # fmt: skip
            df = lb.render(data.table, view)
            return gr.Dataframe(value=_display(df), datatype=_datatypes(list(df.columns))), _csv_file(df)

        def load_all(q, js, ss, vs, ts, gs, ci, by, asc):
            data.refresh()
            ch = lb.choices(data.table)
            tbl, csv = render_table(q, js, ss, vs, ts, gs, ci, by, asc)
            prob = gr.Textbox(value=redact("\n".join(data.problems)), visible=bool(data.problems))
            judge_choices = sorted({COMBINED, *ch["judges"]}, key=lambda j: (j != COMBINED, j))
            subfields = browse.subfield_choices(data.index)
            return (
                tbl, csv, prob,
                gr.Dropdown(choices=judge_choices),
                gr.Dropdown(choices=judge_choices, value=COMBINED),
                gr.CheckboxGroup(choices=an.subfields(data.pairs)),
                agreement_value(),
                gr.Dropdown(choices=subfields),
            )  # fmt: skip

        def agreement_value():
            cells = an.agreement_cells(config.stores.annotations.judgments(), data.results)
            return pd.DataFrame(an.agreement_rows(cells), columns=an.AGREEMENT_COLUMNS)

        load_outputs = [table, download, problems, judges, p_judge, a_fields, a_agreement, b_sub]
        for comp in (search,):
            comp.submit(render_table, lb_inputs, [table, download])
        for comp in (judges, settings, variants, types, groups, show_ci, sort_by, ascending):
            comp.change(render_table, lb_inputs, [table, download])
        search.change(render_table, lb_inputs, [table, download])
        refresh.click(load_all, lb_inputs, load_outputs)

        # -- submit
        def do_submit(path, name, profile: gr.OAuthProfile | None):
            if flow is None:
                return "No benchmark is loaded; submissions are closed.", requests_rows()
            user, problem = _identity(config, profile, name)
            if user is None:
                return problem, requests_rows()
            created = None
            if config.on_hub and config.hub_api is not None:
                try:
                    created = account_created_at(config.hub_api, user)
                except Exception as exc:  # the Hub could not say; the flow rejects and says why
                    log.warning("account age lookup failed for %s: %s", user, redact(str(exc)))
            who = Submitter(username=user, signed_in=config.on_hub, account_created=created)
            outcome = flow.submit(path, who)
            return redact(outcome.message()), requests_rows()

        def requests_rows():
            return pd.DataFrame(requests_table(config.stores), columns=REQUEST_COLUMNS)

        submit_btn.click(do_submit, [upload, sub_name], [submit_out, req_table])
        req_refresh.click(requests_rows, None, req_table)

        # -- browse
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

        # -- plots
        def draw_scatter(judge):
            return plots.novelty_vs_narrowness(data.rows, judge=judge or COMBINED)

        def draw_bars(setting, dim):
            return plots.verdict_bars(data.rows, setting=setting, dimension=dim)

        p_judge.change(draw_scatter, p_judge, p_scatter)
        p_setting.change(draw_bars, [p_setting, p_dim], p_bars)
        p_dim.change(draw_bars, [p_setting, p_dim], p_bars)

        # -- annotate
        def _annotator(profile, name) -> tuple[str | None, str]:
            user, problem = _identity(config, profile, name)
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

        # -- page load, with the ?rq_id= deep link
        def on_load(q, js, ss, vs, ts, gs, ci, by, asc, request: gr.Request):
            base = load_all(q, js, ss, vs, ts, gs, ci, by, asc)
            rq_id = request.query_params.get("rq_id") if request is not None else None
            scatter = plots.novelty_vs_narrowness(data.rows)
            bars = plots.verdict_bars(data.rows)
            reqs = requests_rows()
            ref = data.index.get(rq_id or "")
            if ref is None:
                return (*base, gr.Tabs(), gr.Dropdown(), gr.Dropdown(), scatter, bars, reqs)
            papers = browse.paper_choices(data.index, ref.subfield)
            rqs = browse.rq_choices(data.index, ref.arxiv_id)
            return (
                *base[:-1],
                gr.Dropdown(choices=browse.subfield_choices(data.index), value=ref.subfield),
                gr.Tabs(selected="browse"),
                gr.Dropdown(choices=papers, value=ref.arxiv_id),
                gr.Dropdown(choices=rqs, value=ref.rq_id),
                scatter, bars, reqs,
            )  # fmt: skip

        demo.load(on_load, lb_inputs, [*load_outputs, tabs, b_paper, b_rq, p_scatter, p_bars, req_table])
    return demo


_ABOUT = """
**How the board is made.** Each submission's five RQs per instance are judged by LLM judges (standalone: one RQ
per call; comparative: the author-anchored RQ and the five together, unlabelled). Best@5 is the best of the five;
win/tie/lose compare it with the author-anchored RQ. Narrowness figures are lower-is-broader. Intervals are 95%
cluster-bootstrap intervals over source papers. The *combined* judge pools every (instance, judge) verdict.

**Contamination.** A row is flagged when the model's stated knowledge cutoff is after the earliest source paper
it was judged on.

**Human agreement.** Annotators compare the author-anchored RQ with a model's best-of-five RQ on
non-obviousness; the column shows how often each judge's pick matches theirs.
"""


def worker_thread(worker, interval_s: float) -> tuple[threading.Thread, threading.Event]:
    """Run a ``Worker`` in the background (the Space's schedule); set the event to stop it."""
    stop = threading.Event()
    t = threading.Thread(target=worker.run, kwargs={"interval_s": interval_s, "stop": stop}, daemon=True,
                         name="rqbench-worker")  # fmt: skip
    t.start()
    return t, stop


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def config_from_env(
    store: str | Path | None = None, results: str | Path | None = None, dataset: str | None = None
) -> SpaceConfig:
    """The configuration a Space (``SPACE_ID`` set) or ``rqbench space`` runs with.

    Hub: stores in ``RQB_SPACE_OWNER``'s dataset repos (``HF_TOKEN`` secret), sign-in required.
    Offline: the local store folder, no sign-in. The benchmark comes from ``--dataset`` or
    ``RQB_DATASET`` (+ ``RQB_DATASET_REVISION``), else the local sample; without one the
    Space still shows results but closes submissions.
    """
    from rqbench.evaluate.dataset import DatasetError, load_benchmark

    on_hub = bool(os.environ.get("SPACE_ID"))
    stores = SpaceStores.from_env(store, results)
    ref = dataset or os.environ.get("RQB_DATASET")
    target, library, note = None, {}, ""
    try:
        bench = load_benchmark(ref, revision=os.environ.get("RQB_DATASET_REVISION"))
        target = BenchmarkTarget(bench.repo, bench.revision, tuple(bench.rq_ids))
        library, note = bench.papers, f"Benchmark: {bench.repo}@{bench.revision} ({len(bench.instances)} instances)."
    except (DatasetError, FileNotFoundError, ValueError) as exc:
        note = f"Benchmark not loaded: {redact(str(exc))}"
        log.warning(note)
    hub_api = None
    if on_hub and os.environ.get("HF_TOKEN"):
        from huggingface_hub import HfApi

        hub_api = HfApi(token=os.environ["HF_TOKEN"])
    policy = SubmitPolicy(require_sign_in=on_hub, min_account_age_days=int(os.environ.get("RQB_MIN_ACCOUNT_DAYS", "7")))
    return SpaceConfig(stores=stores, target=target, library=library, policy=policy, on_hub=on_hub, hub_api=hub_api,
                       dataset_note=note)  # fmt: skip


def start_background_worker(config: SpaceConfig, *, dataset: str | None = None) -> threading.Event | None:
    """On a Space (or with ``RQB_SPACE_WORKER=1``), judge pending requests every ``RQB_WORKER_INTERVAL`` seconds."""
    if not (config.on_hub or env_flag("RQB_SPACE_WORKER")):
        return None
    from rqbench.space.worker import Worker, evaluate_judge

    from rqbench import paths

    judges = [j for j in os.environ.get("RQB_WORKER_JUDGES", "local,local@temperature=0.7").split(",") if j]
    judge = evaluate_judge(judges, ["standalone", "comparative"], dataset=dataset or os.environ.get("RQB_DATASET"))
    worker = Worker(config.stores, judge, work_dir=paths.home() / "space-work")
    _, stop = worker_thread(worker, float(os.environ.get("RQB_WORKER_INTERVAL", "300")))
    log.info("background worker %s started", worker.worker_id)
    return stop
