"""``rqbench agreement``: human-LLM agreement tables from annotation CSVs and judge results.

Reads annotation files (rq_id, evaluator, winner, optionally candidate_id and
candidate_hash: the model RQ the annotator saw), derives each LLM judge's pick
from its stored scores on that same pair (``--setting``, comparative by default), and writes the pairwise
agreement matrix, the win rates per evaluator, the judges' source-boundedness picks
(from ``--source-bound-setting``, by default the ``--setting`` above: the paper does not say
which setting its Table 9 used) and the human non-obviousness vs LLM
source-boundedness agreement, each with cluster-bootstrap CIs, as
Markdown/CSV/LaTeX tables plus ``agreement.json`` (which records both settings).

``--examples FILE`` reads an expert-study file instead (the format of the
paper's appendix A.6 samples, ``../shared/fixtures/paper_examples/expert_vs_llm.jsonl``),
where every rater's pick is given, and prints the agreement matrix and the
winner counts, computed by the same functions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench.evaluate.report.cli import (
    add_score_options,
    add_source_bound_setting,
    demo_text,
    pick_submission,
    provenance_lines,
    score_options,
)
from rqbench.records import PICKS


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--annotations",
        nargs="+",
        type=Path,
        help="annotation CSV files with columns rq_id, evaluator, winner (gt/model/tie) "
        "[, candidate_id, candidate_hash]",
    )
    p.add_argument("--results", nargs="+", help="results files or folders of the annotated submission")
    p.add_argument(
        "--examples",
        type=Path,
        help="an expert-study JSONL file with every rater's pick (instead of --annotations/--results)",
    )
    p.add_argument("--out", type=Path, help="folder for the tables and agreement.json (required with --results)")
    p.add_argument("--model", help="the annotated submission's model, if the results hold several")
    p.add_argument("--variant", help="its prompt variant (original, revised, custom)")
    p.add_argument(
        "--setting",
        choices=["comparative", "standalone"],
        default="comparative",
        help="which judging the LLM non-obviousness picks come from (default: comparative, as in the paper)",
    )
    add_source_bound_setting(p)
    add_score_options(p)


def run(args: argparse.Namespace) -> int:
    if args.examples is not None:
        if args.annotations or args.results:
            print("rqbench agreement: give --examples, or --annotations with --results, not both", file=sys.stderr)
            return 2
        return run_examples(args)
    if not (args.annotations and args.results and args.out):
        print(
            "rqbench agreement: --annotations, --results and --out are required (or give --examples FILE)",
            file=sys.stderr,
        )
        return 2
    from rqbench.evaluate.judge_board.agreement import agreement_report, read_annotation_files
    from rqbench.evaluate.metrics.summary import load_results
    from rqbench.evaluate.report import judge_tables, table

    try:
        anns = read_annotation_files(args.annotations)
        results = load_results(args.results)
        files = pick_submission(results, args.model, args.variant)
        rep = agreement_report(
            anns,
            files,
            setting=args.setting,
            source_bound_setting=args.source_bound_setting or args.setting,
            options=score_options(args),
            n_boot=args.n_boot,
            seed=args.seed,
        )
    except (FileNotFoundError, ValueError) as exc:
        print(f"rqbench agreement: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    revised = rep.prompt_variant != "original"
    made = judge_tables.agreement_tables(
        rep, suffix=f"_{rep.prompt_variant}" if revised else "", paper=("11", "12") if revised else ("5", "9")
    )
    provenance = ["Every LLM judge's number in this table comes from these results files:", *provenance_lines(files)]
    for t in made:
        table.write_table(t, args.out, provenance, demo_text(files))
    (args.out / "agreement.json").write_text(rep.model_dump_json(indent=1), encoding="utf-8")
    print(f"wrote {len(made)} agreement tables for {rep.model} ({rep.instances} instances) to {args.out}")
    return 0


def run_examples(args: argparse.Namespace) -> int:
    """Agreement and winner counts over an expert-study file; tables too when ``--out`` is given."""
    from rqbench.evaluate.judge_board.agreement import (
        agreement_matrix,
        expert_sample_picks,
        read_expert_samples,
        win_rates,
    )
    from rqbench.evaluate.report import judge_tables, table

    try:
        samples = read_expert_samples(args.examples)
    except (FileNotFoundError, ValueError) as exc:
        print(f"rqbench agreement: {exc}", file=sys.stderr)
        return 2
    picks = expert_sample_picks(samples)
    matrix = agreement_matrix(picks, n_boot=args.n_boot, seed=args.seed)
    rates = win_rates(picks, n_boot=args.n_boot, seed=args.seed)
    models = sorted({s.model for s in samples})
    print(
        f"{args.examples}: {len(samples)} samples, GT vs {', '.join(models)}, {samples[0].dimension}, "
        f"{samples[0].setting}"
    )
    print(
        table.to_markdown(
            judge_tables.agreement_matrix_table(
                matrix, name="agreement", caption="Agreement (%): share of samples with the same pick", paper_table="5a"
            )
        )
    )
    counts = {r: {w: sum(p.winner == w for p in picks if p.evaluator == r) for w in PICKS} for r in matrix.rows}
    print("winner counts:")
    for rater, c in counts.items():
        print(f"  {rater}: gt {c['gt']}, model {c['model']}, tie {c['tie']}")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for t in (
            judge_tables.agreement_matrix_table(
                matrix,
                name="examples_agreement",
                paper_table="5a",
                caption="Agreement (%) on the printed expert-study samples",
            ),
            judge_tables.win_rate_table(
                rates,
                name="examples_win_rates",
                paper_table="5b",
                caption="Winner shares (%) on the printed expert-study samples",
            ),
        ):
            table.write_table(t, args.out)
    return 0
