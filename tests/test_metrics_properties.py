"""Property tests: invariants every metric must keep whatever the scores."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metric_oracle import NARROWNESS_DIMS, NOVELTY_DIMS
from results_factory import cand, instance, metric_value, results

from rqbench.evaluate.criteria import CRITERIA, METRICS, dimension
from rqbench.evaluate.metrics.metric import NarrownessAggregation, ScoreOptions
from rqbench.evaluate.metrics.summary import summarize

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

score3 = st.integers(0, 3)
novelty = st.one_of(st.none(), st.tuples(score3, score3, score3))
sb = st.one_of(st.none(), score3)


@st.composite
def candidate_specs(draw):
    return {"novelty": draw(novelty), "sb": draw(sb), "dg": draw(score3)}


def _cand(cid, spec):
    return cand(cid, spec["novelty"], sb=spec["sb"], dg=spec["dg"])


@st.composite
def instances(draw, rq_id="2501.00001_rq0"):
    gt = draw(candidate_specs())
    model = draw(st.lists(candidate_specs(), min_size=5, max_size=5))
    return gt, model


def _build(gt, model, order=None, rq_id="2501.00001_rq0"):
    order = order or list(range(len(model)))
    return instance(rq_id, _cand("gt", gt), [_cand(f"m{j}", model[i]) for j, i in enumerate(order)])


@SETTINGS
@given(instances(), st.permutations(range(5)))
def test_standalone_figures_do_not_depend_on_candidate_order(inst, order):
    gt, model = inst
    a, b = _build(gt, model), _build(gt, model, order)
    for name, spec in METRICS.items():
        if spec.dimension == "overlap":
            continue
        assert metric_value(name, a) == metric_value(name, b), name


@SETTINGS
@given(instances())
def test_each_instance_has_exactly_one_verdict_per_dimension(inst):
    gt, model = inst
    built = _build(gt, model)
    for dim in (*NOVELTY_DIMS, *NARROWNESS_DIMS):
        vals = [metric_value(f"{o}_{dim}", built) for o in ("win", "tie", "lose")]
        if all(v is None for v in vals):
            continue
        assert sorted(vals) == [0.0, 0.0, 1.0], (dim, vals)


@SETTINGS
@given(candidate_specs(), st.sampled_from(list(NarrownessAggregation)))
def test_five_copies_of_the_gt_tie(gt, agg):
    built = instance("2501.00001_rq0", _cand("gt", gt), [_cand(f"m{i}", gt) for i in range(5)])
    opts = ScoreOptions(narrowness=agg)
    for dim in (*NOVELTY_DIMS, *NARROWNESS_DIMS):
        tie = metric_value(f"tie_{dim}", built, opts)
        assert tie in (None, 1.0)
        if tie is not None:
            gt = CRITERIA[dimension(dim)[0].name].candidate_value(built.candidates[0], dim, opts, ["p1"])
            assert metric_value(f"best5_{dim}", built, opts) == gt


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(instances(), min_size=1, max_size=6), st.sampled_from(["pooled", "mean_scores"]))
def test_summary_rates_sum_to_one_and_cis_hold_the_value(insts, combine):
    built = [_build(g, m, rq_id=f"2501.{i // 2:05d}_rq{i % 2}") for i, (g, m) in enumerate(insts)]
    files = [
        results(built, label="judge-a"),
        results(built[::-1], label="judge-b", judge_model="deepseek/deepseek-v4-pro"),
    ]
    rows = summarize(files, combine=combine, n_boot=50)
    for row in rows:
        for name, fig in row.figures.items():
            assert fig.ci_low <= fig.value + 1e-9 and fig.value <= fig.ci_high + 1e-9, (row.judge, name)
        if row.row_kind != "model":
            continue
        for dim in (*NOVELTY_DIMS, *NARROWNESS_DIMS):
            figs = [row.figure(f"{o}_{dim}") for o in ("win", "tie", "lose")]
            if any(f is None for f in figs):
                assert all(f is None for f in figs)
                continue
            assert sum(f.value for f in figs) == pytest.approx(1.0)


@settings(max_examples=15, deadline=None)
@given(st.lists(instances(), min_size=1, max_size=5))
def test_two_judges_that_agree_combine_to_their_own_figures(insts):
    """One judge has no combined row; two judges with identical scores combine to exactly those scores."""
    built = [_build(g, m, rq_id=f"2501.{i:05d}_rq0") for i, (g, m) in enumerate(insts)]
    for combine in ("pooled", "mean_scores"):
        alone = [r for r in summarize([results(built)], combine=combine, n_boot=20) if r.row_kind == "model"]
        assert [r.judge for r in alone] != [] and all(r.judge != "combined" for r in alone)
        pair = [results(built, label="judge-a"), results(built, label="judge-b")]
        rows = {r.judge: r for r in summarize(pair, combine=combine, n_boot=20) if r.row_kind == "model"}
        judge, combined = rows["judge-a"], rows["combined"]
        assert {k: v.value for k, v in judge.figures.items()} == {k: v.value for k, v in combined.figures.items()}
