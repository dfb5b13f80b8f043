"""``rqbench build``: build RQ-Bench records from arXiv (online) or local LaTeX sources (offline).

    rqbench build --arxiv-query 'cat:cs.*' --from 2025-01-01 --to 2026-04-10 --out DIR
    rqbench build --papers DIR_OR_ID_FILE --out DIR [--allow-abstract-only]
    rqbench build --arxiv-query 'cat:cs.*' --since-release latest --dataset ORG/rq-bench --out DIR

A rerun resumes: finished work is kept and no LLM call is paid twice. A rolling
build (``--since-release``, ``--window``) sources only the papers of its window;
``rqbench publish`` then makes the next minor version holding the release's rows
and the new ones.
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path

from pydantic import ValidationError

ROLES = ("strong", "light", "labeller")


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def configure(parser: argparse.ArgumentParser) -> None:
    from rqbench.builder.build_config import DEFAULT_MAX_TOKENS, LLM_STAGES, STAGE_ORDER

    src = parser.add_argument_group("input (one of)")
    src.add_argument(
        "--papers", type=Path, help="offline: a folder of LaTeX folders (one per paper) or a file of arXiv ids"
    )
    src.add_argument("--arxiv-query", help="online: an arXiv search query, e.g. 'cat:cs.*'")
    src.add_argument("--from", dest="date_from", type=_date, help="online: first submission date (YYYY-MM-DD)")
    src.add_argument("--to", dest="date_to", type=_date, help="online: last submission date (YYYY-MM-DD)")
    roll = parser.add_argument_group("rolling releases")
    roll.add_argument(
        "--since-release",
        metavar="vX.Y.Z|latest",
        help="source only papers newer than the newest paper of this release of --dataset (with "
        "--arxiv-query, the query starts on that paper's day and ends --to, else yesterday)",
    )
    roll.add_argument("--window", metavar="YYYY-MM", help="source only papers first posted in this month")
    roll.add_argument("--dataset", help="with --since-release: the published dataset (a local repository or a Hub id)")
    roll.add_argument(
        "--arxiv-metadata",
        action="store_true",
        help="look up folders of --papers named by arXiv ids on arXiv (their dates and titles); a window implies it",
    )
    parser.add_argument("--out", type=Path, required=True, help="the build folder (created; a rerun resumes it)")
    parser.add_argument("--stage", choices=STAGE_ORDER, help="run (or rerun) only this stage")
    parser.add_argument("--limit", type=int, help="at most N source papers")
    parser.add_argument("--workers", type=int, default=1, help="processes for the parsing stages (default 1)")
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="run the parsing stages in local processes or on Ray Data (needs ray installed)",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="papers in flight at once in an LLM stage")
    parser.add_argument("--prompts", type=Path, help="a prompt-set folder (default: the packaged rqbench-v1)")
    for role in ROLES:
        parser.add_argument(
            f"--model-{role}",
            dest=f"model_{role}",
            metavar="MODEL",
            help=f"model for the {role} role (litellm name or 'local')",
        )
    for stage in LLM_STAGES:
        parser.add_argument(
            f"--model-{stage.replace('_', '-')}",
            dest=f"model_stage_{stage}",
            metavar="MODEL",
            help=f"model for the {stage} stage only",
        )
        parser.add_argument(
            f"--max-tokens-{stage.replace('_', '-')}",
            dest=f"max_tokens_{stage}",
            type=int,
            metavar="N",
            help=f"reply token cap of the {stage} stage (default {DEFAULT_MAX_TOKENS[stage]}, "
            "or the catalog's reply budget for a model with a reasoning setting)",
        )
    parser.add_argument("--max-cited-per-paper", type=int, help="label only the N most often cited works per paper")
    parser.add_argument(
        "--min-influential",
        type=int,
        default=0,
        help="fallback for weak labellers: promote the most cited works until N per paper are "
        "influential (marked 'promoted', counted in the manifest; default 0 = off)",
    )
    parser.add_argument(
        "--text-budget",
        dest="text_budget_chars",
        type=int,
        default=None,
        help="characters of M's text in the contributions and verification prompts (default: as much "
        "as the stage model's context window holds, as the paper reads the whole paper; 10000 for "
        "the embedded model)",
    )
    parser.add_argument(
        "--context-budget",
        dest="context_budget_chars",
        type=int,
        default=4000,
        help="characters of one cited work's citation contexts in a prompt (default 4000)",
    )
    parser.add_argument(
        "--allow-abstract-only",
        action="store_true",
        help="let cited papers without full text count by their abstract or title (small offline samples)",
    )
    parser.add_argument(
        "--sources",
        "--cited-sources",
        dest="cited_sources",
        type=Path,
        help="a local folder of cited papers' LaTeX, one subfolder per paper (named by its arXiv id or "
        "anything else; found by id, title or as a version of the paper): offline the only source of "
        "their text, online a mirror that saves downloads",
    )
    parser.add_argument("--no-fetch-cited", action="store_true", help="online: do not download cited papers' e-prints")
    parser.add_argument(
        "--verification-source",
        choices=("latex", "text"),
        default="latex",
        help="what the verifier reads of M: its merged LaTeX (default) or the parsed text",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the calls, tokens and cost it would spend; send nothing"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def config_from_args(args: argparse.Namespace, window=None):  # type: ignore[no-untyped-def]
    from rqbench.builder.build_config import LLM_STAGES, BuildConfig

    models = {role: getattr(args, f"model_{role}") for role in ROLES if getattr(args, f"model_{role}")}
    models.update({s: getattr(args, f"model_stage_{s}") for s in LLM_STAGES if getattr(args, f"model_stage_{s}")})
    max_tokens = {s: getattr(args, f"max_tokens_{s}") for s in LLM_STAGES if getattr(args, f"max_tokens_{s}")}
    return BuildConfig(
        out=args.out,
        papers=args.papers,
        arxiv_query=args.arxiv_query,
        date_from=args.date_from,
        date_to=args.date_to,
        window=window,
        arxiv_metadata=args.arxiv_metadata,
        limit=args.limit,
        stage=args.stage,
        workers=args.workers,
        executor=args.executor,
        concurrency=args.concurrency,
        prompts=args.prompts,
        models=models,
        max_tokens=max_tokens,
        max_cited_per_paper=args.max_cited_per_paper,
        min_influential=args.min_influential,
        text_budget_chars=args.text_budget_chars,
        context_budget_chars=args.context_budget_chars,
        allow_abstract_only=args.allow_abstract_only,
        cited_sources=args.cited_sources,
        fetch_cited=False if args.no_fetch_cited else None,
        verification_source=args.verification_source,
        dry_run=args.dry_run,
        progress=not args.no_progress,
    )


def _network_absent(exc: BaseException) -> bool:
    """Whether ``exc`` or one of its causes is the HTTP client's NetworkUnavailable."""
    from rqbench.builder.http import NetworkUnavailable

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, NetworkUnavailable):
            return True
        cause = cause.__cause__
    return False


