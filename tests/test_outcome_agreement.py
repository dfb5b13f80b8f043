"""One tie rule and one agreement figure (``evaluate/metrics/outcomes.py``), and every caller giving the same number."""

from __future__ import annotations

import numpy as np
import pytest

from rqbench.evaluate.judge_board import metrics as judge_board_metrics
from rqbench.evaluate.judge_board.agreement import Annotation, agreement_matrix, win_rates
from rqbench.evaluate.metrics import outcomes
from rqbench.evaluate.metrics.metric import verdicts
from rqbench.records import NoveltyScore, Verdict


def test_the_tie_rule_is_the_same_for_one_pick_and_for_a_column():
    # 2 vs 2 + 1e-10 is a tie; 2 vs 2 + 1e-6 is not: for one pick and for the vectorised verdicts alike
    for gap, tie in ((1e-10, True), (1e-6, False), (0.0, True)):
        assert (outcomes.pick_between(2.0, 2.0 + gap) == "tie") is tie
        column = verdicts(np.array([2.0 + gap]), np.array([2.0]), True)
        assert bool(column[Verdict.tie][0]) is tie
    assert outcomes.pick_between(3, 1) == "gt" and outcomes.pick_between(1, 3) == "model"
    assert outcomes.pick_between(3, 1, higher_is_better=False) == "model"


def test_a_mean_over_orderings_that_differs_by_rounding_is_a_tie():
    # (0.1 + 0.2) / 1 against 0.3: unequal in floating point, equal as scores averaged over calls
    assert 0.1 + 0.2 != 0.3
    assert outcomes.pick_between(0.1 + 0.2, 0.3) == "tie"


def test_agreement_on_hand_set_picks():
    # shared items: a, b, c, d (e only in one rater's): same on a, b, d -> 3/4
    a = {"a": "gt", "b": "model", "c": "tie", "d": "gt", "e": "gt"}
    b = {"a": "gt", "b": "model", "c": "gt", "d": "gt"}
    est = outcomes.agreement(a, b, n_boot=200)
    assert est.value == pytest.approx(0.75) and est.n == 4 and est.n_clusters == 4
    assert 0.0 <= est.ci_low <= 0.75 <= est.ci_high <= 1.0
    # clustered by paper: a and b from p1, c and d from p2 -> 2 clusters, the same point value
    paper = {"a": "p1", "b": "p1", "c": "p2", "d": "p2"}
    clustered = outcomes.agreement(a, b, cluster_of=paper.get, n_boot=200)
    assert clustered.value == pytest.approx(0.75) and clustered.n_clusters == 2
    # the only resamples: p1 twice (1.0), p2 twice (0.5), one each (0.75) -> the interval is within [0.5, 1]
    assert 0.5 <= clustered.ci_low and clustered.ci_high <= 1.0
    assert outcomes.agreement({"a": "gt"}, {"b": "gt"}) is None


def test_pick_rate_on_hand_set_picks():
    picks = {"a": "tie", "b": "gt", "c": "tie", "d": "model"}
    assert outcomes.pick_rate(picks, "tie", n_boot=200).value == pytest.approx(0.5)  # 2 of 4
    assert outcomes.pick_rate(picks, "model", n_boot=200).value == pytest.approx(0.25)  # 1 of 4
    assert outcomes.pick_rate({}, "tie") is None


def _ann(rq_id: str, evaluator: str, winner: str, group: str = "human") -> Annotation:
    return Annotation(rq_id=rq_id, evaluator=evaluator, winner=winner, group=group)


def test_the_expert_study_and_the_judge_board_give_the_same_agreement_for_the_same_picks():
    """The A.6 study's matrix clusters by paper; the judge board treats each pair as its own cluster. On pairs from
    distinct papers the two are the same figure, computed by the same function, and equal to the hand count."""
    rows = ["2601.00001_rq0", "2601.00002_rq0", "2601.00003_rq0", "2601.00004_rq0", "2601.00005_rq0"]
    human = ["gt", "model", "tie", "gt", "model"]
    judge = ["gt", "model", "gt", "gt", "tie"]  # same on 3 of 5
    picks = [_ann(r, "expert", w) for r, w in zip(rows, human)] + [
        _ann(r, "judge", w, "llm") for r, w in zip(rows, judge)
    ]
    study = agreement_matrix(picks, n_boot=300).get("expert", "judge")
    board = judge_board_metrics.agreement(dict(zip(rows, judge)), dict(zip(rows, human)), n_boot=300)
    direct = outcomes.agreement(dict(zip(rows, judge)), dict(zip(rows, human)), n_boot=300)
    assert study.value == board.value == direct.value == pytest.approx(3 / 5)
    assert (board.ci_low, board.ci_high) == (direct.ci_low, direct.ci_high)
    assert (study.ci_low, study.ci_high) == (direct.ci_low, direct.ci_high)
    rates = {r.evaluator: r for r in win_rates(picks, n_boot=300)}
    assert rates["judge"].tie.value == pytest.approx(1 / 5) and rates["expert"].model.value == pytest.approx(2 / 5)


def test_the_judge_boards_picks_follow_the_one_tie_rule():
    # both orders: gt (3 + 2) / 2 = 2.5, model (2 + 3) / 2 = 2.5 -> a tie; one call 3 vs 2 -> gt
    def score(n: int) -> NoveltyScore:
        return NoveltyScore(relevance=1, originality=n, gap_addressing=n, non_obviousness=n)

    assert judge_board_metrics.pair_pick([(score(3), score(2)), (score(2), score(3))]) == "tie"
    assert judge_board_metrics.order_pick(score(3), score(2)) == "gt"
    assert judge_board_metrics.pair_pick([]) is None
