"""``rqbench validate``: check a submission against a dataset revision and list every problem at once."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rqbench.evaluate.generate_cli import add_dataset_options


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("submission", type=Path, help="a submission folder or JSONL file")
    p.add_argument("--allow-partial", action="store_true",
                   help="accept missing or failed rq_ids (the coverage is then shown beside every score)")
    p.add_argument("--max-bytes", type=int, default=None, help="size limit per file (default 20 MiB)")
    p.add_argument("--flag-injection", action="store_true",
                   help="report judge-directed text as warnings instead of rejecting the submission")
    p.add_argument("--no-dataset", action="store_true", help="check the format only, not the rq_ids")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_dataset_options(p)


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.dataset import DatasetError, load_benchmark
    from rqbench.evaluate.submission import DEFAULT_MAX_BYTES, validate_submission

    expected = None
    if not args.no_dataset:
        try:
            expected = load_benchmark(args.dataset, args.revision).subset(args.limit).rq_ids
        except DatasetError as exc:
            print(f"rqbench validate: {exc}", file=sys.stderr)
            return 2
    report = validate_submission(args.submission, expected, allow_partial=args.allow_partial,
                                 max_bytes=args.max_bytes or DEFAULT_MAX_BYTES,
                                 injection="flag" if args.flag_injection else "reject")  # fmt: skip
    if args.json:
        print(json.dumps(report.model_dump(mode="json", exclude={"entries"}), indent=1))
    else:
        for problem in report.problems:
            print(problem)
        print(report.summary())
    return 0 if report.ok else 1
