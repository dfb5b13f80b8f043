"""The benchmark's metrics as pure functions over stored judge scores.

Everything here reads records and returns numbers: no I/O, no LLM calls, no
randomness. Each reported figure is declared once in ``METRICS`` as a
``MetricSpec`` (name, per-instance function, direction, dimension, label) so the
summary, the report tables and the leaderboard all read the same definition.

A per-instance figure is computed from a ``ScoreVector``: the GT's value and the
model's five values on one dimension, under one judge (or the judges' mean, for
the ``mean_scores`` combine rule). Unscored candidates are ``None`` and are left
out; an instance whose GT or all five model RQs are unscored has no figure.
The choices the paper leaves open are named options (enums) documented in
docs/metrics.md.
"""

from __future__ import annotations

import enum
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from rqbench.records import (
    NARROWNESS_DIMENSIONS,
    NOVELTY_DIMENSIONS,
    CandidateScores,
    InstanceResult,
    NoveltyScore,
    OverlapReply,
)

GT_ID = "gt"  # the candidate id of the ground-truth (author) RQ in every results instance
MODEL_IDS = ("m0", "m1", "m2", "m3", "m4")
NOVELTY_DIMS: tuple[str, ...] = ("relevance", *NOVELTY_DIMENSIONS)
NARROWNESS_DIMS: tuple[str, ...] = NARROWNESS_DIMENSIONS
DIMENSION_LABELS = {
    "relevance": "relevance",
    "originality": "originality",
    "gap_addressing": "gap addressing",
    "non_obviousness": "non-obviousness",
    "source_bound_score": "source-boundedness",
    "diagnostic_test_score": "diagnostic framing",
    "overlap": "author-anchor overlap",
}
_TIE_TOL = 1e-9


class Family(str, enum.Enum):
    """Which rubric a dimension belongs to; decides the direction of "best"."""

    novelty = "novelty"
    narrowness = "narrowness"
    overlap = "overlap"

    @property
    def higher_is_better(self) -> bool:
        return self is not Family.narrowness


class Verdict(str, enum.Enum):
    """The Pass@5 outcome of the model's best RQ against the GT."""

    win = "win"
    tie = "tie"
    lose = "lose"


class NarrownessAggregation(str, enum.Enum):
    """How a candidate's per-background-paper narrowness becomes one instance score.

    mean (default): the mean over the background papers the judge scored.
    max: the most source-bound reading (the RQ is as narrow as its narrowest tie).
    min: the most lenient reading.
    """

    mean = "mean"
    max = "max"
    min = "min"


class OrderingAggregation(str, enum.Enum):
    """How scores under ``--orderings K`` shuffled comparative orderings become one score.

    mean (default): the mean over the orderings, which averages out position bias.
    first: the first ordering only, i.e. the single-call protocol of the paper.
    A candidate without per-ordering scores uses its ``novelty`` field.
    """

    mean = "mean"
    first = "first"


class SelectionRule(str, enum.Enum):
    """Which of the five model RQs is "the best" when one RQ must be picked.

    per_dimension: on each dimension, the RQ best on that dimension (Best@5 itself;
        the rule of the novelty and narrowness tables). The agreement tables do not
        use these rules: they judge the RQ an annotator was shown (``shown_pair``).
    mean_novelty: the RQ with the highest mean of originality, gap addressing and
        non-obviousness (the rule of the semantic-similarity analysis).
    judge_rank: the model RQ the comparative judge ranked highest (first ordering).
    Ties go to the rubric's own order (total, non-obviousness, originality, gap
    addressing), then to the lowest index.
    """

    per_dimension = "per_dimension"
    mean_novelty = "mean_novelty"
    judge_rank = "judge_rank"


class CombineRule(str, enum.Enum):
    """How several judges become one "combined" figure (the paper leaves this unstated).

    pooled (default): every (instance, judge) pair is one observation; rates and
        means are taken over all of them.
    mean_scores: per instance, each candidate's score is averaged over the judges
        that scored it, and Best@5 and the verdict are computed on those means.
    """

    pooled = "pooled"
    mean_scores = "mean_scores"


_COMBINE_TEXT = {
    CombineRule.pooled: (
        "combined over {n}: every (instance, judge) pair is one observation, so a rate is the share of "
        "instance-judge verdicts and a mean is over instance-judge scores; the CI resamples source papers"
    ),
    CombineRule.mean_scores: (
        "combined over {n}: per instance, each RQ's score is the mean of the judges' scores, and Best@5 "
        "and the verdict against the author-anchored RQ are taken on those means; the CI resamples source papers"
    ),
}


