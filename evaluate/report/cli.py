"""``rqbench report RESULTS... --out DIR``: every table and plot from stored results files.

Writes Markdown, CSV and LaTeX tables shaped like the paper's Tables 1-13: the
dataset's summary statistics (1) and sub-field breakdown (13), read from the
dataset revision the results name; the judge meta-evaluation, paired model-vs-model tests, ``summary.json`` (the rows
the leaderboard reads), the clean-subset table (each model's figures over the papers after its
knowledge cutoff), length-controlled win rates with each judge's length preference, judge stability (Kendall's tau between the judges' model rankings, leave-one-judge-out, the
models a judge moves beyond their interval), ``report.md`` (all tables in one page) and two PNGs.
Semantic similarity (Table 6) needs the background papers' text
(``--cited-papers``); agreement (Tables 5, 9, 11, 12) needs ``--annotations``, and
writes ``agreement.json`` too (``--source-bound-setting`` names the judging the
Table 9 source-boundedness picks come from; the paper does not say), and the
``expert_corrected`` table: each comparative judge's win rate corrected with the
annotations (``evaluate/judge_board/expert_corrected.py``). The ``cost`` table gives each row's generation and
judging dollars with their call-log run ids, and win-rate points per dollar (``evaluate/generate/cost.py``); the
``diversity`` table, each submission's mean pairwise similarity of its five RQs and near-duplicate pairs,
from what ``rqbench diversity`` stored (``--diversity`` embeds what is not stored, in memory).
Where ``rqbench judge-board`` has run (``--judge-board DIR``, by default
``RQB_HOME/judge-board``), report.md ends with the judge board, its plot
(``judge_board.png``) and ``judge_board.json``. Nothing here calls an LLM.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

from rqbench.evaluate.criteria import headline_figure
from rqbench.evaluate.metrics.metric import (
    CombineRule,
    FailureAccounting,
    NarrownessAggregation,
    OrderingAggregation,
    ScoreOptions,
    describe_combine_rule,
    describe_failures,
)

PAIRED_METRICS = (
    ("standalone", headline_figure("novelty", "best5")),
    ("standalone", headline_figure("novelty", "win")),
    ("comparative", headline_figure("novelty", "win")),
    ("standalone", headline_figure("narrowness", "best5")),
)


def add_score_options(p: argparse.ArgumentParser) -> None:
    """The named metric options, shared by ``report`` and ``agreement``."""
    p.add_argument(
        "--narrowness",
        choices=[a.value for a in NarrownessAggregation],
        default="mean",
        help="how per-background-paper narrowness becomes one score (default: mean)",
    )
    p.add_argument(
        "--orderings",
        choices=[a.value for a in OrderingAggregation],
        default="mean",
        help="how comparative scores under several orderings combine (default: mean)",
    )
    p.add_argument(
        "--failures",
        choices=[a.value for a in FailureAccounting],
        default="paper",
        help="paper (default): every instance counts, a failed generation is a loss with the worst "
        "Best@5, an instance a judge failed on is left out and counted; conditional: over what was "
        "scored (an unscored RQ left out of Best@5)",
    )
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates for the 95%% CIs (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")


def add_source_bound_setting(p: argparse.ArgumentParser) -> None:
    """The judging the Table 9 (12) source-boundedness picks come from, shared by ``report`` and ``agreement``."""
    p.add_argument(
        "--source-bound-setting",
        choices=["comparative", "standalone"],
        default=None,
        help="which judging the LLM source-boundedness picks of the agreement tables (Tables 9, 12) come from; "
        "the paper does not say (default: the setting of the non-obviousness picks, comparative unless "
        "rqbench agreement is given --setting standalone)",
    )


def score_options(args: argparse.Namespace) -> ScoreOptions:
    return ScoreOptions(
        narrowness=NarrownessAggregation(args.narrowness),
        orderings=OrderingAggregation(args.orderings),
        failures=FailureAccounting(args.failures),
    )


def configure(p: argparse.ArgumentParser) -> None:
    from rqbench.evaluate.metrics.diversity import DEFAULT_EMBEDDER

    p.add_argument("results", nargs="+", help="results files (.json) or folders holding them")
    p.add_argument("--out", required=True, type=Path, help="folder for the tables, plots and summary.json")
    p.add_argument(
        "--combine",
        choices=[r.value for r in CombineRule],
        default="pooled",
        help="how judges combine: pooled instance x judge verdicts (default) or mean_scores",
    )
    p.add_argument("--by-subfield", action="store_true", help="also write every table per sub-field")
    p.add_argument(
        "--annotations",
        nargs="+",
        type=Path,
        default=[],
        help="human annotation CSV files (rq_id, evaluator, winner) for the agreement tables",
    )
    p.add_argument("--annotated-model", help="the submission the annotators compared with (needed if several)")
    p.add_argument("--annotated-variant", default=None, help="its prompt variant (original, revised, custom)")
    add_source_bound_setting(p)
    p.add_argument("--cited-papers", type=Path, help="JSONL of CitedPaper records, for semantic similarity")
    p.add_argument(
        "--embedder",
        action="append",
        metavar="NAME",
        help="a sentence-transformers model for semantic similarity, by name (repeatable; default: the "
        "paper's Qwen/Qwen3-Embedding-4B, online only, and all-mpnet-base-v2, offline from its PyPI parts)",
    )
    p.add_argument(
        "--diversity",
        nargs="?",
        const=DEFAULT_EMBEDDER,
        default=None,
        metavar="EMBEDDER",
        help="also embed, in memory, the RQs of submissions with no stored diversity under EMBEDDER (default "
        f"{DEFAULT_EMBEDDER}, offline from its PyPI package); the diversity table is written whenever results store it "
        "(rqbench diversity stores it)",
    )
    p.add_argument(
        "--source-dates",
        type=Path,
        help="JSON object arxiv_id -> first-version date (YYYY-MM-DD) for source papers whose results "
        "carry none (written before dates were kept); used by the contamination flag and the clean "
        "(post-cutoff) figures",
    )
    p.add_argument(
        "--judge-board",
        type=Path,
        default=None,
        metavar="DIR",
        help="the judge board's folder (rqbench judge-board --out) for its section, plot and "
        "judge_board.json (default: RQB_HOME/judge-board, when a board was run there)",
    )
    add_score_options(p)


def judge_board_section(args: argparse.Namespace, out: Path) -> str:
    """report.md's judge-board section, its plot and ``judge_board.json``, from the board's folder; "" when the
    default folder holds no board. The pool is the one the last ``rqbench judge-board`` run wrote there."""
    from rqbench import paths
    from rqbench.evaluate.judge_board.board import make_board
    from rqbench.evaluate.judge_board.expert_pool import POOL_FILE, read_pool
    from rqbench.evaluate.judge_board.run import load_board_files
    from rqbench.evaluate.report import judge_board_section as judge_board_report
    from rqbench.evaluate.report.judge_board_plot import write_figure

    folder = args.judge_board or paths.judge_board_dir()
    pool = read_pool(folder)
    if pool is None:
        if args.judge_board is not None:
            raise ValueError(f"{folder}: no {POOL_FILE}; run rqbench judge-board --out {folder} first")
        return ""
    board = make_board(pool, load_board_files(folder), n_boot=args.n_boot, seed=args.seed)
    (out / "judge_board.json").write_text(board.model_dump_json(indent=1), encoding="utf-8")
    write_figure(board, out / "judge_board.png")
    return judge_board_report.markdown(board, plot="judge_board.png")


def pick_submission(results, model: str | None, variant: str | None):
    """The results of the one submission named by model (and variant); a clear error otherwise."""
    subs: dict[str, list] = {}
    for r in results:
        subs.setdefault(r.submission_hash, []).append(r)
    match = [
        files
        for files in subs.values()
        if (model is None or files[0].submission.model == model)
        and (variant is None or files[0].submission.prompt_variant == variant)
    ]
    names = sorted(f"{f[0].submission.model} ({f[0].submission.prompt_variant})" for f in subs.values())
    if not match:
        raise SystemExit(f"rqbench: no results for model {model!r} variant {variant!r}; results hold {names}")
    if len(match) > 1:
        raise SystemExit(
            f"rqbench: several submissions match; name one with --annotated-model/--annotated-variant: {names}"
        )
    return match[0]


def _paired(results, args) -> list:
    from rqbench.evaluate.metrics.bootstrap import paired_test
    from rqbench.evaluate.metrics.summary import instance_values
    from rqbench.records import parse_rq_id

    out = []
    for setting, metric_name in PAIRED_METRICS:
        per = instance_values(results, metric_name, setting=setting, combine=args.combine, options=score_options(args))
        for (_, (na, va)), (_, (nb, vb)) in itertools.combinations(sorted(per.items(), key=lambda kv: kv[1][0]), 2):
            t = paired_test(va, vb, lambda k: parse_rq_id(k)[0], n_boot=args.n_boot, seed=args.seed)
            if t is not None:
                out.append((f"{metric_name} ({setting})", na, nb, t))
    return out


def _dataset_tables(results) -> list:
    """Tables 1 and 13 of each dataset revision the results were judged on; one that cannot be read is named."""
    from rqbench.evaluate.report import tables
    from rqbench.evaluate.report.release_stats import ReleaseUnavailable, judged_revisions, release_stats

    revisions = judged_revisions(results)
    out = []
    for n, (repo, revision) in enumerate(revisions, 1):
        suffix = "" if len(revisions) == 1 else f"__{n}"
        try:
            stats = release_stats(repo, revision)
        except ReleaseUnavailable as exc:
            print(f"rqbench report: Tables 1 and 13 skipped: {exc}", file=sys.stderr)
            continue
        where = f"{repo}@{revision}"
        out += [
            tables.dataset_summary_table(stats, dataset=where, name=f"dataset_summary{suffix}"),
            tables.subfield_table(stats, dataset=where, name=f"subfields{suffix}"),
        ]
    return out


def _similarity(results, args: argparse.Namespace, opts: ScoreOptions):
    """Table 6 over every embedder that loads; one that cannot is named on stderr and left out of the table."""
    from rqbench.evaluate.metrics.similarity import (
        PAPER_EMBEDDERS,
        Embedder,
        EmbedderUnavailable,
        read_cited_papers,
        similarity_rows,
    )
    from rqbench.evaluate.report import tables

    papers = read_cited_papers(args.cited_papers)
    rows, missing = [], []
    for name in args.embedder or PAPER_EMBEDDERS:
        try:
            rows += similarity_rows(results, papers, [Embedder(name)], options=opts)
        except EmbedderUnavailable as exc:
            missing.append(name)
            print(f"rqbench report: Table 6 without {name}: {exc}", file=sys.stderr)
    if not rows:
        print("rqbench report: no embedding model loaded; Table 6 (similarity) is not written", file=sys.stderr)
        return None
    return tables.similarity_table(rows, missing=missing)


def demo_text(results) -> str:  # type: ignore[no-untyped-def]
    """The plain words of the demo note (empty when no demo model generated or judged these results): the same
    words as the Space's banner."""
    from rqbench.demo import banner_text

    names = {n for r in results for n in (r.submission.model, r.judge.label)}
    return banner_text(names, lead="Figures in this report come from")


