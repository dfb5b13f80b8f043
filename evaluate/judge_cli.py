"""``rqbench judge SUBMISSION --judge M [--judge M2 ...]``: score a submission, one results file per judge and setting.

Judges are named by litellm model name or ``local``; one model configured two
ways counts as two judges (``local@temperature=0.7``). ``--reparse`` rescores
stored replies without a call; ``--retry-failed`` re-asks only what failed;
``--dry-run`` counts calls, tokens and cost first.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench.evaluate.generate_cli import add_dataset_options, add_llm_options

from rqbench import paths

SETTING_CHOICES = {"standalone": ["standalone"], "comparative": ["comparative"], "both": ["standalone", "comparative"]}


def add_judge_options(p: argparse.ArgumentParser, *, judges_default: list[str] | None = None) -> None:
    p.add_argument("--judge", action="append", default=None, metavar="MODEL",
                   help="a judge model; repeat for several" + (f" (default: {' and '.join(judges_default)})"
                                                               if judges_default else ""))  # fmt: skip
    p.add_argument("--setting", choices=list(SETTING_CHOICES), default="both", help="judging setting (default both)")
    p.add_argument("--orderings", type=int, default=1,
                   help="comparative novelty: shuffled orderings per instance, for position bias (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the comparative candidate orders (default 0)")
    p.add_argument("--metrics", default="novelty,narrowness,overlap",
                   help="comma-separated judges to run (default: novelty,narrowness,overlap)")
    p.add_argument("--retry-failed", action="store_true", help="re-ask only calls whose reply failed")
    p.add_argument("--allow-partial", action="store_true", help="judge a submission that lacks some rq_ids")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("submission", type=Path, help="a submission folder or JSONL file")
    p.add_argument("--out", type=Path, default=None, help="results folder (default: RQB_HOME/results)")
    p.add_argument("--reparse", action="store_true", help="rescore the stored raw replies; no call is made")
    add_judge_options(p)
    add_dataset_options(p)
    add_llm_options(p)


def print_results(written: list[Path], orderings: int) -> None:
    from rqbench.evaluate.judging import ordering_stats, read_results, run_line

    for path in written:
        rf = read_results(path)
        print(f"{path}\n  {run_line(rf)}")
        if rf.judge.setting == "comparative" and orderings > 1:
            print(f"  position bias: {ordering_stats(rf).line()}")


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.background import BackgroundPolicy
    from rqbench.evaluate.dataset import DatasetError, load_benchmark
    from rqbench.evaluate.judging import judge_submission
    from rqbench.evaluate.submission import SubmissionInvalid, load_submission

    from rqbench.llm.client import LLM
    from rqbench.prompts import PromptError, load_prompt_set

    judges = args.judge or ["local"]
    try:
        bench = load_benchmark(args.dataset, args.revision).subset(args.limit)
        prompts = load_prompt_set(args.prompts)
        sub = load_submission(args.submission, bench.rq_ids, allow_partial=args.allow_partial)
    except (DatasetError, PromptError) as exc:
        print(f"rqbench judge: {exc}", file=sys.stderr)
        return 2
    except SubmissionInvalid as exc:
        print(f"rqbench judge: the submission is not valid:\n{exc}", file=sys.stderr)
        return 1
    if sub.report.coverage is not None and sub.report.coverage < 1:
        print(f"partial submission: coverage {sub.report.covered}/{sub.report.expected} ({sub.report.coverage:.1%})")
    llm = LLM(dry_run=args.dry_run, retry_failed=args.retry_failed, batch=args.batch)
    policy = BackgroundPolicy(budget_tokens=args.background_tokens) if args.background_tokens else None
    try:
        written = judge_submission(
            bench, sub, judges, SETTING_CHOICES[args.setting], llm=llm, seed=args.seed, orderings=args.orderings,
            out_dir=args.out or paths.results_dir(), reparse=args.reparse, retry_failed=args.retry_failed,
            metrics=[m.strip() for m in args.metrics.split(",") if m.strip()], prompts=prompts, policy=policy,
            concurrency=args.concurrency,
        )  # fmt: skip
    except (ValueError, FileNotFoundError) as exc:
        print(f"rqbench judge: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(llm.estimate.line())
        return 0
    print_results(written, args.orderings)
    return 0