def describe_combine_rule(rule: CombineRule | str, judges: Sequence[str] = ()) -> str:
    """The one sentence that says how "combined" was made; table captions and leaderboard tooltips print it."""
    rule = CombineRule(rule)
    who = ", ".join(judges) if judges else "two or more judges"
    return _COMBINE_TEXT[rule].format(n=who) + f" (rule: {rule.value})"


@dataclass(frozen=True)
class ScoreOptions:
    """The named aggregation options that turn stored replies into one score per candidate."""

    narrowness: NarrownessAggregation = NarrownessAggregation.mean
    orderings: OrderingAggregation = OrderingAggregation.mean


@dataclass(frozen=True)
class ScoreVector:
    """One dimension on one instance: the GT's score and the model's five (None = unscored)."""

    gt: float | None
    model: tuple[float | None, ...]


# --------------------------------------------------------------------------
# From records to per-candidate scores
# --------------------------------------------------------------------------


def split_candidates(inst: InstanceResult) -> tuple[CandidateScores, list[CandidateScores]]:
    """The GT and the model's candidates, checking the stored order (GT first, then m0..m4)."""
    if not inst.candidates or inst.candidates[0].candidate_id != GT_ID:
        first = inst.candidates[0].candidate_id if inst.candidates else None
        raise ValueError(f"instance {inst.rq_id}: candidates[0].candidate_id must be 'gt', got {first!r}")
    model = inst.candidates[1:]
    for c in model:
        if c.candidate_id == GT_ID:
            raise ValueError(f"instance {inst.rq_id}: candidate_id 'gt' appears twice")
    return inst.candidates[0], list(model)


def _novelty_scores(c: CandidateScores, opts: ScoreOptions) -> list[NoveltyScore]:
    if c.novelty_by_ordering:
        if opts.orderings is OrderingAggregation.first:
            return [c.novelty_by_ordering[0]]
        return list(c.novelty_by_ordering)
    return [c.novelty] if c.novelty is not None else []


def novelty_value(c: CandidateScores, dim: str, opts: ScoreOptions = ScoreOptions()) -> float | None:
    """A candidate's novelty score on ``dim`` (mean over orderings by default)."""
    if dim not in NOVELTY_DIMS:
        raise ValueError(f"unknown novelty dimension {dim!r}; expected one of {NOVELTY_DIMS}")
    scores = _novelty_scores(c, opts)
    if not scores:
        return None
    return sum(getattr(s, dim) for s in scores) / len(scores)


def narrowness_value(
    c: CandidateScores,
    dim: str,
    opts: ScoreOptions = ScoreOptions(),
    paper_ids: Sequence[str] | None = None,
) -> float | None:
    """A candidate's narrowness on ``dim``, aggregated over its scored background papers."""
    if dim not in NARROWNESS_DIMS:
        raise ValueError(f"unknown narrowness dimension {dim!r}; expected one of {NARROWNESS_DIMS}")
    keys = list(paper_ids) if paper_ids is not None else list(c.narrowness)
    vals = [getattr(c.narrowness[k], dim) for k in keys if k in c.narrowness]
    if not vals:
        return None
    agg = opts.narrowness
    if agg is NarrownessAggregation.mean:
        return sum(vals) / len(vals)
    if agg is NarrownessAggregation.max:
        return float(max(vals))
    return float(min(vals))


def family_of(dim: str) -> Family:
    if dim in NOVELTY_DIMS:
        return Family.novelty
    if dim in NARROWNESS_DIMS:
        return Family.narrowness
    if dim == "overlap":
        return Family.overlap
    raise ValueError(f"unknown dimension {dim!r}")


def candidate_value(c: CandidateScores, dim: str, opts: ScoreOptions, paper_ids: Sequence[str]) -> float | None:
    if family_of(dim) is Family.novelty:
        return novelty_value(c, dim, opts)
    return narrowness_value(c, dim, opts, paper_ids)


