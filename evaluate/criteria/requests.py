"""What a judge call is made of: the judge's configuration, one request, its candidate order, its reply.

A judge is one model configuration in one setting (``JudgeConfig``). Every
criterion builds its calls as ``JudgeRequest``s with the helpers here:
standalone and comparative differ only in how candidates are grouped (one a
call, or all in one call in a seeded shuffled order).

Candidate text is untrusted. It reaches a prompt only through
``rqbench.untrusted.candidate_values``: neutralised, numbered, and fenced by a
tag derived from its own content (see there); the templates put it last in the
user message and tell the judge that it is material to score, whatever its topic.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rqbench.evaluate.benchmark.background import BackgroundPolicy
from rqbench.llm.client import LLM, TRUNCATED, Answer, Deferred, DryRun, LLMCallFailed
from rqbench.llm.config import public_label
from rqbench.prompts import PromptSet
from rqbench.records import CandidateScores, InstanceResult, PaperCut, RawReply, Reply
from rqbench.untrusted import CANDIDATE_VARIABLES

Setting = Literal["standalone", "comparative"]
SETTINGS: tuple[Setting, ...] = ("standalone", "comparative")


def candidate_id(index: int) -> str:
    """The model's i-th RQ: m0..m4 (the GT is ``gt``)."""
    return f"m{index}"


# What a comparative call's candidate order is drawn from, as results files record it (``JudgeSpec.order_key``).
# The judge is in it, so two judges see one instance in different orders: a position bias of the one is not
# shared with the other, and cannot inflate their agreement. Files written before it record none (the old key
# was seed:rq_id:ordering).
ORDER_KEY = "{seed}:{judge}:{rq_id}:{ordering}"


def ordering_rng(seed: int, judge: str, rq_id: str, ordering: int) -> random.Random:
    """The recorded draw behind a comparative call's candidate order (``ORDER_KEY``; ``judge`` is its label)."""
    return random.Random(ORDER_KEY.format(seed=seed, judge=judge, rq_id=rq_id, ordering=ordering))


def shuffled(ids: Sequence[str], seed: int, judge: str, rq_id: str, ordering: int) -> list[str]:
    """The candidates in the order judge ``judge`` is shown them in ordering ``ordering`` of instance ``rq_id``."""
    order = list(ids)
    ordering_rng(seed, judge, rq_id, ordering).shuffle(order)
    return order


@dataclass(frozen=True)
class JudgeConfig:
    """One judge: a model configuration in one setting, with its prompt set and seed."""

    model: str  # the name the LLM layer resolves (a spec, possibly with @options)
    label: str
    setting: Setting
    prompts: PromptSet
    policy: BackgroundPolicy = field(default_factory=BackgroundPolicy)
    seed: int = 0
    orderings: int = 1


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call: the messages, the reply model, and which candidates it scores in which order."""

    criterion: str
    step: str
    messages: list[dict[str, str]]
    reply_model: type[Reply]
    candidate_ids: tuple[str, ...]
    paper_id: str | None = None
    ordering: int = 0
    background: tuple[PaperCut, ...] = ()  # what of each background paper the messages carry
    shared_chars: int = 0  # leading characters of the user message that carry no candidate (see shared_prefix)
    prompt_hash: str = ""  # the hash of the prompt set its template came from ("": the judge's)

    @property
    def shared_prefix(self) -> tuple[str, ...]:
        """What this call shares with the other calls of its instance and step: the system text, then the
        user message up to the candidates (the background, or the reference). Calls with equal shared
        prefixes form one prefix family, which the scheduler and the provider's prefix cache exploit."""
        return (*(m["content"] for m in self.messages[:-1]), self.messages[-1]["content"][: self.shared_chars])

    @property
    def context(self) -> dict[str, Any]:
        return {"n_candidates": len(self.candidate_ids)}

    def label(self) -> str:
        where = f"@{self.paper_id}" if self.paper_id else ""
        k = f"#{self.ordering}" if self.ordering else ""
        return f"{self.step}[{','.join(self.candidate_ids)}]{where}{k}"


def render(prompts: PromptSet, step: str, values: dict[str, str]) -> list[dict[str, str]]:
    """Fill a step's template; a swapped prompt set may use a subset of the variables we offer."""
    template = prompts[step]
    return template.render(**{k: v for k, v in values.items() if k in template.variables()})


def shared_user_chars(prompts: PromptSet, step: str, values: dict[str, str]) -> int:
    """The length of the rendered user message's part before any candidate variable (``render``'s values)."""
    template = prompts[step]
    return template.shared_user_chars(
        set(CANDIDATE_VARIABLES), **{k: v for k, v in values.items() if k in template.variables()}
    )


def group_candidates(judge: JudgeConfig, rq_id: str, ids: Sequence[str], ordering: int = 0) -> list[list[str]]:
    """Standalone: one group per candidate. Comparative: one group, in the order drawn for this judge (ORDER_KEY)."""
    if judge.setting == "standalone":
        return [[c] for c in ids]
    # the judge's public label: the order does not depend on how the model is reached (api_base, retries, ...)
    return [shuffled(ids, judge.seed, public_label(judge.label), rq_id, ordering)]


def candidate_map(result: InstanceResult) -> dict[str, CandidateScores]:
    return {c.candidate_id: c for c in result.candidates}


@dataclass(frozen=True)
class Asked:
    """One judge request's call: its raw reply as stored (None in a dry run, or while the call waits for a batch),
    and either the validated answer or the failure that ended it."""

    raw: RawReply | None
    answer: Answer | None = None
    error: LLMCallFailed | None = None


async def ask(llm: LLM, judge: JudgeConfig, req: JudgeRequest, *, retry_failed: bool | None = None) -> Asked:
    """Send one judge request through ``LLM.ask`` (cached, retried, re-asked once) and keep its raw reply: the one
    way the judging run and the judge board call a judge."""
    order = list(req.candidate_ids)
    try:
        ans = await llm.ask(
            judge.model,
            req.step,
            req.messages,
            req.reply_model,
            prompt_hash=req.prompt_hash or judge.prompts.hash,
            context=req.context,
            retry_failed=retry_failed,
            shared_chars=req.shared_chars,
        )
    except (DryRun, Deferred):  # counted, or queued for a batch: a later pass finds the reply in the cache
        return Asked(None)
    except LLMCallFailed as exc:
        raw = RawReply(
            step=req.step,
            cache_key=exc.key,
            text=exc.last_text,
            error=f"{exc.reason}: {exc.detail}",
            truncated=exc.reason == TRUNCATED,
            candidate_order=order,
            paper_id=req.paper_id,
        )
        return Asked(raw, error=exc)
    raw = RawReply(step=req.step, cache_key=ans.key, text=ans.text, candidate_order=order, paper_id=req.paper_id)
    return Asked(raw, answer=ans)