def run(args: argparse.Namespace) -> int:
    from rqbench.builder.pipeline import run_build
    from rqbench.builder.sourcing import PapersInputError, check_papers_input
    from rqbench.dataset_card.repo import TargetError

    if args.papers is not None and args.arxiv_query is not None:
        print("rqbench build: give --papers (offline) or --arxiv-query (online), not both", file=sys.stderr)
        return 2
    rolling = args.since_release is not None or args.window is not None
    if (args.dataset is not None) != (args.since_release is not None):
        print(
            "rqbench build: --since-release and --dataset go together (the release, and where it lives)",
            file=sys.stderr,
        )
        return 2
    if args.arxiv_query is not None and not rolling and (args.date_from is None or args.date_to is None):
        print(
            "rqbench build: --arxiv-query needs --from and --to (or a window: --since-release, --window)",
            file=sys.stderr,
        )
        return 2
    if rolling and args.date_from is not None:
        print(
            "rqbench build: a window (--since-release, --window) sets where the query starts; drop --from",
            file=sys.stderr,
        )
        return 2
    if args.papers is not None and not args.papers.exists():
        print(f"rqbench build: --papers {args.papers} does not exist", file=sys.stderr)
        return 2
    try:
        if args.papers is not None:
            check_papers_input(args.papers)  # an empty folder, a FIFO, a binary or malformed id file
        window = resolve_window(args) if rolling else None
        config = config_from_args(args, window)
    except (ValidationError, PapersInputError, ValueError, TargetError) as exc:
        print(f"rqbench build: {exc}", file=sys.stderr)
        return 2
    if window is not None:
        days = f" (arXiv days {config.date_from} to {config.date_to})" if config.arxiv_query else ""
        print(f"window: {window.describe()}{days}", file=sys.stderr)
    from rqbench.builder.arxiv_api import ArxivError
    from rqbench.builder.http import HttpError
    from rqbench.builder.s2_api import S2Error
    from rqbench.llm import LLM

    llm = LLM(dry_run=config.dry_run)
    if not config.dry_run:
        print(llm.run_note(), flush=True)
    try:
        manifest = run_build(config, llm)
    except PapersInputError as exc:  # a paper folder's metadata.json, read only once the build reaches it
        print(f"rqbench build: {exc}", file=sys.stderr)
        return 2
    except (ArxivError, S2Error, HttpError) as exc:  # an API that cannot be reached or refuses: named, no traceback
        print(f"rqbench build: {exc}", file=sys.stderr)
        if _network_absent(exc):
            print(
                "rqbench build: offline, build from LaTeX sources on disk instead: --papers DIR, a folder with "
                "one folder of LaTeX sources per paper (an id file needs arXiv too); finished stages are kept, so "
                "a rerun with the network back resumes",
                file=sys.stderr,
            )
        return 2
    if config.dry_run:
        dry = manifest.settings["dry_run"]
        print(dry["line"])
        for stage, n in dry["upper_bounds_not_yet_countable"].items():
            print(f"  {stage}: at most {n} calls (its inputs come from stages not run yet)")
        return 0
    counts = manifest.counts
    dropped = ", ".join(f"{k}: {v}" for k, v in manifest.dropped.items()) or "none"
    calls = sum(s.llm_calls for s in manifest.stages)
    print(
        f"{counts.get('rqs', 0)} RQs from {counts.get('papers', 0)} papers "
        f"({counts.get('unique_cited_papers', 0)} cited papers); dropped: {dropped}; "
        f"{calls} LLM calls in all; build folder {config.out}"
    )
    if window is not None and window.since_release:
        print(
            f"publish it as the next minor version after {window.since_release}, holding both: "
            f"rqbench publish {config.out} --to/--repo {window.dataset}"
        )
    return 0


def resolve_window(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The rolling build's window, read from the release it follows; ValueError (RollingError) with the reason."""
    from rqbench.dataset_card.rolling import source_window

    return source_window(args.dataset, args.since_release, args.window)
