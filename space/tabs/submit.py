"""The Submit tab: upload a submission through ``SubmitFlow`` and watch the request queue.

The upload takes either form of a submission: the single file, or a submission
folder's ``metadata.json`` and ``submission.jsonl`` selected together. The
"Allow a partial submission" box is what the page's problems name for a
submission that lacks rq_ids. The Submit event is also the Space's API
(``api_name="submit"``: files, name, allow partial -> message, queue, outcome),
which ``rqbench submit --space URL`` calls through ``gradio_client``.

Everything sent back to the page goes through ``printable``: a lone surrogate
typed or uploaded anywhere becomes U+FFFD in the reply instead of an encoding
error that would break the event stream. One validation runs at a time.
"""

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import gradio as gr
import pandas as pd
from gradio.utils import get_upload_folder

from rqbench.space.memo import ViewCache
from rqbench.space.safety import printable, redact
from rqbench.space.submit import (
    PARTIAL_BOX,
    REQUEST_COLUMNS,
    SubmitFlow,
    SubmitOutcome,
    Submitter,
    account_created_at,
)
from rqbench.space.submit import (
    requests_rows as public_rows,
)
from rqbench.space.submit_cli import SPACE_API_NAME
from rqbench.space.tabs.common import READ_ONLY, demo_banner, identity

if TYPE_CHECKING:
    from rqbench.space.records import SubmissionRequest
    from rqbench.space.ui import SpaceConfig, SpaceData

log = logging.getLogger(__name__)

# The Submit event's name: the Space's one public API endpoint, which ``rqbench submit --space`` calls
API_NAME = SPACE_API_NAME.removeprefix("/")


@dataclass
class SubmitTab:
    """The queue table, which the page load fills."""

    requests: gr.Dataframe


def identity_note(config: "SpaceConfig") -> str:
    """Who counts as one submitter, said plainly."""
    if config.on_hub:
        return (
            "The daily limit is per Hugging Face account, and a model name belongs to the account that first "
            "submitted it. Submissions whose questions look aimed at the judges are held for a maintainer's "
            "review."
        )
    return (
        "Offline there is no sign-in: the name you type is not verified, so the daily limit and model-name "
        "ownership hold per typed name, and typing another name gets around both."
    )


def queue_rows(read: "Callable[[], list[SubmissionRequest]]") -> pd.DataFrame:
    """Every readable request ``read`` gives (the store now, or as the page load last read it) with its status
    and failure or review reason (never a contact); an unreadable request file is named on the About tab, and a
    store outage leaves the queue empty."""
    try:
        rows = public_rows(read())
    except Exception as exc:  # the rest of the page (and the submit reply) must still be sent
        log.warning("the request queue cannot be read: %s", redact(str(exc)))
        rows = []
    return pd.DataFrame(rows, columns=REQUEST_COLUMNS)


def discard_uploads(paths: Iterable[str] | None, upload_folder: str | Path | None = None) -> None:
    """Delete the uploaded files once they are stored in the private store: Gradio keeps every upload until its
    cache is swept. A refused upload is kept, since the page still lists it for a retry (with "Allow a partial
    submission" ticked, say); the sweep removes it. Only files inside Gradio's upload folder are touched."""
    folder = Path(upload_folder or get_upload_folder()).resolve()
    for p in paths or ():
        path = Path(p).resolve()
        if folder not in path.parents:
            continue
        try:
            path.unlink(missing_ok=True)
            if path.parent != folder:
                path.parent.rmdir()  # Gradio's folder for this one upload, when nothing else is in it
        except OSError as exc:  # not empty, or already swept: the cache sweep (ui.DELETE_CACHE) gets the rest
            log.debug("upload %s not removed: %s", path, exc)


