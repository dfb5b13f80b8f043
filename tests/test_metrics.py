"""Hand-computed metric cases (tests/metric_cases/*.json) run through the product's path and the oracle.

Each case is one instance under one judge. The product's value is what the
summary computes: the results file's score table, then the metric's declared
function (``MetricSpec.fn``); the oracle's is the per-instance definition in
tests/metric_oracle.py. Both must give the hand-computed number.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from metric_oracle import ORACLE, score_vector
from results_factory import cand, instance, metric_value, nov, simple_instance

from rqbench.evaluate.criteria import CRITERIA, METRICS
from rqbench.evaluate.metrics.metric import (
    FailureAccounting,
    NarrownessAggregation,
    OrderingAggregation,
    ScoreOptions,
    Verdict,
    best,
    verdicts,
)
from rqbench.evaluate.metrics.score_table import mean_over_judges
from rqbench.records import RawReply

CASES_DIR = Path(__file__).parent / "metric_cases"


def _load_cases() -> list[tuple[str, dict]]:
    out = []
    for f in sorted(CASES_DIR.glob("*.json")):
        for case in json.loads(f.read_text())["cases"]:
            out.append((f"{f.stem}:{case['name']}", case))
    return out


def _candidate(cid: str, spec: dict, papers: tuple[str, ...]):
    novelty = spec.get("novelty", [2, 2, 2])
    if novelty is not None:
        novelty = nov(*novelty, rel=spec.get("relevance", 1))
    if "by_ordering" in spec and "novelty" not in spec:
        novelty = None
    return cand(
        cid,
        novelty,
        sb=spec.get("sb", 1),
        dg=spec.get("dg", 0),
        papers=papers,
        by_ordering=[tuple(t) for t in spec.get("by_ordering", [])],
        ranks=spec.get("ranks"),
    )


def _build(case: dict):
    papers = tuple(case.get("papers", ["p1"]))
    gt = _candidate("gt", case["gt"], papers)
    model = [_candidate(f"m{i}", c, papers) for i, c in enumerate(case["model"])]
    failed = [
        RawReply(step=step, cache_key="k", text="not json", error="invalid_reply: scripted")
        for step in case.get("failed_calls", [])
    ]
    return instance("2501.00001_rq0", gt, model, papers=papers, overlap=case.get("overlap"), raw_replies=failed)


def _options(case: dict) -> ScoreOptions:
    o = case.get("options", {})
    return ScoreOptions(
        narrowness=NarrownessAggregation(o.get("narrowness", "mean")),
        orderings=OrderingAggregation(o.get("orderings", "mean")),
        failures=FailureAccounting(o.get("failures", "paper")),
    )


@pytest.mark.parametrize("case_id,case", _load_cases(), ids=[c[0] for c in _load_cases()])
def test_hand_computed_case(case_id, case):
    inst = _build(case)
    opts = _options(case)
    for name, want in case["expected"].items():
        expected = None if want is None else pytest.approx(want)
        got = metric_value(name, inst, opts)
        assert got == expected, f"{case_id}: {name} = {got}, want {want}"
        oracle = ORACLE[name](score_vector(inst, METRICS[name].dimension, opts))
        assert oracle == expected, f"{case_id}: oracle {name} = {oracle}, want {want}"


def test_cases_exist_for_every_metric_family():
    names = {n for _, c in _load_cases() for n in c["expected"]}
    for prefix in ("best5_", "win_", "tie_", "lose_", "overlap5"):
        assert any(n.startswith(prefix) for n in names), prefix


def test_verdicts_direction_and_ties():
    a = np.array([2.0, 2.0, 1.0, np.nan, 1.0])
    b = np.array([1.0, 1.0, 1.0 + 1e-12, 1.0, 3.0])
    up = verdicts(a, b, True)
    assert up[Verdict.win][:2].tolist() == [1.0, 1.0] and up[Verdict.tie][2] == 1.0 and up[Verdict.lose][4] == 1.0
    down = verdicts(a, b, False)
    assert down[Verdict.lose][0] == 1.0 and down[Verdict.win][4] == 1.0
    assert all(np.isnan(v[3]) for v in up.values())  # no verdict where a value is missing
    total = sum(np.nan_to_num(v) for v in up.values())
    assert total.tolist() == [1.0, 1.0, 1.0, 0.0, 1.0]  # exactly one outcome per scored row


def test_best_direction_and_unscored():
    m = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    assert best(m, True)[0] == 3 and best(m, False)[0] == 1
    assert np.isnan(best(m, True)[1])
    assert np.isnan(best(np.zeros((2, 0)), True)).all()


def test_mean_over_judges_averages_each_cell_over_the_judges_that_have_it():
    a = np.array([[3.0, np.nan, 0.0]])
    b = np.array([[1.0, 2.0, np.nan]])
    assert mean_over_judges([a, b]).tolist() == [[2.0, 2.0, 0.0]]


def test_metric_specs_declare_direction_and_labels():
    assert METRICS["best5_source_bound_score"].higher_is_better is False
    assert METRICS["win_non_obviousness"].higher_is_better is True
    assert METRICS["tie_non_obviousness"].higher_is_better is None
    assert METRICS["lose_originality"].higher_is_better is False
    assert METRICS["best5_originality"].settings == ("standalone",)
    assert "comparative" in METRICS["win_originality"].settings
    assert all(s.label for s in METRICS.values())
    assert set(METRICS) == set(ORACLE), "every metric has its per-instance definition in the oracle"


def test_bad_candidate_order_is_a_clear_error():
    inst = simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5)
    inst.candidates = [inst.candidates[1], inst.candidates[0], *inst.candidates[2:]]
    with pytest.raises(ValueError, match=r"2501.00001_rq0: candidates\[0\].candidate_id must be 'gt'"):
        metric_value("best5_originality", inst)


def test_unknown_dimension_is_a_clear_error():
    with pytest.raises(KeyError, match="criterion 'novelty' has no dimension 'novelty'"):
        CRITERIA["novelty"].candidate_value(cand("m0"), "novelty", ScoreOptions())