def score_vector(inst: InstanceResult, dim: str, opts: ScoreOptions = ScoreOptions()) -> ScoreVector:
    """The GT's and the model's scores on one dimension of one instance.

    For ``dim == "overlap"`` the model values are the judge's pairwise overlap
    scores (GT vs each of the five) and the GT value is None.
    """
    if family_of(dim) is Family.overlap:
        if inst.overlap is None:
            return ScoreVector(gt=None, model=())
        return ScoreVector(gt=None, model=tuple(float(s) for s in inst.overlap.pairwise_scores))
    gt, model = split_candidates(inst)
    papers = inst.background_paper_ids
    return ScoreVector(
        gt=candidate_value(gt, dim, opts, papers),
        model=tuple(candidate_value(c, dim, opts, papers) for c in model),
    )


def mean_vector(vectors: Sequence[ScoreVector]) -> ScoreVector:
    """The ``mean_scores`` combine rule: each candidate's score averaged over the judges that scored it."""
    if not vectors:
        return ScoreVector(gt=None, model=())
    width = max(len(v.model) for v in vectors)

    def avg(vals: list[float | None]) -> float | None:
        got = [v for v in vals if v is not None]
        return sum(got) / len(got) if got else None

    model = tuple(avg([v.model[i] if i < len(v.model) else None for v in vectors]) for i in range(width))
    return ScoreVector(gt=avg([v.gt for v in vectors]), model=model)


# --------------------------------------------------------------------------
# The metrics
# --------------------------------------------------------------------------


def best_at_5(values: Sequence[float | None], higher_is_better: bool = True) -> float | None:
    """Best@5: the best score among the scored model RQs (max, or min when lower is better)."""
    got = [v for v in values if v is not None]
    if not got:
        return None
    return max(got) if higher_is_better else min(got)


def verdict(best: float | None, gt: float | None, higher_is_better: bool = True) -> Verdict | None:
    """Pass@5: win if the best model RQ beats the GT on the dimension, tie if equal, else lose."""
    if best is None or gt is None:
        return None
    if math.isclose(best, gt, rel_tol=0.0, abs_tol=_TIE_TOL):
        return Verdict.tie
    better = best > gt if higher_is_better else best < gt
    return Verdict.win if better else Verdict.lose


def pass_at_5(vec: ScoreVector, higher_is_better: bool = True) -> Verdict | None:
    return verdict(best_at_5(vec.model, higher_is_better), vec.gt, higher_is_better)


@dataclass(frozen=True)
class Rates:
    """Shares of win, tie and lose among scored verdicts; they sum to 1 when n > 0."""

    win: float
    tie: float
    lose: float
    n: int


def verdict_rates(verdicts: Sequence[Verdict | None]) -> Rates:
    got = [v for v in verdicts if v is not None]
    n = len(got)
    if n == 0:
        return Rates(win=0.0, tie=0.0, lose=0.0, n=0)
    return Rates(
        win=sum(v is Verdict.win for v in got) / n,
        tie=sum(v is Verdict.tie for v in got) / n,
        lose=sum(v is Verdict.lose for v in got) / n,
        n=n,
    )


def overlap_at_5(overlap: OverlapReply | None) -> float | None:
    """Overlap@5 of one instance: the highest GT-overlap score among the five (0-4)."""
    if overlap is None or not overlap.pairwise_scores:
        return None
    return float(max(overlap.pairwise_scores))


def mean_std(values: Sequence[float | None]) -> tuple[float | None, float | None, int]:
    """Mean and sample standard deviation (0 for one value) of the non-missing values."""
    got = [float(v) for v in values if v is not None]
    if not got:
        return None, None, 0
    return statistics.fmean(got), (statistics.stdev(got) if len(got) > 1 else 0.0), len(got)


# --------------------------------------------------------------------------
# Best-RQ selection (when one RQ of the five must be named)
# --------------------------------------------------------------------------


def _rubric_key(c: CandidateScores, opts: ScoreOptions) -> tuple[float, ...] | None:
    vals = [novelty_value(c, d, opts) for d in ("non_obviousness", "originality", "gap_addressing")]
    if any(v is None for v in vals):
        return None
    nonobv, orig, gap = vals  # type: ignore[misc]
    return (nonobv + orig + gap, nonobv, orig, gap)


