"""What a dry run counts: calls, tokens, the provider's prefix cache, and dollars three ways.

The prefix-cache model. Providers bill the longest prompt prefix they have seen
recently at a discount (OpenAI, Gemini and DeepSeek do it implicitly; Anthropic
only behind ``cache_control`` markers, which ``rqbench.llm.cache_markers`` sets). The estimate assumes each call finds, in
the provider's cache, the longest prefix of its messages that an earlier call of
the same run sent to the same model (its ``litellm_model`` at its address), and
counts those tokens as cached when they reach the provider's minimum cacheable
prefix. Prompts are compared in blocks of ``BLOCK_BYTES`` bytes (about 128
tokens, OpenAI's caching increment), so a shared prefix is rounded down to a
block. Cache eviction (minutes to hours of idle time) is ignored, so the figure is
what the order of calls allows, not a promise.

``CACHE_RULES`` holds the minimum cacheable prefix per provider, as documented by
each provider (see docs/llm.md for the sources); the discount itself is never
assumed: it is litellm's cost map entry ``cache_read_input_token_cost`` (and the
``*_batches`` rates for batch prices).
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rqbench.llm.catalog import price_model

log = logging.getLogger(__name__)

BLOCK_BYTES = 512


@dataclass(frozen=True)
class CacheRule:
    """How a provider's automatic prefix cache behaves, for the estimate."""

    min_tokens: int | None  # None: no automatic prefix cache for our requests
    source: str


CACHE_RULES: dict[str, CacheRule] = {
    "openai": CacheRule(1024, "OpenAI prompt caching: prompts of 1,024 tokens or more, cached in 128-token steps"),
    "azure": CacheRule(1024, "Azure OpenAI prompt caching: as OpenAI, 1,024 tokens or more"),
    "gemini": CacheRule(
        1024,
        "Gemini implicit caching: 1,024 tokens minimum for Flash; Google lists higher minima "
        "for some Pro models (2,048 for 2.5 Pro)",
    ),
    "vertex_ai": CacheRule(1024, "Vertex AI implicit caching: as the Gemini API"),
    "deepseek": CacheRule(64, "DeepSeek context caching on disk: automatic, in 64-token units"),
    "anthropic": CacheRule(
        1024,
        "Anthropic caches behind cache_control breakpoints, which requests set after the "
        "system text and the shared background (rqbench.llm.cache_markers); 1,024 tokens "
        "minimum for Sonnet and Opus (2,048 for Haiku); the 1.25x price of a cache write "
        "is not modelled",
    ),
    "hosted_vllm": CacheRule(0, "vLLM automatic prefix caching (when enabled): free, no minimum"),
    "local": CacheRule(0, "llama.cpp reuses its slot's prompt prefix: free, no minimum"),
}
NO_CACHE = CacheRule(None, "no automatic prefix cache known for this provider")


def cache_rule(provider: str, local: bool = False) -> CacheRule:
    return CACHE_RULES["local"] if local else CACHE_RULES.get(provider, NO_CACHE)


def _prompt_bytes(messages: Sequence[dict[str, Any]]) -> bytes:
    """The messages as one byte string, roles included, so a prefix crosses message boundaries as it does on the wire."""
    return "".join(f"\x1e{m.get('role', '')}\x1f{m.get('content') or ''}" for m in messages).encode("utf-8")


class PrefixCacheModel:
    """Per cache scope, the hashes of every block-aligned prefix sent so far."""

    def __init__(self, block_bytes: int = BLOCK_BYTES):
        self.block = block_bytes
        self._seen: dict[str, set[int]] = {}

    def shared_prefix_bytes(self, scope: str, messages: Sequence[dict[str, Any]]) -> tuple[int, int]:
        """(bytes of the longest block-aligned prefix sent before in ``scope``, prompt bytes); records this prompt.

        A prefix seen before implies all its shorter prefixes were seen, so the
        scan stops at the first new block and only records from there on.
        """
        data = _prompt_bytes(messages)
        seen = self._seen.setdefault(scope, set())
        h = hashlib.blake2b(digest_size=8)
        shared = 0
        matching = True
        view = memoryview(data)
        for start in range(0, len(data) - self.block + 1, self.block):
            h.update(view[start : start + self.block])
            d = int.from_bytes(h.copy().digest(), "little")
            if matching and d in seen:
                shared = start + self.block
                continue
            matching = False
            seen.add(d)
        return shared, len(data)

    def cached_tokens(self, scope: str, messages: Sequence[dict[str, Any]], tokens_in: int, rule: CacheRule) -> int:
        """Tokens of this call the provider would serve from its prefix cache (0 below its minimum)."""
        shared, total = self.shared_prefix_bytes(scope, messages)
        if rule.min_tokens is None or not total or not shared:
            return 0
        tokens = tokens_in * shared // total
        return tokens if tokens >= rule.min_tokens else 0


@dataclass(frozen=True)
class Rates:
    """Dollars per token at one prompt size: full-rate input, cached input, output; and the same by batch."""

    full: float
    cached: float
    out: float
    batch_full: float
    batch_cached: float
    batch_out: float


