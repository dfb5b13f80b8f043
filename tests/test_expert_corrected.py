"""Expert-corrected win rates (prediction-powered inference), checked against numbers worked out by hand.

Every expected number below is arithmetic written out in a comment, never a second call of the function: a
formula that drops the rectifier, a variance term or the mean of two experts fails here.
"""

from __future__ import annotations

import csv
import math
from datetime import datetime, timezone

import pytest

from rqbench.evaluate.judge_board.expert_corrected import (
    MIN_EXPERT_LABELS,
    TOO_FEW_LABELS,
    expert_corrected_win_rate,
    judge_instance_picks,
)
from rqbench.testing.synthetic import make_results

Z = 1.959963984540054  # the standard normal's 97.5% quantile


def _labels(n: int, pick: str = "gt") -> dict[str, dict[str, str]]:
    return {f"i{k}": {"e1": pick} for k in range(n)}


def test_a_hand_computed_case_with_ties_two_experts_and_unlabelled_instances():
    judge = {"a": "model", "b": "model", "c": "gt", "d": "tie", "e": "model"}
    experts = {"a": {"x": "gt"}, "b": {"x": "model", "y": "gt"}, "c": {"x": "tie"}}
    got = expert_corrected_win_rate(judge, experts, min_labels=3)
    # judge win indicators f = a 1, b 1, c 0, d 0 (a tie is not a win), e 1: rate 3/5 = 0.6
    # experts' indicators Y = a 0, b (1 + 0)/2 = 0.5 (two experts: the mean), c 0 (a tie)
    # rectifier d = Y - f = a -1, b -0.5, c 0: mean -0.5, so theta = 0.6 - 0.5 = 0.1
    # s_f^2 = (3 * 0.4^2 + 2 * 0.6^2) / 4 = 1.2 / 4 = 0.3; s_d^2 = (0.5^2 + 0 + 0.5^2) / 2 = 0.25
    # the 3 labelled are among the 5 judged: lam = (5 - 3) / 5 = 0.4, r = Y - lam f = a -0.4, b 0.1, c 0 (mean -0.1)
    # s_r^2 = (0.3^2 + 0.2^2 + 0.1^2) / 2 = 0.07; se^2 = lam^2 s_f^2 / (N - n) + s_r^2 / n
    #       = 0.16 * 0.3 / 2 + 0.07 / 3 = 0.024 + 0.023333 = 0.047333, se = 0.217562
    se = math.sqrt(0.16 * 0.3 / 2 + 0.07 / 3)
    assert got.judged == 5 and got.labelled == 3 and got.labels == 4 and not got.too_few_labels
    assert got.judge_rate == pytest.approx(0.6)
    assert got.rectifier == pytest.approx(-0.5)
    assert got.value == pytest.approx(0.1)
    assert got.std_error == pytest.approx(0.217562, abs=1e-6)
    assert (got.ci_low, got.ci_high) == pytest.approx((0.1 - Z * se, 0.1 + Z * se))
    assert (got.ci_low, got.ci_high) == pytest.approx((-0.326414, 0.526414), abs=1e-6)
    # the raw rate's interval: 0.6 +- 1.96 * sqrt(0.3 / 5)
    assert got.judge_std_error == pytest.approx(math.sqrt(0.06))
    assert (got.judge_ci_low, got.judge_ci_high) == pytest.approx(
        (0.6 - Z * math.sqrt(0.06), 0.6 + Z * math.sqrt(0.06))
    )


def test_no_labels_gives_the_raw_rate_and_no_corrected_figure():
    got = expert_corrected_win_rate({"a": "model", "b": "gt"}, {})
    assert got.judge_rate == pytest.approx(0.5) and got.labelled == 0 and got.labels == 0
    assert got.too_few_labels and got.value is None and got.ci_low is None and got.rectifier is None


def test_too_few_labels_below_the_threshold_and_a_figure_at_it():
    judge = {f"i{k}": "model" for k in range(20)}
    below = expert_corrected_win_rate(judge, _labels(MIN_EXPERT_LABELS - 1))
    assert below.too_few_labels and below.value is None and below.labelled == MIN_EXPERT_LABELS - 1
    at = expert_corrected_win_rate(judge, _labels(MIN_EXPERT_LABELS))
    # f = 1 on all 20 (rate 1.0); Y = 0 on the 10 labelled: d = -1 each, so theta = 1 - 1 = 0; s_f = 0 and
    # r = Y - lam f = -0.5 on every labelled instance: se 0
    assert not at.too_few_labels and at.value == pytest.approx(0.0) and at.std_error == pytest.approx(0.0)
    with pytest.raises(ValueError, match="at least 2"):
        expert_corrected_win_rate(judge, {}, min_labels=1)


