"""The per-instance definitions of every metric: the oracle the product's array functions must equal.

This is the metric code the product ran before each criterion declared its
vectorised metrics (``evaluate/criteria/``): one ``ScoreVector`` per instance
and dimension, one plain function per figure, written straight from the paper's
definitions. The product never imports it; tests/test_metrics.py,
tests/test_metrics_properties.py and tests/summary_reference.py compare the
product's figures with it.

The failure accounting (``ScoreOptions.failures``) is written here a second
time, from its definition in docs/metrics.md rather than from the criteria's
code: under ``paper``, an instance with no model RQ is a loss with the scale's
worst Best@5, a missing RQ scores the worst, and an instance whose call of a
criterion failed or left a candidate without that criterion's score has no
model value for it; ``conditional`` is the behaviour before.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rqbench.evaluate.metrics.metric import (
    FailureAccounting,
    NarrownessAggregation,
    OrderingAggregation,
    ScoreOptions,
    Verdict,
    split_candidates,
)
from rqbench.records import NARROWNESS_DIMENSIONS, NOVELTY_DIMENSIONS, CandidateScores, InstanceResult, NoveltyScore

NOVELTY_DIMS: tuple[str, ...] = ("relevance", *NOVELTY_DIMENSIONS)
NARROWNESS_DIMS: tuple[str, ...] = NARROWNESS_DIMENSIONS
_TIE_TOL = 1e-9
FIVE = 5
# The worst value of each scale (A.1-A.3): 0 where higher is better, 3 for narrowness (lower is broader).
WORST = {
    "relevance": 0.0,
    "originality": 0.0,
    "gap_addressing": 0.0,
    "non_obviousness": 0.0,
    "source_bound_score": 3.0,
    "diagnostic_test_score": 3.0,
    "overlap": 0.0,
}
# Each criterion's prompt steps and dimensions, as the paper names them.
CRITERION_OF = {
    **{d: "novelty" for d in NOVELTY_DIMS},
    **{d: "narrowness" for d in NARROWNESS_DIMS},
    "overlap": "overlap",
}
STEPS_OF = {
    "novelty": ("novelty_standalone", "novelty_comparative"),
    "narrowness": ("narrowness_standalone", "narrowness_comparative"),
    "overlap": ("overlap",),
}


@dataclass(frozen=True)
class ScoreVector:
    """One dimension on one instance: the GT's score and the model's five (None = unscored).

    ``no_generation``: the model gave no RQ for the instance (set under the paper's accounting only);
    ``unjudged``: a judge's call for the dimension's criterion failed, or left a candidate without its score.
    """

    gt: float | None
    model: tuple[float | None, ...]
    no_generation: bool = False
    unjudged: bool = False


def higher_is_better(dim: str) -> bool:
    if dim in NOVELTY_DIMS or dim == "overlap":
        return True
    if dim in NARROWNESS_DIMS:
        return False
    raise ValueError(f"unknown dimension {dim!r}")


def _novelty_scores(c: CandidateScores, opts: ScoreOptions) -> list[NoveltyScore]:
    if c.novelty_by_ordering:
        if opts.orderings is OrderingAggregation.first:
            return [c.novelty_by_ordering[0]]
        return list(c.novelty_by_ordering)
    return [c.novelty] if c.novelty is not None else []


def novelty_value(c: CandidateScores, dim: str, opts: ScoreOptions = ScoreOptions()) -> float | None:
    scores = _novelty_scores(c, opts)
    if not scores:
        return None
    return sum(getattr(s, dim) for s in scores) / len(scores)


def narrowness_value(c: CandidateScores, dim: str, opts: ScoreOptions, paper_ids: Sequence[str]) -> float | None:
    vals = [getattr(c.narrowness[k], dim) for k in paper_ids if k in c.narrowness]
    if not vals:
        return None
    if opts.narrowness is NarrownessAggregation.mean:
        return sum(vals) / len(vals)
    if opts.narrowness is NarrownessAggregation.max:
        return float(max(vals))
    return float(min(vals))


def candidate_value(c: CandidateScores, dim: str, opts: ScoreOptions, paper_ids: Sequence[str]) -> float | None:
    if dim in NOVELTY_DIMS:
        return novelty_value(c, dim, opts)
    return narrowness_value(c, dim, opts, paper_ids)


def _has_score(c: CandidateScores, criterion: str, papers: Sequence[str]) -> bool:
    if criterion == "novelty":
        return c.novelty is not None or bool(c.novelty_by_ordering)
    return all(p in c.narrowness for p in papers)


def judged(inst: InstanceResult, criterion: str) -> bool:
    """No call of the criterion failed, and every candidate has the criterion's score (docs/metrics.md)."""
    gt, model = split_candidates(inst)
    if not model:
        return True
    if any(r.error is not None and r.step in STEPS_OF[criterion] for r in inst.raw_replies):
        return False
    if criterion == "overlap":
        return inst.overlap is not None
    return all(_has_score(c, criterion, inst.background_paper_ids) for c in (gt, *model))


def score_vector(
    inst: InstanceResult, dim: str, opts: ScoreOptions = ScoreOptions(), ran: Sequence[str] | None = None
) -> ScoreVector:
    """The GT's and the model's scores on one dimension (overlap: the five pairwise scores, no GT value),
    failures accounted as ``opts.failures`` says; ``ran``: the criteria the file's run judged (None: all)."""
    gt, model = split_candidates(inst)
    papers = inst.background_paper_ids
    if dim == "overlap":
        gt_value = None
        values = tuple(float(s) for s in inst.overlap.pairwise_scores) if inst.overlap is not None else ()
    else:
        gt_value = candidate_value(gt, dim, opts, papers)
        values = tuple(candidate_value(c, dim, opts, papers) for c in model)
    criterion = CRITERION_OF[dim]
    was_run = ran is None or criterion in ran
    unjudged = was_run and not judged(inst, criterion)
    if opts.failures is not FailureAccounting.paper or not was_run:
        return ScoreVector(gt=gt_value, model=values, unjudged=unjudged)
    if not model:
        return ScoreVector(gt=gt_value, model=(), no_generation=True)
    if unjudged:
        return ScoreVector(gt=gt_value, model=(None,) * max(FIVE, len(values)), unjudged=True)
    return ScoreVector(gt=gt_value, model=values + (WORST[dim],) * (FIVE - len(values)))


def mean_vector(vectors: Sequence[ScoreVector]) -> ScoreVector:
    """The ``mean_scores`` combine rule: each candidate's score averaged over the judges that scored it."""
    if not vectors:
        return ScoreVector(gt=None, model=())
    width = max(len(v.model) for v in vectors)

    def avg(vals: list[float | None]) -> float | None:
        got = [v for v in vals if v is not None]
        return sum(got) / len(got) if got else None

    model = tuple(avg([v.model[i] if i < len(v.model) else None for v in vectors]) for i in range(width))
    return ScoreVector(
        gt=avg([v.gt for v in vectors]), model=model, no_generation=any(v.no_generation for v in vectors)
    )


def best_at_5(values: Sequence[float | None], higher: bool = True) -> float | None:
    got = [v for v in values if v is not None]
    if not got:
        return None
    return max(got) if higher else min(got)


def verdict(best: float | None, gt: float | None, higher: bool = True) -> Verdict | None:
    if best is None or gt is None:
        return None
    if math.isclose(best, gt, rel_tol=0.0, abs_tol=_TIE_TOL):
        return Verdict.tie
    better = best > gt if higher else best < gt
    return Verdict.win if better else Verdict.lose


def pass_at_5(vec: ScoreVector, higher: bool = True) -> Verdict | None:
    return verdict(best_at_5(vec.model, higher), vec.gt, higher)


def overlap_at_5(scores: Sequence[int] | None) -> float | None:
    """Overlap@5 of one instance: the highest GT-overlap score among the five (0-4)."""
    return float(max(scores)) if scores else None


def mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None, int]:
    got = [float(v) for v in values if v is not None]
    if not got:
        return None, None, 0
    return statistics.fmean(got), (statistics.stdev(got) if len(got) > 1 else 0.0), len(got)


