"""The tables about the judges: agreement with the experts (Tables 8 and 9), expert-corrected win rates, the judge meta-evaluation and the paired tests between judges."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from rqbench.evaluate.judge_board.agreement import SOURCE_BOUND_FLAG, AgreementMatrix, AgreementReport, WinRateRow
from rqbench.evaluate.judge_board.expert_corrected import METHOD as CORRECTED_METHOD
from rqbench.evaluate.judge_board.expert_corrected import MIN_EXPERT_LABELS, TOO_FEW_LABELS, ExpertCorrectedRate
from rqbench.evaluate.judge_board.meta_eval import MetaEvalRow
from rqbench.evaluate.metrics.bootstrap import Estimate
from rqbench.evaluate.metrics.shown_pair import RULE
from rqbench.evaluate.report.table import (
    TIDY_COLUMNS,
    Table,
    fmt_pct,
    tidy_frame,
)


def agreement_matrix_table(m: AgreementMatrix, *, name: str, caption: str, paper_table: str) -> Table:
    display = pd.DataFrame(index=m.rows, columns=m.cols, dtype=object)
    display.index.name = "evaluator"
    tidy = []
    for c in m.cells:
        display.loc[c.row, c.col] = fmt_pct(c.estimate)
        tidy.append((c.row, c.col, c.estimate))
    return Table(name, caption, paper_table, display.fillna("–"), tidy_frame(tidy))


def win_rate_table(rows: Sequence[WinRateRow], *, name: str, caption: str, paper_table: str) -> Table:
    display = pd.DataFrame(
        index=[r.evaluator for r in rows], columns=["group", "GT wins", "model wins", "tie"], dtype=object
    )
    display.index.name = "evaluator"
    tidy = []
    for r in rows:
        display.loc[r.evaluator] = [r.group, fmt_pct(r.gt), fmt_pct(r.model), fmt_pct(r.tie)]
        tidy += [(r.evaluator, "gt", r.gt), (r.evaluator, "model", r.model), (r.evaluator, "tie", r.tie)]
    return Table(name, caption, paper_table, display, tidy_frame(tidy))


def agreement_tables(rep: AgreementReport, *, suffix: str = "", paper: tuple[str, str] = ("5", "9")) -> list[Table]:
    """Tables 5(a,b) and 9(a,b) (or 11 and 12 for the revised prompt) for one annotated submission.

    The Table 9 (12) captions name the judging setting its source-boundedness picks come from
    (``rep.source_bound_setting``, ``--source-bound-setting``), which the paper does not give.
    """
    base = f"{rep.model} ({rep.prompt_variant} prompt), {rep.instances} instances"
    who = f"{base}, {rep.setting} judging"
    sb = f"source-boundedness from {rep.source_bound_setting} judging ({SOURCE_BOUND_FLAG} {rep.source_bound_setting})"
    out = [
        agreement_matrix_table(
            rep.matrix,
            name=f"agreement_matrix{suffix}",
            paper_table=f"Table {paper[0]}(a)",
            caption=f"Agreement % [95% CI] on comparative non-obviousness picks (GT / model / tie) "
            f"between every pair of evaluators, each pick on the GT against the RQ shown ({RULE}); "
            f"{who}.",
        ),
        win_rate_table(
            rep.win_rates,
            name=f"agreement_win_rates{suffix}",
            paper_table=f"Table {paper[0]}(b)",
            caption=f"Non-obviousness picks per evaluator, % [95% CI]; {who}.",
        ),
        win_rate_table(
            rep.source_bound_win_rates,
            name=f"source_bound_win_rates{suffix}",
            paper_table=f"Table {paper[1]}(a)",
            caption=f"Source-boundedness picks per LLM judge (the less source-bound RQ wins), %; {base}, {sb}.",
        ),
    ]
    if rep.nonobv_vs_source_bound is not None:
        out.append(
            agreement_matrix_table(
                rep.nonobv_vs_source_bound,
                name=f"nonobv_vs_source_bound{suffix}",
                paper_table=f"Table {paper[1]}(b)",
                caption=f"Agreement % between human non-obviousness picks (rows) and LLM source-boundedness picks "
                f"(columns); {base}, {sb}.",
            )
        )
    return out


def _pct_interval(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "–"
    ci = "" if low is None or high is None else f" [{100 * low:.1f}, {100 * high:.1f}]"
    return f"{100 * value:.1f}{ci}"


def expert_corrected_table(
    rates: Sequence[tuple[str, ExpertCorrectedRate]], *, model: str, prompt_variant: str, suffix: str = ""
) -> Table:
    """Per comparative judge: its raw Pass@5 non-obviousness win rate and the rate corrected with the expert
    labels (``evaluate.expert_corrected``), each with its 95% normal interval, and the labels behind it."""
    cols = [
        "instances judged (N)",
        "raw win % [95% CI]",
        "expert-labelled instances (picks)",
        "rectifier (points)",
        "expert-corrected win % [95% CI]",
    ]
    display = pd.DataFrame(columns=cols, dtype=object)
    display.index.name = "judge"
    tidy: list[tuple[str, str, Estimate | None]] = []
    for judge, c in rates:
        too_few = f"{TOO_FEW_LABELS} (fewer than {c.min_labels})"
        display.loc[judge] = [
            str(c.judged),
            _pct_interval(c.judge_rate, c.judge_ci_low, c.judge_ci_high),
            f"{c.labelled} ({c.labels})",
            "–" if c.rectifier is None else f"{100 * c.rectifier:+.1f}",
            too_few if c.too_few_labels else _pct_interval(c.value, c.ci_low, c.ci_high),
        ]
        if c.judge_rate is not None and c.judge_ci_low is not None and c.judge_ci_high is not None:
            raw = Estimate(
                value=c.judge_rate,
                ci_low=c.judge_ci_low,
                ci_high=c.judge_ci_high,
                std=c.judge_std_error or 0.0,
                n=c.judged,
                n_clusters=0,
            )
            tidy.append((judge, "raw_win_rate", raw))
        if c.value is not None and c.ci_low is not None and c.ci_high is not None:
            est = Estimate(
                value=c.value, ci_low=c.ci_low, ci_high=c.ci_high, std=c.std_error or 0.0, n=c.labelled, n_clusters=0
            )
            tidy.append((judge, "expert_corrected_win_rate", est))
    return Table(
        f"expert_corrected{suffix}",
        f"Expert-corrected Pass@5 non-obviousness win rate against the author-anchored RQ, % [95% CI], per "
        f"comparative judge; {model} ({prompt_variant} prompt). Corrected by {CORRECTED_METHOD}. The raw rate's "
        f"interval is the normal one too (s_judge^2/N); the CSV's std is each figure's standard error. Fewer than {MIN_EXPERT_LABELS} expert-labelled instances: "
        f"{TOO_FEW_LABELS}.",
        "beyond the paper",
        display,
        tidy_frame(tidy),
    )


def rule_list(counts: dict[str, int]) -> str:
    """``relevance_zero 3, covering_subset 1``: how often each of the paper's rules was applied; "none" if never."""
    return ", ".join(f"{rule} {n}" for rule, n in sorted(counts.items()) if n) or "none"