def select_best(
    inst: InstanceResult,
    rule: SelectionRule,
    *,
    dim: str = "non_obviousness",
    opts: ScoreOptions = ScoreOptions(),
) -> int | None:
    """Index (0..4) into the model's candidates of the RQ the rule picks; None if none is scored."""
    _, model = split_candidates(inst)
    if rule is SelectionRule.judge_rank:
        best: tuple[int, int] | None = None
        for i, c in enumerate(model):
            if c.rank_by_ordering:
                key = (c.rank_by_ordering[0], i)
                if best is None or key < best:
                    best = key
        if best is not None:
            return best[1]
        rule = SelectionRule.mean_novelty  # no ranking stored: fall back to the rubric's order
    if rule is SelectionRule.per_dimension:
        fam = family_of(dim)
        sign = 1.0 if fam.higher_is_better else -1.0
        scored = []
        for i, c in enumerate(model):
            v = candidate_value(c, dim, opts, inst.background_paper_ids)
            if v is not None:
                tie_key = _rubric_key(c, opts) or ()
                scored.append(((sign * v, *tie_key), -i))
        return -max(scored)[1] if scored else None
    keyed = [(k, -i) for i, c in enumerate(model) if (k := _rubric_key(c, opts)) is not None]
    if not keyed:
        return None
    # mean of the three dimensions orders exactly like their total
    return -max(keyed)[1]


# --------------------------------------------------------------------------
# The declarations the summary, tables and leaderboard read
# --------------------------------------------------------------------------

Kind = Literal["score", "rate", "diagnostic"]


@dataclass(frozen=True)
class MetricSpec:
    """One reported figure: how to compute it per instance, and how to read it.

    ``fn`` maps the ``ScoreVector`` of ``dimension`` on one instance to a number
    (a rate is the mean of 0/1 indicators). ``reference_fn`` gives the GT's own
    value where the figure has one (the author-anchored reference row).
    ``higher_is_better`` is None where a figure has no direction (tie rates).
    ``settings`` are the judge settings the figure is reported for: the paper
    reports no mean comparative scores, only comparative rates.
    """

    name: str
    fn: Callable[[ScoreVector], float | None]
    higher_is_better: bool | None
    dimension: str
    label: str
    kind: Kind
    settings: tuple[str, ...] = ("standalone", "comparative")
    reference_fn: Callable[[ScoreVector], float | None] | None = None

    @property
    def family(self) -> Family:
        return family_of(self.dimension)


def _best_fn(hib: bool) -> Callable[[ScoreVector], float | None]:
    def fn(vec: ScoreVector) -> float | None:
        return best_at_5(vec.model, hib)

    return fn


def _rate_fn(outcome: Verdict, hib: bool) -> Callable[[ScoreVector], float | None]:
    def fn(vec: ScoreVector) -> float | None:
        v = pass_at_5(vec, hib)
        return None if v is None else float(v is outcome)

    return fn


def _gt_value(vec: ScoreVector) -> float | None:
    return vec.gt


def _overlap_fn(vec: ScoreVector) -> float | None:
    return best_at_5(vec.model, True)


def _build_metrics() -> dict[str, MetricSpec]:
    specs: list[MetricSpec] = []
    for dim in (*NOVELTY_DIMS, *NARROWNESS_DIMS):
        hib = family_of(dim).higher_is_better
        label = DIMENSION_LABELS[dim]
        specs.append(
            MetricSpec(
                name=f"best5_{dim}",
                fn=_best_fn(hib),
                higher_is_better=hib,
                dimension=dim,
                label=f"Best@5 {label}" + ("" if hib else " (lower is better)"),
                kind="score",
                settings=("standalone",),
                reference_fn=_gt_value,
            )
        )
        for outcome in Verdict:
            direction = {Verdict.win: True, Verdict.tie: None, Verdict.lose: False}[outcome]
            specs.append(
                MetricSpec(
                    name=f"{outcome.value}_{dim}",
                    fn=_rate_fn(outcome, hib),
                    higher_is_better=direction,
                    dimension=dim,
                    label=f"Pass@5 {outcome.value} rate, {label}",
                    kind="rate",
                )
            )
    specs.append(
        MetricSpec(
            name="overlap5",
            fn=_overlap_fn,
            higher_is_better=True,
            dimension="overlap",
            label="Overlap@5 (author-anchor overlap, 0-4)",
            kind="diagnostic",
        )
    )
    return {s.name: s for s in specs}


METRICS: dict[str, MetricSpec] = _build_metrics()


def metric(name: str) -> MetricSpec:
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {', '.join(METRICS)}") from None


def instance_value(spec: MetricSpec, inst: InstanceResult, opts: ScoreOptions = ScoreOptions()) -> float | None:
    """A metric's value on one instance under one judge."""
    return spec.fn(score_vector(inst, spec.dimension, opts))
