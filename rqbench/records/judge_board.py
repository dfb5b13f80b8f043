"""Judge-board results: one judge configuration's verdicts on the expert-labelled pairs, in both orders.

A file per judge configuration and prompt set, like every results file: the
judge (model, label, settings, prompt set and hash), the pool version it last
ran on, and per pair the two calls (the author-anchored RQ shown first, then
the model RQ first), each with the judge's scores, its raw reply, the rule
repairs, and what the answer cost when it was sent. Figures are computed from
these files against the pool as it stands (``rqbench.evaluate.judge_board.board``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from rqbench.records.common import SCHEMA_VERSION, Record
from rqbench.records.expert_pool import Pick
from rqbench.records.judging import NoveltyScore
from rqbench.records.results import JudgeSpec, RawReply

Order = Literal["gt_first", "model_first"]
ORDERS: tuple[Order, ...] = ("gt_first", "model_first")


class OrderVerdict(Record):
    """One call: the pair shown in one order, and what the judge made of it."""

    order: Order
    pick: Pick | None = Field(description="The more non-obvious of the two by this reply; None when the call failed.")
    gt_score: NoveltyScore | None = None
    model_score: NoveltyScore | None = None
    raw: RawReply
    failure: str | None = Field(
        default=None, description="Why the call gave no verdict (invalid_reply, truncated, ...)."
    )
    reasked: bool = Field(default=False, description="The first reply was invalid and the judge was asked again.")
    rule_corrections: list[str] = Field(default_factory=list, description="Rubric rules the reply broke, repaired.")
    cost_usd: float | None = Field(
        default=None, description="What the answer's requests cost when sent; None: unknown."
    )
    latency_s: float | None = Field(default=None, description="Seconds the answer's requests took when sent.")
    tokens_in: int | None = None
    tokens_out: int | None = None


class PairVerdicts(Record):
    """A judge's two calls on one pair, keyed to the texts it was shown."""

    pair_id: str
    content_key: str = Field(
        description="ExpertPair.content_key() of the pair judged: a verdict on other texts is void."
    )
    verdicts: list[OrderVerdict] = Field(min_length=1)


class CuedPairVerdicts(Record):
    """A judge's two calls on one pair with words added to the model RQ (a cue: self-praise, a claimed consensus,
    a claimed score), to measure how far such words move the judge (``evaluate/judge_board/susceptibility.py``)."""

    pair_id: str
    content_key: str = Field(description="ExpertPair.content_key() of the pair without the cue: its clean verdicts.")
    cue: str = Field(min_length=1, description="The cue's kind, from evaluate/judge_board/cues.toml.")
    cue_text: str = Field(min_length=1, description="The words appended to the model RQ, as sent.")
    verdicts: list[OrderVerdict] = Field(min_length=1)


class JudgeBoardFile(Record):
    """One judge configuration on the expert pool: the file a board row is computed from."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.judge_board"] = "rqbench.judge_board"
    judge: JudgeSpec
    step: str = Field(description="The prompt step asked: the paper's comparative novelty judgment.")
    pool_version: str = Field(description="The pool version of the last run.")
    pool_pairs: int = Field(ge=0, description="Pairs in that pool.")
    created_at: datetime
    pairs: list[PairVerdicts] = Field(
        description="Every pair judged so far, including pairs since left out of the pool."
    )
    settings: dict[str, object] = Field(
        default_factory=dict, description="What shaped the prompts (background policy)."
    )
    cued: list[CuedPairVerdicts] = Field(
        default_factory=list,
        description="Pairs judged again with a cue added to the model RQ (rqbench judge-board --susceptibility).",
    )