def _count(n: int) -> Estimate:
    return Estimate(value=n, ci_low=n, ci_high=n, n=n, n_clusters=0)


def meta_eval_table(rows: Sequence[MetaEvalRow]) -> Table:
    """The judge meta-evaluation (beyond the paper)."""
    cols = [
        "setting",
        "failed replies %",
        "invalid replies",
        "unscored %",
        "relevance-rule violations %",
        "rule applications / instance",
        "rules applied",
        "orderings",
        "same scores across orderings %",
        "same top across orderings %",
        "agreement with judges %",
        "length preference (Spearman)",
        "self-preference risk",
        "cost $",
        "seconds",
        "calls",
    ]
    display = pd.DataFrame(columns=cols, dtype=object)
    display.index.name = "judge"
    tidy = []
    for r in rows:
        key = f"{r.judge} ({r.setting})"
        lp = r.length_preference
        display.loc[key] = [
            r.setting,
            fmt_pct(r.failed_reply_rate),
            str(r.invalid_replies),
            fmt_pct(r.unscored_rate),
            fmt_pct(r.relevance_rule_violation_rate),
            f"{r.rule_corrections_per_instance:.2f}",
            rule_list(r.rule_applications),
            str(r.orderings),
            fmt_pct(r.position_score_consistency),
            fmt_pct(r.position_top_consistency),
            fmt_pct(r.agreement_with_judges),
            "–" if lp is None else f"{lp.value:+.2f} [{lp.ci_low:+.2f}, {lp.ci_high:+.2f}]",
            ", ".join(r.same_family_submissions) if r.self_preference_flag else "no",
            f"{r.cost_usd:.2f}",
            f"{r.seconds:.0f}",
            str(r.calls),
        ]
        tidy += [(key, f"rule:{rule}", _count(n)) for rule, n in r.rule_applications.items()]
        tidy.append((key, "invalid_replies", _count(r.invalid_replies)))
        tidy += [
            (key, "failed_reply_rate", r.failed_reply_rate),
            (key, "unscored_rate", r.unscored_rate),
            (key, "relevance_rule_violation_rate", r.relevance_rule_violation_rate),
            (key, "position_score_consistency", r.position_score_consistency),
            (key, "position_top_consistency", r.position_top_consistency),
            (key, "length_preference", lp),
        ]
        tidy += [(key, f"agreement_with:{other}", est) for other, est in r.agreement_by_judge.items()]
        tidy.append(
            (
                key,
                "cost_usd",
                Estimate(value=r.cost_usd, ci_low=r.cost_usd, ci_high=r.cost_usd, n=r.calls, n_clusters=0),
            )
        )
    return Table(
        "judge_meta_evaluation",
        "Judge meta-evaluation: reply failures (invalid replies: still invalid "
        "after their re-ask), the paper's rules applied to valid replies (relevance_zero, covering_subset), "
        "position consistency under shuffled orderings, agreement with the other judges, preference for longer RQs, "
        "shared family with a judged generator, and cost.",
        "beyond the paper",
        display,
        tidy_frame(tidy),
    )


