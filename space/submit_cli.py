"""``rqbench submit PATH [--space URL]``: validate a submission, pack it into the single-file form, send it.

The last step of the one path from a model's RQs to a leaderboard row
(docs/evaluate.md, "From generation to a leaderboard row"). ``PATH`` is a
submission folder (``metadata.json`` + ``submission.jsonl``, what ``rqbench
generate`` writes) or the single JSONL file. It is checked by the same code as
``rqbench validate`` (problems worded for this command line: flags, not the
page's checkbox), packed into the single-file form the Space stores (``--out``
keeps it), and sent:

- with ``--space URL``, to a running Space's Submit endpoint through
  ``gradio_client``: the Space runs its own checks (name, limits, duplicates,
  the same validator) and queues a request;
- without it, to the local store that ``rqbench space`` and ``rqbench worker``
  read, through the same ``SubmitFlow`` the Space's page uses.

Either way it prints the request id and how to follow it. A Space on the Hub
asks for a Hugging Face sign-in, which only its page gives: there, upload the
packed file on the Submit tab.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import tempfile
from pathlib import Path
from typing import Any

from rqbench.evaluate.generate.cli import add_dataset_options
from rqbench.paths import slug

# The Space's event (space/tabs/submit.py): (files, name, allow partial) -> (message, queue table, outcome).
SPACE_API_NAME = "/submit"


class SendFailed(RuntimeError):
    """The submission could not be handed over; the message says where and why, and nothing was queued."""


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "submission", type=Path, help="a submission folder (metadata.json + submission.jsonl) or the single JSONL file"
    )
    p.add_argument(
        "--space",
        metavar="URL",
        default=None,
        help="send it to this running Space (http://127.0.0.1:7860/, or a Space's address); default: the "
        "local store that 'rqbench space' and 'rqbench worker' read",
    )
    p.add_argument(
        "--name", default=None, help="who submits (offline names are not verified; default: your login name)"
    )
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="submit although some rq_ids are missing or failed (the coverage is shown beside every score)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="keep the packed single-file form here (the file a Space's Submit tab takes)",
    )
    p.add_argument("--store", type=Path, default=None, help="local store folder (default: RQB_HOME/space)")
    p.add_argument(
        "--no-dataset",
        action="store_true",
        help="with --space: check the format here and leave the rq_ids to the Space",
    )
    add_dataset_options(p, limit=False)


def send_to_space(url: str, packed: Path, name: str, allow_partial: bool, *, client_factory: Any = None) -> dict:
    """The Space's outcome (``SubmitOutcome.summary``) for ``packed``, or ``SendFailed`` naming the Space and why."""
    import httpx
    from gradio_client import Client, handle_file
    from gradio_client.exceptions import AppError

    try:
        client = (client_factory or Client)(url, verbose=False, download_files=False, analytics_enabled=False)
        _, _, outcome = client.predict([handle_file(str(packed))], name, allow_partial, api_name=SPACE_API_NAME)
    except (httpx.HTTPError, OSError) as exc:
        raise SendFailed(
            f"cannot reach the Space at {url} ({type(exc).__name__}: {exc}); is it running? "
            "'rqbench space' serves one on http://127.0.0.1:7860/"
        ) from exc
    except AppError as exc:
        raise SendFailed(
            f"the Space at {url} failed while handling the submission ({exc}); nothing was queued"
        ) from exc
    except ValueError as exc:  # no such endpoint, or not a Gradio app at all
        raise SendFailed(f"{url} does not take submissions as an RQ-Bench Space does ({exc})") from exc
    if not isinstance(outcome, dict) or "accepted" not in outcome:
        raise SendFailed(f"{url} answered, but not with an RQ-Bench submission outcome; is it an RQ-Bench Space?")
    return outcome


def _cli_wording(problem: str) -> str:
    """A problem the Space worded for its page, reworded for this command line (the flag, not the box)."""
    from rqbench.evaluate.generate.validation_report import PARTIAL_REMEDY_FLAG
    from rqbench.space.submit import PARTIAL_REMEDY_PAGE

    return problem.replace(PARTIAL_REMEDY_PAGE, PARTIAL_REMEDY_FLAG)


