"""The ``rqbench`` command: a thin dispatcher over the library's jobs.

Each job lives beside the code it runs and exposes ``configure(parser)`` and
``run(args) -> int``; it is imported only when invoked, so ``rqbench --help``
is instant and nothing happens at import time.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

# job name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "setup-sample": (
        "rqbench.dataset_card.sample_release",
        "build and publish the offline sample (rq-bench-sample) end to end",
    ),
    "build": ("rqbench.builder.cli", "build RQ-Bench records from arXiv papers or local LaTeX sources"),
    "publish": ("rqbench.dataset_card.publish", "publish a build as a versioned Hugging Face dataset"),
    "generate": ("rqbench.evaluate.generate.cli", "generate five RQs per instance with any model"),
    "validate": ("rqbench.evaluate.generate.validate_cli", "validate a submission file or folder"),
    "submit": ("rqbench.space.submit_cli", "validate a submission and send it to a Space or the local store"),
    "judge": ("rqbench.evaluate.judge.cli", "score a submission with LLM judges"),
    "report": ("rqbench.evaluate.report.cli", "tables and plots from results files"),
    "evaluate": ("rqbench.evaluate.evaluate_cli", "generate-or-load, judge, score and report in one run"),
    "bundle": ("rqbench.space.bundle_cli", "one leaderboard row's reproduction bundle (its calls, inputs and results)"),
    "rescore": ("rqbench.evaluate.bundle.rescore_cli", "recompute a leaderboard row from its bundle with no LLM call"),
    "diversity": (
        "rqbench.evaluate.report.diversity_cli",
        "store the diversity of each submission's five RQs in its results",
    ),
    "agreement": ("rqbench.evaluate.report.agreement_cli", "human-LLM agreement from annotations and results"),
    "judge-board": ("rqbench.space.judge_board_cli", "rank judge configurations by agreement with expert picks"),
    "start": (
        "rqbench.space.start_cli",
        "serve the Space at once, and build the sample and its demo evaluation behind it with a progress panel",
    ),
    "space": ("rqbench.space.cli", "run the leaderboard Space locally"),
    "worker": ("rqbench.space.worker_cli", "judge pending leaderboard submissions"),
    "calls": ("rqbench.llm.calls_cli", "summarise the LLM call log per model and step"),
    "local-model": ("rqbench.llm.local_cli", "start or check the embedded local model"),
}


def _top_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="rqbench",
        description="RQ-Bench: build the benchmark, generate and judge research questions, run the leaderboard.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run 'rqbench JOB --help' for a job's options.",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = p.add_subparsers(dest="command", metavar="JOB")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    verbose = "-v" in argv or "--verbose" in argv
    argv = [a for a in argv if a not in ("-v", "--verbose")]
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        parser = _top_parser()
        if argv and argv[0] not in ("-h", "--help"):
            parser.print_usage(sys.stderr)
            print(f"rqbench: unknown job {argv[0]!r}; jobs: {', '.join(COMMANDS)}", file=sys.stderr)
            return 2
        parser.print_help()
        return 0
    name = argv[0]
    module_name, help_text = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"rqbench {name}", description=help_text)
    module.configure(parser)
    args = parser.parse_args(argv[1:])
    if os.environ.get("RQB_CRITERIA"):
        # the criterion folders it names are read once, when the criteria are first imported: a bad one is one line
        # naming its file and field, before any work, not a traceback from whichever import reached it first
        try:
            importlib.import_module("rqbench.evaluate.criteria")
        except ValueError as exc:
            print(f"rqbench {name}: {exc}", file=sys.stderr)
            return 2
    from rqbench.llm.client import ProviderUnreachable

    try:
        return int(module.run(args) or 0)
    except ProviderUnreachable as exc:  # no connection to a model at all: one line, not a traceback per call
        print(f"rqbench {name}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished work is saved and a rerun resumes from it", file=sys.stderr)
        return 130
