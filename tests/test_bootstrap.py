"""Cluster bootstrap: intervals, determinism, clustering, and the paired model-vs-model test."""

from __future__ import annotations

import numpy as np
import pytest

from rqbench.evaluate.metrics.bootstrap import cluster_bootstrap, cluster_bootstrap_mean, paired_test


def test_mean_and_interval_are_deterministic_under_a_seed():
    vals = [0, 1, 1, 0, 1, 1, 1, 0]
    cl = ["a", "a", "b", "b", "c", "c", "d", "d"]
    a = cluster_bootstrap_mean(vals, cl, seed=7, n_boot=500)
    b = cluster_bootstrap_mean(vals, cl, seed=7, n_boot=500)
    assert a == b
    assert a.value == pytest.approx(5 / 8)
    assert a.ci_low <= a.value <= a.ci_high
    assert (a.n, a.n_clusters) == (8, 4)
    assert a.std == pytest.approx(np.std(vals, ddof=1))


def test_constant_values_give_a_degenerate_interval():
    est = cluster_bootstrap_mean([2.0] * 6, ["a", "b", "c"] * 2, n_boot=200)
    assert (est.value, est.ci_low, est.ci_high) == (2.0, 2.0, 2.0)


def test_empty_input_has_no_estimate_and_mismatch_is_an_error():
    assert cluster_bootstrap_mean([], []) is None
    with pytest.raises(ValueError, match="3 values but 2 cluster labels"):
        cluster_bootstrap_mean([1, 2, 3], ["a", "b"])
    with pytest.raises(ValueError, match="confidence level"):
        cluster_bootstrap_mean([1], ["a"], level=1.5)


def test_clustering_widens_the_interval_when_clusters_are_homogeneous():
    # 10 papers, 10 RQs each; all RQs of a paper share the outcome.
    rng = np.random.default_rng(0)
    paper_outcome = rng.integers(0, 2, size=10)
    vals = np.repeat(paper_outcome, 10).astype(float)
    clustered = cluster_bootstrap_mean(list(vals), [f"p{i // 10}" for i in range(100)], n_boot=2000, seed=1)
    naive = cluster_bootstrap_mean(list(vals), [f"q{i}" for i in range(100)], n_boot=2000, seed=1)
    assert (clustered.ci_high - clustered.ci_low) > 2 * (naive.ci_high - naive.ci_low)


def test_generic_statistic_bootstrap():
    x = np.arange(20, dtype=float)
    est = cluster_bootstrap(lambda idx: float(x[idx].max()), [f"c{i}" for i in range(20)], n_boot=200)
    assert est.value == 19.0 and est.ci_high <= 19.0 and est.ci_low <= 19.0


def test_paired_test_detects_a_consistent_difference():
    keys = [f"25{i:02d}.0000{j}_rq0" for i in range(30) for j in range(2)]
    a = {k: 1.0 for k in keys}
    b = {k: 0.0 for k in keys}
    res = paired_test(a, b, lambda k: k.split("_")[0][:4], n_boot=999, seed=3)
    assert res.diff == 1.0 and res.ci_low == 1.0 and res.n == 60 and res.n_clusters == 30
    assert res.p_value < 0.01


def test_paired_test_on_identical_models_and_on_disjoint_instances():
    a = {"x_rq0": 1.0, "y_rq0": 0.0}
    res = paired_test(a, dict(a), {"x_rq0": "x", "y_rq0": "y"})
    assert res.diff == 0.0 and res.p_value == 1.0
    assert paired_test({"x": 1.0}, {"y": 1.0}, lambda k: k) is None


def test_paired_test_noise_is_not_significant():
    rng = np.random.default_rng(5)
    keys = [f"k{i}" for i in range(80)]
    a = {k: float(v) for k, v in zip(keys, rng.integers(0, 2, 80))}
    b = {k: float(v) for k, v in zip(keys, rng.integers(0, 2, 80))}
    res = paired_test(a, b, lambda k: k, seed=2)
    assert res.ci_low <= res.diff <= res.ci_high
    assert res.p_value > 0.05
