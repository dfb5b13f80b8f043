"""Narrowness against one background paper at a time: source-boundedness and diagnostic framing.

An instance with several background papers gets one judgement per paper, so a
candidate's ``narrowness`` maps paper id to score (how to aggregate over papers
is a metric option, not a judging one). Standalone: one candidate a call.
Comparative: all candidates in one call, each scored independently, in the
seeded order of ordering 0.
"""

from __future__ import annotations

from rqbench.evaluate.background import background_block
from rqbench.evaluate.dataset import Benchmark
from rqbench.evaluate.judges.base import (
    JudgeConfig,
    JudgeRequest,
    Metric,
    candidate_map,
)

from rqbench.records import (
    ComparativeNarrownessReply,
    EvaluationInstance,
    InstanceResult,
    NarrownessScore,
    Reply,
    StandaloneNarrownessReply,
)


class Narrowness(Metric):
    name = "narrowness"

    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        step = self.step_for(judge.setting)
        groups = self.group_candidates(judge, inst.rq_id, list(candidates))
        out: list[JudgeRequest] = []
        for paper in bench.background(inst):
            # each call sees one paper, so that paper gets the whole budget
            block, cuts = background_block([paper], judge.policy)
            out += self.build(judge, inst, step, groups, candidates, {"background": block}, paper_id=paper.paper_id,
                              background=cuts)  # fmt: skip
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