InstanceFn = Callable[[ScoreVector], float | None]


def _best_fn(dim: str) -> InstanceFn:
    """Best@5; an instance with no generation has the scale's worst."""
    hib = higher_is_better(dim)
    return lambda vec: WORST[dim] if vec.no_generation else best_at_5(vec.model, hib)


def _rate_fn(outcome: Verdict, dim: str) -> InstanceFn:
    """A Pass@5 rate's indicator; an instance with no generation is a loss."""
    hib = higher_is_better(dim)

    def fn(vec: ScoreVector) -> float | None:
        v = Verdict.lose if vec.no_generation else pass_at_5(vec, hib)
        return None if v is None else float(v is outcome)

    return fn


def _oracle() -> dict[str, InstanceFn]:
    out: dict[str, InstanceFn] = {}
    for dim in (*NOVELTY_DIMS, *NARROWNESS_DIMS):
        out[f"best5_{dim}"] = _best_fn(dim)
        for outcome in Verdict:
            out[f"{outcome.value}_{dim}"] = _rate_fn(outcome, dim)
    out["overlap5"] = _best_fn("overlap")
    return out


# metric name -> its per-instance definition
ORACLE: dict[str, InstanceFn] = _oracle()


def reference_value(vec: ScoreVector) -> float | None:
    """The GT's own value: the author-anchored reference row of a Best@5 figure."""
    return vec.gt


def instance_value(
    name: str, dimension: str, inst: InstanceResult, opts: ScoreOptions = ScoreOptions()
) -> float | None:
    """The oracle's value of metric ``name`` on one instance under one judge."""
    return ORACLE[name](score_vector(inst, dimension, opts))
