"""Author-anchor overlap: the GT against each of the five model RQs (0-4) and the smallest covering subset.

The GT is the reference here, not a candidate, so only the five are shown, in
their submitted order (the covering subset's indices and its smallest-index
rule refer to that order). The call is the same in both settings, so a
``--setting both`` run pays for it once (the second is a cache hit).
"""

from __future__ import annotations

from rqbench.evaluate.dataset import Benchmark
from rqbench.evaluate.judges.base import GT_ID, JudgeConfig, JudgeRequest, Metric

from rqbench.records import EvaluationInstance, InstanceResult, OverlapReply, Reply


class Overlap(Metric):
    name = "overlap"

    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        model_ids = [c for c in candidates if c != GT_ID]
        return self.build(judge, inst, self.step_for(judge.setting), [model_ids], candidates, {"ground_truth": " ".join(inst.gt_rq.split())})

    def apply(self, req: JudgeRequest, reply: Reply, result: InstanceResult) -> None:
        assert isinstance(reply, OverlapReply)
        result.overlap = reply

    def reset(self, result: InstanceResult) -> None:
        result.overlap = None
