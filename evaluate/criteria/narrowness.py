"""Narrowness against one background paper at a time: source-boundedness and diagnostic framing (lower is broader).

An instance with several background papers gets one judgement per paper, so a
candidate's ``narrowness`` maps paper id to score; how the per-paper scores
become one is a scoring option (``ScoreOptions.narrowness``: mean, max, min),
not a judging one. Standalone: one candidate a call. Comparative: all
candidates in one call, each scored independently, in the seeded order of
ordering 0.

Figures: Best@5 per dimension (the least narrow of the five; standalone, with
the GT's own score as the reference row) and Pass@5 win/tie/lose rates, where a
win is a best RQ less narrow than the GT.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from rqbench.evaluate.benchmark.background import background_block
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.metrics.metric import NarrownessAggregation, ScoreOptions
from rqbench.records import (
    NARROWNESS_DIMENSIONS,
    CandidateScores,
    ComparativeNarrownessReply,
    EvaluationInstance,
    InstanceResult,
    NarrownessScore,
    Reply,
    StandaloneNarrownessReply,
    scale_of,
)
from rqbench.steps import Step

from .base import Column, Criterion, Dimension, ReportTable, dimension_metrics, figure_column
from .requests import JudgeConfig, JudgeRequest, candidate_map, group_candidates

_DIMENSIONS = (
    Dimension("source_bound_score", "source-boundedness", False, scale_of(NarrownessScore, "source_bound_score")),
    Dimension("diagnostic_test_score", "diagnostic framing", False, scale_of(NarrownessScore, "diagnostic_test_score")),
)
assert tuple(d.name for d in _DIMENSIONS) == NARROWNESS_DIMENSIONS
_READ = operator.attrgetter(*(d.name for d in _DIMENSIONS))
_METRICS = dimension_metrics(_DIMENSIONS)
_BY_NAME = {m.name: m for m in _METRICS}


def _col(metric: str, label: str, *, headline: bool = False) -> Column:
    return figure_column(_BY_NAME[metric], label, "narrowness", headline=headline)


class Narrowness(Criterion):
    name = "narrowness"
    steps = {
        "standalone": Step("narrowness_standalone", StandaloneNarrownessReply, __name__, "standalone"),
        "comparative": Step("narrowness_comparative", ComparativeNarrownessReply, __name__, "comparative"),
    }
    dimensions = _DIMENSIONS
    metrics = _METRICS
    headline = "source_bound_score"
    report_tables = (
        ReportTable(
            "scores",
            "narrowness_standalone_scores",
            "Standalone narrowness: mean ± std of each model's least narrow of five RQs (0-3, lower is "
            "broader); the GT row is the author-anchored RQ's own score.",
            {"standalone": "Table 7(a)"},
            NARROWNESS_DIMENSIONS,
        ),
        ReportTable(
            "rates",
            "narrowness_{setting}_rates",
            "{Setting} narrowness: win rate % [95% CI] (lose rate %); a win is a best RQ less narrow than the GT.",
            {"standalone": "Table 7(b)", "comparative": "Table 8"},
            NARROWNESS_DIMENSIONS,
            other="lose",
        ),
    )
    columns = (
        _col("best5_source_bound_score", "Best@5 source-boundedness ↓", headline=True),
        _col("best5_diagnostic_test_score", "Best@5 diagnostic framing ↓"),
        _col("lose_source_bound_score", "Lose % source-boundedness"),
        _col("lose_diagnostic_test_score", "Lose % diagnostic framing"),
    )

    # -- judging ------------------------------------------------------------
    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        step = self.step_for(judge.setting)
        groups = group_candidates(judge, inst.rq_id, list(candidates))
        out: list[JudgeRequest] = []
        for paper in bench.background(inst):
            # each call sees one paper, so that paper gets the whole budget
            block, cuts = background_block([paper], judge.policy)
            out += self.build(
                judge, step, groups, candidates, {"background": block}, paper_id=paper.paper_id, background=cuts
            )
        return out

    def apply(self, req: JudgeRequest, reply: Reply, result: InstanceResult) -> None:
        assert req.paper_id is not None
        cands = candidate_map(result)
        if isinstance(reply, StandaloneNarrownessReply):
            scores = [reply]
        else:
            assert isinstance(reply, ComparativeNarrownessReply)
            scores = reply.scores
        for cid, score in zip(req.candidate_ids, scores, strict=True):
            c = cands[cid]
            c.narrowness = {**c.narrowness, req.paper_id: NarrownessScore.model_validate(score.model_dump())}

    def reset(self, result: InstanceResult) -> None:
        for c in result.candidates:
            c.narrowness = {}

    # -- scoring ------------------------------------------------------------
    def complete(self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores]) -> bool:
        """Every candidate scored against every background paper (one paper's failed call leaves it without)."""
        return all(p in c.narrowness for c in (gt, *model) for p in inst.background_paper_ids)

    @staticmethod
    def scores(c: CandidateScores, opts: ScoreOptions, paper_ids: Sequence[str]) -> list[float] | None:
        """The candidate's value on each dimension over the background papers it was scored on; None if none."""
        marks = [_READ(c.narrowness[k]) for k in paper_ids if k in c.narrowness]
        if not marks:
            return None
        if opts.narrowness is NarrownessAggregation.mean:
            return [sum(col) / len(marks) for col in zip(*marks)]
        if opts.narrowness is NarrownessAggregation.max:
            return [float(max(col)) for col in zip(*marks)]
        return [float(min(col)) for col in zip(*marks)]

    def table_values(
        self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores], opts: ScoreOptions
    ) -> tuple[list[float], list[list[float]]]:
        unscored = [float("nan")] * len(_DIMENSIONS)
        papers = inst.background_paper_ids
        rows = [self.scores(c, opts, papers) or unscored for c in (gt, *model)]
        return rows[0], rows[1:]

    def candidate_value(
        self, c: CandidateScores, dimension: str, opts: ScoreOptions, paper_ids: Sequence[str]
    ) -> float | None:
        at = _DIMENSIONS.index(self.dimension(dimension))
        vals = self.scores(c, opts, paper_ids)
        return None if vals is None else vals[at]