def demo_note(results) -> str:  # type: ignore[no-untyped-def]
    """report.md's opening note when a demo model (``rqbench.demo``) generated or judged any of its figures;
    empty otherwise."""
    text = demo_text(results)
    return f"> **Demo output, not results.** {text}\n\n" if text else ""


def provenance_lines(results) -> list[str]:  # type: ignore[no-untyped-def]
    """Per results file: the submission, judge, setting, prompt set (name and hash) and dataset revision behind
    the numbers, and a trial's limit. report.md lists them; every CSV and LaTeX table opens with them."""
    from rqbench.evaluate.benchmark.trial import trial_text

    lines = []
    for r in sorted(
        results, key=lambda r: (r.submission.model, r.submission.prompt_variant, r.judge.label, r.judge.setting)
    ):
        ps = r.judge.prompt_set
        trial = f", {trial_text(r.trial, r.instances_expected)}" if r.trial else ""
        declared = r.settings.get("declared_criteria") or {}
        criteria = "".join(f", criterion {name} declared as data ({h})" for name, h in sorted(declared.items()))
        lines.append(
            f"{r.submission.model} ({r.submission.prompt_variant}): judge {r.judge.label}, "
            f"{r.judge.setting}, prompt set {ps.name} ({ps.hash}){criteria}, dataset {r.dataset_label}{trial}"
        )
    return lines


