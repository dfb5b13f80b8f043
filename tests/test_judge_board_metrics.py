"""The judge board's figures, recomputed by hand on small pools, and the paper's rows on the A.6 pairs.

Every expected number here was worked out on paper from the picks written in
the test, not from the code's output.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from rqbench.evaluate.judge_board.board import judge_row, make_board, paper_rows
from rqbench.evaluate.judge_board.expert_pool import a6_pairs, make_pool
from rqbench.evaluate.judge_board.metrics import (
    agreement,
    cohen_kappa,
    expert_agreement,
    kappa,
    majority,
    order_pick,
    pair_pick,
    pick_rate,
    position_consistency,
)
from rqbench.records import (
    CitedPaper,
    ExpertPair,
    JudgeBoardFile,
    JudgeSpec,
    NoveltyScore,
    OrderVerdict,
    PairVerdicts,
    PromptSetRef,
    RawReply,
)


def score(non_obviousness: int) -> NoveltyScore:
    return NoveltyScore(relevance=1, originality=1, gap_addressing=1, non_obviousness=non_obviousness)


def test_a_call_picks_the_higher_non_obviousness_and_a_pair_the_higher_mean():
    assert order_pick(score(3), score(1)) == "gt"
    assert order_pick(score(1), score(2)) == "model"
    assert order_pick(score(2), score(2)) == "tie"
    # both orders: gt 3 then 1 (mean 2), model 1 then 3 (mean 2): a tie, although each call had a winner
    assert pair_pick([(score(3), score(1)), (score(1), score(3))]) == "tie"
    assert pair_pick([(score(3), score(1)), (score(2), score(2))]) == "gt"  # 2.5 against 1.5
    assert pair_pick([(score(0), score(1))]) == "model"  # one order left
    assert pair_pick([]) is None


def test_the_majority_is_strict():
    assert majority({"a": "gt", "b": "gt"}) == "gt"
    assert majority({"a": "gt", "b": "model"}) is None  # two experts split: no majority
    assert majority({"a": "model", "b": "model", "c": "gt"}) == "model"
    assert majority({"a": "gt", "b": "model", "c": "tie"}) is None
    assert majority({}) is None


def test_cohens_kappa_by_hand():
    # po = 2/3; the judge's shares gt, tie, model 1/3 each, the other's gt 1/3, model 2/3:
    # pe = 1/3 * 1/3 + 1/3 * 2/3 = 1/3; kappa = (2/3 - 1/3) / (1 - 1/3) = 0.5
    assert cohen_kappa(["gt", "tie", "model"], ["gt", "model", "model"]) == pytest.approx(0.5)
    assert cohen_kappa(["gt", "model"], ["gt", "model"]) == pytest.approx(1.0)
    # po = 0, pe = 1/2: kappa = -1
    assert cohen_kappa(["gt", "model"], ["model", "gt"]) == pytest.approx(-1.0)
    assert cohen_kappa(["gt", "gt"], ["gt", "gt"]) is None  # one and the same pick throughout: undefined
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="2 picks against 1"):
        cohen_kappa(["gt", "gt"], ["gt"])


# A small pool, worked by hand. Experts e1, e2 on every pair, e3 on p4 only:
#   p1: e1 gt,    e2 gt                 -> majority gt
#   p2: e1 model, e2 gt                 -> no majority
#   p3: e1 model, e2 model              -> majority model
#   p4: e1 model, e2 model, e3 gt       -> majority model
# The judge's two calls per pair, (gt, model) non-obviousness:
#   p1: (3, 1) and (3, 1)  -> gt, gt       pair gt
#   p2: (2, 2) and (2, 2)  -> tie, tie     pair tie
#   p3: (3, 1) and (1, 3)  -> gt, model    pair tie (means 2 and 2); not position-consistent
#   p4: (1, 3) and (1, 3)  -> model, model pair model
EXPERTS = {
    "p1": {"e1": "gt", "e2": "gt"},
    "p2": {"e1": "model", "e2": "gt"},
    "p3": {"e1": "model", "e2": "model"},
    "p4": {"e1": "model", "e2": "model", "e3": "gt"},
}
CALLS = {"p1": [(3, 1), (3, 1)], "p2": [(2, 2), (2, 2)], "p3": [(3, 1), (1, 3)], "p4": [(1, 3), (1, 3)]}


def small_pair(pid: str) -> ExpertPair:
    return ExpertPair(
        pair_id=pid,
        source="annotate",
        provenance="constructed for a test",
        rq_id=f"2501.0000{pid[-1]}_rq0",
        model="m",
        gt_rq=f"What explains {pid} for the author?",
        model_rq=f"What explains {pid} for the model?",
        background=[CitedPaper(paper_id=f"bg-{pid}", title="t", abstract="a", text_level="abstract")],
        expert_picks=EXPERTS[pid],
    )


def verdict(
    order: str,
    gt: int,
    model: int,
    *,
    cost: float | None = 0.01,
    latency: float | None = 2.0,
    reasked: bool = False,
    repairs: int = 0,
) -> OrderVerdict:
    return OrderVerdict(
        order=order,
        pick=order_pick(score(gt), score(model)),
        gt_score=score(gt),
        model_score=score(model),
        raw=RawReply(step="novelty_comparative", cache_key="k", text="{}"),
        reasked=reasked,
        rule_corrections=["fixed"] * repairs,
        cost_usd=cost,
        latency_s=latency,
    )


def board_file(pool, *, costs: dict[str, float | None] | None = None) -> JudgeBoardFile:
    pairs = []
    for pid, (a, b) in CALLS.items():
        c = (costs or {}).get(pid, 0.01)
        pairs.append(
            PairVerdicts(
                pair_id=pid,
                content_key=pool.pair(pid).content_key(),
                verdicts=[
                    verdict("gt_first", *a, cost=c, reasked=pid == "p4", repairs=1 if pid == "p1" else 0),
                    verdict("model_first", *b, cost=c, latency=3.0),
                ],
            )
        )
    spec = JudgeSpec(
        model="m",
        label="judge-x",
        setting="comparative",
        orderings=2,
        prompt_set=PromptSetRef(name="rqbench-v1", hash="b2:x"),
    )
    return JudgeBoardFile(
        judge=spec,
        step="novelty_comparative",
        pool_version=pool.version,
        pool_pairs=4,
        created_at=datetime.now(timezone.utc),
        pairs=pairs,
    )


@pytest.fixture
def pool():
    return make_pool([[small_pair(p) for p in EXPERTS]])


def test_a_judges_row_by_hand(pool):
    row = judge_row(board_file(pool), pool, n_boot=200)
    # picks p1 gt, p2 tie, p3 tie, p4 model; majority p1 gt, p3 model, p4 model (p2 has none)
    assert row.vs_majority.value == pytest.approx(2 / 3) and row.vs_majority.n == 3
    assert row.kappa_majority.value == pytest.approx(0.5) and row.kappa_majority.n == 3  # as in the kappa test
    # e1: gt, model, model, model -> agrees on p1, p4
    assert row.vs_expert["e1"].value == pytest.approx(0.5) and row.vs_expert["e1"].n == 4
    # kappa vs e1: po 1/2; judge gt 1/4, tie 2/4, model 1/4; e1 gt 1/4, model 3/4; pe = 1/16 + 3/16 = 1/4;
    # kappa = (1/2 - 1/4) / (3/4) = 1/3
    assert row.kappa_expert["e1"].value == pytest.approx(1 / 3)
    assert row.vs_expert["e2"].value == pytest.approx(0.5)  # gt, gt, model, model -> p1, p4
    assert row.vs_expert["e3"].value == 0.0 and row.vs_expert["e3"].n == 1
    assert row.kappa_expert["e3"].value == 0.0  # one pair, different picks: po 0, pe 0
    assert row.position_consistency.value == pytest.approx(3 / 4)  # p3 flips
    assert row.tie_rate.value == pytest.approx(2 / 4)
    assert (row.calls, row.invalid_replies, row.no_verdict, row.rule_repairs) == (8, 1, 0, 1)
    assert row.cost_per_pair == pytest.approx(0.02) and row.cost_per_1000 == pytest.approx(20.0)
    assert row.latency_per_pair == pytest.approx(5.0)  # 2 s + 3 s a pair
    assert (row.pairs_judged, row.pairs_not_judged, row.pairs_changed) == (4, 0, 0)


def test_one_unknown_cost_makes_the_judges_cost_unknown(pool):
    assert judge_row(board_file(pool, costs={"p2": None}), pool, n_boot=50).cost_per_pair is None


def test_intervals_are_over_pairs_and_hold_the_value(pool):
    row = judge_row(board_file(pool), pool, n_boot=500)
    for e in (
        row.vs_majority,
        row.vs_expert["e1"],
        row.position_consistency,
        row.tie_rate,
        row.kappa_majority,
        row.kappa_expert["e1"],
    ):
        assert e.ci_low <= e.value <= e.ci_high and e.n_clusters == e.n  # each pair its own cluster
    assert row.kappa_expert["e1"].ci_low < row.kappa_expert["e1"].ci_high  # four pairs: the resamples vary
    # three pairs: a resample can hold every pair agreeing, or none
    assert row.vs_majority.ci_low == 0.0 and row.vs_majority.ci_high == 1.0


def test_the_board_follows_the_pool(pool):
    f = board_file(pool)
    board = make_board(pool, [f], n_boot=100)
    # the ceiling: p1 agree; p2 disagree; p3 agree; p4 e1-e2 agree, e1-e3 and e2-e3 disagree: 3 of 6
    assert board.ceiling.value == pytest.approx(0.5) and board.ceiling.n == 6 and board.ceiling.n_clusters == 4
    assert board.majority_pairs == 3 and board.pool_pairs == 4 and board.experts == ["e1", "e2", "e3"]
    # a new expert pick on p2 makes a majority there: the judge's tie now disagrees with it
    picks = {**EXPERTS["p2"], "e3": "gt"}
    grown = make_pool(
        [[small_pair(p) if p != "p2" else small_pair(p).model_copy(update={"expert_picks": picks}) for p in EXPERTS]]
    )
    assert grown.version != pool.version
    row = make_board(grown, [f], n_boot=100).rows[0]
    assert row.vs_majority.value == pytest.approx(2 / 4) and row.vs_majority.n == 4
    # a new pair the judge has not judged is counted as such; changed texts void the verdict on them
    extra = small_pair("p1").model_copy(update={"pair_id": "p5"})
    edited = small_pair("p3").model_copy(update={"model_rq": "What explains p3 after an edit?"})
    changed = make_pool([[small_pair("p1"), small_pair("p2"), edited, small_pair("p4"), extra]])
    board = make_board(changed, [f], n_boot=100)
    row = next(r for r in board.rows if r.origin == "run")
    assert (row.pairs_judged, row.pairs_not_judged, row.pairs_changed) == (3, 2, 1)
    assert any("1 verdict(s) on texts" in n for n in board.notes) and any("2 of 5 pairs" in n for n in board.notes)


def test_agreement_and_rates_on_their_own():
    judge = {"a": "gt", "b": "model", "c": "tie"}
    ref = {"a": "gt", "b": "gt", "d": "gt"}
    e = agreement(judge, ref, n_boot=50)
    assert e.value == 0.5 and e.n == 2  # shared pairs a, b
    assert agreement(judge, {"z": "gt"}) is None
    assert kappa({"a": "gt", "b": "gt"}, {"a": "gt", "b": "gt"}) is None
    assert pick_rate(judge, "tie", n_boot=50).value == pytest.approx(1 / 3)
    assert position_consistency({"a": ["gt", "gt"], "b": ["gt", "tie"], "c": ["gt"]}, n_boot=50).n == 2
    assert expert_agreement({"a": {"x": "gt"}}) is None  # one expert: nothing to compare


# -- the paper's rows on the A.6 pairs: exactly the figures its verdicts give -----------------------------


@pytest.fixture(scope="module")
def a6(fixtures_dir):
    return make_pool([a6_pairs(fixtures_dir / "paper_examples" / "expert_vs_llm.jsonl")])


def test_the_a6_pool(a6):
    assert len(a6.pairs) == 10 and a6.experts() == ["expert_1", "expert_2"]
    assert {p.source for p in a6.pairs} == {"paper_a6"}
    p = a6.pair("a6-7")
    assert p.reference_picks == {"gemini-3.1-pro": "gt", "deepseek-v4-pro": "model"}
    assert p.expert_picks == {"expert_1": "gt", "expert_2": "model"}
    assert p.background[0].title.startswith("Accelerating Large Language Model Decoding")
    assert "appendix A.6" in p.provenance and "sample 7" in p.provenance


def test_the_papers_judges_have_exactly_the_a6_figures(a6):
    """Hand counts of tests/test_expert_examples.py; the majority exists on samples 1, 2, 3, 5, 6, 8, 9."""
    rows = {r.judge: r for r in paper_rows(a6, n_boot=200)}
    assert set(rows) == {"gemini-3.1-pro", "deepseek-v4-pro"} and {r.origin for r in rows.values()} == {"paper"}
    g, d = rows["gemini-3.1-pro"], rows["deepseek-v4-pro"]
    assert (g.vs_expert["expert_1"].value, g.vs_expert["expert_2"].value) == pytest.approx((0.4, 0.5))
    assert (d.vs_expert["expert_1"].value, d.vs_expert["expert_2"].value) == pytest.approx((0.1, 0.4))
    assert g.vs_expert["expert_1"].n == 10
    # majority: model, gt, gt, gt, gt, gt, model on samples 1, 2, 3, 5, 6, 8, 9
    # gemini: model, model, model, model, gt, model, model -> samples 1, 6, 9 agree: 3/7
    # deepseek: model, model, model, model, tie, model, tie -> sample 1 only: 1/7
    assert g.vs_majority.value == pytest.approx(3 / 7) and g.vs_majority.n == 7
    assert d.vs_majority.value == pytest.approx(1 / 7)
    assert (g.tie_rate.value, d.tie_rate.value) == pytest.approx((0.0, 0.2))
    # kappa vs expert_1: expert gt 8/10, model 2/10; gemini gt 2/10, model 8/10; po 0.4, pe 0.32
    assert g.kappa_expert["expert_1"].value == pytest.approx((0.4 - 0.32) / 0.68)
    for r in (g, d):
        assert r.position_consistency is None and r.calls is None and r.cost_per_pair is None
        assert r.pairs_judged == 10 and r.prompt_set is None


def test_the_ceiling_on_a6_is_the_experts_70_percent(a6):
    board = make_board(a6, [], n_boot=200)
    assert board.ceiling.value == pytest.approx(0.7) and board.ceiling.n == 10
    assert [r.judge for r in board.rows] == ["gemini-3.1-pro", "deepseek-v4-pro"]  # 3/7 ranks above 1/7


def test_the_papers_rows_stay_on_the_pairs_they_judged(a6, pool):
    both = make_pool([a6.pairs, pool.pairs])
    board = make_board(both, [], n_boot=100)
    g = next(r for r in board.rows if r.judge == "gemini-3.1-pro")
    assert g.vs_majority.value == pytest.approx(3 / 7) and g.vs_majority.n == 7
    assert g.pairs_judged == 10 and g.pairs_not_judged == 4
    assert "e1" not in g.vs_expert  # it never judged the annotated pairs
