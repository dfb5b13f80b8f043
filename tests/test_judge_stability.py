"""Judge stability: Kendall's tau between judges' rankings, leave-one-judge-out, and models moved beyond their
interval, on hand-built summary rows whose figures are worked out by hand below."""

from __future__ import annotations

import pytest

from rqbench.evaluate.metrics.summary_row import COMBINED, Figure, Provenance, SummaryRow
from rqbench.evaluate.report.judge_stability import (
    MOVED_MARK,
    judge_stability,
    judge_stability_tables,
    rank_interval,
    ranks,
)

PROV = Provenance(
    judge_models=["x"],
    judge_labels=["x"],
    prompt_sets=[],
    dataset_repo="d",
    dataset_revision="v",
    instances_covered=10,
    instances_expected=10,
)


def row(model: str, judge: str, win: float, half: float = 0.05, **kw) -> SummaryRow:
    fig = Figure(value=win, ci_low=win - half, ci_high=win + half, std=0.1, n=10, n_clusters=5)
    return SummaryRow(
        model=model,
        prompt_variant="original",
        setting=kw.pop("setting", "comparative"),
        judge=judge,
        provenance=kw.pop("provenance", PROV),
        figures={"win_non_obviousness": fig},
        **kw,
    )


def test_ranks_put_the_best_first_and_share_ties():
    assert ranks([0.2, 0.5, 0.5, 0.1], higher_is_better=True).tolist() == [3, 1.5, 1.5, 4]
    assert ranks([0.2, 0.5, 0.1], higher_is_better=False).tolist() == [2, 3, 1]


def test_the_rank_interval_counts_the_surely_better_and_the_surely_worse():
    # intervals: a [0.6, 0.8], b [0.5, 0.7], c [0.1, 0.2]. a: nothing wholly above it, c wholly below -> 1..2.
    # b: nothing wholly above (a overlaps), c below -> 1..2. c: a and b wholly above -> 3..3.
    lows, highs = [0.6, 0.5, 0.1], [0.8, 0.7, 0.2]
    assert [rank_interval(i, lows, highs, True) for i in range(3)] == [(1, 2), (1, 2), (3, 3)]
    # intervals that touch (0.5 is in both) leave either order possible
    assert rank_interval(1, [0.5, 0.3], [0.7, 0.5], True) == (1, 2)
    # lower is better: c is surely first
    assert rank_interval(2, lows, highs, False) == (1, 1)
    assert rank_interval(0, lows, highs, False) == (2, 3)


def test_two_judges_that_agree_give_tau_one_and_mark_nobody():
    rows = [row(m, j, w) for j in ("A", "B") for m, w in (("m1", 0.6), ("m2", 0.4), ("m3", 0.2))]
    rep = judge_stability(rows, "comparative")
    assert rep is not None and rep.judges == ["A", "B"]
    assert [(p.first, p.second, p.tau) for p in rep.pairs] == [("A", "B", 1.0)]
    assert all(p.tau == 1.0 for p in rep.leave_one_out)
    assert not any(m.moved for m in rep.models)


def test_a_reversal_beyond_the_intervals_gives_tau_minus_one_and_marks_the_ends():
    # A: m1 0.6, m2 0.4, m3 0.2 (intervals +-0.05, none overlapping: each rank is fixed under A).
    # B: the reverse. Concordant pairs 0 of 3 -> tau = -1. Every model's B rank lies outside A's fixed rank,
    # except m2, which is 2nd under both.
    rows = [row(m, "A", w) for m, w in (("m1", 0.6), ("m2", 0.4), ("m3", 0.2))]
    rows += [row(m, "B", w) for m, w in (("m1", 0.2), ("m2", 0.4), ("m3", 0.6))]
    rep = judge_stability(rows, "comparative")
    assert rep.pairs[0].tau == -1.0
    moved = {m.model: m.moved for m in rep.models}
    assert moved == {"m1": True, "m2": False, "m3": True}
    m1 = next(m for m in rep.models if m.model == "m1")
    assert "B ranks it 3, outside A's 1-1" in m1.why
    # leave-one-judge-out with two judges: without A is B's ranking; the mean of both ties all three at 0.4,
    # so the all-judge ranking is all tied and tau is undefined
    assert [p.tau for p in rep.leave_one_out] == [None, None]


