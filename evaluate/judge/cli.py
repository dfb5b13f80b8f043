"""``rqbench judge SUBMISSION [--judge M ...]``: score a submission, one results file per judge and setting.

Judges are named by litellm model name or ``local``; one model configured two
ways counts as two judges (``local@temperature=0.7``). Without ``--judge``, the
protocol picks them: ``paper`` (the default when GEMINI_API_KEY or
DEEPSEEK_API_KEY is set) the paper's two judges, ``custom`` the embedded model.
``--limit N`` is a trial of the revision's first N instances, whatever the
submission holds: counted against the whole revision and marked as a trial in
its results. Every run prints its settings and each departure from the paper's
protocol with the flag that restores it, and records them in its results files. ``--reparse``
rescores stored replies without a call; ``--retry-failed`` re-asks only what
failed; ``--only-new`` judges only what the earlier results of the same judge
lack (the instances a new release added) and merges them into one file;
``--dry-run`` counts calls, tokens and cost first. Each file's line says
"N of M instances scored" against the dataset revision, with the generation
failures (the model's) and the unjudged instances (the judge's); the job exits 1
when a judge's calls failed for any instance (the results are written), and 2
when a model's address cannot be reached at all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rqbench import paths
from rqbench.evaluate.generate.cli import add_dataset_options, add_llm_options
from rqbench.evaluate.judge.config_file import judge_spec
from rqbench.llm.config import OFFLINE_JUDGES

SETTING_CHOICES = {"standalone": ["standalone"], "comparative": ["comparative"], "both": ["standalone", "comparative"]}


def judging_flags(args: argparse.Namespace) -> dict[str, Any]:
    """``judge_submission``'s options as the flags of ``add_judge_options`` and ``add_llm_options`` set them."""
    return dict(
        seed=args.seed,
        orderings=args.orderings,
        retry_failed=args.retry_failed,
        context_tokens=args.context_tokens,
        concurrency=args.concurrency,
    )


def _judge_arg(value: str) -> str:
    """``--judge``'s type: a spec, or a judge file read into its spec (argparse names the option on an error)."""
    try:
        return judge_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_judge_options(p: argparse.ArgumentParser, *, offline_judges: list[str]) -> None:
    p.add_argument(
        "--protocol",
        choices=["paper", "custom"],
        default=None,
        help="paper: the paper's judges and settings where none are given (default when GEMINI_API_KEY "
        "or DEEPSEEK_API_KEY is set); custom: the embedded model (the offline default). Departures "
        "from the paper's protocol are printed and recorded either way",
    )
    p.add_argument(
        "--judge",
        action="append",
        default=None,
        metavar="MODEL",
        type=_judge_arg,
        help="a judge: a model spec (model@key=value,...) or a judge file (.toml: model and [settings]); "
        "repeat for several (default: gemini/gemini-3.1-pro and "
        f"deepseek/deepseek-v4-pro under --protocol paper, {' and '.join(offline_judges)} offline)",
    )
    p.add_argument("--setting", choices=list(SETTING_CHOICES), default="both", help="judging setting (default both)")
    p.add_argument(
        "--orderings",
        type=int,
        default=1,
        help="comparative novelty: shuffled orderings per instance, for position bias (default 1)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the comparative candidate orders (default 0)")
    p.add_argument(
        "--criteria",
        default=None,
        help="comma-separated criteria to judge (default: novelty,narrowness,overlap, the paper's three, then any "
        "criterion declared in a folder that RQB_CRITERIA names)",
    )
    p.add_argument("--metrics", dest="criteria", help=argparse.SUPPRESS)  # the flag's name before 0.2
    p.add_argument("--retry-failed", action="store_true", help="re-ask only calls whose reply failed")
    p.add_argument("--allow-partial", action="store_true", help="judge a submission that lacks some rq_ids")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("submission", type=Path, help="a submission folder or JSONL file")
    p.add_argument("--out", type=Path, default=None, help="results folder (default: RQB_HOME/results)")
    p.add_argument("--reparse", action="store_true", help="rescore the stored raw replies; no call is made")
    p.add_argument(
        "--only-new",
        action="store_true",
        help="extend this generator's earlier results in --out (same judge, setting, prompt set and run "
        "settings): judge only the instances they lack, e.g. those a new release added, and merge",
    )
    add_judge_options(p, offline_judges=list(OFFLINE_JUDGES))
    add_dataset_options(p)
    add_llm_options(p)


def print_results(written: list[Path], orderings: int) -> int:
    """Each results file's line (N of M instances scored, who failed where); the number of instances a judge's
    calls failed on, summed over the files."""
    from rqbench.evaluate.judge.run import ordering_stats, read_results, run_line

    unjudged = 0
    for path in written:
        rf = read_results(path)
        print(f"{path}\n  {run_line(rf)}")
        carried = rf.settings.get("carried")
        if carried:
            print(
                f"  only new: {carried['judged_now']} instance(s) judged now, {carried['instances']} kept from "
                f"{carried['from_file']} (judged on {carried['from_revision']}), which this file replaces"
            )
        if rf.judge.setting == "comparative" and orderings > 1:
            print(f"  position bias: {ordering_stats(rf).line()}")
        unjudged += rf.coverage.unjudged if rf.coverage is not None else 0
    return unjudged


