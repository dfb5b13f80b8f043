"""How to reach one model: a litellm name plus the settings that change how we call it.

Names are litellm's (``gemini/gemini-3.1-pro``, ``openai/gpt-5.5``,
``deepseek/deepseek-v4-pro``, ``hosted_vllm/Qwen/...``), plus ``local`` and
``local/<id>`` for the embedded model (rqbench/llm/local_model.py). API keys are read by litellm
from the environment (``GEMINI_API_KEY``, ``OPENAI_API_KEY``, ...); nothing
here stores or logs them.
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rqbench.llm.catalog import DEFAULT_REPLY_TOKENS, VENDOR_DEFAULT, parse_model_spec, reply_budget

JsonMode = Literal["json_object_schema", "json_schema", "json_object", "none"]

# Stage roles of method.md, with the paper's models when their keys are set.
ROLE_DEFAULTS: dict[str, tuple[str, str]] = {
    # role: (model when its key is present, env var that holds the key)
    "strong": ("gemini/gemini-3.1-pro", "GEMINI_API_KEY"),
    "light": ("gemini/gemini-3-flash", "GEMINI_API_KEY"),
    "labeller": ("gemini/gemini-3-flash", "GEMINI_API_KEY"),
    "judge": ("gemini/gemini-3.1-pro", "GEMINI_API_KEY"),
    "generator": ("gemini/gemini-3.1-pro", "GEMINI_API_KEY"),
}


# Providers whose batch endpoint litellm reaches with OpenAI-shaped JSONL (files + batches API);
# the offline tests drive the OpenAI wire format (rqbench/testing/scripted_server.py).
BATCH_PROVIDERS = frozenset({"openai", "azure", "gemini", "mistral", "xai"})


class ModelConfig(BaseModel):
    """A configured model. Two configs of one model (say two reasoning settings) are two judges."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="What the user typed and what results record, e.g. local/smollm2-135m.")
    litellm_model: str = Field(description="The name litellm is called with.")
    api_base: str | None = None
    api_key: str | None = Field(default=None, repr=False, exclude=True, description="Only for the local server.")
    max_concurrency: int = Field(default=8, ge=1)
    timeout_s: float = Field(default=600.0, gt=0)
    max_retries: int = Field(default=6, ge=0)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    temperature: float | None = Field(
        default=0.0, description="Sampling temperature; None leaves it to the vendor's default (none is sent)."
    )
    max_tokens: int | None = Field(
        default=DEFAULT_REPLY_TOKENS,
        description="Reply budget, reasoning tokens included where the provider counts them.",
    )
    reasoning_effort: str | None = None
    json_mode: JsonMode = "json_object"
    local: bool = False
    runtime: str | None = Field(
        default=None,
        description="The embedded model's runtime when not llama.cpp (torch): part of what a local model says.",
    )
    rpm: int | None = Field(default=None, ge=1, description="Requests per minute to the provider (shared limit).")
    tpm: int | None = Field(default=None, ge=1, description="Tokens per minute to the provider (shared limit).")

    @property
    def provider(self) -> str:
        """litellm's provider prefix (``gemini``, ``deepseek``, ``hosted_vllm``); ``openai`` for a bare name."""
        return self.litellm_model.split("/", 1)[0] if "/" in self.litellm_model else "openai"

    def cache_identity(self) -> dict[str, object]:
        """The fields that change what the model says (not timeouts, retries or addresses)."""
        return {
            "model": self.litellm_model if not self.local else self.name,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "reasoning_effort": self.reasoning_effort,
            "json_mode": self.json_mode,
            **({"runtime": self.runtime} if self.runtime else {}),
        }


# The spec options that change what a model says (``ModelConfig.cache_identity``): a judge's public
# label keeps them, since they tell two configurations of one model apart. Every other option says how
# the model is reached (api_base, retries, timeouts, concurrency, rates) and stays private.
PUBLIC_OPTIONS = ("temperature", "max_tokens", "reasoning_effort", "json_mode")


def public_label(spec: str) -> str:
    """``spec`` as a public page may show it: the model name and only the options in ``PUBLIC_OPTIONS``
    (``openai/m@api_base=http://10.0.0.2/v1,temperature=0.7`` -> ``openai/m@temperature=0.7``)."""
    name, _, opts = spec.partition("@")
    kept = [part for part in opts.split(",") if part.partition("=")[0].strip() in PUBLIC_OPTIONS]
    return name + ("@" + ",".join(p.strip() for p in kept) if kept else "")


# Offline defaults where plain ``local`` does not work: at temperature 0 the 135M model repeats one
# question five times (measured on the sample: 0 of 3 replies valid), at 0.8 it gave 4 of 4.
OFFLINE_ROLE_DEFAULTS: dict[str, str] = {"generator": "local@temperature=0.8"}
# The judges of ``judge`` and ``evaluate`` under --protocol custom: the embedded model at temperature 0, once. On
# 2 CPU cores each judge adds about ten minutes to the README's first command; a second configuration
# (--judge local --judge local@temperature=0.7) gives a combined figure over two.
OFFLINE_JUDGES = ("local",)


def default_model(role: str) -> str:
    """The model a stage uses when none is given: the paper's, if its key is set, else the local one."""
    env_override = os.environ.get(f"RQB_MODEL_{role.upper()}")
    if env_override:
        return env_override
    model, key_var = ROLE_DEFAULTS.get(role, ("", ""))
    if model and os.environ.get(key_var):
        return model
    return OFFLINE_ROLE_DEFAULTS.get(role, "local")


def json_mode_for(litellm_model: str) -> JsonMode:
    provider = litellm_model.split("/", 1)[0]
    if provider == "hosted_vllm":
        return "json_schema"
    return "json_object"


def _temperature(value: str) -> float | None:
    """A spec's temperature: a number, or ``default`` for the vendor's own (none is sent)."""
    return None if value == VENDOR_DEFAULT else float(value)


def hosted_config(spec: str) -> ModelConfig:
    """A ModelConfig for a provider model named by litellm (not the local model).

    Its reply budget is the catalog's (``reply_budget``: generous for a reasoning model) unless the
    spec sets ``max_tokens``; ``temperature=default`` leaves the temperature to the vendor.
    """
    name, settings = parse_model_spec(spec)
    fields: dict[str, object] = {"name": spec, "litellm_model": name, "json_mode": json_mode_for(name)}
    if name.startswith("hosted_vllm/") and os.environ.get("HOSTED_VLLM_API_BASE"):
        fields["api_base"] = os.environ["HOSTED_VLLM_API_BASE"]
    casts = {
        "temperature": _temperature,
        "max_tokens": int,
        "max_concurrency": int,
        "timeout_s": float,
        "max_retries": int,
        "rpm": int,
        "tpm": int,
    }
    for k, v in settings.items():
        if k not in ModelConfig.model_fields or k in ("name", "litellm_model", "api_key", "local"):
            raise ValueError(f"model spec {spec!r}: unknown option {k!r}")
        fields[k] = casts.get(k, str)(v)
    if "max_tokens" not in fields:
        fields["max_tokens"] = reply_budget(name)
    return ModelConfig(**fields)
