"""How an outcome is decided and how two raters agree on outcomes: the one tie rule and the one agreement figure.

The words (``gt``/``model``/``tie`` picks, ``win``/``tie``/``lose`` verdicts) are declared in
``rqbench.records.outcomes``; this module owns what is computed from them, so that the paper's expert study
(``evaluate/agreement.py``), the judge board (``evaluate/judge_board.py``), the judge meta-evaluation
(``evaluate/meta_eval.py``) and the Space's Annotate tab give the same number for the same picks:

- **the tie rule**: two scores within ``TIE_TOLERANCE`` of each other are a tie (means of integer scores, e.g. a
  pick over both orderings, are not exact in floating point); ``metrics.verdicts`` applies the same tolerance to
  whole columns;
- **agreement**: the share of the items two raters both decided on where they decided the same, with a 95% cluster
  bootstrap interval;
- **a pick rate**: the share of a rater's items with a given outcome, with the same interval.

An item's cluster is what is resampled: the source paper wherever several items share one (the RQs of a paper share
background papers and authors); by default each item is its own cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping

from rqbench.evaluate.metrics.bootstrap import DEFAULT_BOOT, Estimate, cluster_bootstrap_mean
from rqbench.records import Pick

# Scores closer than this are equal: a tie.
TIE_TOLERANCE = 1e-9


def pick_between(gt: float, model: float, *, higher_is_better: bool = True) -> Pick:
    """The pick between the author-anchored RQ's score and a model RQ's: ``tie`` within ``TIE_TOLERANCE``, else
    the RQ with the better score (the higher one, or the lower one when lower is better)."""
    if abs(gt - model) <= TIE_TOLERANCE:
        return "tie"
    gt_better = gt > model if higher_is_better else gt < model
    return "gt" if gt_better else "model"


ClusterOf = Callable[[Hashable], Hashable]


def _own_cluster(key: Hashable) -> Hashable:
    return key


def agreement(
    a: Mapping[Hashable, object],
    b: Mapping[Hashable, object],
    *,
    cluster_of: ClusterOf = _own_cluster,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
) -> Estimate | None:
    """Share of the items both raters decided on (keys of both ``a`` and ``b``) with the same outcome, and its
    interval over ``cluster_of(item)``; None when they share no item. Outcomes are compared as they are: picks with
    picks, verdicts with verdicts. Items are taken in ``a``'s order, which decides the resamples each cluster gets
    (the same order, the same interval)."""
    shared = [k for k in a if k in b]
    values = [float(a[k] == b[k]) for k in shared]
    return cluster_bootstrap_mean(values, [cluster_of(k) for k in shared], n_boot=n_boot, seed=seed)


def pick_rate(
    outcomes: Mapping[Hashable, object],
    outcome: object,
    *,
    cluster_of: ClusterOf = _own_cluster,
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
) -> Estimate | None:
    """Share of a rater's items with ``outcome`` (``"tie"``: the tie rate), with its interval; None with no item.
    Items are taken in the mapping's order, which decides the resamples each cluster gets (the same order, the same
    interval)."""
    keys = list(outcomes)
    values = [float(outcomes[k] == outcome) for k in keys]
    return cluster_bootstrap_mean(values, [cluster_of(k) for k in keys], n_boot=n_boot, seed=seed)
