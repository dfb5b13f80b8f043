"""Pool pair -> judge requests: the one place the judge board meets the criteria (``rqbench.evaluate.criteria``).

The board asks the paper's comparative non-obviousness judgment: the novelty
judge's comparative step, with two candidates, the author-anchored RQ and the
model RQ, once in each order. Its requests are built as the novelty criterion builds
its own: the criterion's comparative step, the prompt set's template for it, the
background block by the judge's input policy, the candidates fenced by
``rqbench.untrusted``. So a prompt set given with ``--prompts`` reaches the board
unchanged. When the criteria's code moves, this module is the one that follows it.
"""

from __future__ import annotations

from rqbench.evaluate.benchmark.background import background_block
from rqbench.evaluate.criteria import CRITERIA, GT_ID, JudgeConfig, JudgeRequest, candidate_id
from rqbench.evaluate.criteria.requests import ask as ask  # a board call is sent as every judge call is
from rqbench.evaluate.protocol import ModelUse
from rqbench.prompts import PromptSet
from rqbench.records import ComparativeNoveltyReply, ExpertPair, NoveltyScore, Order, Reply

JUDGMENT = "novelty"
SETTING = "comparative"
MODEL_ID = candidate_id(0)
# The candidates in the order each call shows them.
SHOWN: dict[Order, tuple[str, str]] = {"gt_first": (GT_ID, MODEL_ID), "model_first": (MODEL_ID, GT_ID)}

# A judge configuration as the board runs it, and one of its calls (the criteria's own types).
BoardJudge = JudgeConfig
BoardRequest = JudgeRequest


def board_step() -> str:
    """The step the board asks: the novelty criterion's comparative one."""
    return CRITERIA[JUDGMENT].step_for(SETTING)


def board_judge(use: ModelUse, prompts: PromptSet, *, seed: int = 0) -> BoardJudge:
    """A resolved judge (``protocol.judge_use``) in the comparative setting, with one ordering per order shown."""
    return JudgeConfig(
        model=use.name,
        label=use.label,
        setting=SETTING,
        prompts=prompts,
        policy=use.policy,
        seed=seed,
        orderings=len(SHOWN),
    )


def pair_requests(judge: BoardJudge, pair: ExpertPair) -> list[tuple[Order, BoardRequest]]:
    """The pair's two calls: the author-anchored RQ shown first, then the model RQ first."""
    criterion = CRITERIA[JUDGMENT]
    background, cuts = background_block(pair.background, judge.policy)
    texts = {GT_ID: pair.gt_rq, MODEL_ID: pair.model_rq}
    out: list[tuple[Order, BoardRequest]] = []
    for k, (order, shown) in enumerate(SHOWN.items()):
        (req,) = criterion.build(
            judge, board_step(), [list(shown)], texts, {"background": background}, ordering=k, background=cuts
        )
        out.append((order, req))
    return out


def reply_scores(req: BoardRequest, reply: Reply) -> tuple[NoveltyScore, NoveltyScore]:
    """(author-anchored RQ's score, model RQ's score) from a reply, whatever order the call showed them in."""
    if not isinstance(reply, ComparativeNoveltyReply):
        raise TypeError(f"{req.step} replied with {type(reply).__name__}, not ComparativeNoveltyReply")
    by_id = dict(zip(req.candidate_ids, reply.scores, strict=True))
    return by_id[GT_ID], by_id[MODEL_ID]