def test_every_instance_labelled_gives_the_experts_own_rate():
    judge = {"a": "model", "b": "model", "c": "tie", "d": "gt"}
    experts = {"a": {"x": "gt"}, "b": {"x": "model"}, "c": {"x": "model", "y": "model"}, "d": {"x": "tie"}}
    got = expert_corrected_win_rate(judge, experts, min_labels=2)
    # Y = a 0, b 1, c 1, d 0: the experts' rate 2/4 = 0.5; f = 1, 1, 0, 0 (rate 0.5); d = -1, 0, 1, 0 (mean 0)
    # theta = 0.5 + 0 = 0.5. Every instance labelled: lam = 0, so se^2 = s_Y^2 / n, the experts' own:
    # s_Y^2 = 4 * 0.25 / 3 = 1/3, se^2 = 1/12, se = 0.288675 (adding s_f^2/N + s_d^2/n would give 0.5)
    assert got.value == pytest.approx(0.5) and got.rectifier == pytest.approx(0.0)
    assert got.std_error == pytest.approx(0.288675, abs=1e-6)


def test_a_labelled_instance_the_judge_did_not_score_is_left_out_and_counted():
    judge = {"a": "model", "b": "gt"}
    experts = {"a": {"x": "gt"}, "b": {"x": "gt"}, "z": {"x": "model"}, "empty": {}}
    got = expert_corrected_win_rate(judge, experts, min_labels=2)
    # z has no judge pick: out of the rectifier; "empty" holds no pick: unlabelled. d = a -1, b 0: mean -0.5
    assert got.labelled == 2 and got.labelled_unjudged == 1 and got.value == pytest.approx(0.5 - 0.5)


def test_no_judge_picks():
    got = expert_corrected_win_rate({}, _labels(12))
    assert got.judged == 0 and got.judge_rate is None and got.value is None and got.labelled_unjudged == 12


# The paper's A.6 study: ten gpt-5.5 samples, each with both experts' picks and both paper judges' picks.
#
#   sample          1     2   3   4      5   6    7      8   9     10
#   expert_1        model gt  gt  gt     gt  gt   gt     gt  model gt
#   expert_2        model gt  gt  model  gt  gt   model  gt  model model
#   Y (mean)        1     0   0   0.5    0   0    0.5    0   1     0.5     sum 3.5, experts' rate 0.35
#   gemini-3.1-pro  model model model model model gt gt model model model  f: 1 1 1 1 1 0 0 1 1 1, rate 0.8
#   deepseek-v4-pro model model model model model tie model model tie model f: 1 1 1 1 1 0 1 1 0 1, rate 0.8
#
# Every sample is labelled (N = n = 10), so theta_PP is the experts' own rate, 0.8 + (0.35 - 0.8) = 0.35, for both.
# gemini:   d = 0 -1 -1 -0.5 -1 0 0.5 -1 0 -0.5 (sum -4.5, mean -0.45); squared deviations from -0.45:
#           0.2025 0.3025 0.3025 0.0025 0.3025 0.2025 0.9025 0.3025 0.2025 0.0025 = 2.725, s_d^2 = 2.725/9
# deepseek: d = 0 -1 -1 -0.5 -1 0 -0.5 -1 1 -0.5 (sum -4.5, mean -0.45); squared deviations:
#           0.2025 0.3025 0.3025 0.0025 0.3025 0.2025 0.0025 0.3025 2.1025 0.0025 = 3.725, s_d^2 = 3.725/9
# The judges' rectifiers differ (their squared deviations: gemini 2.725, deepseek 3.725), but with every sample
# labelled lam = 0 and the judge term drops out: se^2 = s_Y^2 / 10 for both. Y's deviations from 0.35:
#           0.65 -0.35 -0.35 0.15 -0.35 -0.35 0.15 -0.35 0.65 0.15; squares sum 2 * 0.4225 + 5 * 0.1225 + 3 * 0.0225
#           = 1.525, s_Y^2 = 1.525/9 = 0.169444, se^2 = 0.0169444, se = 0.130171
# 95% CI = 0.35 +- 1.959964 * 0.130171 = [0.0949, 0.6051] for both (adding s_f^2/N + s_d^2/n, as if the judge's
# picks were a second sample, gave gemini [-0.0797, 0.7797] and deepseek [-0.1267, 0.8267])
A6_EXPECTED = {
    "gemini-3.1-pro": (1.525, (0.0949, 0.6051)),
    "deepseek-v4-pro": (1.525, (0.0949, 0.6051)),
}