def protocol_section(results) -> str:  # type: ignore[no-untyped-def]
    """report.md's account of the protocol behind the numbers: per submission, what its runs recorded, and per
    results file its judge, prompt set and dataset revision."""
    groups: dict[tuple[str, str], list] = {}
    for r in results:
        groups.setdefault(
            (
                f"{r.submission.model} ({r.submission.prompt_variant})",
                r.protocol.model_dump_json() if r.protocol else "",
            ),
            [],
        ).append(r)
    lines = [
        "## Protocol",
        "",
        "The protocol each run asked for, and every way it departs from the paper's (recorded in the results files).",
        "",
    ]
    for (name, _), files in sorted(groups.items(), key=lambda kv: kv[0][0]):
        judges = ", ".join(sorted({f.judge.label for f in files}))
        rec = files[0].protocol
        if rec is None:
            lines.append(f"- {name}, judged by {judges}: not recorded (results written before protocols were)")
            continue
        n = len(rec.departures)
        lines.append(
            f"- {name}, judged by {judges}: protocol {rec.name}, {n} departure{'' if n == 1 else 's'} "
            "from the paper's protocol" + (":" if n else "")
        )
        lines += [f"  - {d.line()}" for d in rec.departures]
    lines += ["", "Every number below comes from these results files:", ""]
    lines += [f"- {line}" for line in provenance_lines(results)]
    return "\n".join(lines) + "\n"


