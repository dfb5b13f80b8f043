"""Judge meta-evaluation computed from hand-built results."""

from __future__ import annotations

import pytest
from results_factory import cand, instance, nov, results, simple_instance

from rqbench.evaluate.judge_board.meta_eval import meta_evaluate, model_family
from rqbench.evaluate.metrics.metric import FailureAccounting, ScoreOptions
from rqbench.records import CallTotals, RawReply

ZERO = (0, 0, 0)


@pytest.mark.parametrize(
    "name,family",
    [
        ("gemini/gemini-3.1-pro", "google"),
        ("gemma-4-31b-it", "google"),
        ("openai/gpt-5.5", "openai"),
        ("gpt-oss-20b", "openai"),
        ("o3-mini", "openai"),
        ("deepseek/deepseek-v4-pro", "deepseek"),
        ("qwen3-30b-a3b-thinking-2507", "alibaba"),
        ("local/smollm2-135m", "huggingface"),
        ("acme-7b", "acme"),
    ],
)
def test_model_family(name, family):
    assert model_family(name) == family


def _raw(err=None):
    return RawReply(step="novelty_comparative", cache_key="k", text=None if err else "{}", error=err)


def test_meta_eval_by_hand():
    violated = nov(3, 3, 3, rel=0)  # repaired to zeros, with a relevance-rule correction
    i1 = instance(
        "2501.00001_rq0",
        cand("gt", (1, 1, 1), text="short one?", by_ordering=[(1, 1, 1), (1, 1, 1)], ranks=[1, 1]),
        [
            cand(
                "m0",
                (3, 3, 3),
                text="a much longer question with many words in it?",
                by_ordering=[(3, 3, 3), (3, 3, 2)],
                ranks=[0, 0],
            ),
            cand("m1", violated, text="mid length question here?", by_ordering=[(0, 0, 0), (0, 0, 0)], ranks=[2, 2]),
            cand("m2", None, text="x?"),
            cand("m3", ZERO, text="tiny?", by_ordering=[(0, 0, 0), (0, 0, 0)], ranks=[3, 3]),
            cand("m4", ZERO, text="y?", by_ordering=[(0, 0, 0), (0, 0, 0)], ranks=[4, 4]),
        ],
        raw_replies=[_raw(), _raw("timeout"), _raw(), _raw()],
        rule_corrections=2,
    )
    i1.candidates[2].novelty_by_ordering = [violated, nov(0, 0, 0)]
    i2 = instance(
        "2502.00002_rq0",
        cand("gt", (2, 2, 2), by_ordering=[(2, 2, 2), (2, 2, 2)], ranks=[0, 1]),
        [cand("m0", (1, 1, 1), by_ordering=[(1, 1, 1), (3, 3, 3)], ranks=[1, 0])]
        + [cand(f"m{i}", ZERO, by_ordering=[(0, 0, 0)] * 2, ranks=[i + 1, i + 1]) for i in range(1, 5)],
    )
    gem = results(
        [i1, i2],
        model="google/gemini-3.1-pro",
        label="gem",
        setting="comparative",
        orderings=2,
        totals=CallTotals(calls=8, cost_usd=0.5, seconds=12.0, tokens_in=100, tokens_out=50),
    )
    other = results(
        [
            simple_instance("2501.00001_rq0", (1, 1, 1), [(3, 3, 3)] + [ZERO] * 4),
            simple_instance("2502.00002_rq0", (2, 2, 2), [(3, 3, 3)] + [ZERO] * 4),
        ],
        model="google/gemini-3.1-pro",
        label="ds",
        judge_model="deepseek/deepseek-v4-pro",
        setting="comparative",
    )
    rows = {r.judge: r for r in meta_evaluate([gem, other])}
    g = rows["gem"]
    assert g.instances == 2 and g.orderings == 2
    assert g.failed_reply_rate.value == 0.25
    assert g.unscored_rate.value == pytest.approx(1 / 12)
    # judge replies: per-ordering scores, 2 for each of 5 scored candidates in i1 and 6 in i2; one violation
    assert g.relevance_rule_violation_rate.value == pytest.approx(1 / 22)
    assert g.rule_corrections_per_instance == 1.0 and g.invalid_replies == 0  # "timeout" is no invalid reply
    # candidates with two orderings: i1 has 5 (m0, m1 differ), i2 has 6 (m0 differs) -> 8 of 11 consistent
    assert g.position_score_consistency.value == pytest.approx(8 / 11)
    # top candidate: i1 m2 has no ranks, so k=0 there; i2 flips gt/m0 -> 0 of 1
    assert g.position_top_consistency.value == 0.0
    # non-obviousness verdicts: gem's call failed on i1 (m2 unscored), so under the paper's accounting i1 is
    # unjudged and has no verdict; i2 m0 mean 2 vs 2 tie. ds: win, win
    assert g.agreement_with_judges.value == 0.0 and {o: e.value for o, e in g.agreement_by_judge.items()} == {"ds": 0.0}
    assert g.self_preference_flag is True and g.same_family_submissions == ["google/gemini-3.1-pro"]
    assert g.win_rate_same_family == 0.0 and g.win_rate_other_families is None
    # conditional figures: i1 is best of four, model 2.5 vs 1, a win
    cond = {r.judge: r for r in meta_evaluate([gem, other], ScoreOptions(failures=FailureAccounting.conditional))}
    assert {o: e.value for o, e in cond["gem"].agreement_by_judge.items()} == {"ds": 0.5}
    assert cond["gem"].win_rate_same_family == 0.5
    # the interval is the shared agreement figure's, over papers: i1 and i2 are two comparisons (one agrees)
    pooled = cond["gem"].agreement_with_judges
    assert (pooled.value, pooled.n) == (0.5, 2) and 0.0 <= pooled.ci_low <= 0.5 <= pooled.ci_high <= 1.0
    assert rows["ds"].self_preference_flag is False
    assert g.cost_usd == 0.5 and g.cost_per_instance == 0.25 and g.calls == 8
    assert g.length_preference is not None and g.length_preference.value > 0
    assert rows["ds"].failed_reply_rate is None  # no raw replies kept
    assert rows["ds"].position_score_consistency is None
