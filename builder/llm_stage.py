"""What the five LLM stages share: their settings, the model with the stage's own token cap, the call.

Each stage renders its template from the prompt set, then asks through
``rqbench.llm.LLM`` (cache, retries, re-ask, call log, dry run). The cache key
carries the hash of that step's template, so editing one prompt recomputes only
the stage that uses it.

The stages that write dataset text (contributions, gaps, author_rqs) ask with
``ask_gated``: their reply models apply the well-formedness gate, so a reply
with a malformed text is re-asked once by the LLM layer, quoting the rules it
broke. If the re-asked reply still fails, it is read once more without the gate
the stage keeps the texts that pass, one by one (``rqbench.builder.gate``): a
bad gap costs that gap, not the citation; a bad RQ costs that RQ, not the paper.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, create_model

from rqbench.hashing import content_hash
from rqbench.llm.catalog import grammar_constrained, is_local, parse_model_spec  # noqa: F401 (re-exported)
from rqbench.llm.client import LLMCallFailed, validate_reply
from rqbench.prompts import load_prompt_set
from rqbench.records import WELLFORMED_PER_ITEM

R = TypeVar("R", bound=BaseModel)

# Failures that a rerun cannot fix (the model's reply, or a request the provider refuses as too long or
# unacceptable): recorded as a named failure. Anything else (a dead endpoint, a bad key) is retried next run.
PERMANENT_FAILURES = frozenset(
    {
        "invalid_reply",
        "BadRequestError",
        "ContextWindowExceededError",
        "ContentPolicyViolationError",
        "UnprocessableEntityError",
    }
)
# The embedded model reads 8192 tokens: prompts for it are cut to fit, whatever the build's budgets say.
LOCAL_TEXT_BUDGET = 10000
LOCAL_CONTEXT_BUDGET = 2000


# llama.cpp turns a string's maxLength into a grammar rule repeated that many times and refuses
# (HTTP 500) past its repetition limit: measured on the embedded model, 1000 characters compile and
# 1500 do not. The records allow 2000 for long texts; the builder asks for at most this much.
GRAMMAR_SAFE_TEXT = 1000


def bounded(reply_model: type[R], **fields: tuple[Any, Any]) -> type[R]:
    """``reply_model`` with some fields narrowed; same name, so the JSON schema reads the same."""
    return create_model(reply_model.__name__, __base__=reply_model, **fields)  # type: ignore[call-overload]


def is_permanent(exc: Exception) -> bool:
    return getattr(exc, "reason", None) in PERMANENT_FAILURES


class LLMStageSettings(BaseModel):
    """One LLM stage's settings; all of them change its output, so all go into its fingerprint."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step: str
    model: str
    max_tokens: int | None
    prompts: str | None = None  # prompt-set folder; None = the packaged rqbench-v1
    text_budget_chars: int | None = None
    context_budget_chars: int | None = None

    def template(self):
        return load_prompt_set(self.prompts)[self.step]

    def prompt_hash(self) -> str:
        t = self.template()
        ps = load_prompt_set(self.prompts)
        return content_hash({"set": ps.name, "step": t.step, "system": t.system, "user": t.user})

    def fingerprint(self) -> dict[str, Any]:
        data = self.model_dump(exclude={"prompts"})
        data["prompt_hash"] = self.prompt_hash()
        return data


def stage_model(llm: Any, spec: str, max_tokens: int | None) -> str:
    """The model name to call: ``spec`` with this stage's ``max_tokens``, unless the spec sets its own."""
    _, opts = parse_model_spec(spec)
    if max_tokens is None or "max_tokens" in opts:
        return spec
    base = llm.model(spec)
    sep = "," if "@" in base.name else "@"
    derived = f"{base.name}{sep}max_tokens={max_tokens}"
    llm.register(base.model_copy(update={"name": derived, "max_tokens": max_tokens}))
    return derived


async def ask(
    llm: Any,
    settings: LLMStageSettings,
    reply_model: type[R],
    variables: dict[str, str],
    *,
    context: dict[str, Any] | None = None,
) -> tuple[R, str]:
    """Render the step's template with ``variables``; the validated reply and the model name used."""
    messages = settings.template().render(**variables)
    model = stage_model(llm, settings.model, settings.max_tokens)
    answer = await llm.ask(
        model, settings.step, messages, reply_model, prompt_hash=settings.prompt_hash(), context=context
    )
    return answer.reply, model


async def ask_gated(
    llm: Any, settings: LLMStageSettings, reply_model: type[R], variables: dict[str, str]
) -> tuple[R, str]:
    """``ask`` for a reply model that applies the gate; after a failed re-ask, that reply read without the gate.

    The stage then applies the gate item by item (``rqbench.builder.gate.gated_items``). A re-asked reply that fails for
    anything but the gate (not JSON, a missing field) still raises the layer's ``LLMCallFailed``.
    """
    try:
        return await ask(llm, settings, reply_model, variables)
    except LLMCallFailed as exc:
        if exc.reason != "invalid_reply" or exc.last_text is None:
            raise
        try:
            reply = validate_reply(reply_model, exc.last_text, WELLFORMED_PER_ITEM)
        except ValueError:
            raise exc from None
        return reply, stage_model(llm, settings.model, settings.max_tokens)
