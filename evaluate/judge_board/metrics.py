"""The judge board's figures: pure functions of picks, each over the pairs it is computed on.

A pick says which of a pair's two RQs is the more non-obvious: ``gt`` (the
author-anchored RQ), ``model`` or ``tie``. A judge's call gives one
(``order_pick``: the higher non-obviousness score wins, equal scores tie); its
pick on the pair (``pair_pick``) compares each RQ's non-obviousness averaged over
the calls that gave a verdict, both orders or the one left, as the leaderboard
combines several orderings (``--orderings mean``). The experts' majority is the
pick more than half of a pair's experts made; a pair whose experts split evenly
has none and is left out of the majority figures.

Every interval is a 95% percentile bootstrap over pairs: each pair is one
cluster (``rqbench.evaluate.metrics.bootstrap``), so a pair with several annotators
weighs as one pair. Each figure carries ``n``, the pairs (or picks) behind it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from rqbench.evaluate.metrics import outcomes
from rqbench.evaluate.metrics.bootstrap import DEFAULT_LEVEL, Estimate, cluster_bootstrap_mean
from rqbench.evaluate.metrics.outcomes import pick_between
from rqbench.records import PICKS, NoveltyScore, OrderVerdict, Pick

BOARD_BOOT = 1000


def order_pick(gt: NoveltyScore, model: NoveltyScore) -> Pick:
    """One call's pick: the RQ with the higher non-obviousness score; equal scores are a tie (``outcomes``)."""
    return pick_between(gt.non_obviousness, model.non_obviousness)


def pair_pick(scores: Sequence[tuple[NoveltyScore, NoveltyScore]]) -> Pick | None:
    """The pick on a pair from its calls' (gt, model) scores: mean non-obviousness of each; None with no call."""
    if not scores:
        return None
    gt = sum(g.non_obviousness for g, _ in scores) / len(scores)
    model = sum(m.non_obviousness for _, m in scores) / len(scores)
    return pick_between(gt, model)


def scored_calls(verdicts: Sequence[OrderVerdict]) -> list[OrderVerdict]:
    """The calls of a pair that gave a pick and both scores (a failed call gives neither)."""
    return [v for v in verdicts if v.pick is not None and v.gt_score is not None and v.model_score is not None]


def calls_pick(verdicts: Sequence[OrderVerdict]) -> Pick | None:
    """A pair's pick from its scored calls (``pair_pick``); None when none scored."""
    return pair_pick([(v.gt_score, v.model_score) for v in scored_calls(verdicts)])  # type: ignore[misc]


def majority(picks: Mapping[str, Pick]) -> Pick | None:
    """The pick more than half of the experts made; None when no pick has a strict majority."""
    if not picks:
        return None
    (top, count), *_ = Counter(picks.values()).most_common(1)
    return top if count * 2 > len(picks) else None


def agreement(
    judge: Mapping[str, Pick], reference: Mapping[str, Pick], *, n_boot: int = BOARD_BOOT, seed: int = 0
) -> Estimate | None:
    """Share of the pairs both picked on where the picks are the same (``outcomes.agreement``, each pair its own
    cluster); None when they share no pair."""
    return outcomes.agreement({k: judge[k] for k in sorted(judge)}, reference, n_boot=n_boot, seed=seed)


def cohen_kappa(a: Sequence[Pick], b: Sequence[Pick]) -> float | None:
    """Cohen's kappa of two raters' picks on the same items: (observed - chance) / (1 - chance).

    Chance agreement is the sum over picks of the product of the two raters' shares of that pick.
    None when it is undefined: no items, or both raters made one and the same pick throughout.
    """
    if len(a) != len(b):
        raise ValueError(f"{len(a)} picks against {len(b)}")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    chance = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def kappa(
    judge: Mapping[str, Pick], reference: Mapping[str, Pick], *, n_boot: int = BOARD_BOOT, seed: int = 0
) -> Estimate | None:
    """Cohen's kappa on the shared pairs, with a percentile bootstrap interval over pairs; None when it is
    undefined on the pairs themselves. Resamples where it is undefined are dropped. Every resample is
    computed at once (each pair is its own cluster), since the Space recomputes a kappa per judge and
    expert whenever an annotation arrives (``benchmarks/judge_board.py``: 0.04x the time of
    ``bootstrap.cluster_bootstrap``'s loop)."""
    shared = sorted(set(judge) & set(reference))
    point = cohen_kappa([judge[k] for k in shared], [reference[k] for k in shared])
    if point is None:
        return None
    code = {p: i for i, p in enumerate(PICKS)}
    a = np.asarray([code[judge[k]] for k in shared])
    b = np.asarray([code[reference[k]] for k in shared])
    n = len(shared)
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    ra, rb = a[idx], b[idx]
    observed = (ra == rb).mean(axis=1)
    chance = sum((ra == c).mean(axis=1) * (rb == c).mean(axis=1) for c in range(len(PICKS)))
    defined = chance < 1.0
    reps = (observed[defined] - chance[defined]) / (1.0 - chance[defined])
    alpha = (1.0 - DEFAULT_LEVEL) / 2.0
    lo, hi = np.quantile(reps, [alpha, 1.0 - alpha]) if len(reps) else (point, point)
    return Estimate(value=point, ci_low=float(min(lo, point)), ci_high=float(max(hi, point)), n=n, n_clusters=n)


def position_consistency(
    order_picks: Mapping[str, Sequence[Pick]], *, n_boot: int = BOARD_BOOT, seed: int = 0
) -> Estimate | None:
    """Share of pairs whose calls all gave the same pick, over pairs with a verdict in both orders."""
    both = sorted(k for k, picks in order_picks.items() if len(picks) >= 2)
    return cluster_bootstrap_mean([float(len(set(order_picks[k])) == 1) for k in both], both, n_boot=n_boot, seed=seed)


def pick_rate(picks: Mapping[str, Pick], pick: Pick, *, n_boot: int = BOARD_BOOT, seed: int = 0) -> Estimate | None:
    """Share of pairs with ``pick`` (``tie``: the tie rate), pairs in sorted order."""
    return outcomes.pick_rate({k: picks[k] for k in sorted(picks)}, pick, n_boot=n_boot, seed=seed)


def expert_agreement(
    expert_picks: Mapping[str, Mapping[str, Pick]], *, n_boot: int = BOARD_BOOT, seed: int = 0
) -> Estimate | None:
    """How often two experts who picked on the same pair made the same pick: every two experts of every
    pair is one observation, each pair one cluster. The ceiling a judge is compared with."""
    values: list[float] = []
    clusters: list[str] = []
    for pair_id in sorted(expert_picks):
        picks = [expert_picks[pair_id][e] for e in sorted(expert_picks[pair_id])]
        for i in range(len(picks)):
            for j in range(i + 1, len(picks)):
                values.append(float(picks[i] == picks[j]))
                clusters.append(pair_id)
    return cluster_bootstrap_mean(values, clusters, n_boot=n_boot, seed=seed)


def per_pair_mean(values: Mapping[str, float | None]) -> float | None:
    """The mean over pairs of a per-pair amount (cost, seconds); None when any pair's amount is unknown."""
    if not values or any(v is None for v in values.values()):
        return None
    return sum(v for v in values.values() if v is not None) / len(values)
