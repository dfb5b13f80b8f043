"""What a call used and what it cost, as the provider reported it through litellm.

Providers name prompt-cache tokens differently; litellm's ``Usage`` folds them into
``prompt_tokens_details``: OpenAI and Gemini send ``prompt_tokens_details.cached_tokens``,
DeepSeek ``prompt_cache_hit_tokens`` (litellm copies it into ``cached_tokens``),
Anthropic ``cache_read_input_tokens`` (into ``cached_tokens``) and
``cache_creation_input_tokens`` (into ``cache_write_tokens``). ``prompt_tokens`` counts
every input token, cached or not; the call log keeps the total and the cached part,
so "billed at the full rate" is their difference.

Prices come from litellm's cost map: ``completion_cost`` charges cached tokens at
``cache_read_input_token_cost`` (checked in tests/test_llm_usage.py), and
``batch_cost_calculator`` applies the ``*_batches`` rates (or half the list price where
the map has none) to a reply that came back through a batch endpoint.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TokenUsage:
    """Tokens of one call: all input, the part read from the provider's prefix cache, the part written to it, output."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    cached: int | None = None
    cache_write: int | None = None

    @property
    def billed_in(self) -> int | None:
        """Input tokens charged at the full rate."""
        if self.tokens_in is None:
            return None
        return max(0, self.tokens_in - (self.cached or 0) - (self.cache_write or 0))


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def litellm_usage(raw: Any) -> Any:
    """A litellm ``Usage`` from a usage dict (a batch output line) or an object that already is one."""
    from litellm.types.utils import Usage

    if isinstance(raw, Usage):
        return raw
    if isinstance(raw, dict):
        return Usage(**raw)
    return raw


def usage_of(raw: Any) -> TokenUsage:
    """The token counts in a completion's ``usage`` (a litellm ``Usage``, or a plain dict from a batch file)."""
    if raw is None:
        return TokenUsage()
    usage = litellm_usage(raw)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = _int(getattr(details, "cached_tokens", None))
    write = _int(getattr(details, "cache_write_tokens", None))
    if cached is None:  # the provider's own field, where litellm kept it only as an attribute
        cached = _int(getattr(usage, "prompt_cache_hit_tokens", None)) or _int(
            getattr(usage, "cache_read_input_tokens", None)
        )
    if write is None:
        write = _int(getattr(usage, "cache_creation_input_tokens", None))
    return TokenUsage(
        tokens_in=_int(getattr(usage, "prompt_tokens", None)),
        tokens_out=_int(getattr(usage, "completion_tokens", None)),
        cached=cached,
        cache_write=write,
    )


def batch_cost(usage: Any, litellm_model: str) -> float | None:
    """The price of a reply that came back through a batch endpoint; None where the model has no price."""
    import litellm
    from litellm.cost_calculator import batch_cost_calculator

    from rqbench.llm.catalog import price_model

    litellm_model = price_model(litellm_model)
    try:
        litellm.get_model_info(model=litellm_model)
    except Exception as exc:  # not in litellm's cost map: unknown, never a made-up zero
        log.debug("no price for %s: %s", litellm_model, exc)
        return None
    c_in, c_out = batch_cost_calculator(litellm_usage(usage), litellm_model)
    return float(c_in + c_out)
