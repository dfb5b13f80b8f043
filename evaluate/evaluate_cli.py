"""``rqbench evaluate``: generate-or-load, judge, then report, in one command.

A cost estimate comes first (a dry run through the LLM layer; judging is
counted with placeholder RQs when the submission is still to be generated, so
its call count is exact and its token count an estimate), then the run's
protocol: its judges, generator and inputs, and every departure from the
paper's protocol with the flag that restores it. Then one progress bar per
stage. With the paper judges' keys (``--protocol paper``) the judges are
gemini/gemini-3.1-pro and deepseek/deepseek-v4-pro; offline (``custom``) the
generator is the embedded model and the judge is ``local``, the embedded model
at temperature 0 (``rqbench.llm.config.OFFLINE_JUDGES``). Results land in
``RQB_HOME/results`` unless ``--out`` says otherwise, where the Space finds them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench import paths
from rqbench.evaluate.generate.cli import add_dataset_options, add_llm_options, prompt_variants
from rqbench.evaluate.judge.cli import (
    SETTING_CHOICES,
    add_judge_options,
    coverage_note,
    judging_flags,
    print_results,
    unjudged_message,
)
from rqbench.llm.catalog import split_cutoff
from rqbench.llm.config import OFFLINE_JUDGES, default_model


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        help="generator model (default: the generator role's model); "
        "NAME@cutoff=YYYY-MM records its knowledge cutoff in the submission",
    )
    p.add_argument(
        "--prompt",
        choices=prompt_variants(),
        default="original",
        help="generation prompt variant (default: original, the paper's)",
    )
    p.add_argument(
        "--combine",
        choices=["pooled", "mean_scores"],
        default="pooled",
        help="how the report combines judges (default: pooled, our reading of the paper's rule)",
    )
    p.add_argument(
        "--failures",
        choices=["paper", "conditional"],
        default="paper",
        help="how the report counts failures: paper (default; every instance, a failed generation a loss) "
        "or conditional (over what was scored)",
    )
    p.add_argument("--submission", type=Path, default=None, help="judge this submission instead of generating one")
    p.add_argument("--out", type=Path, default=None, help="results folder (default: RQB_HOME/results)")
    p.add_argument("--no-report", action="store_true", help="stop after judging")
    p.add_argument(
        "--report-dir", type=Path, default=None, help="report folder (default: RQB_HOME/reports/<submission>)"
    )
    add_judge_options(p, offline_judges=list(OFFLINE_JUDGES))
    add_dataset_options(p)
    add_llm_options(p)


def _placeholder_submission(bench, metadata):  # type: ignore[no-untyped-def]
    """RQs of realistic length for counting judge calls before the real ones exist."""
    from rqbench.evaluate.generate.submission_files import Submission
    from rqbench.evaluate.generate.validation_report import ValidationReport
    from rqbench.records import SubmissionEntry

    entries = {  # built unvalidated: never judged or written, and "(estimate k)" is no well-formed question
        i.rq_id: SubmissionEntry.model_construct(
            rq_id=i.rq_id, gaps=[], failure=None, research_questions=[f"(estimate {k}) {i.gt_rq}" for k in range(5)]
        )
        for i in bench.instances
    }
    return Submission(Path("placeholder"), metadata, entries, "b2:estimate", ValidationReport(path="placeholder"))


def _estimate(args, dry, bench, model, judges, settings, criteria, prompts, policy) -> str:  # type: ignore[no-untyped-def]
    from rqbench.evaluate.generate.run import generate_submission
    from rqbench.evaluate.generate.submission_files import load_submission
    from rqbench.evaluate.judge.run import judge_submission
    from rqbench.records import SubmissionMetadata

    if args.submission is None:
        generate_submission(
            bench,
            model,
            args.prompt,
            llm=dry,
            out=Path("unused"),
            prompts=prompts,
            policy=policy,
            context_tokens=args.context_tokens,
            progress=False,
        )
        sub = _placeholder_submission(bench, SubmissionMetadata(model=model))
    else:
        sub = load_submission(
            args.submission, bench.revision_rq_ids, judged_rq_ids=bench.rq_ids, allow_partial=args.allow_partial
        )
    judge_submission(
        bench,
        sub,
        judges,
        settings,
        llm=dry,
        seed=args.seed,
        orderings=args.orderings,
        out_dir=Path("unused"),
        criteria=criteria,
        prompts=prompts,
        policy=policy,
        context_tokens=args.context_tokens,
        progress=False,
    )
    return dry.estimate.line()


def _plan(args, dry, bench, protocol, choice, model, settings, criteria, prompts, policy):  # type: ignore[no-untyped-def]
    """The run's protocol: what ``--dry-run`` prints and every results file records."""
    from rqbench.evaluate.generate.submission_files import load_submission
    from rqbench.evaluate.metrics.metric import CombineRule, FailureAccounting
    from rqbench.evaluate.protocol import RecordedGeneration, RunPlan, generator_use, judge_use

    uses = [judge_use(j, dry, context_tokens=args.context_tokens, fixed=policy) for j in choice.judges]
    if args.submission is None:
        generation = generator_use(model, dry, context_tokens=args.context_tokens, fixed=policy)
        variant = args.prompt
    else:
        meta = load_submission(
            args.submission, bench.revision_rq_ids, judged_rq_ids=bench.rq_ids, allow_partial=args.allow_partial
        ).metadata
        generation, variant = RecordedGeneration(meta), meta.prompt_variant
    return RunPlan(
        protocol,
        uses,
        generation,
        variant,
        prompts,
        settings,
        criteria,
        args.orderings,
        combine=CombineRule(args.combine),
        failures=FailureAccounting(args.failures),
        instances=len(bench.instances),
        instances_total=bench.instances_expected,
        missing_keys=choice.missing_keys,
        notes=choice.notes,
    )


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.benchmark.background import BackgroundPolicy
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark
    from rqbench.evaluate.criteria import criteria_flag
    from rqbench.evaluate.generate.run import generate_submission
    from rqbench.evaluate.generate.submission_files import load_submission
    from rqbench.evaluate.generate.validation_report import SubmissionInvalid
    from rqbench.evaluate.judge.run import judge_submission
    from rqbench.evaluate.protocol import choose_judges, default_protocol, plan_lines
    from rqbench.llm.client import LLM
    from rqbench.paths import slug
    from rqbench.prompts import PromptError, load_prompt_set

    protocol = args.protocol or default_protocol()
    choice = choose_judges(protocol, args.judge, OFFLINE_JUDGES)
    judges = choice.judges
    settings = SETTING_CHOICES[args.setting]
    criteria = criteria_flag(args.criteria)
    try:
        model, cutoff = split_cutoff(args.model or default_model("generator"))
    except ValueError as exc:
        print(f"rqbench evaluate: {exc}", file=sys.stderr)
        return 2
    out = args.out or paths.results_dir()
    try:
        bench = load_benchmark(args.dataset, args.revision).subset(args.limit)
        prompts = load_prompt_set(args.prompts)
        policy = BackgroundPolicy(budget_tokens=args.background_tokens) if args.background_tokens else None
        dry = LLM(dry_run=True, batch=args.batch)
        print(_estimate(args, dry, bench, model, judges, settings, criteria, prompts, policy), flush=True)
        plan = _plan(args, dry, bench, protocol, choice, model, settings, criteria, prompts, policy)
        print("\n".join(plan_lines(plan, bench)), flush=True)
    except (DatasetError, PromptError, SubmissionInvalid, ValueError) as exc:
        print(f"rqbench evaluate: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        return 0
    blocking = choice.blocking_keys()
    if blocking:
        print(
            f"rqbench evaluate: the paper's judges need {' and '.join(blocking)}; set them, name judges with "
            "--judge, or use --protocol custom",
            file=sys.stderr,
        )
        return 2

    llm = LLM(retry_failed=args.retry_failed, batch=args.batch)
    print(llm.run_note(), flush=True)
    allow_partial = args.allow_partial
    sub_path = args.submission
    if sub_path is None:
        sub_path = paths.home() / "submissions" / f"{slug(model)}-{args.prompt}"
        generate_submission(
            bench,
            model,
            args.prompt,
            llm=llm,
            out=sub_path,
            prompts=prompts,
            policy=policy,
            context_tokens=args.context_tokens,
            concurrency=args.concurrency,
            knowledge_cutoff=cutoff,
        )
        allow_partial = True  # our own generation: failed instances are recorded, and shown as coverage
    try:
        sub = load_submission(sub_path, bench.revision_rq_ids, judged_rq_ids=bench.rq_ids, allow_partial=allow_partial)
    except SubmissionInvalid as exc:
        print(f"rqbench evaluate: the submission is not valid:\n{exc}", file=sys.stderr)
        return 1
    note = coverage_note(bench, sub.report)
    if note:
        print(note)
    written = judge_submission(
        bench,
        sub,
        plan.judges,  # the judges as the plan resolved and printed them, resolved once
        settings,
        llm=llm,
        out_dir=out,
        criteria=criteria,
        prompts=prompts,
        policy=policy,
        protocol=plan.record(),
        **judging_flags(args),
    )
    unjudged = print_results(written, args.orderings)
    rc = 0
    if not args.no_report:
        name = f"{slug(sub.metadata.model)}-{sub.hash.removeprefix('b2:')[:10]}"
        report_dir = args.report_dir or paths.home() / "reports" / name
        rc = _report(written, report_dir, args.combine, args.failures)
    if unjudged:  # the report is written, with the incomplete rows marked; the run still did not finish its job
        print(unjudged_message("evaluate", unjudged), file=sys.stderr)
        return rc or 1
    return rc


def _report(written: list[Path], report_dir: Path, combine: str = "pooled", failures: str = "paper") -> int:
    """The report writer of ``rqbench report`` over this run's results files."""
    try:
        from rqbench.evaluate.report import cli as report_cli
    except ImportError as exc:
        print(f"rqbench evaluate: report step skipped ({exc}); run 'rqbench report' later", file=sys.stderr)
        return 0
    parser = argparse.ArgumentParser(prog="rqbench report")
    report_cli.configure(parser)
    rc = int(
        report_cli.run(
            parser.parse_args(
                [*map(str, written), "--out", str(report_dir), "--combine", combine, "--failures", failures]
            )
        )
        or 0
    )
    if rc == 0:
        print(f"report: {report_dir}")
    return rc