def test_a_swap_within_overlapping_intervals_is_not_marked():
    # A: m1 0.50, m2 0.48; B: m1 0.48, m2 0.50, intervals +-0.05 overlap: each judge allows ranks 1-2 for both.
    # tau = -1 (one discordant pair), yet neither moved beyond its interval.
    rows = [row("m1", "A", 0.50), row("m2", "A", 0.48), row("m1", "B", 0.48), row("m2", "B", 0.50)]
    rep = judge_stability(rows, "comparative")
    assert rep.pairs[0].tau == -1.0
    assert not any(m.moved for m in rep.models)


def test_three_judges_tau_per_pair_and_leave_one_out_by_hand():
    # values (m1, m2, m3, m4): A (0.8, 0.6, 0.4, 0.2); B (0.8, 0.6, 0.2, 0.4); C (0.2, 0.4, 0.6, 0.8).
    # A vs B: of 6 pairs only (m3, m4) is discordant -> tau = (5 - 1) / 6 = 2/3.
    # A vs C: all 6 discordant -> -1. B vs C: only (m3, m4) concordant -> (1 - 5) / 6 = -2/3.
    # Mean of all: (0.6, 0.533, 0.4, 0.467) -> order m1, m2, m4, m3.
    # Without C: mean of A and B (0.8, 0.6, 0.3, 0.3) -> m3 and m4 tie at 3.5: tau-b against m1, m2, m4, m3
    # with one tie: concordant 5, discordant 0, tied-in-x 1 -> 5 / sqrt(5 * 6) = 0.9129.
    vals = {"A": (0.8, 0.6, 0.4, 0.2), "B": (0.8, 0.6, 0.2, 0.4), "C": (0.2, 0.4, 0.6, 0.8)}
    rows = [row(f"m{i + 1}", j, v) for j, vs in vals.items() for i, v in enumerate(vs)]
    rep = judge_stability(rows, "comparative")
    taus = {(p.first, p.second): p.tau for p in rep.pairs}
    assert taus[("A", "B")] == pytest.approx(2 / 3)
    assert taus[("A", "C")] == pytest.approx(-1)
    assert taus[("B", "C")] == pytest.approx(-2 / 3)
    loo = {p.first: p.tau for p in rep.leave_one_out}
    assert loo["all but C"] == pytest.approx(5 / (5 * 6) ** 0.5)
    m3 = next(m for m in rep.models if m.model == "m3")
    assert m3.leave_one_out["C"] == 3.5


def test_only_models_every_judge_scored_are_ranked_and_others_are_named():
    rows = [row(m, j, w) for j in ("A", "B") for m, w in (("m1", 0.6), ("m2", 0.4))] + [row("m3", "A", 0.1)]
    rep = judge_stability(rows, "comparative")
    assert [m.model for m in rep.models] == ["m1", "m2"] and rep.left_out == ["m3"]


def test_combined_reference_trial_and_one_judge_rows_give_no_report():
    base = [row(m, "A", w) for m, w in (("m1", 0.6), ("m2", 0.4))]
    assert judge_stability(base, "comparative") is None  # one judge
    combined = [row(m, COMBINED, w) for m, w in (("m1", 0.6), ("m2", 0.4))]
    trial = PROV.model_copy(update={"trial": 1})
    trials = [row(m, "B", w, provenance=trial) for m, w in (("m1", 0.6), ("m2", 0.4))]
    assert judge_stability(base + combined + trials, "comparative") is None
    assert judge_stability(base + [row(m, "B", w) for m, w in (("m1", 0.6), ("m2", 0.4))], "standalone") is None


def test_the_report_tables_show_the_tau_the_ranks_and_the_mark():
    rows = [row(m, "A", w) for m, w in (("m1", 0.6), ("m2", 0.4), ("m3", 0.2))]
    rows += [row(m, "B", w) for m, w in (("m1", 0.2), ("m2", 0.4), ("m3", 0.6))]
    agreement, ranked = judge_stability_tables(rows)
    assert agreement.name == "judge_rank_agreement_comparative"
    assert agreement.display.loc["A vs B", "Kendall's tau-b"] == "-1.00"
    assert agreement.display.loc["all but A vs all judges", "Kendall's tau-b"] == "undefined (all tied)"
    assert ranked.display.loc[f"m1 {MOVED_MARK}", "A"] == "1 [1-1]"
    assert ranked.display.loc[f"m1 {MOVED_MARK}", "B"] == "3 [3-3]"
    assert ranked.display.loc["m2", "rank without A"] == "2"
    assert "(2 of 3)" in ranked.caption
    assert set(ranked.data.columns) >= {"model", "judge", "rank", "rank_best", "rank_worst", "moved"}
