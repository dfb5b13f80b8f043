"""The progress panel: what ``rqbench start``'s background job is doing, above every tab, while the page is open.

The panel is drawn in the browser from ``GET progress.json`` (``progress_route``), a route of the Space that
reads the job's progress file; it goes through no Gradio queue. The page asks every ``POLL_MS`` while the job
runs and stops asking once it has ended. Each time a step or phase ends the panel fires its ``change`` event,
which the page answers by reading the stores again (``ui.build_app``), so the leaderboard, Browse and the plots
fill in as results land, with no reload and no restart.
"""

from __future__ import annotations

import time
from html import escape
from pathlib import Path

import gradio as gr

from rqbench.io import RecordError
from rqbench.progress import duration_words, read_progress, step_words
from rqbench.records.progress import JobProgress, PhaseProgress
from rqbench.space.safety import printable, redact

POLL_MS = 2000
ROUTE = "/progress.json"

STARTING = "Starting the background job (the sample build, then the demo evaluation)..."
LEAD = (
    "The sample is being built and judged in the background with the embedded model; the tabs fill in as "
    "results land. The embedded model cannot judge: nothing it scores is a result."
)

AFTER = (
    "What was finished is kept (the build's stages, every answered call): rerun the command to go on. The embedded "
    "model cannot judge: nothing it scored is a result."
)

CSS = """
.rqb-progress { border: 1px solid #9ab; background: #f4f8fb; color: #123; border-radius: 6px; padding: 8px 12px;
  font-size: 13px; line-height: 1.45; }
.rqb-progress ol { margin: 4px 0 0 18px; padding: 0; }
.rqb-progress ul { margin: 0 0 2px 18px; padding: 0; list-style: disc; }
.rqb-progress .rqb-failed { color: #9a1010; font-weight: 600; }
.rqb-progress .rqb-muted { color: #567; }
"""

# Runs once when the panel is drawn: fetch the progress, draw it, ask again while the job runs, and fire the
# panel's change event whenever a step or phase has ended since the last look (the page then re-reads the data).
POLLER = f"""
const body = element.querySelector('.rqb-progress-body') || element;
let seen = null;
async function look() {{
  let reply = null;
  try {{
    const r = await fetch('{ROUTE.lstrip("/")}', {{cache: 'no-store'}});
    if (r.ok) reply = await r.json();
  }} catch (e) {{ reply = null; }}
  if (reply === null) {{ setTimeout(look, {POLL_MS} * 3); return; }}
  body.innerHTML = reply.html;
  if (seen !== null && reply.stamp !== seen) trigger('change');
  seen = reply.stamp;
  if (reply.active) setTimeout(look, {POLL_MS});
}}
look();
"""


def stamp(job: JobProgress | None) -> str:
    """What changes when a step or phase ends (the page's cue to read the stores again)."""
    if job is None:
        return "none"
    ended = sum(s.status != "running" for s in job.steps) + sum(
        p.status not in ("waiting", "running") for p in job.phases
    )
    return f"{job.started_at:.3f}:{ended}:{job.status}"


def _phase_html(phase: PhaseProgress, job: JobProgress, now: float) -> str:
    steps = [s for s in job.steps if s.phase == phase.name]
    head = f"<strong>{escape(phase.name)}</strong> <span class='rqb-muted'>({escape(phase.command)})</span>: "
    if phase.status == "waiting":
        return f"<li>{head}waiting</li>"
    if phase.status == "done":
        took = duration_words((phase.finished_at or now) - (phase.started_at or now))
        note = f" <span class='rqb-muted'>({escape(_clean(phase.message))})</span>" if phase.message else ""
        return f"<li>{head}done in {took}, {len(steps)} step(s){note}</li>"
    if phase.status == "running":
        state = f"running for {duration_words(now - (phase.started_at or now))}"
    else:
        state = f"<span class='rqb-failed'>{phase.status}</span>"
    items = "".join(
        f"<li{' class=rqb-failed' if s.status == 'failed' else ''}>{escape(_clean(step_words(s, now)))}</li>"
        for s in steps
    )
    return f"<li>{head}{state}" + (f"<ul>{items}</ul>" if items else "") + "</li>"


def _clean(text: str) -> str:
    return printable(redact(text))[:600]


def failure_line(job: JobProgress) -> str | None:
    """``Failed at <phase> › <step>: <message>`` for a failed job (its failed step when one was counting)."""
    for phase in job.phases:
        if phase.status != "failed":
            continue
        step = next((s for s in job.steps if s.phase == phase.name and s.status == "failed"), None)
        where = f"{phase.name} › {step.name}" if step is not None else phase.name
        return f"Failed at {where}: {phase.message or 'no message'}"
    return None


def panel_html(job: JobProgress | None, now: float, problem: str = "") -> str:
    """The panel's body: the lead, then each phase with its steps' done/total and ETA, and a failure by name."""
    if job is None:
        return f"<div class='rqb-progress' role='status'>{escape(problem or STARTING)}</div>"
    elapsed = duration_words((job.updated_at if job.finished else now) - job.started_at)
    if job.status == "running":
        title = f"Background job running for {elapsed}."
    elif job.status == "done":
        title = f"Background job done in {elapsed}: the sample is built and judged."
    elif job.status == "stopped":
        title = f"Background job stopped after {elapsed}; rerun the command to resume."
    else:
        title = f"Background job failed after {elapsed}."
    failure = failure_line(job)
    parts = [
        "<div class='rqb-progress' role='status'>",
        f"<strong>{escape(title)}</strong> {escape(LEAD if job.status == 'running' else AFTER)}",
        f"<div class='rqb-failed' id='progress-failure'>{escape(_clean(failure))}</div>" if failure else "",
        "<ol>",
        *(_phase_html(p, job, now) for p in job.phases),
        "</ol>",
        f"<div class='rqb-muted'>Its full output: {escape(job.log)}</div>" if job.log else "",
        "</div>",
    ]
    return "".join(parts)


def progress_reply(path: Path, now: float | None = None) -> dict:
    """What ``GET progress.json`` answers: the panel's HTML, whether to ask again, and the stamp."""
    now = time.time() if now is None else now
    try:
        job = read_progress(path)
    except (RecordError, OSError) as exc:  # a file being replaced is never half-written; anything else is said
        return {
            "html": panel_html(None, now, f"The progress file cannot be read: {_clean(str(exc))}"),
            "active": True,
            "stamp": "unreadable",
        }
    return {"html": panel_html(job, now), "active": job is None or not job.finished, "stamp": stamp(job)}


def progress_route(path: Path):
    """The Space's ``GET /progress.json`` route over the job's progress file."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def endpoint(request):  # noqa: ARG001 - starlette passes the request
        return JSONResponse(progress_reply(path), headers={"Cache-Control": "no-store"})

    return Route(ROUTE, endpoint, methods=["GET"])


def build(path: Path) -> gr.HTML:
    """The panel, drawn at the top of the page; its ``change`` event means that a step or phase ended."""
    return gr.HTML(
        value=panel_html(read_progress_quietly(path), time.time()),
        html_template="<div class='rqb-progress-body'>${value}</div>",
        css_template=CSS,
        js_on_load=POLLER,
        elem_id="progress-panel",
        apply_default_css=False,
    )


def read_progress_quietly(path: Path) -> JobProgress | None:
    """The progress as the page is built (None when it cannot be read yet: the poller says why)."""
    try:
        return read_progress(path)
    except (RecordError, OSError):
        return None
