"""Novelty against the BACKGROUND papers: relevance first, then originality, gap addressing, non-obviousness.

Standalone: one candidate a call. Comparative: the GT and the five in one call,
each scored and all ranked, once per ordering (``--orderings K``), the order of
each drawn for the judge (``requests.ORDER_KEY``: seed, judge label, rq_id, k). A candidate's
``novelty`` is its score under the first ordering that succeeded; every
ordering's score and the rank it got are kept in ``novelty_by_ordering`` and
``rank_by_ordering`` for position-bias analysis. Scores under several
orderings become one by ``ScoreOptions.orderings`` (mean, or the first).

Figures: Best@5 per dimension (standalone, mean ± std, with the GT's own
score as the reference row) and Pass@5 win/tie/lose rates per dimension.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from rqbench.evaluate.benchmark.background import background_block
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.metrics.metric import OrderingAggregation, ScoreOptions
from rqbench.records import (
    NOVELTY_DIMENSIONS,
    CandidateScores,
    ComparativeNoveltyReply,
    EvaluationInstance,
    InstanceResult,
    NoveltyScore,
    Reply,
    StandaloneNoveltyReply,
    scale_of,
)
from rqbench.steps import Step

from .base import Column, Criterion, Dimension, ReportTable, dimension_metrics, figure_column
from .requests import JudgeConfig, JudgeRequest, candidate_map, group_candidates

_DIMENSIONS = tuple(
    Dimension(name, label, True, scale_of(NoveltyScore, name))
    for name, label in (
        ("relevance", "relevance"),
        ("originality", "originality"),
        ("gap_addressing", "gap addressing"),
        ("non_obviousness", "non-obviousness"),
    )
)
assert tuple(d.name for d in _DIMENSIONS[1:]) == NOVELTY_DIMENSIONS
_READ = operator.attrgetter(*(d.name for d in _DIMENSIONS))
_METRICS = dimension_metrics(_DIMENSIONS)
_BY_NAME = {m.name: m for m in _METRICS}


def _col(metric: str, label: str, *, headline: bool = False) -> Column:
    return figure_column(_BY_NAME[metric], label, "novelty", headline=headline)


class Novelty(Criterion):
    name = "novelty"
    steps = {
        "standalone": Step("novelty_standalone", StandaloneNoveltyReply, __name__, "standalone"),
        "comparative": Step("novelty_comparative", ComparativeNoveltyReply, __name__, "comparative"),
    }
    dimensions = _DIMENSIONS
    metrics = _METRICS
    headline = "non_obviousness"
    tie_break = ("non_obviousness", "originality", "gap_addressing")  # A.5: the RQ the experts were shown
    report_tables = (
        ReportTable(
            "scores",
            "novelty_standalone_scores",
            "Standalone novelty: mean ± std of each model's best-of-five score per dimension (0-3); "
            "the GT row is the author-anchored RQ's own score.",
            {"standalone": "Table 3(a)"},
            ("non_obviousness", "originality", "gap_addressing"),
        ),
        ReportTable(
            "rates",
            "novelty_{setting}_rates",
            "{Setting} novelty: Pass@5 win rate % [95% CI] (tie rate %) of the best of five model RQs against the GT.",
            {"standalone": "Table 3(b)", "comparative": "Table 4"},
            ("non_obviousness", "originality", "gap_addressing"),
            other="tie",
        ),
    )
    columns = (
        _col("best5_originality", "Best@5 originality", headline=True),
        _col("best5_gap_addressing", "Best@5 gap addressing", headline=True),
        _col("best5_non_obviousness", "Best@5 non-obviousness", headline=True),
        _col("win_originality", "Win % originality"),
        _col("tie_originality", "Tie % originality"),
        _col("win_gap_addressing", "Win % gap addressing"),
        _col("tie_gap_addressing", "Tie % gap addressing"),
        _col("win_non_obviousness", "Win % non-obviousness", headline=True),
        _col("tie_non_obviousness", "Tie % non-obviousness", headline=True),
        _col("lose_non_obviousness", "Lose % non-obviousness", headline=True),
    )

    # -- judging ------------------------------------------------------------
    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        background, cuts = background_block(bench.background(inst), judge.policy)
        step = self.step_for(judge.setting)
        ids = list(candidates)
        rounds = judge.orderings if judge.setting == "comparative" else 1
        out: list[JudgeRequest] = []
        for k in range(rounds):
            groups = group_candidates(judge, inst.rq_id, ids, k)
            out += self.build(judge, step, groups, candidates, {"background": background}, ordering=k, background=cuts)
        return out

    def apply(self, req: JudgeRequest, reply: Reply, result: InstanceResult) -> None:
        cands = candidate_map(result)
        if isinstance(reply, StandaloneNoveltyReply):
            cands[req.candidate_ids[0]].novelty = reply.scores[0]
            return
        assert isinstance(reply, ComparativeNoveltyReply)
        for pos, cid in enumerate(req.candidate_ids):
            c = cands[cid]
            score = reply.scores[pos]
            c.novelty_by_ordering = [*c.novelty_by_ordering, score]
            c.rank_by_ordering = [*c.rank_by_ordering, reply.ranking.index(pos)]
            if c.novelty is None:
                c.novelty = score

    def reset(self, result: InstanceResult) -> None:
        for c in result.candidates:
            c.novelty, c.novelty_by_ordering, c.rank_by_ordering = None, [], []

    # -- scoring ------------------------------------------------------------
    def complete(self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores]) -> bool:
        return all(c.novelty is not None or c.novelty_by_ordering for c in (gt, *model))

    @staticmethod
    def scores(c: CandidateScores, opts: ScoreOptions) -> list[float] | None:
        """The candidate's value on each dimension (in ``dimensions`` order), None when unscored.

        Several orderings: the integer scores summed over the orderings used and divided by their count.
        """
        if c.novelty_by_ordering:
            used = c.novelty_by_ordering[:1] if opts.orderings is OrderingAggregation.first else c.novelty_by_ordering
        else:
            used = [c.novelty] if c.novelty is not None else []
        if len(used) == 1:
            return [float(x) for x in _READ(used[0])]
        if used:
            return [sum(col) / len(used) for col in zip(*map(_READ, used))]
        return None

    def table_values(
        self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores], opts: ScoreOptions
    ) -> tuple[list[float], list[list[float]]]:
        unscored = [float("nan")] * len(_DIMENSIONS)
        rows = [self.scores(c, opts) or unscored for c in (gt, *model)]
        return rows[0], rows[1:]

    def candidate_value(
        self, c: CandidateScores, dimension: str, opts: ScoreOptions, paper_ids: Sequence[str] = ()
    ) -> float | None:
        at = _DIMENSIONS.index(self.dimension(dimension))
        vals = self.scores(c, opts)
        return None if vals is None else vals[at]