def coverage_note(bench, report) -> str | None:  # type: ignore[no-untyped-def]
    """What the run says before judging about what it covers: a trial of the revision's first N instances, and
    a submission that lacks some of the instances it judges (None when it judges every instance, all present)."""
    from rqbench.evaluate.benchmark.trial import trial_text

    if bench.trial is not None:
        left = bench.instances_expected - bench.trial
        have = (
            f"; the submission has five RQs for {report.trial_covered} of them"
            if report.trial_covered is not None and report.trial_covered < bench.trial
            else ""
        )
        return (
            f"{trial_text(bench.trial, bench.instances_expected)}: dataset {bench.name}@{bench.revision}{have}; "
            f"the other {left} are not in this run and are nobody's failure (the results are marked as a trial, "
            "never ranked beside full runs)"
        )
    if report.coverage is not None and report.coverage < 1:
        failed = f": {report.failed} instance(s) failed generation" if report.failed else ""
        return f"partial submission: coverage {report.covered}/{report.expected} ({report.coverage:.1%}){failed}"
    return None


def unjudged_message(job: str, unjudged: int) -> str:
    """What a run whose judge calls failed says last: the results are kept, and how to go on."""
    return (
        f"rqbench {job}: a judge's calls failed (after their re-ask) for {unjudged} instance(s) in the files "
        "above; those instances are unjudged, left out of their figures and counted on every row. The results "
        "are kept; rerun the same command with --retry-failed to ask the failed calls again (everything "
        "answered is a cache hit)"
    )


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.benchmark.background import BackgroundPolicy
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark
    from rqbench.evaluate.criteria import criteria_flag
    from rqbench.evaluate.generate.submission_files import load_submission
    from rqbench.evaluate.generate.validation_report import SubmissionInvalid
    from rqbench.evaluate.judge.run import judge_submission
    from rqbench.evaluate.protocol import (
        RecordedGeneration,
        RunPlan,
        choose_judges,
        default_protocol,
        judge_use,
        plan_lines,
    )
    from rqbench.llm.client import LLM
    from rqbench.prompts import PromptError, load_prompt_set

    if args.only_new and args.reparse:
        print(
            "rqbench judge: --only-new judges what earlier results lack; --reparse rescores stored replies: pick one",
            file=sys.stderr,
        )
        return 2
    protocol = args.protocol or default_protocol()
    choice = choose_judges(protocol, args.judge, list(OFFLINE_JUDGES))
    settings = SETTING_CHOICES[args.setting]
    criteria = criteria_flag(args.criteria)
    try:
        bench = load_benchmark(args.dataset, args.revision).subset(args.limit)
        prompts = load_prompt_set(args.prompts)
        sub = load_submission(
            args.submission, bench.revision_rq_ids, judged_rq_ids=bench.rq_ids, allow_partial=args.allow_partial
        )
    except (DatasetError, PromptError) as exc:
        print(f"rqbench judge: {exc}", file=sys.stderr)
        return 2
    except SubmissionInvalid as exc:
        print(f"rqbench judge: the submission is not valid:\n{exc}", file=sys.stderr)
        return 1
    note = coverage_note(bench, sub.report)
    if note:
        print(note)
    llm = LLM(dry_run=args.dry_run, retry_failed=args.retry_failed, batch=args.batch)
    policy = BackgroundPolicy(budget_tokens=args.background_tokens) if args.background_tokens else None
    out = args.out or paths.results_dir()
    if args.reparse:  # the stored replies, rescored: no model is resolved and no call made
        try:
            written = judge_submission(
                bench, sub, choice.judges, settings, llm=llm, out_dir=out, reparse=True, prompts=prompts, progress=False
            )
        except (ValueError, FileNotFoundError) as exc:
            print(f"rqbench judge: {exc}", file=sys.stderr)
            return 2
        unjudged = print_results(written, args.orderings)
        if unjudged:
            print(unjudged_message("judge", unjudged), file=sys.stderr)
            return 1
        return 0
    try:
        uses = [judge_use(j, llm, context_tokens=args.context_tokens, fixed=policy) for j in choice.judges]
        plan = RunPlan(
            protocol,
            uses,
            RecordedGeneration(sub.metadata),
            sub.metadata.prompt_variant,
            prompts,
            settings,
            criteria,
            args.orderings,
            instances=len(bench.instances),
            instances_total=bench.instances_expected,
            missing_keys=choice.missing_keys,
            notes=choice.notes,
        )
        lines = plan_lines(plan, bench)
    except ValueError as exc:
        print(f"rqbench judge: {exc}", file=sys.stderr)
        return 2
    blocking = choice.blocking_keys()
    if blocking and not args.dry_run:
        print("\n".join(lines))
        print(
            f"rqbench judge: the paper's judges need {' and '.join(blocking)}; set them, name judges with --judge, "
            "or use --protocol custom",
            file=sys.stderr,
        )
        return 2
    if not args.dry_run:
        print(llm.run_note(), flush=True)
    try:
        written = judge_submission(
            bench,
            sub,
            plan.judges,  # resolved once, above: the settings the plan printed are the ones called
            settings,
            llm=llm,
            out_dir=out,
            criteria=criteria,
            prompts=prompts,
            policy=policy,
            protocol=plan.record(),
            **judging_flags(args),
            only_new=args.only_new,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"rqbench judge: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(llm.estimate.line())
        print("\n".join(lines))
        return 0
    print("\n".join(lines))
    unjudged = print_results(written, args.orderings)
    if unjudged:
        print(unjudged_message("judge", unjudged), file=sys.stderr)
        return 1
    return 0
