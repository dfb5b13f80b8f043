"""Confidence intervals and paired tests that respect the benchmark's clustering.

The RQs of one source paper share background papers and authors, so they are
not independent draws. Every interval here is a cluster bootstrap: whole source
papers (arXiv ids) are resampled with replacement and the statistic recomputed.
A rate is the mean of 0/1 indicators, so one function serves means and rates.
Seeds are explicit so a report is reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import lru_cache

import numpy as np
from pydantic import BaseModel

DEFAULT_BOOT = 2000
DEFAULT_LEVEL = 0.95


class Estimate(BaseModel):
    """A point estimate with its cluster-bootstrap percentile interval."""

    value: float
    ci_low: float
    ci_high: float
    std: float = 0.0
    n: int
    n_clusters: int


class PairedTest(BaseModel):
    """Model A minus model B on the instances both were scored on."""

    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    n_clusters: int
    method: str = "cluster bootstrap CI; cluster sign-flip permutation p-value"


def _cluster_index(clusters: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    codes: dict[Hashable, int] = {}
    idx = np.fromiter((codes.setdefault(c, len(codes)) for c in clusters), dtype=np.int64, count=len(clusters))
    return idx, len(codes)


@lru_cache(maxsize=64)
def _resample_weights(k: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each of k clusters is drawn in each replicate (n_boot x k), cached.

    Figures over the same clusters and seed share the resamples (common random
    numbers), and the summary's hundreds of figures cost one draw each.
    """
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, k, size=(n_boot, k))
    offsets = draws + (np.arange(n_boot) * k)[:, None]
    w = np.bincount(offsets.ravel(), minlength=n_boot * k).reshape(n_boot, k).astype(float)
    w.setflags(write=False)
    return w


def cluster_weights(clusters: Sequence[Hashable], n_boot: int = DEFAULT_BOOT, seed: int = 0) -> np.ndarray:
    """How often each item is drawn in each replicate (n_boot x items): its cluster's draws, the same resamples
    ``cluster_bootstrap_mean`` uses. For a statistic refitted per replicate with weights (a regression)."""
    idx, k = _cluster_index(clusters)
    return _resample_weights(k, n_boot, seed)[:, idx]


def _check(values: Sequence[float], clusters: Sequence[Hashable], level: float, n_boot: int) -> None:
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")


def cluster_bootstrap_mean(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    *,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> Estimate | None:
    """Mean of ``values`` with a percentile CI from resampling whole clusters; None if empty.

    Each replicate draws as many clusters as there are, with replacement, and
    takes the mean over all values of the drawn clusters (the ratio estimator,
    so large papers weigh by their RQ count, as in the point estimate).
    """
    _check(values, clusters, level, n_boot)
    if len(values) == 0:
        return None
    idx, k = _cluster_index(clusters)
    return _bootstrap_mean(np.asarray(values, dtype=float), idx, k, n_boot, seed, level)


def cluster_bootstrap_mean_codes(
    values: np.ndarray,
    cluster_codes: np.ndarray,
    *,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> Estimate | None:
    """``cluster_bootstrap_mean`` for clusters already coded as integers (any coding): the same estimate.

    Clusters are renumbered in order of first appearance, as ``cluster_bootstrap_mean``
    numbers its labels, so both draw the same resamples for the same data.
    """
    _check(values, cluster_codes, level, n_boot)
    if len(values) == 0:
        return None
    _, first, inverse = np.unique(cluster_codes, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return _bootstrap_mean(np.asarray(values, dtype=float), rank[inverse.reshape(-1)], len(first), n_boot, seed, level)


def _bootstrap_mean(x: np.ndarray, idx: np.ndarray, k: int, n_boot: int, seed: int, level: float) -> Estimate:
    sums = np.bincount(idx, weights=x, minlength=k)
    counts = np.bincount(idx, minlength=k).astype(float)
    weights = _resample_weights(k, n_boot, seed)
    reps = (weights @ sums) / (weights @ counts)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha])
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if len(x) > 1 else 0.0
    return Estimate(
        value=mean, ci_low=float(min(lo, mean)), ci_high=float(max(hi, mean)), std=std, n=len(x), n_clusters=k
    )


def cluster_bootstrap(
    statistic: Callable[[np.ndarray], float],
    clusters: Sequence[Hashable],
    *,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> Estimate | None:
    """Any statistic of item indices (e.g. a correlation) with a cluster-bootstrap CI.

    ``statistic`` receives an array of item indices (with repeats) and returns a
    number; replicates where it returns NaN are dropped.
    """
    _check(list(range(len(clusters))), clusters, level, n_boot)
    n = len(clusters)
    if n == 0:
        return None
    idx, k = _cluster_index(clusters)
    members = [np.flatnonzero(idx == c) for c in range(k)]
    point = float(statistic(np.arange(n)))
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_boot):
        pick = rng.integers(0, k, size=k)
        val = statistic(np.concatenate([members[c] for c in pick]))
        if val == val:  # not NaN
            reps.append(val)
    if not reps or point != point:
        return Estimate(value=point, ci_low=point, ci_high=point, n=n, n_clusters=k)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(np.asarray(reps), [alpha, 1.0 - alpha])
    return Estimate(value=point, ci_low=float(lo), ci_high=float(hi), n=n, n_clusters=k)


def paired_test(
    a: Mapping[Hashable, float],
    b: Mapping[Hashable, float],
    cluster_of: Mapping[Hashable, Hashable] | Callable[[Hashable], Hashable],
    *,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    level: float = DEFAULT_LEVEL,
) -> PairedTest | None:
    """Compare two models on the instances both have: mean difference, CI and p-value.

    The CI is a cluster bootstrap of the mean difference. The two-sided p-value
    is a sign-flip permutation test at the cluster level: under the null that
    the models are exchangeable, each paper's summed difference is equally
    likely to have either sign. Returns None when no instance is shared.
    """
    keys = [k for k in a if k in b]
    if not keys:
        return None
    get = cluster_of if callable(cluster_of) else cluster_of.__getitem__
    diffs = np.asarray([float(a[k]) - float(b[k]) for k in keys])
    clusters = [get(k) for k in keys]
    est = cluster_bootstrap_mean(list(diffs), clusters, n_boot=n_boot, seed=seed, level=level)
    assert est is not None
    idx, k = _cluster_index(clusters)
    sums = np.bincount(idx, weights=diffs, minlength=k)
    observed = abs(sums.sum())
    rng = np.random.default_rng(seed + 1)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(n_boot, k))
    null = np.abs((signs * sums).sum(axis=1))
    if observed == 0.0:
        p = 1.0
    else:
        p = float((1 + np.sum(null >= observed - 1e-12)) / (n_boot + 1))
    return PairedTest(diff=est.value, ci_low=est.ci_low, ci_high=est.ci_high, p_value=p, n=len(keys), n_clusters=k)
