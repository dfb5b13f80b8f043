"""``rqbench generate``: five RQs per evaluation instance with any model, written as a submission folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench.llm.catalog import split_cutoff
from rqbench.llm.config import default_model


def prompt_variants() -> list[str]:
    """The generation prompt variants, as the step registry has them."""
    from rqbench.steps import owned_by

    return [k for k in owned_by("rqbench.evaluate.generate.run") if not k.endswith("_multi")]


def at_least_one(text: str) -> int:
    """An argparse type: a whole number of at least 1 (argparse names the flag in its error)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a whole number is needed, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def add_dataset_options(p: argparse.ArgumentParser, *, limit: bool = True) -> None:
    """--dataset/--revision/--limit, shared by generate, validate, judge and evaluate (submit: no --limit)."""
    p.add_argument(
        "--dataset",
        default=None,
        help="a build folder, a dataset repository folder, or a Hub id (default: the offline sample)",
    )
    p.add_argument("--revision", default=None, help="dataset version tag, e.g. v1.0.0 (default: the latest)")
    if limit:
        p.add_argument(
            "--limit",
            type=at_least_one,
            default=None,
            metavar="N",
            help="a trial: only the first N instances of the dataset revision, in dataset order, whatever "
            "the submission holds; coverage is still counted against the whole revision (N of M), and "
            "results are marked as a trial, never ranked beside full runs",
        )


def add_llm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompts", type=Path, default=None, help="a prompt-set folder (default: the packaged rqbench-v1)")
    p.add_argument(
        "--background-tokens",
        type=int,
        default=None,
        help="a fixed token budget for the background block, instead of the model's context window "
        "(a departure from the paper's protocol; default: papers whole up to the window, 2000 tokens "
        "for the embedded model)",
    )
    p.add_argument(
        "--context-tokens",
        type=int,
        default=None,
        metavar="N",
        help="the context window to fit the background papers into (default: the model's, from the "
        "catalog; 32768 when unknown)",
    )
    p.add_argument("--concurrency", type=int, default=8, help="calls in flight at once (default 8)")
    p.add_argument("--dry-run", action="store_true", help="count the calls, tokens and cost; send nothing")
    p.add_argument(
        "--batch",
        action="store_true",
        help="send the calls through the provider's batch endpoint (about half price, replies within "
        "24 h; resumable); models without one are called directly",
    )


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        help="litellm model name or 'local' (default: the generator role's model); "
        "NAME@cutoff=YYYY-MM records the model's knowledge cutoff in the submission (default: none, and "
        "the summary uses the model catalog's where it has one)",
    )
    p.add_argument(
        "--prompt",
        choices=prompt_variants(),
        default="original",
        help="prompt variant: original (the paper's, A.4), revised (A.8), strict (original plus a rule of "
        "our own: no method or answer in the question)",
    )
    p.add_argument("--out", type=Path, required=True, help="submission folder to write")
    p.add_argument("--contact", default="", help="contact written into the submission's metadata")
    p.add_argument("--notes", default="", help="free-text notes written into the metadata")
    add_dataset_options(p)
    add_llm_options(p)


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.benchmark.background import BackgroundPolicy
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark
    from rqbench.evaluate.generate.run import generate_submission
    from rqbench.llm.client import LLM
    from rqbench.prompts import PromptError, load_prompt_set

    try:
        bench = load_benchmark(args.dataset, args.revision).subset(args.limit)
        prompts = load_prompt_set(args.prompts)
    except (DatasetError, PromptError) as exc:
        print(f"rqbench generate: {exc}", file=sys.stderr)
        return 2
    policy = BackgroundPolicy(budget_tokens=args.background_tokens) if args.background_tokens else None
    llm = LLM(dry_run=args.dry_run, batch=args.batch)
    if not args.dry_run:
        print(llm.run_note(), flush=True)
    try:
        model, cutoff = split_cutoff(args.model or default_model("generator"))
        folder = generate_submission(
            bench,
            model,
            args.prompt,
            llm=llm,
            out=args.out,
            prompts=prompts,
            policy=policy,
            context_tokens=args.context_tokens,
            concurrency=args.concurrency,
            contact=args.contact,
            notes=args.notes,
            knowledge_cutoff=cutoff,
        )
    except ValueError as exc:
        print(f"rqbench generate: {exc}", file=sys.stderr)
        return 2
    if folder is None:
        from rqbench.evaluate.protocol import generation_lines, generator_use

        print(llm.estimate.line())
        use = generator_use(model, llm, context_tokens=args.context_tokens, fixed=policy)
        print("\n".join(generation_lines(use, args.prompt, bench, prompts)))
        return 0
    from rqbench.evaluate.benchmark.trial import trial_text
    from rqbench.evaluate.generate.submission_files import validate_submission

    report = validate_submission(folder, bench.rq_ids, allow_partial=True)
    trial = f" ({trial_text(bench.trial, bench.instances_expected)})" if bench.trial else ""
    print(
        f"wrote {folder}: {report.covered}/{len(bench.instances)} instances with five RQs, {report.failed} "
        f"failed{trial}"
    )
    return 0