@pytest.mark.parametrize("judge", sorted(A6_EXPECTED))
def test_the_paper_a6_study_corrected_gpt55_win_rate(shared, judge):
    from rqbench.evaluate.judge_board.expert_pool import a6_pairs

    pairs = a6_pairs(shared / "fixtures" / "paper_examples" / "expert_vs_llm.jsonl")
    assert {p.model for p in pairs} == {"gpt-5.5"} and len(pairs) == 10
    got = expert_corrected_win_rate(
        {p.pair_id: p.reference_picks[judge] for p in pairs}, {p.pair_id: p.expert_picks for p in pairs}
    )
    squares, interval = A6_EXPECTED[judge]
    assert got.judged == 10 and got.labelled == 10 and got.labels == 20 and not got.too_few_labels
    assert got.judge_rate == pytest.approx(0.8)
    assert got.rectifier == pytest.approx(-0.45)
    assert got.value == pytest.approx(0.35)
    assert got.std_error == pytest.approx(math.sqrt((squares / 9) / 10))
    assert (got.ci_low, got.ci_high) == pytest.approx(interval, abs=1e-4)


# --------------------------------------------------------------------------
# The judge term is the row's raw win rate; the board and the report show the figure
# --------------------------------------------------------------------------


def test_the_judge_term_is_the_summary_rows_raw_win_rate():
    from rqbench.evaluate.metrics.summary import summarize

    files = [make_results("model-a", judge=j, setting="comparative", n_instances=24, seed=7, bias=0.3) for j in "ab"]
    rows = summarize(files, n_boot=20)
    for f in files:
        picks = judge_instance_picks(f)
        row = next(r for r in rows if r.judge == f.judge.label and r.row_kind == "model")
        assert len(picks) == 24
        assert sum(p == "model" for p in picks.values()) / 24 == pytest.approx(row.figure("win_non_obviousness").value)
        assert sum(p == "tie" for p in picks.values()) / 24 == pytest.approx(row.figure("tie_non_obviousness").value)


def _annotated(n_labelled: int):
    """Two comparative judges and a standalone one on 24 instances; two annotators on the first ``n_labelled``."""
    from rqbench.space import annotate as an

    res = [
        make_results("model-a", judge=j, setting=s, n_instances=24, seed=7, bias=0.3)
        for j in ("judge-a", "judge-b")
        for s in ("comparative", "standalone")
    ]
    t0 = datetime(2026, 5, 1, 9, 0, tzinfo=timezone.utc)
    pairs = an.build_pairs(res)
    judgments = [
        an.make_judgment(who, p, ("left", "right", "tie")[(k + len(who)) % 3], shown_at=t0)
        for k, p in enumerate(pairs[:n_labelled])
        for who in ("h1", "h22")
    ]
    return res, judgments


def test_the_leaderboard_shows_the_corrected_figure_its_interval_and_labels():
    from rqbench.evaluate.metrics.summary import summarize
    from rqbench.space import annotate as an
    from rqbench.space import leaderboard as lb
    from rqbench.space import leaderboard_cells as lb_cells

    res, judgments = _annotated(12)
    cells = an.expert_corrected_cells(judgments, res)
    assert set(cells) == {("model-a", "comparative", "judge-a"), ("model-a", "comparative", "judge-b")}
    # by hand from the stored picks: f over 24 instances, the annotators' mean indicator over the 12 labelled
    experts: dict[str, list[float]] = {}
    for j in judgments:
        experts.setdefault(j.rq_id, []).append(float(j.winner == "model"))
    table = lb.build_table(summarize(res, n_boot=20), corrected=cells)
    for f in res[::2]:
        f_win = {rq: float(p == "model") for rq, p in judge_instance_picks(f).items()}
        rate = sum(f_win.values()) / 24
        rect = sum(sum(v) / len(v) - f_win[rq] for rq, v in experts.items()) / 12
        c = cells[("model-a", "comparative", f.judge.label)]
        assert c.labelled == 12 and c.labels == 24 and c.value == pytest.approx(rate + rect)
        row = table[(table.Judge == f.judge.label) & (table.Setting == "comparative")].iloc[0]
        assert row["Expert-corrected win % (non-obviousness)"] == round(100 * (rate + rect), 1)
        assert row["Expert-corrected win % (non-obviousness) 95% CI"] == (
            f"[{100 * c.ci_low:.1f}, {100 * c.ci_high:.1f}]"
        )
        assert row["Expert labels"] == "12 (24 picks)"
    out = lb.render(table, lb.View(judges=(), groups=lb.GROUPS))
    for label in ("Expert-corrected win % (non-obviousness)", "Expert labels"):
        assert label in out.columns
    headers, rows, _ = lb_cells.display(table, lb.View(judges=(), groups=lb.GROUPS, settings=("comparative",)))
    labels = [h.label for h in headers]
    k, judge = labels.index("Expert-corrected win % (non-obviousness)"), labels.index("Judge")
    shown = {r[judge].text: r[k] for r in rows}  # judge -> the corrected cell
    assert shown["judge-a"].kind == "num" and "raw" in shown["judge-a"].title
    assert shown["combined"].kind == "missing" and "per judge" in shown["combined"].title
    assert "prediction-powered" in headers[k].title