def _follow_lines(where: str, request_id: str, status: str, space_url: str | None) -> list[str]:
    if space_url:
        tab = space_url.rstrip("/") + "/?tab=submit"
        lines = [f"follow it on the Space's Submit tab ({tab}): the queue lists request {request_id} with its status"]
        if status == "review":
            lines.append("a maintainer reviews the flagged questions before anything is judged")
        lines.append("its row appears on the Leaderboard tab once the Space's worker has judged it")
        return lines
    lines = [f"follow it: rqbench worker --list{where} (the queue, with each request's status)"]
    if status == "review":
        lines.append(f"a maintainer reviews it first: rqbench worker --review{where}, then --approve {request_id}")
    lines += [
        f"price it: rqbench worker --dry-run{where}; judge it: rqbench worker --once --limit 1{where}",
        f"then see its row: rqbench space{where}",
    ]
    return lines


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark
    from rqbench.evaluate.generate.submission_files import write_single_file
    from rqbench.evaluate.generate.validate_cli import print_report

    for stream in (sys.stdout, sys.stderr):  # input echoed back must never stop the report mid-way
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    if args.no_dataset and args.space is None:
        print(
            "rqbench submit: --no-dataset needs --space (the local store checks rq_ids against a dataset, so give "
            "--dataset instead)",
            file=sys.stderr,
        )
        return 2
    bench = None
    if not args.no_dataset:
        try:
            bench = load_benchmark(args.dataset, args.revision)
        except DatasetError as exc:
            hint = " (--no-dataset checks the format here and leaves the rq_ids to the Space)" if args.space else ""
            print(f"rqbench submit: {exc}{hint}", file=sys.stderr)
            return 2
    from rqbench.evaluate.generate.submission_files import validate_submission

    report = validate_submission(args.submission, bench.rq_ids if bench else None, allow_partial=args.allow_partial)
    print_report(report)
    if not report.ok or report.metadata is None:
        print("rqbench submit: nothing was sent; fix the problems above and run it again", file=sys.stderr)
        return 1
    name = args.name or getpass.getuser()
    with tempfile.TemporaryDirectory(prefix="rqbench-submit-") as tmp:
        packed = args.out or Path(tmp) / f"{slug(report.metadata.model, max_len=80, empty='submission')}.jsonl"
        write_single_file(packed, report.metadata, report.entries)
        if args.out:
            print(f"packed {len(report.entries)} entries into {packed} (the single-file form)")
        try:
            if args.space:
                outcome = send_to_space(args.space, packed, name, args.allow_partial)
                where, store_desc = "", f"the Space at {args.space}"
            else:
                outcome, store_desc = _submit_locally(args, bench, packed, name)
                where = f" --store {args.store}" if args.store else ""
        except SendFailed as exc:
            print(f"rqbench submit: {exc}", file=sys.stderr)
            return 2
    if not outcome["accepted"]:
        errors = [_cli_wording(e) for e in outcome.get("errors") or [outcome.get("message", "")]]
        print(
            f"rqbench submit: {store_desc} refused it ({len(errors)} problem(s)); nothing was queued:", file=sys.stderr
        )
        for e in errors:
            print(f"  - {e}", file=sys.stderr)
        if args.space and any("Sign in with Hugging Face" in e for e in errors):
            print(
                "  this Space takes submissions from signed-in Hugging Face accounts, through its page: upload the "
                "single-file form there (--out FILE writes it)",
                file=sys.stderr,
            )
        return 1
    rid, status = outcome["request_id"], outcome["status"]
    held = "held for review" if status == "review" else "queued"
    print(
        f"request {rid} {held} in {store_desc}: {outcome['model']}, {outcome['instances']} instance(s) with five "
        f"RQs, status {status}"
    )
    if bench is None:  # checked here without the rq_ids: the Space's warnings are news
        for w in outcome.get("warnings") or []:
            print(f"  warning: {w}")
    print("\n".join(_follow_lines(where, rid, status, args.space)))
    return 0


def _submit_locally(args: argparse.Namespace, bench, packed: Path, name: str) -> tuple[dict, str]:
    """The local store's outcome for ``packed``, through the Space's own ``SubmitFlow`` (same checks, same queue)."""
    from rqbench.space.stores import SpaceStores
    from rqbench.space.submit import BenchmarkTarget, SubmitFlow, Submitter

    stores = SpaceStores.from_env(args.store)
    flow = SubmitFlow(
        stores, BenchmarkTarget(bench.repo, bench.revision, tuple(bench.rq_ids), bench.name, bench.version)
    )
    result = flow.submit(packed, Submitter(username=name), allow_partial=args.allow_partial)
    return result.summary(), f"the local store ({stores.backend})"
