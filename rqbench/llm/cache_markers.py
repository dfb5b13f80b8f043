"""Explicit prefix-cache breakpoints, for the providers that cache only where a request marks it.

OpenAI, Gemini, DeepSeek, vLLM and llama.cpp find a repeated prefix by themselves.
Anthropic's models (direct, or on Bedrock and Vertex AI) cache only up to a
``cache_control: {"type": "ephemeral"}`` block; litellm passes such blocks through.
We set two of the four allowed: after the system text (shared by every call of a
step) and after the shared head of the first user message (the background, shared
by the calls of one instance). The markers are a transport detail: they are added
at send time and are not part of the cache key, so the response cache and every
key stay those of plain messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rqbench.llm.config import ModelConfig

EPHEMERAL = {"type": "ephemeral"}


def needs_cache_markers(cfg: ModelConfig) -> bool:
    """Whether ``cfg``'s provider caches only behind ``cache_control`` markers (Anthropic's models)."""
    if cfg.local:
        return False
    provider = cfg.provider
    return provider == "anthropic" or (provider in ("bedrock", "vertex_ai") and "claude" in cfg.litellm_model)


def _block(text: str, *, mark: bool) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if mark:
        block["cache_control"] = dict(EPHEMERAL)
    return block


def with_cache_markers(messages: Sequence[dict[str, Any]], shared_chars: int) -> list[dict[str, Any]]:
    """The messages with breakpoints after the system text and after the first user message's shared head.

    ``shared_chars`` is how many leading characters of the first user message the
    calls of an instance share (0: none, so only the system text is marked). The
    text sent is the same; only its division into content blocks changes.
    """
    out: list[dict[str, Any]] = []
    first_user = True
    for m in messages:
        content = m.get("content")
        if not isinstance(content, str):
            out.append(dict(m))
            continue
        if m.get("role") == "system":
            out.append({**m, "content": [_block(content, mark=True)]})
        elif m.get("role") == "user" and first_user:
            first_user = False
            if 0 < shared_chars < len(content):
                blocks = [_block(content[:shared_chars], mark=True), _block(content[shared_chars:], mark=False)]
            else:
                blocks = [_block(content, mark=shared_chars >= len(content) > 0)]
            out.append({**m, "content": blocks})
        else:
            out.append(dict(m))
    return out
