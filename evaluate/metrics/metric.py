"""What a metric is, and the array functions every metric is made of.

A metric (a reported figure: ``best5_originality``, ``win_non_obviousness``,
``overlap5``) is a ``MetricSpec`` declared by the criterion it belongs to
(``evaluate/criteria/``); ``rqbench.evaluate.criteria.METRICS`` is the one list
of them. Its ``fn`` is the only implementation of the figure: it maps a results
file's score table for one dimension (the GT's value per instance, the model
candidates' values per instance, NaN for unscored) to one value per instance,
and the summary, the report and the leaderboard all run that function.
Everything here is pure: arrays in, arrays out, no I/O, no randomness.

The choices the paper leaves open are named options (enums) documented in
docs/metrics.md.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rqbench.evaluate.metrics.outcomes import TIE_TOLERANCE
from rqbench.records import CandidateScores, InstanceResult, Verdict

GT_ID = "gt"  # the candidate id of the ground-truth (author) RQ in every results instance
MODEL_RQS = 5  # the research questions a model gives per instance (the paper's "five")


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


class FailureAccounting(str, enum.Enum):
    """Whose failure a missing score is, and what it does to a figure (docs/metrics.md, "Failure accounting").

    paper (default): every instance of the release counts, as the paper's rates do. The rest is the project's rule
        (the paper says nothing about failures): a model's failure counts against the model: an instance with no valid generation is a loss with the scale's worst Best@5, and a
        candidate missing from an instance scores the scale's worst on each dimension. A judge's failure (a call
        that failed after its re-ask, a candidate left without its score) leaves the instance unjudged for that
        criterion: out of the criterion's model figures, and counted on the row, which is marked incomplete.
    conditional: the figure over what was scored (the behaviour before): an instance without a valid
        generation has no value, and an unscored or missing candidate is left out of Best@5 (best of four).
    """

    paper = "paper"
    conditional = "conditional"


_FAILURES_TEXT = {
    FailureAccounting.paper: (
        "failures counted by the project's rule (the paper is silent): an instance with no valid generation is a "
        "loss with the scale's worst Best@5, a missing RQ scores the worst, and an instance a judge's call failed "
        "on is left out and counted"
    ),
    FailureAccounting.conditional: (
        "conditional figures: over the instances and RQs that were scored; instances with no valid generation "
        "are left out, and an unscored RQ is left out of Best@5"
    ),
}


def describe_failures(rule: FailureAccounting | str) -> str:
    """The one sentence that says how failures entered the figures (report.md, the Space's caption)."""
    rule = FailureAccounting(rule)
    return _FAILURES_TEXT[rule] + f" (failures: {rule.value})"


@dataclass(frozen=True)
class ScoreOptions:
    """The named options that turn stored replies into one score per candidate, and failures into figures."""

    narrowness: NarrownessAggregation = NarrownessAggregation.mean
    orderings: OrderingAggregation = OrderingAggregation.mean
    failures: FailureAccounting = FailureAccounting.paper


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


# --------------------------------------------------------------------------
# The array functions metrics are made of (one row per instance; NaN = no value)
# --------------------------------------------------------------------------


def best(model: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """Best@5 per row over the scored candidates (max, or min when lower is better); NaN where none is scored."""
    if model.shape[1] == 0:
        return np.full(model.shape[0], np.nan)
    return (np.fmax if higher_is_better else np.fmin).reduce(model, axis=1)


def verdicts(a: np.ndarray, b: np.ndarray, higher_is_better: bool) -> dict[Verdict, np.ndarray]:
    """Per row, whether ``a`` wins against, ties with or loses to ``b`` (each a 0/1 float; NaN where either is
    missing). Equal within ``outcomes.TIE_TOLERANCE`` is a tie (the tie rule of every pick); a win is the higher value, or the lower one when lower is better."""
    valid = ~np.isnan(a) & ~np.isnan(b)
    with np.errstate(invalid="ignore"):
        tie = np.abs(a - b) <= TIE_TOLERANCE
        better = a > b if higher_is_better else a < b
    hits = {Verdict.tie: tie, Verdict.win: ~tie & better, Verdict.lose: ~tie & ~better}
    return {v: np.where(valid, hit.astype(float), np.nan) for v, hit in hits.items()}


# --------------------------------------------------------------------------
# The declaration of a metric
# --------------------------------------------------------------------------

Kind = Literal["score", "rate", "diagnostic"]
MetricFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class MetricSpec:
    """One reported figure: how to compute it, and how to read it.

    ``fn(gt, model)`` takes the GT's values (shape ``(n,)``) and the model
    candidates' values (``(n, width)``) on ``dimension``, NaN for unscored, and
    returns one value per instance (NaN: no value; a rate is the mean of 0/1
    indicators). ``reference``: the figure also has the GT's own value (the
    author-anchored reference row). ``higher_is_better`` is None where a figure
    has no direction (tie rates). ``settings`` are the judge settings the figure
    is reported for: the paper reports no mean comparative scores, only rates.
    ``no_generation`` is the figure's value on an instance for which the model gave
    no valid generation, under the paper's failure accounting (a loss: the worst
    Best@5, a lose verdict); None leaves such an instance without a value.
    """

    name: str
    fn: MetricFn
    higher_is_better: bool | None
    dimension: str
    label: str
    kind: Kind
    settings: tuple[str, ...] = ("standalone", "comparative")
    reference: bool = False
    no_generation: float | None = None

    def values(
        self, gt: np.ndarray, model: np.ndarray, reference: bool = False, no_generation: np.ndarray | None = None
    ) -> np.ndarray:
        """The per-instance values (NaN = none): ``fn``'s, or the GT's own for the reference row.

        ``no_generation`` (one bool per instance, given under the default ``paper`` accounting) marks the instances with
        no valid generation; they take the figure's ``no_generation`` value.
        """
        if reference:
            if not self.reference:
                raise ValueError(f"metric {self.name!r} has no reference value")
            return gt
        out = self.fn(gt, model)
        if no_generation is not None and self.no_generation is not None and no_generation.any():
            out = np.where(no_generation, self.no_generation, out)
        return out


def best_of_five(dimension: str, label: str, higher_is_better: bool, worst: float) -> MetricSpec:
    """Best@5 on one dimension: the best scored model RQ per instance, with the GT's own score as reference.

    ``worst`` is the scale's worst value: an instance with no valid generation has it as its Best@5.
    """

    def fn(gt: np.ndarray, model: np.ndarray) -> np.ndarray:
        return best(model, higher_is_better)

    return MetricSpec(
        name=f"best5_{dimension}",
        fn=fn,
        higher_is_better=higher_is_better,
        dimension=dimension,
        label=f"Best@5 {label}" + ("" if higher_is_better else " (lower is better)"),
        kind="score",
        settings=("standalone",),
        reference=True,
        no_generation=worst,
    )


def pass_rates(dimension: str, label: str, higher_is_better: bool) -> tuple[MetricSpec, ...]:
    """Pass@5 win, tie and lose rates on one dimension: Best@5 against the GT, one verdict per instance.

    An instance with no valid generation is a loss (the project's rule under the default ``paper`` accounting): win 0, tie 0, lose 1.
    """

    def rate(outcome: Verdict) -> MetricSpec:
        def fn(gt: np.ndarray, model: np.ndarray) -> np.ndarray:
            return verdicts(best(model, higher_is_better), gt, higher_is_better)[outcome]

        direction = {Verdict.win: True, Verdict.tie: None, Verdict.lose: False}[outcome]
        return MetricSpec(
            name=f"{outcome.value}_{dimension}",
            fn=fn,
            higher_is_better=direction,
            dimension=dimension,
            label=f"Pass@5 {outcome.value} rate, {label}",
            kind="rate",
            no_generation=float(outcome is Verdict.lose),
        )

    return tuple(rate(v) for v in Verdict)
