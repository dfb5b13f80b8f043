"""Novelty against the BACKGROUND papers: relevance first, then originality, gap addressing, non-obviousness.

Standalone: one candidate a call. Comparative: the GT and the five in one call,
each scored and all ranked, once per ordering (``--orderings K``), the order of
each drawn from ``random.Random(f"{seed}:{rq_id}:{k}")``. A candidate's
``novelty`` is its score under the first ordering that succeeded; every
ordering's score and the rank it got are kept in ``novelty_by_ordering`` and
``rank_by_ordering`` for position-bias analysis.
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
    ComparativeNoveltyReply,
    EvaluationInstance,
    InstanceResult,
    Reply,
    StandaloneNoveltyReply,
)


class Novelty(Metric):
    name = "novelty"

    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        background, cuts = background_block(bench.background(inst), judge.policy)
        step = self.step_for(judge.setting)
        ids = list(candidates)
        rounds = judge.orderings if judge.setting == "comparative" else 1
        out: list[JudgeRequest] = []
        for k in range(rounds):
            groups = self.group_candidates(judge, inst.rq_id, ids, k)
            out += self.build(judge, inst, step, groups, candidates, {"background": background}, ordering=k,
                              background=cuts)  # fmt: skip
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
