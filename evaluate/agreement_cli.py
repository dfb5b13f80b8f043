"""``rqbench agreement``: human-LLM agreement tables from annotation CSVs and judge results.

Reads annotation files (rq_id, evaluator, winner), derives each LLM judge's
pick from its stored comparative scores, and writes the pairwise agreement
matrix, the win rates per evaluator, the judges' source-boundedness picks and
the human non-obviousness vs LLM source-boundedness agreement, each with
cluster-bootstrap CIs, as Markdown/CSV/LaTeX tables plus ``agreement.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench.evaluate.report_cli import add_score_options, pick_submission, score_options


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--annotations", nargs="+", required=True, type=Path,
                   help="annotation CSV files with columns rq_id, evaluator, winner (gt/model/tie)")
    p.add_argument("--results", nargs="+", required=True, help="results files or folders of the annotated submission")
    p.add_argument("--out", required=True, type=Path, help="folder for the tables and agreement.json")
    p.add_argument("--model", help="the annotated submission's model, if the results hold several")
    p.add_argument("--variant", help="its prompt variant (original, revised, custom)")
    p.add_argument("--setting", choices=["comparative", "standalone"], default="comparative",
                   help="which judging the LLM picks come from (default: comparative, as in the paper)")
    add_score_options(p)


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate import tables
    from rqbench.evaluate.agreement import agreement_report, read_annotation_files
    from rqbench.evaluate.metrics import SelectionRule
    from rqbench.evaluate.summary import load_results

    try:
        anns = read_annotation_files(args.annotations)
        results = load_results(args.results)
        files = pick_submission(results, args.model, args.variant)
        rep = agreement_report(anns, files, setting=args.setting, rule=SelectionRule(args.selection),
                               options=score_options(args), n_boot=args.n_boot, seed=args.seed)
    except (FileNotFoundError, ValueError) as exc:
        print(f"rqbench agreement: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    revised = rep.prompt_variant != "original"
    made = tables.agreement_tables(rep, suffix=f"_{rep.prompt_variant}" if revised else "",
                                   paper=("11", "12") if revised else ("5", "9"))
    for t in made:
        tables.write_table(t, args.out)
    (args.out / "agreement.json").write_text(rep.model_dump_json(indent=1), encoding="utf-8")
    print(f"wrote {len(made)} agreement tables for {rep.model} ({rep.instances} instances) to {args.out}")
    return 0
