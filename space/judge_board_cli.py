"""``rqbench judge-board --judge SPEC [--judge SPEC ...]``: judge configurations ranked by agreement with experts.

Loads the expert pool (the paper's A.6 pairs, read where they lie, and every
pair annotated in the Space's Annotate tab, from the Space's stores), asks
each judge the paper's comparative non-obviousness judgment on every pair in
both candidate orders, writes one results file per judge and prompt set (and
the pool) into ``--out`` (default ``RQB_HOME/judge-board``, where the Space's
Judges tab and ``rqbench report`` look), and prints the board. It lives with
the Space because it reads the Space's annotations.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench import paths


def configure(p: argparse.ArgumentParser) -> None:
    from rqbench.evaluate.generate.cli import add_llm_options

    p.add_argument(
        "--judge",
        action="append",
        required=True,
        metavar="SPEC",
        help="a judge configuration (litellm name or local, with @options); repeat for several",
    )
    p.add_argument(
        "--examples",
        type=Path,
        default=None,
        help="the paper's expert-study file (default: RQB_EXPERT_STUDY, else "
        "../shared/fixtures/paper_examples/expert_vs_llm.jsonl)",
    )
    p.add_argument("--no-annotations", action="store_true", help="leave the Space's annotated pairs out of the pool")
    p.add_argument("--store", type=Path, default=None, help="the Space's store folder (default: RQB_HOME/space)")
    p.add_argument(
        "--results",
        type=Path,
        default=None,
        help="the results the annotated pairs were drawn from (default: the store's, RQB_HOME/results)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the board's files (default: the store's judge-board/ with --store, else "
        "RQB_HOME/judge-board, where the Space looks)",
    )
    p.add_argument("--seed", type=int, default=0, help="recorded with the judge (the two orders are fixed)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples for the intervals (default 1000)")
    p.add_argument("--limit", type=int, default=None, help="judge only the first N pairs of the pool (trial runs)")
    p.add_argument(
        "--dataset",
        default=None,
        help="the Space's benchmark, for the annotated pairs' background papers (default: the sample)",
    )
    p.add_argument("--revision", default=None, help="its version tag (default: the latest)")
    p.add_argument(
        "--susceptibility",
        nargs="?",
        const="all",
        default=None,
        metavar="CUES",
        help="also judge every pair with words added to the model RQ, to measure how far they move the judge: "
        "all cues of evaluate/judge_board/cues.toml, or a comma-separated list of their kinds (two more calls a "
        "pair per cue)",
    )
    add_llm_options(p)


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.benchmark.background import BackgroundPolicy
    from rqbench.evaluate.judge_board.board import make_board
    from rqbench.evaluate.judge_board.run import load_board_files, run_board
    from rqbench.evaluate.judge_board.susceptibility import choose_cues
    from rqbench.evaluate.protocol import JudgeChoice, judge_use
    from rqbench.evaluate.report.judge_board_section import markdown, pool_line
    from rqbench.io import RecordError
    from rqbench.llm.client import LLM
    from rqbench.prompts import PromptError, load_prompt_set
    from rqbench.space import expert_study

    # where the Space looks: its store's judge-board/ folder, or RQB_HOME/judge-board offline by default
    out = args.out or (args.store / "judge-board" if args.store else paths.judge_board_dir())
    try:
        prompts = load_prompt_set(args.prompts)
        pool = _pool(args, expert_study.study_path(args.examples))
        cues = choose_cues(args.susceptibility.split(",")) if args.susceptibility else []
    except (PromptError, RecordError, ValueError, FileNotFoundError) as exc:
        print(f"rqbench judge-board: {exc}", file=sys.stderr)
        return 2
    print(pool_line(make_board(pool, [], n_boot=args.n_boot)))
    for note in pool.left_out:
        print(f"  left out: {note}")
    if not pool.pairs:
        print("rqbench judge-board: the expert pool is empty: no study file and no annotated pair", file=sys.stderr)
        return 2
    blocking = JudgeChoice(list(args.judge)).blocking_keys()
    if blocking and not args.dry_run:
        print(
            f"rqbench judge-board: the paper's judges need {' and '.join(blocking)}; set them, or try --dry-run",
            file=sys.stderr,
        )
        return 2
    policy = BackgroundPolicy(budget_tokens=args.background_tokens) if args.background_tokens else None
    llm = LLM(batch=args.batch)
    try:
        for spec in args.judge:
            counter = LLM(dry_run=True, batch=args.batch)  # one estimate per judge
            use = judge_use(spec, counter, context_tokens=args.context_tokens, fixed=policy)
            print(
                f"judge {use.settings_line()}; input: {use.policy.describe()}; prompt set {prompts.name} "
                f"({prompts.hash}); {2 * (1 + len(cues)) * min(len(pool.pairs), args.limit or len(pool.pairs))} "
                "calls (every pair in both orders" + (f", clean and with each of {len(cues)} cue(s))" if cues else ")")
            )
            if args.dry_run:
                run_board(
                    pool,
                    [spec],
                    llm=counter,
                    prompts=prompts,
                    out_dir=out,
                    seed=args.seed,
                    context_tokens=args.context_tokens,
                    policy=policy,
                    limit=args.limit,
                    cues=cues,
                )
                print(f"  {counter.estimate.line()}")
                n = min(len(pool.pairs), args.limit or len(pool.pairs))
                print(
                    f"  per 1,000 pairs: ${1000 * counter.estimate.cost_usd / n:,.2f} at most "
                    "(every reply counted at its full reply budget)"
                )
        if args.dry_run:
            return 0
        written = run_board(
            pool,
            args.judge,
            llm=llm,
            prompts=prompts,
            out_dir=out,
            seed=args.seed,
            context_tokens=args.context_tokens,
            policy=policy,
            limit=args.limit,
            concurrency=args.concurrency,
            cues=cues,
        )
    except (ValueError, RecordError) as exc:
        print(f"rqbench judge-board: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    try:
        board = make_board(pool, load_board_files(out), n_boot=args.n_boot)
    except (ValueError, RecordError) as exc:
        print(f"rqbench judge-board: {exc}", file=sys.stderr)
        return 2
    print(markdown(board))
    return 0


def _pool(args: argparse.Namespace, study: Path | None):  # type: ignore[no-untyped-def]
    """The pool: the study file, and the Space's annotated pairs unless ``--no-annotations``."""
    from rqbench.space.expert_pool import load_pool
    from rqbench.space.stores import SpaceStores

    if args.examples is not None and not args.examples.is_file():
        raise FileNotFoundError(f"{args.examples}: no such expert-study file")
    if args.no_annotations:
        return load_pool(study)
    stores = SpaceStores.from_env(args.store, args.results)
    judgments = stores.annotations.judgments()
    if not judgments:
        return load_pool(study)
    results, problems = stores.results.load()
    for p in problems:
        print(f"  unreadable results file: {p}", file=sys.stderr)
    from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark

    try:
        library = load_benchmark(args.dataset, args.revision).papers
    except (DatasetError, FileNotFoundError, ValueError) as exc:
        print(f"  the benchmark could not be loaded ({exc}); annotated pairs have no background", file=sys.stderr)
        library = {}
    return load_pool(study, judgments, results, library)
