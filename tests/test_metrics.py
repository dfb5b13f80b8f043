"""Hand-computed metric cases (tests/metric_cases/*.json) run by one parametrised test, plus direct checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from results_factory import cand, instance, nov, simple_instance
from rqbench.evaluate.metrics import (
    METRICS,
    NarrownessAggregation,
    OrderingAggregation,
    ScoreOptions,
    ScoreVector,
    SelectionRule,
    Verdict,
    best_at_5,
    instance_value,
    mean_vector,
    select_best,
    verdict,
    verdict_rates,
)

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
    return instance("2501.00001_rq0", gt, model, papers=papers, overlap=case.get("overlap"))


def _options(case: dict) -> ScoreOptions:
    o = case.get("options", {})
    return ScoreOptions(
        narrowness=NarrownessAggregation(o.get("narrowness", "mean")),
        orderings=OrderingAggregation(o.get("orderings", "mean")),
    )


@pytest.mark.parametrize("case_id,case", _load_cases(), ids=[c[0] for c in _load_cases()])
def test_hand_computed_case(case_id, case):
    inst = _build(case)
    opts = _options(case)
    for name, want in case["expected"].items():
        got = instance_value(METRICS[name], inst, opts)
        assert got == (None if want is None else pytest.approx(want)), f"{case_id}: {name} = {got}, want {want}"
    for key, want in case.get("select", {}).items():
        rule, _, dim = key.partition(":")
        got = select_best(inst, SelectionRule(rule), dim=dim or "non_obviousness", opts=opts)
        assert got == want, f"{case_id}: select {key} = {got}, want {want}"


def test_cases_exist_for_every_metric_family():
    names = {n for _, c in _load_cases() for n in c["expected"]}
    for prefix in ("best5_", "win_", "tie_", "lose_", "overlap5"):
        assert any(n.startswith(prefix) for n in names), prefix


def test_verdict_direction_and_rates():
    assert verdict(2, 1, True) is Verdict.win
    assert verdict(2, 1, False) is Verdict.lose
    assert verdict(1.0, 1.0 + 1e-12) is Verdict.tie
    assert verdict(None, 1) is None
    r = verdict_rates([Verdict.win, Verdict.tie, Verdict.tie, Verdict.lose, None])
    assert (r.win, r.tie, r.lose, r.n) == (0.25, 0.5, 0.25, 4)
    assert verdict_rates([]).n == 0


def test_best_at_5_direction():
    assert best_at_5([1, None, 3], True) == 3
    assert best_at_5([1, None, 3], False) == 1
    assert best_at_5([None, None]) is None


def test_mean_vector_averages_per_candidate_over_scoring_judges():
    a = ScoreVector(gt=1.0, model=(3.0, None, 0.0))
    b = ScoreVector(gt=2.0, model=(1.0, 2.0, None))
    m = mean_vector([a, b])
    assert m.gt == 1.5 and m.model == (2.0, 2.0, 0.0)


def test_metric_specs_declare_direction_and_labels():
    assert METRICS["best5_source_bound_score"].higher_is_better is False
    assert METRICS["win_non_obviousness"].higher_is_better is True
    assert METRICS["tie_non_obviousness"].higher_is_better is None
    assert METRICS["lose_originality"].higher_is_better is False
    assert METRICS["best5_originality"].settings == ("standalone",)
    assert "comparative" in METRICS["win_originality"].settings
    assert all(s.label for s in METRICS.values())


def test_bad_candidate_order_is_a_clear_error():
    inst = simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5)
    inst.candidates = [inst.candidates[1], inst.candidates[0], *inst.candidates[2:]]
    with pytest.raises(ValueError, match=r"2501.00001_rq0: candidates\[0\].candidate_id must be 'gt'"):
        instance_value(METRICS["best5_originality"], inst)


def test_unknown_dimension_is_a_clear_error():
    from rqbench.evaluate.metrics import novelty_value

    with pytest.raises(ValueError, match="unknown novelty dimension 'novelty'"):
        novelty_value(cand("m0"), "novelty")