def coverage_section(results, failures: FailureAccounting) -> str:  # type: ignore[no-untyped-def]
    """report.md's account of what each results file scored, and who failed where (``accounting.coverage_line``)."""
    from rqbench.evaluate.metrics.accounting import coverage_line, tally
    from rqbench.evaluate.report.table import UNJUDGED_MARK

    lines = ["## Coverage and failures", "", f"How failures enter the figures: {describe_failures(failures)}.", ""]
    incomplete = 0
    for r in sorted(
        results, key=lambda r: (r.submission.model, r.submission.prompt_variant, r.judge.label, r.judge.setting)
    ):
        cov = tally(r)
        incomplete += cov.unjudged
        name = (
            r.submission.model
            if r.submission.prompt_variant == "original"
            else f"{r.submission.model} ({r.submission.prompt_variant})"
        )
        mark = (" **TRIAL**" if r.trial else "") + (" **incomplete**" if cov.unjudged else "")
        lines.append(f"- {name}, judge {r.judge.label}, {r.judge.setting}{mark}: {coverage_line(r, cov)}")
    if any(r.trial for r in results):
        lines += [
            "",
            "A **TRIAL** judged only the first N instances of the dataset revision (`--limit N`): its "
            "figures are over those instances, not the release, and its rows (marked `[trial N/M]`) are "
            "never ranked beside full runs. The instances outside it are not in the run: nobody's failure.",
        ]
    if incomplete:
        lines += [
            "",
            f"{UNJUDGED_MARK} in a table marks a figure that lacks instances a judge's calls failed on "
            "(after their re-ask); rerun `rqbench judge` with `--retry-failed` to ask them again.",
        ]
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.benchmark.trial import one_run_each
    from rqbench.evaluate.judge_board.meta_eval import meta_evaluate
    from rqbench.evaluate.metrics.summary import load_results, summarize
    from rqbench.evaluate.report import judge_tables, plots, table, tables
    from rqbench.evaluate.report.judge_stability import judge_stability_tables
    from rqbench.evaluate.report.length_control import length_tables

    try:
        results = load_results(args.results)
    except (FileNotFoundError, ValueError) as exc:
        print(f"rqbench report: {exc}", file=sys.stderr)
        return 2
    if not results:
        print("rqbench report: no results files given", file=sys.stderr)
        return 2
    opts = score_options(args)
    source_dates = None
    if args.source_dates:
        from datetime import date

        raw = json.loads(args.source_dates.read_text(encoding="utf-8"))
        source_dates = {k: date.fromisoformat(v) for k, v in raw.items()}
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows = summarize(
        results,
        combine=args.combine,
        by_subfield=args.by_subfield,
        source_dates=source_dates,
        options=opts,
        n_boot=args.n_boot,
        seed=args.seed,
    )
    (out / "summary.json").write_text(json.dumps([r.model_dump(mode="json") for r in rows], indent=1), encoding="utf-8")

    all_tables = _dataset_tables(results) + tables.summary_tables(rows, by_subfield=args.by_subfield)
    all_tables += judge_stability_tables(rows)
    each = one_run_each(results)  # a trial beside its full run is read once (evaluate/benchmark/trial.py)
    all_tables.append(judge_tables.meta_eval_table(meta_evaluate(each, opts)))
    all_tables += length_tables(each, n_boot=args.n_boot, seed=args.seed)
    paired = _paired(results, args)
    if paired:
        labels = sorted({r.judge.label for r in results})
        combined = describe_combine_rule(args.combine, labels) if len(labels) >= 2 else ""
        all_tables.append(judge_tables.paired_table(paired, combined))
    if args.annotations:
        from rqbench.evaluate.judge_board.agreement import agreement_report, read_annotation_files
        from rqbench.evaluate.judge_board.expert_corrected import corrected_by_judge

        files = pick_submission(each, args.annotated_model, args.annotated_variant)
        try:
            anns = read_annotation_files(args.annotations)
            rep = agreement_report(
                anns,
                files,
                source_bound_setting=args.source_bound_setting or "comparative",
                options=opts,
                n_boot=args.n_boot,
                seed=args.seed,
            )
        except (FileNotFoundError, ValueError) as exc:
            print(f"rqbench report: {exc}", file=sys.stderr)
            return 2
        revised = rep.prompt_variant != "original"
        all_tables += judge_tables.agreement_tables(
            rep, suffix=f"_{rep.prompt_variant}" if revised else "", paper=("11", "12") if revised else ("5", "9")
        )
        # the structured record of the agreement tables, with the settings their picks come from
        (out / "agreement.json").write_text(rep.model_dump_json(indent=1), encoding="utf-8")
        corrected = corrected_by_judge(anns, files, opts)
        if corrected:
            all_tables.append(
                judge_tables.expert_corrected_table(
                    corrected,
                    model=rep.model,
                    prompt_variant=rep.prompt_variant,
                    suffix=f"_{rep.prompt_variant}" if revised else "",
                )
            )
    if args.cited_papers:
        sim = _similarity(each, args, opts)
        if sim is not None:
            all_tables.append(sim)
    from rqbench.evaluate.metrics.diversity import DEFAULT_EMBEDDER, attach_diversity, diversity_rows
    from rqbench.evaluate.metrics.similarity import Embedder, EmbedderUnavailable, packaged_name

    embedder = DEFAULT_EMBEDDER
    if args.diversity:  # embed what is not stored yet, in memory: `rqbench diversity` is what stores it
        embedder = packaged_name(args.diversity) or args.diversity.strip()
        try:
            attach_diversity(each, Embedder(args.diversity))
        except EmbedderUnavailable as exc:
            print(f"rqbench report: --diversity: {exc}; only stored diversity is written", file=sys.stderr)
    all_tables.append(tables.cost_table(rows))
    diversity = diversity_rows(each, embedder, n_boot=args.n_boot, seed=args.seed)
    if diversity:
        all_tables.append(tables.diversity_table(diversity))

    try:
        board = judge_board_section(args, out)
    except ValueError as exc:  # a RecordError too: the file and the field are named
        print(f"rqbench report: {exc}", file=sys.stderr)
        return 2
    written = []
    provenance = [
        "Every number in this table comes from these results files (report.md has the protocol):",
        *provenance_lines(results),
    ]
    for t in all_tables:
        written += table.write_table(t, out, provenance, demo_text(results))
    note = demo_note(results)
    (out / "report.md").write_text(
        "# RQ-Bench report\n\n"
        + note
        + protocol_section(results)
        + "\n"
        + coverage_section(results, opts.failures)
        + "\n"
        + "\n".join(table.to_markdown(t) for t in all_tables)
        + ("\n" + board if board else ""),
        encoding="utf-8",
    )
    plots.novelty_vs_source_bound(rows, out / "novelty_vs_source_bound.png")
    plots.win_tie_lose_bars(rows, out / "win_tie_lose.png")
    plots_n = 3 if board else 2
    print(
        f"wrote {len(all_tables)} tables ({len(written)} files), {plots_n} plots and summary.json to {out}"
        + (" with the judge board" if board else "")
    )
    if note:
        print(
            "note: a demo model generated or judged these figures; they show the machinery and are not results "
            "(report.md says which)"
        )
    return 0