def test_the_leaderboard_says_too_few_labels_below_the_threshold():
    from rqbench.evaluate.metrics.summary import summarize
    from rqbench.space import annotate as an
    from rqbench.space import leaderboard as lb
    from rqbench.space import leaderboard_cells as lb_cells

    res, judgments = _annotated(MIN_EXPERT_LABELS - 1)
    table = lb.build_table(summarize(res, n_boot=20), corrected=an.expert_corrected_cells(judgments, res))
    row = table[(table.Judge == "judge-a") & (table.Setting == "comparative")].iloc[0]
    assert row["Expert-corrected win % (non-obviousness)"] is None
    assert row["Expert labels"] == f"{MIN_EXPERT_LABELS - 1} (18 picks): {TOO_FEW_LABELS}"
    headers, rows, _ = lb_cells.display(
        table, lb.View(judges=("judge-a",), groups=lb.GROUPS, settings=("comparative",))
    )
    labels = [h.label for h in headers]
    k, judge = labels.index("Expert-corrected win % (non-obviousness)"), labels.index("Judge")
    (cell,) = [r[k] for r in rows if r[judge].text == "judge-a"]
    assert cell.text == TOO_FEW_LABELS and f"at least {MIN_EXPERT_LABELS}" in cell.title


def _report(tmp_path, n_labelled: int):
    from rqbench.cli import main

    res = [
        make_results("model-a", judge=j, setting=s, n_instances=24, seed=7, bias=0.3)
        for j in ("judge-a", "judge-b")
        for s in ("comparative", "standalone")
    ]
    folder = tmp_path / "results"
    folder.mkdir()
    for k, r in enumerate(res):
        (folder / f"r{k}.json").write_text(r.model_dump_json(), encoding="utf-8")
    ann = tmp_path / "ann.csv"
    with ann.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rq_id", "evaluator", "winner"])
        for k, inst in enumerate(res[0].instances[:n_labelled]):
            w.writerow([inst.rq_id, "expert-1", "gt"])
            w.writerow([inst.rq_id, "expert-2", "gt" if k % 2 else "model"])
    out = tmp_path / "report"
    assert main(["report", str(folder), "--out", str(out), "--annotations", str(ann), "--n-boot", "20"]) == 0
    return res, out


def test_the_report_table_shows_raw_and_corrected_figures(tmp_path, capsys):
    res, out = _report(tmp_path, 12)
    md = (out / "expert_corrected.md").read_text(encoding="utf-8")
    assert md.splitlines()[0] in (out / "report.md").read_text(encoding="utf-8")  # report.md holds the table
    for f in res[::2]:
        picks = judge_instance_picks(f)
        rate = sum(p == "model" for p in picks.values()) / 24
        # the annotators' indicators: expert-1 always 0, expert-2 1 on even k: Y = 0.5 on the 6 even, 0 on the 6 odd
        labelled = [inst.rq_id for inst in res[0].instances[:12]]
        rect = sum((0.5 if k % 2 == 0 else 0.0) - float(picks[rq] == "model") for k, rq in enumerate(labelled)) / 12
        line = next(x for x in md.splitlines() if x.startswith(f"| {f.judge.label} |"))
        assert f"| 24 | {100 * rate:.1f} [" in line and "| 12 (24) |" in line
        assert f"| {100 * rect:+.1f} | {100 * (rate + rect):.1f} [" in line
    assert "prediction-powered inference" in md and "Angelopoulos" in md


def test_the_report_table_says_too_few_labels(tmp_path, capsys):
    _, out = _report(tmp_path, MIN_EXPERT_LABELS - 1)
    md = (out / "expert_corrected.md").read_text(encoding="utf-8")
    assert md.count(f"{TOO_FEW_LABELS} (fewer than {MIN_EXPERT_LABELS})") == 2  # one row per comparative judge
