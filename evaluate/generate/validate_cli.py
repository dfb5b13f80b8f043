"""``rqbench validate``: check a submission against a dataset revision and list every problem at once."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rqbench.evaluate.generate.cli import add_dataset_options


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("submission", type=Path, help="a submission folder or JSONL file")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="accept missing or failed rq_ids (the coverage is then shown beside every score)",
    )
    p.add_argument("--max-bytes", type=int, default=None, help="size limit per file (default 20 MiB)")
    p.add_argument(
        "--max-problems",
        type=int,
        default=None,
        metavar="N",
        help="list at most N problems per rule and count the rest (default 20)",
    )
    p.add_argument(
        "--flag-injection",
        action="store_true",
        help="report even prompt-acting text (delimiters, role tags, instructions to the judge) as "
        "warnings instead of rejecting the submission; other screen hits are always warnings",
    )
    p.add_argument("--no-dataset", action="store_true", help="check the format only, not the rq_ids")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_dataset_options(p)


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark
    from rqbench.evaluate.generate.submission_files import DEFAULT_MAX_BYTES, validate_submission
    from rqbench.evaluate.generate.validation_report import DEFAULT_MAX_PROBLEMS_PER_RULE

    if args.max_problems is not None and args.max_problems < 1:
        print("rqbench validate: --max-problems must be at least 1", file=sys.stderr)
        return 2
    for stream in (sys.stdout, sys.stderr):  # input echoed back must never stop the report mid-way
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")

    expected = judged = None
    if not args.no_dataset:
        try:
            bench = load_benchmark(args.dataset, args.revision).subset(args.limit)
        except DatasetError as exc:
            print(f"rqbench validate: {exc}", file=sys.stderr)
            return 2
        expected, judged = bench.revision_rq_ids, bench.rq_ids  # --limit N: a trial of the first N
    report = validate_submission(
        args.submission,
        expected,
        judged_rq_ids=judged,
        allow_partial=args.allow_partial,
        max_bytes=args.max_bytes or DEFAULT_MAX_BYTES,
        injection="flag" if args.flag_injection else "reject",
        max_problems_per_rule=args.max_problems or DEFAULT_MAX_PROBLEMS_PER_RULE,
    )
    if args.json:
        print(json.dumps(report.model_dump(mode="json", exclude={"entries"}), indent=1))
    else:
        print_report(report)
    return 0 if report.ok else 1


def print_report(report) -> None:  # type: ignore[no-untyped-def]
    """Every problem and flagged RQ, then the summary line (also what ``rqbench submit`` prints)."""
    for problem in report.problems:
        print(problem)
    for item in report.flagged:
        print(item)
    if report.flagged_count > len(report.flagged):
        print(f"... and {report.flagged_count - len(report.flagged)} more flagged RQ(s)")
    print(report.summary())
