"""``rqbench bundle``: one leaderboard row's reproduction bundle, as the Space's Leaderboard tab offers it.

The row is picked by model, prompt variant, setting and judge (the judge's public label, or
``combined``) among the rows the Space would show for the results folder; the results enter under
their public labels (``safety.public_results``), so a bundle made here is one that may be published.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(p: argparse.ArgumentParser) -> None:
    from rqbench.evaluate.metrics.summary import SUMMARY_BOOT

    p.add_argument("--model", required=True, help="the row's model, as the leaderboard names it")
    p.add_argument("--variant", default="original", help="its prompt variant (default: original)")
    p.add_argument("--setting", required=True, choices=["standalone", "comparative"])
    p.add_argument("--judge", required=True, help="the judge's public label, or 'combined'")
    p.add_argument("--trial", type=int, help="a trial row's size N (the first N instances)")
    p.add_argument("--submission-hash", help="where two submissions of one model share the other fields")
    p.add_argument("--results", type=Path, help="results folder (default: RQB_HOME/results)")
    p.add_argument("--submission", type=Path, help="the submission file or folder (default: its RQs from the results)")
    p.add_argument("--dataset", help="the dataset the row was judged on (default: the offline sample)")
    p.add_argument("--revision", help="its revision (a tag of a dataset repository)")
    p.add_argument("--prompts", type=Path, help="the prompt set folder the row was judged with (default: packaged)")
    p.add_argument("--calls", type=Path, help="the call log and cache (default: RQB_HOME/calls.db)")
    p.add_argument("--n-boot", type=int, default=SUMMARY_BOOT, help="bootstrap resamples, as the board used them")
    p.add_argument("--combine", default="pooled", help="combine rule of combined rows (default: pooled)")
    p.add_argument("--out", type=Path, help="the bundle to write (default: ./<model>__<setting>__<judge>.zip)")


def run(args: argparse.Namespace) -> int:
    from rqbench import paths
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark
    from rqbench.evaluate.bundle.bundle import BundleError, RowSource, make_bundle, select_row, summary_settings
    from rqbench.evaluate.generate.submission_files import load_submission
    from rqbench.evaluate.generate.validation_report import SubmissionInvalid
    from rqbench.evaluate.metrics.summary import load_results, summarize
    from rqbench.io import RecordError
    from rqbench.llm.client import CallNotCached
    from rqbench.llm.store import CallStore
    from rqbench.prompts import PromptError, load_prompt_set
    from rqbench.space.safety import public_results

    def fail(msg: object) -> int:
        print(f"rqbench bundle: {msg}", file=sys.stderr)
        return 2

    results_dir = args.results or paths.results_dir()
    calls = args.calls or paths.calls_db()
    if not calls.is_file():
        return fail(f"{calls}: no call log there (--calls names it)")
    try:
        results = [public_results(r) for r in load_results([results_dir])]
        settings = summary_settings(combine=args.combine, n_boot=args.n_boot)
        rows = summarize(results, combine=args.combine, n_boot=args.n_boot)
        row = select_row(
            rows,
            model=args.model,
            variant=args.variant,
            setting=args.setting,
            judge=args.judge,
            trial=args.trial,
            submission_hash=args.submission_hash,
        )
        bench = load_benchmark(args.dataset, args.revision)
        prompts = load_prompt_set(args.prompts)
        sub = None
        if args.submission is not None:
            sub = load_submission(args.submission, None, allow_partial=True, injection="flag")
        out = args.out or Path(f"{paths.slug(row.model)}__{row.setting}__{paths.slug(row.judge)}.zip")
        manifest = make_bundle(row, RowSource(results, bench, prompts, CallStore(calls), settings, sub), out)
    except (BundleError, RecordError, DatasetError, PromptError, FileNotFoundError, ValueError) as exc:
        return fail(exc)
    except SubmissionInvalid as exc:
        return fail(f"the submission is not valid:\n{exc}")
    except CallNotCached as exc:
        return fail(f"{calls}: {exc}")
    print(f"{out}: {len(manifest.members) + 1} members, {manifest.calls} call(s); recompute with: {manifest.command}")
    return 0
