"""The LLM layer: one client over litellm, a SQLite cache and call log, and the embedded model."""

from rqbench.llm.client import (
    LLM,
    Answer,
    Deferred,
    DryRun,
    Estimate,
    LLMCallFailed,
    ProviderUnreachable,
    parse_json_reply,
)
from rqbench.llm.config import ModelConfig, default_model
from rqbench.llm.store import CallStore

__all__ = [
    "LLM",
    "Answer",
    "CallStore",
    "Deferred",
    "DryRun",
    "Estimate",
    "LLMCallFailed",
    "ModelConfig",
    "ProviderUnreachable",
    "default_model",
    "parse_json_reply",
]