def paired_table(entries: Sequence[tuple[str, str, str, object]], combined: str = "") -> Table:
    """Paired model-vs-model tests: (metric, model A, model B, PairedTest); ``combined`` says how several
    judges' values became one per instance (empty with one judge)."""
    display = pd.DataFrame(columns=["A", "B", "A − B", "95% CI", "p", "instances"], dtype=object)
    recs = []
    for i, (metric_name, a, b, t) in enumerate(entries):
        display.loc[f"{i + 1}. {metric_name}"] = [
            a,
            b,
            f"{t.diff:+.3f}",
            f"[{t.ci_low:+.3f}, {t.ci_high:+.3f}]",
            f"{t.p_value:.3g}",
            str(t.n),
        ]
        recs.append(
            {
                "row": f"{a} vs {b}",
                "column": metric_name,
                "value": t.diff,
                "ci_low": t.ci_low,
                "ci_high": t.ci_high,
                "std": float("nan"),
                "n": t.n,
                "p_value": t.p_value,
            }
        )
    note = f" Several judges' values per instance are combined: {combined}." if combined else ""
    return Table(
        "paired_tests",
        "Paired model-vs-model differences on shared instances (cluster bootstrap CI, "
        "cluster sign-flip p-value)." + note,
        "beyond the paper",
        display.rename_axis("metric"),
        pd.DataFrame(recs, columns=TIDY_COLUMNS + ["p_value"]),
    )
