"""What every judge shares: the frozen configuration, candidate grouping, delimiting, and parsing.

A judge run is one model configuration in one setting. Each metric (novelty,
narrowness, overlap) is a small ``Metric`` that says which step's prompt to
fill, with which variables, and where a parsed reply's scores go. Standalone
and comparative differ only in ``group_candidates``: one candidate a call, or
all of them in one call in a seeded shuffled order.

Candidate text is untrusted. It reaches a prompt only through
``rqbench.untrusted.candidate_values``: neutralised, numbered, and fenced by a
tag derived from its own content (see there); the templates put it last in the
user message and tell the judge that it is material to score, whatever its topic.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import ValidationError
from rqbench.evaluate.background import BackgroundPolicy
from rqbench.evaluate.dataset import Benchmark
from rqbench.evaluate.metrics import GT_ID

from rqbench.io import RecordError
from rqbench.llm.client import parse_json_reply
from rqbench.prompts import PromptSet
from rqbench.records import CandidateScores, EvaluationInstance, InstanceResult, PaperCut, Reply
from rqbench.steps import Step, owned_by, step
from rqbench.untrusted import CANDIDATE_VARIABLES, candidate_values

Setting = Literal["standalone", "comparative"]
SETTINGS: tuple[Setting, ...] = ("standalone", "comparative")

def candidate_id(index: int) -> str:
    """The model's i-th RQ: m0..m4 (the GT is ``gt``)."""
    return f"m{index}"


def ordering_rng(seed: int, rq_id: str, ordering: int) -> random.Random:
    """The recorded draw behind a comparative call's candidate order."""
    return random.Random(f"{seed}:{rq_id}:{ordering}")


def shuffled(ids: Sequence[str], seed: int, rq_id: str, ordering: int) -> list[str]:
    order = list(ids)
    ordering_rng(seed, rq_id, ordering).shuffle(order)
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

    metric: str
    step: str
    messages: list[dict[str, str]]
    reply_model: type[Reply]
    candidate_ids: tuple[str, ...]
    paper_id: str | None = None
    ordering: int = 0
    background: tuple[PaperCut, ...] = ()  # what of each background paper the messages carry
    shared_chars: int = 0  # leading characters of the user message that carry no candidate (see shared_prefix)

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


def parse_reply(model: type[Reply], text: str, context: dict[str, Any]) -> Reply:
    """Validate a stored or fresh reply text exactly as the LLM layer does; ValueError when it does not fit."""
    try:
        data = parse_json_reply(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"reply is not JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise ValueError("reply is JSON but not an object")  # noqa: TRY004 - one error type for every bad reply
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise ValueError(RecordError.from_validation(exc).problem_list(5)) from exc


def render(prompts: PromptSet, step: str, values: dict[str, str]) -> list[dict[str, str]]:
    """Fill a step's template; a swapped prompt set may use a subset of the variables we offer."""
    template = prompts[step]
    return template.render(**{k: v for k, v in values.items() if k in template.variables()})


def shared_user_chars(prompts: PromptSet, step: str, values: dict[str, str]) -> int:
    """The length of the rendered user message's part before any candidate variable (``render``'s values)."""
    template = prompts[step]
    return template.shared_user_chars(set(CANDIDATE_VARIABLES),
                                      **{k: v for k, v in values.items() if k in template.variables()})  # fmt: skip


class Metric:
    """One judged concept. Subclasses say which requests to build and where scores go.

    Its steps and their reply models are the step registry's entries owned by the subclass's module.
    """

    name: ClassVar[str]

    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        raise NotImplementedError

    def apply(self, req: JudgeRequest, reply: Reply, result: InstanceResult) -> None:
        raise NotImplementedError

    def reset(self, result: InstanceResult) -> None:
        """Clear what this metric wrote (before a reparse)."""
        raise NotImplementedError

    # -- shared helpers ---------------------------------------------------
    @property
    def steps(self) -> dict[str, Step]:
        """This metric's steps by setting ("any": the same step in both), from the step registry."""
        return owned_by(type(self).__module__)

    def step_for(self, setting: str) -> str:
        steps = self.steps
        chosen = steps.get(setting) or steps.get("any")
        if chosen is None:
            raise KeyError(f"metric {self.name!r} has no step for setting {setting!r}")
        return chosen.name

    def reply_model_for(self, name: str) -> type[Reply]:
        s = step(name)
        if s.owner != type(self).__module__:
            raise KeyError(f"step {name!r} is not a step of metric {self.name!r}")
        return s.reply_model

    @staticmethod
    def group_candidates(judge: JudgeConfig, rq_id: str, ids: Sequence[str], ordering: int = 0) -> list[list[str]]:
        """Standalone: one group per candidate. Comparative: one group, order drawn from the seed."""
        if judge.setting == "standalone":
            return [[c] for c in ids]
        return [shuffled(ids, judge.seed, rq_id, ordering)]

    def build(
        self,
        judge: JudgeConfig,
        inst: EvaluationInstance,
        step: str,
        groups: Sequence[Sequence[str]],
        candidates: dict[str, str],
        values: dict[str, str],
        *,
        paper_id: str | None = None,
        ordering: int = 0,
        background: Sequence[PaperCut] = (),
    ) -> list[JudgeRequest]:
        out = []
        for group in groups:
            texts = [candidates[c] for c in group]
            filled = {**values, **candidate_values(texts)}
            msgs = render(judge.prompts, step, filled)
            out.append(JudgeRequest(self.name, step, msgs, self.reply_model_for(step), tuple(group), paper_id,
                                    ordering, tuple(background), shared_user_chars(judge.prompts, step, filled)))  # fmt: skip
        return out


def candidate_map(result: InstanceResult) -> dict[str, CandidateScores]:
    return {c.candidate_id: c for c in result.candidates}