FREE = Rates(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # the embedded model
_TIER = re.compile(r"_above_(\d+)k_tokens")


class PriceBook:
    """litellm's prices as per-token rates, memoised per (model, price tier) so a paper-scale estimate stays fast.

    A tier is the span between two prompt sizes at which the cost map changes
    price (keys such as ``input_cost_per_token_above_200k_tokens``); rates are
    read from litellm at the first prompt size met in a tier, so they are what
    ``litellm.cost_per_token`` charges for every prompt in it.
    """

    def __init__(self) -> None:
        self._rates: dict[tuple[str, int], Rates | None] = {}
        self._tiers: dict[str, list[int]] = {}

    def _thresholds(self, model: str) -> list[int]:
        if model not in self._tiers:
            import litellm

            try:
                info = litellm.get_model_info(model=model)
            except Exception:  # not in the cost map: no tiers, and no rates either
                info = {}
            self._tiers[model] = sorted({int(m.group(1)) * 1000 for k in info for m in [_TIER.search(k)] if m})
        return self._tiers[model]

    def rates(self, litellm_model: str, tokens_in: int) -> Rates | None:
        litellm_model = price_model(litellm_model)
        tier = bisect.bisect_left(self._thresholds(litellm_model), tokens_in)
        key = (litellm_model, tier)
        if key not in self._rates:
            self._rates[key] = self._read(litellm_model, max(1, tokens_in))
        return self._rates[key]

    @staticmethod
    def _read(model: str, n: int) -> Rates | None:
        import litellm
        from litellm.cost_calculator import batch_cost_calculator
        from litellm.types.utils import Usage

        try:
            full, out = litellm.cost_per_token(model=model, prompt_tokens=n, completion_tokens=n)
            cached, _ = litellm.cost_per_token(
                model=model, prompt_tokens=n, completion_tokens=0, cache_read_input_tokens=n
            )
            b_full, b_out = batch_cost_calculator(Usage(prompt_tokens=n, completion_tokens=n), model)
            b_cached, _ = batch_cost_calculator(
                Usage(prompt_tokens=n, completion_tokens=0, prompt_tokens_details={"cached_tokens": n}), model
            )
        except Exception as exc:  # not in litellm's cost map
            log.debug("no price for %s: %s", model, exc)
            return None
        return Rates(full / n, cached / n, out / n, b_full / n, b_cached / n, b_out / n)


@dataclass
class Estimate:
    """What a dry run counts: calls that would be sent, tokens (prefix-cached among them), and cost where known.

    Three prices: ``cost_naive_usd`` as if no prefix were cached, ``cost_usd`` with
    the prefix-cache model, ``cost_batch_usd`` with it and batch rates (providers
    with a batch endpoint only; else the same as ``cost_usd``).
    """

    calls: int = 0
    cached: int = 0
    tokens_in: int = 0
    tokens_in_cached: int = 0
    tokens_out_max: int = 0
    cost_usd: float = 0.0
    cost_naive_usd: float = 0.0
    cost_batch_usd: float = 0.0
    cost_unknown_calls: int = 0
    batch: bool = False
    by_step: dict[str, int] = field(default_factory=dict)

    @property
    def tokens_in_billed(self) -> int:
        """Input tokens at the full rate."""
        return self.tokens_in - self.tokens_in_cached

    @classmethod
    def total(cls, parts: Sequence["Estimate"], *, batch: bool = False) -> "Estimate":
        """The sum of several dry runs (one per queued request, say)."""
        out = cls(batch=batch)
        for e in parts:
            for name in (
                "calls",
                "cached",
                "tokens_in",
                "tokens_in_cached",
                "tokens_out_max",
                "cost_usd",
                "cost_naive_usd",
                "cost_batch_usd",
                "cost_unknown_calls",
            ):
                setattr(out, name, getattr(out, name) + getattr(e, name))
            for step, n in e.by_step.items():
                out.by_step[step] = out.by_step.get(step, 0) + n
        return out

    def add(
        self, step: str, tokens_in: int, tokens_cached: int, tokens_out: int, rates: Rates | None, batchable: bool
    ) -> None:
        """Count one call to send."""
        self.calls += 1
        self.by_step[step] = self.by_step.get(step, 0) + 1
        self.tokens_in += tokens_in
        self.tokens_in_cached += tokens_cached
        self.tokens_out_max += tokens_out
        if rates is None:
            self.cost_unknown_calls += 1
            return
        billed = tokens_in - tokens_cached
        self.cost_naive_usd += tokens_in * rates.full + tokens_out * rates.out
        cached_cost = billed * rates.full + tokens_cached * rates.cached + tokens_out * rates.out
        self.cost_usd += cached_cost
        if batchable:
            self.cost_batch_usd += (
                billed * rates.batch_full + tokens_cached * rates.batch_cached + tokens_out * rates.batch_out
            )
        else:
            self.cost_batch_usd += cached_cost

    def line(self) -> str:
        unknown = f" + {self.cost_unknown_calls} calls of unknown price" if self.cost_unknown_calls else ""
        steps = ", ".join(f"{k}: {v}" for k, v in sorted(self.by_step.items()))
        cost = f"${self.cost_usd:.2f}{unknown} with prefix caching (${self.cost_naive_usd:.2f} without)"
        if self.batch:
            cost = (
                f"${self.cost_batch_usd:.2f}{unknown} by batch with prefix caching (${self.cost_naive_usd:.2f} "
                "without either)"
            )
        return (
            f"dry run: {self.calls} calls to send ({self.cached} already cached), "
            f"~{self.tokens_in} tokens in (~{self.tokens_in_billed} billed in full, ~{self.tokens_in_cached} "
            f"from the provider's prefix cache), <= {self.tokens_out_max} tokens out, cost {cost} [{steps}]"
        )