def build(config: "SpaceConfig", data: "SpaceData") -> SubmitTab:
    """The tab; without a benchmark it says why submissions are closed and the button stays off. The queue is
    listed when the tab is opened (not with the page load), from the requests store as last read
    (``SpaceData.requests``, a few seconds old at most), one table per read for every visitor."""
    flow = (
        SubmitFlow(
            config.stores, config.target, config.policy, **({"validator": config.validator} if config.validator else {})
        )
        if config.target is not None
        else None
    )
    with gr.Tab("Submit", id="submit", elem_id="tab-submit") as tab:
        demo_banner("submit", config.worker_judges, lead="Submissions on this Space are judged by")
        if config.target is None:
            gr.Textbox(
                value="No benchmark is loaded, so submissions cannot be checked. " + config.dataset_note,
                label="Submissions are closed",
                interactive=False,
            )
        else:
            gr.Markdown(
                f"Upload a submission for `{config.target.label}` "
                f"({len(config.target.rq_ids)} instances), in either form: the folder `rqbench generate` writes "
                "(select its `metadata.json` and `submission.jsonl` together), or one JSON Lines file whose first "
                'line is the metadata record (`"kind": "metadata"`) followed by one line per rq_id with five research '
                "questions (`rqbench submit FOLDER --out FILE` packs a folder into it). "
                f"Limit: {config.policy.max_bytes // (1024 * 1024)} MB, "
                f"{config.policy.per_user_per_day} submission per user per day. Scores are always "
                "recomputed by the worker. " + identity_note(config),
                elem_id="sub-intro",
            )
        sub_name = gr.Textbox(
            label="Your name (offline: names are not verified)", visible=not config.on_hub, elem_id="sub-name"
        )
        upload = gr.File(
            label="Submission: one .jsonl file, or metadata.json and submission.jsonl together",
            file_types=[".jsonl", ".json"],
            file_count="multiple",
            type="filepath",
            elem_id="sub-file",
        )
        partial = gr.Checkbox(
            label=f"{PARTIAL_BOX} (some rq_ids missing or failed; the coverage is shown beside every score)",
            value=False,
            elem_id="sub-partial",
        )
        submit_btn = gr.Button("Submit", variant="primary", elem_id="sub-button", interactive=config.target is not None)
        submit_out = gr.Textbox(label="Result", lines=6, interactive=False, elem_id="sub-result")
        outcome = gr.JSON(visible=False, elem_id="sub-outcome")  # the same outcome as data, for API clients
        req_refresh = gr.Button("Refresh queue", elem_id="req-refresh")
        req_table = gr.Dataframe(
            headers=REQUEST_COLUMNS, label="Requests", interactive=False, elem_id="requests-table", datatype="str"
        )

    def closed(text: str) -> tuple[str, pd.DataFrame, dict]:
        return text, requests_rows(), SubmitOutcome(False, [text]).summary()

    def do_submit(paths, name, allow_partial, profile: gr.OAuthProfile | None):
        reply = checked(paths, name, allow_partial, profile)
        if reply[2].get("accepted"):
            discard_uploads(paths)  # stored in the private store; a refused upload stays for the retry (the box
            # ticked, say) until the cache sweep (ui.DELETE_CACHE) removes it
        return reply

    def checked(paths, name, allow_partial, profile):
        if flow is None:
            return closed("No benchmark is loaded; submissions are closed.")
        user, problem = identity(config, profile, name)
        if user is None:
            return closed(problem)
        created = None
        if config.on_hub and config.hub_api is not None:
            try:
                created = account_created_at(config.hub_api, user)
            except Exception as exc:  # the Hub could not say; the flow rejects and says why
                log.warning("account age lookup failed for %s: %s", user, redact(str(exc)))
        who = Submitter(username=user, signed_in=config.on_hub, account_created=created)
        try:
            result = flow.submit(paths, who, allow_partial=bool(allow_partial))
        except Exception as exc:  # a store outage, say: the submitter gets a reason, the log the traceback
            log.exception("submission from %r failed", printable(user))
            return closed(
                f"The submission could not be processed ({type(exc).__name__}); nothing was queued. Try again later."
            )
        summary = result.summary()
        summary["message"] = printable(redact(summary["message"]))
        summary["errors"] = [printable(redact(e)) for e in summary["errors"]]
        return summary["message"], requests_rows(), summary

    def requests_rows():
        return queue_rows(config.stores.requests.all)

    submit_btn.click(
        do_submit, [upload, sub_name, partial], [submit_out, req_table, outcome], concurrency_limit=1, api_name=API_NAME
    )
    listed: ViewCache[pd.DataFrame] = ViewCache(max_entries=1)

    def queue_shown():
        try:
            read, (requests, _) = data.requests.stamped()
        except Exception as exc:  # an outage: the queue shows empty, the About tab says why (SpaceData.unreadable)
            log.warning("the request queue cannot be read: %s", redact(str(exc)))
            return queue_rows(lambda: [])
        return listed.get(read, "queue", lambda: queue_rows(lambda: requests))

    tab.select(queue_shown, None, req_table, **READ_ONLY)
    req_refresh.click(requests_rows, None, req_table, **READ_ONLY)
    return SubmitTab(req_table)
