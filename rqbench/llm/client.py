"""The one LLM layer: every builder stage and every judge calls models through ``LLM.ask``.

What it guarantees:
- a finished call is never paid for twice: replies are cached in SQLite under a
  key built from the model's output-changing settings, the messages, the reply
  schema and the prompt-set hash;
- bounded concurrency per model, retries with exponential backoff on rate
  limits, 5xx, timeouts and broken bodies (Retry-After honoured), a per-call
  timeout;
- a reply is parsed and validated against the step's pydantic model; an invalid
  one is re-asked once, quoting the error, then raised as ``LLMCallFailed``
  (never a silent zero);
- a reply the provider cut at the reply budget (finish_reason "length") is
  raised as ``LLMCallFailed`` with the reason ``truncated``, with its text; it
  is cached like any reply, and never re-asked as if its format were wrong;
- every request and cache hit is logged with tokens (cached input apart), cost, latency and status;
- requests are paced per provider (``ratelimit.py``); in batch mode cache misses are deferred
  and sent through the provider's batch endpoint (``batch.py``); see docs/llm.md;
- a provider that cannot be reached at all stops the run: once a call has spent its retries
  failing to connect to an address that has not answered once in this process, every call to
  that address raises ``ProviderUnreachable`` at once instead of retrying on its own (a circuit
  breaker), and the job ends with that message rather than logging one error per request.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import os
import random
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from rqbench import paths
from rqbench.hashing import content_hash
from rqbench.io import RecordError
from rqbench.llm.cache_markers import needs_cache_markers, with_cache_markers
from rqbench.llm.catalog import LOCAL_REPLY_TOKENS, count_tokens, estimate_tokens, is_local, local_settings, price_model
from rqbench.llm.catalog import litellm_module as _litellm
from rqbench.llm.config import BATCH_PROVIDERS, ModelConfig, hosted_config
from rqbench.llm.estimate import FREE, Estimate, PrefixCacheModel, PriceBook, cache_rule
from rqbench.llm.provider_errors import (
    MAX_RETRY_AFTER_S,
    is_connect_failure,
    is_rate_limit,
    is_transient,
    retry_after_of,
)
from rqbench.llm.ratelimit import RateLimiter, env_limits
from rqbench.llm.store import CallStore
from rqbench.llm.usage import usage_of
from rqbench.records import OVERLAP_SCALE, SCOPE_OF_SCORE, reply_json_schema

log = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)


class LLMCallFailed(RuntimeError):
    """A call that could not produce a valid reply, with the reason by name."""

    def __init__(
        self, step: str, key: str, reason: str, detail: str, last_text: str | None = None, reask_key: str | None = None
    ):
        super().__init__(f"{step}: {reason}: {detail}")
        self.step, self.key, self.reason, self.detail, self.last_text = step, key, reason, detail, last_text
        self.reask_key = reask_key  # the re-ask's cache key, when the call was asked again

    @property
    def keys(self) -> tuple[str, ...]:
        """Every cache key the call asked under (the first ask, then any re-ask), for the call log's costs."""
        return (self.key,) if self.reask_key is None else (self.key, self.reask_key)


# The reason of a reply cut off by the reply budget (the provider's finish_reason "length").
TRUNCATED = "truncated"


class ProviderUnreachable(RuntimeError):
    """No connection could be made to a model's address, and none ever was in this process: the run stops.

    Not an ``LLMCallFailed``: it is not one call's failure to record and move past, since every
    other call to that address would fail the same way. The jobs let it end the run with its message.
    """

    def __init__(self, model: str, address: str, attempts: int, detail: str):
        self.model, self.address, self.attempts, self.detail = model, address, attempts, detail
        super().__init__(
            f"cannot connect to {address} (model {model}): {attempts} attempt(s) failed to connect and none has "
            f"been answered in this run ({detail}); the run stops here instead of retrying every call. Check the "
            "network, the API base and any proxy; answered calls are cached, so a rerun resumes where this stopped"
        )


@dataclass
class _Reach:
    """What the circuit breaker knows about one address: whether it ever answered, and whether it is given up on."""

    answered: bool = False
    connect_failures: int = 0  # attempts that could not connect
    broken: ProviderUnreachable | None = None


def truncation_detail(cfg: ModelConfig) -> str:
    """What a truncated failure says: the budget it hit, and the option that raises it."""
    return (
        f"the reply reached the reply budget (max_tokens={cfg.max_tokens}) before it ended; "
        f"raise it with {cfg.name.partition('@')[0]}@max_tokens=N"
    )


class CallNotCached(RuntimeError):
    """An offline run (``LLM(offline=True)``: a bundle's re-score) asked for a call its cache does not hold.

    Not an ``LLMCallFailed``: the judging run must stop on it rather than record the call as a failure,
    since a re-score that quietly scored one call fewer would not be the row it claims to reproduce.
    """

    def __init__(self, model: str, step: str, key: str):
        self.model, self.step, self.key = model, step, key
        super().__init__(
            f"call not in the cache: model {model}, step {step}, key {key}; an offline re-score makes no call, so "
            "every call behind the row must be in the bundle"
        )


class DryRun(Exception):
    """Raised by ``ask`` in dry-run mode after the call was counted."""


class Deferred(Exception):
    """Raised by ``ask`` in batch mode on a cache miss: the request waits in ``LLM.pending`` for the next batch."""


MAX_BATCH_ROUNDS = 4  # first asks, re-asks of invalid replies, and the --retry-failed variants of both


def request_seed(key: str) -> int:
    """The embedded model's sampling seed for one request: from its cache key, so a sampled reply (the offline
    generator samples at temperature 0.8) is the same whatever was asked before it, whether earlier calls were
    served from the cache, and on every machine."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big")


@dataclass
class Answer(Generic[R]):
    reply: R
    text: str
    key: str
    cached: bool
    reasked: bool = False
    reask_key: str | None = None  # the re-ask's cache key, when the first reply was invalid

    @property
    def keys(self) -> tuple[str, ...]:
        """Every cache key behind this answer (the first ask, then any re-ask), for the call log's costs."""
        return (self.key,) if self.reask_key is None else (self.key, self.reask_key)


# Names the step of every request on the wire (as the call log does, ``<step>:reask`` for a re-ask),
# for a proxy's logs or a scripted server; a header, so neither the messages nor the cache key change.
STEP_HEADER = "X-RQBench-Step"
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


# Top-level arrays that hold one entry per candidate in the judges' replies.
PER_CANDIDATE_ARRAYS = ("scores", "pairwise_scores")
# Top-level arrays of candidate indices: a subset, so never more entries than candidates.
CANDIDATE_SUBSET_ARRAYS = ("covering_subset_indices",)


# The widest integer range written out as an enum for a grammar (the rubrics' scales are 0-1 and 0-3).
ENUM_RANGE_LIMIT = 16


def grammar_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as a grammar-compiling server (llama.cpp) gets it: a small integer range as an ``enum``.

    The embedded llama.cpp server compiles the schema into a grammar but ignores an integer's minimum and
    maximum: the embedded judge wrote 4, 237 and 489 on 0-3 scales, and every such reply was refused and
    re-asked (12 of 12 standalone novelty calls in the offline run). An enum it keeps; so does a covering
    subset's index, which otherwise ran past the candidates ([5, 6, 7, 8, 9] for five). A narrowness
    score's scope label, which must name its score, becomes one alternative per pair of scores: a schema
    cannot say "this string follows that number" otherwise, and a scope contradicting its score refused 15
    of the offline run's 27 re-asked replies. The cache key and the validation use the schema itself, so
    nothing is accepted that was refused before.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        props = node.get("properties")
        if isinstance(props, dict):  # a subset of n candidates (maxItems pinned by reply_schema) names 0..n-1
            node = {**node, "properties": {**props}}
            overlap = props.get("pairwise_scores")
            if isinstance(overlap, dict) and overlap.get("items") == {"type": "integer"}:
                # the overlap rubric's scale (the embedded judge wrote 5, 17 and 1273 on it)
                lo, hi = OVERLAP_SCALE
                node["properties"]["pairwise_scores"] = {**overlap, "items": {"enum": list(range(lo, hi + 1))}}
            ranking, scores = props.get("ranking"), props.get("scores")
            n = scores.get("maxItems") if isinstance(scores, dict) else None
            if isinstance(ranking, dict) and ranking.get("items") == {"type": "integer"} and isinstance(n, int):
                # a ranking names every scored candidate once: as many entries as scores, each an index (the
                # embedded judge stopped after one); that each comes once, validation checks
                node["properties"]["ranking"] = {
                    **ranking,
                    "minItems": n,
                    "maxItems": n,
                    "items": {"enum": list(range(n))},
                }
            for name in CANDIDATE_SUBSET_ARRAYS:
                arr = props.get(name)
                if (
                    isinstance(arr, dict)
                    and isinstance(arr.get("maxItems"), int)
                    and arr.get("items") == {"type": "integer"}
                ):
                    node["properties"][name] = {**arr, "items": {"enum": list(range(arr["maxItems"]))}}
        lo, hi = node.get("minimum"), node.get("maximum")
        if (
            node.get("type") == "integer"
            and isinstance(lo, int)
            and isinstance(hi, int)
            and 0 <= hi - lo <= ENUM_RANGE_LIMIT
        ):
            rest = {k: v for k, v in node.items() if k not in ("type", "minimum", "maximum")}
            return {**rest, "enum": list(range(lo, hi + 1))}
        return _scopes_tied({k: walk(v) for k, v in node.items()})

    return walk(schema)


def _scopes_tied(node: dict[str, Any]) -> dict[str, Any]:
    """An object with a score and its scope label (``SCOPE_OF_SCORE``) as one alternative per score combination."""
    props = node.get("properties")
    if not isinstance(props, dict):
        return node
    ties = [
        (score, scope_key, labels, props[score]["enum"])
        for score, (scope_key, labels) in SCOPE_OF_SCORE.items()
        if score in props and scope_key in props and isinstance(props[score].get("enum"), list)
    ]
    if not ties:
        return node
    variants = []
    for combo in itertools.product(*(scores for *_, scores in ties)):
        fixed = dict(props)
        for (score, scope_key, labels, _), value in zip(ties, combo):
            fixed[score] = {**props[score], "enum": [value]}
            fixed[scope_key] = {**props[scope_key], "enum": [labels[value]]}
        variants.append({**node, "properties": fixed})
    rest = {k: v for k, v in node.items() if k in ("title", "description")}
    return {**rest, "anyOf": variants}


def reply_schema(reply_model: type[BaseModel], context: dict[str, Any] | None) -> dict[str, Any]:
    """The reply's JSON schema, with per-candidate arrays pinned to ``n_candidates`` when known.

    A grammar-constrained decoder then cannot return four scores for six candidates (the
    embedded model's commonest comparative failure); validation checks the count either way.
    A subset of candidates is capped at ``n_candidates`` entries: unbounded, the embedded model
    can count on (5, 6, 7, ...) until its reply budget runs out.
    """
    schema = reply_json_schema(reply_model)
    n = (context or {}).get("n_candidates")
    if isinstance(n, int) and n > 0:
        for name in (*PER_CANDIDATE_ARRAYS, *CANDIDATE_SUBSET_ARRAYS):
            prop = schema.get("properties", {}).get(name)
            if isinstance(prop, dict) and prop.get("type") == "array":
                prop["maxItems"] = n
                if name in PER_CANDIDATE_ARRAYS:
                    prop["minItems"] = n
    return schema


def parse_json_reply(text: str) -> Any:
    """The JSON object in a reply: tolerant of code fences, prose around it, raw newlines."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", stripped)
    try:
        return json.loads(stripped, strict=False)
    except json.JSONDecodeError:
        m = _JSON_OBJECT.search(stripped)
        if not m:
            raise
        return json.loads(m.group(0), strict=False)


def validate_reply(reply_model: type[R], text: str, context: dict[str, Any] | None = None) -> R:
    """A reply text as its reply model: the one check ``LLM.ask`` applies and a reparse of stored replies repeats.

    ValueError when it does not fit, saying what is wrong in the words a re-ask quotes to the model (changing them
    changes re-ask cache keys).
    """
    try:
        data = parse_json_reply(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"reply is not JSON ({exc.msg} at position {exc.pos})") from exc
    if not isinstance(data, dict):
        raise ValueError("reply is JSON but not an object")  # noqa: TRY004 - one error type for every bad reply
    try:
        return reply_model.model_validate(data, context=context)
    except ValidationError as exc:
        raise ValueError(RecordError.from_validation(exc).problem_list(8)) from exc


class LLM:
    """The call layer. One per process is typical; it is safe to share across tasks."""

    def __init__(
        self,
        store: CallStore | None = None,
        *,
        run_id: str | None = None,
        dry_run: bool = False,
        retry_failed: bool = False,
        batch: bool = False,
        dry_run_tokens: str = "litellm",
        offline: bool = False,
    ):
        self.store = store or CallStore(paths.calls_db())
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.dry_run = dry_run
        self.retry_failed = retry_failed
        self.batch = batch
        self.dry_run_tokens = dry_run_tokens
        self.estimate = Estimate(batch=batch)
        self._prefix_cache = PrefixCacheModel()
        self._prices = PriceBook()
        self._semaphores: dict[tuple[int, str], asyncio.Semaphore] = {}
        self._limiters: dict[tuple[int, str], RateLimiter] = {}
        self._configs: dict[str, ModelConfig] = {}
        self.batch_poll_s = float(os.environ.get("RQB_BATCH_POLL_S", "30"))
        self.pending: dict[str, Any] = {}  # cache key -> rqbench.llm.batch.PendingRequest
        self._batch_failures: dict[str, tuple[str, str]] = {}
        self._asked_afresh: set[str] = set()  # keys --retry-failed already dropped in this run
        self._direct_models: set[str] = set()  # batch mode, but no batch endpoint
        # offline: replies come from the cache only; a miss is a recorded failure replayed or ``CallNotCached``,
        # never a request, and hits are not logged (a bundle is made from a call log it must not add to)
        self.offline = offline
        self._log_hits = not offline
        self.read_keys: list[str] = []  # offline: every key answered from the cache or a recorded failure, in order
        self._reach: dict[str, _Reach] = {}  # the circuit breaker, per provider address

    def run_note(self) -> str:
        """The line a job prints when it starts, so its calls can be found in the call log afterwards."""
        return f"run id {self.run_id} (rqbench calls --run {self.run_id} lists its calls)"

    # -- model resolution ----------------------------------------------------
    def model(self, spec: str) -> ModelConfig:
        """Resolve ``local``, ``local/<id>`` or a litellm name; the local server starts lazily."""
        if spec not in self._configs:
            if is_local(spec):
                if self.dry_run or self.offline:  # the settings a started server would get, without starting one
                    from rqbench.llm.local_model import local_runtime, runtime_identity

                    label, overrides = local_settings(spec)
                    self._configs[spec] = ModelConfig(
                        **{
                            "name": label,
                            "litellm_model": "openai/local",
                            "local": True,
                            "json_mode": "json_object_schema",
                            "max_tokens": LOCAL_REPLY_TOKENS,
                            # the runtime is part of the cache key: without it, a dry run counted the embedded
                            # model's cached calls as new, and an offline re-score (a bundle) found none of them
                            "runtime": runtime_identity(local_runtime()),
                            **overrides,
                        }
                    )
                else:
                    from rqbench.llm.local_model import local_config

                    self._configs[spec] = local_config(spec)
            else:
                self._configs[spec] = hosted_config(spec)
        return self._configs[spec]

    def register(self, config: ModelConfig) -> ModelConfig:
        """Use a ready-made config (tests, benchmarks) under its own name."""
        self._configs[config.name] = config
        return config

    def _limiter(self, cfg: ModelConfig) -> RateLimiter:
        """The provider's shared rate limiter (per address), with the smallest limits any of its models set."""
        key = (id(asyncio.get_running_loop()), f"{cfg.provider}|{cfg.api_base or ''}")
        lim = self._limiters.get(key)
        if lim is None:
            lim = self._limiters[key] = RateLimiter(*env_limits(cfg.provider))
        lim.tighten(cfg.rpm, cfg.tpm)
        return lim

    def _reachability(self, cfg: ModelConfig) -> _Reach:
        return self._reach.setdefault(self._address(cfg), _Reach())

    @staticmethod
    def _address(cfg: ModelConfig) -> str:
        return cfg.api_base or f"the {cfg.provider} API"

    def _semaphore(self, cfg: ModelConfig) -> asyncio.Semaphore:
        key = (id(asyncio.get_running_loop()), cfg.name)
        sem = self._semaphores.get(key)
        if sem is None:
            sem = self._semaphores[key] = asyncio.Semaphore(cfg.max_concurrency)
        return sem

    # -- keys and requests ----------------------------------------------------
    @staticmethod
    def _response_format(cfg: ModelConfig, step: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        if cfg.json_mode == "json_object_schema":
            return {"type": "json_object", "schema": grammar_schema(schema)}
        if cfg.json_mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": step, "schema": schema}}
        if cfg.json_mode == "json_object":
            return {"type": "json_object"}
        return None

    def cache_key(
        self, cfg: ModelConfig, step: str, messages: Sequence[dict[str, str]], schema: dict[str, Any], prompt_hash: str
    ) -> str:
        return content_hash(
            {
                "v": 1,
                "model": cfg.cache_identity(),
                "step": step,
                "messages": list(messages),
                "schema": schema,
                "prompt_set": prompt_hash,
            }
        )

    def keys_for(
        self,
        model: str,
        step: str,
        messages: Sequence[dict[str, str]],
        reply_model: type[BaseModel],
        prompt_hash: str,
        context: dict[str, Any] | None = None,
    ) -> str:
        cfg = self.model(model)
        return self.cache_key(cfg, step, messages, reply_schema(reply_model, context), prompt_hash)

    # -- the call --------------------------------------------------------------
    async def ask(
        self,
        model: str,
        step: str,
        messages: Sequence[dict[str, str]],
        reply_model: type[R],
        *,
        prompt_hash: str,
        context: dict[str, Any] | None = None,
        retry_failed: bool | None = None,
        shared_chars: int = 0,
    ) -> Answer[R]:
        """Ask ``model`` for a ``reply_model`` JSON reply; cached, retried, validated, logged.

        ``retry_failed`` (default: this LLM's setting) asks afresh when the cached reply does not validate
        or was cut at the reply budget. A cut reply raises ``LLMCallFailed`` with the reason ``truncated``.
        ``shared_chars``: how much of the first user message the calls of an instance share, where a
        provider that caches only behind markers gets one (``cache_markers``); not part of the cache key.
        """
        retry = self.retry_failed if retry_failed is None else retry_failed
        cfg = self.model(model)
        schema = reply_schema(reply_model, context)
        key = self.cache_key(cfg, step, messages, schema, prompt_hash)
        if self.dry_run:
            self._count(cfg, step, messages, key)
            raise DryRun(key)
        text, cached, finish = await self._text(cfg, step, list(messages), schema, key, shared_chars)
        if (
            cached
            and retry
            and key not in self._asked_afresh
            and (finish == "length" or self._invalid(reply_model, text, context))
        ):
            # --retry-failed: a stored reply that was cut or fails validation is asked for afresh (once a run)
            self._asked_afresh.add(key)
            self.store.forget(key)
            text, cached, finish = await self._text(cfg, step, list(messages), schema, key, shared_chars)
        if finish == "length":
            raise LLMCallFailed(step, key, TRUNCATED, truncation_detail(cfg), text)
        reply, error = self._try_validate(reply_model, text, context)
        if error is None:
            return Answer(reply, text, key, cached)
        reask = list(messages) + [
            {"role": "assistant", "content": text},
            {
                "role": "user",
                "content": (
                    "Your reply did not match the required JSON format: "
                    f"{error}. Reply again with only the corrected JSON object."
                ),
            },
        ]
        key2 = self.cache_key(cfg, step + ":reask", reask, schema, prompt_hash)
        if retry and key2 not in self._asked_afresh:
            self._asked_afresh.add(key2)
            self.store.forget(key2)
        text2, cached2, finish2 = await self._text(cfg, step + ":reask", reask, schema, key2, shared_chars)
        if finish2 == "length":
            raise LLMCallFailed(step, key, TRUNCATED, truncation_detail(cfg), text2, reask_key=key2)
        reply2, error2 = self._try_validate(reply_model, text2, context)
        if error2 is not None:
            raise LLMCallFailed(step, key, "invalid_reply", str(error2), text2, reask_key=key2) from error2
        return Answer(reply2, text2, key, cached and cached2, True, reask_key=key2)

    @classmethod
    def _invalid(cls, reply_model: type[R], text: str, context: dict[str, Any] | None) -> bool:
        return cls._try_validate(reply_model, text, context)[1] is not None

    @staticmethod
    def _try_validate(
        reply_model: type[R], text: str, context: dict[str, Any] | None
    ) -> tuple[R | None, ValueError | None]:
        try:
            return validate_reply(reply_model, text, context), None
        except ValueError as exc:
            return None, exc

    async def _text(
        self,
        cfg: ModelConfig,
        step: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        key: str,
        shared_chars: int = 0,
    ) -> tuple[str, bool, str | None]:
        """The reply's text, whether it came from the cache, and why the provider stopped."""
        hit = self.store.get(key)
        if hit is None and self.offline:
            failed = self.store.recorded_failure(key)
            if failed is None:
                raise CallNotCached(cfg.name, step, key)
            self.read_keys.append(key)
            raise LLMCallFailed(step, key, failed.reason, failed.detail)  # as the request that failed raised it
        if hit is None:
            if self.batch and self._batchable(cfg):
                self._defer(cfg, step, messages, schema, key)
            async with self._semaphore(cfg):
                # another task may have finished the same call while we waited
                hit = self.store.get(key)
                if hit is None:
                    text, finish = await self._send(cfg, step, messages, schema, key, shared_chars)
                    return text, False, finish
        if self.offline:
            self.read_keys.append(key)
        if self._log_hits:
            status = TRUNCATED if hit.finish_reason == "length" else "ok"
            self.store.log(step=step, model=cfg.name, key=key, cache="hit", status=status, run_id=self.run_id)
        return hit.text, True, hit.finish_reason

    # -- batch mode ----------------------------------------------------------
    def _batchable(self, cfg: ModelConfig) -> bool:
        """Whether calls to ``cfg`` go by batch; a model without a batch endpoint is called directly, said once."""
        from rqbench.llm.batch import BatchUnsupported, check_batchable

        try:
            check_batchable(cfg)
            return True
        except BatchUnsupported as exc:
            if cfg.name not in self._direct_models:
                self._direct_models.add(cfg.name)
                log.warning("%s; its calls are sent directly", exc)
            return False

    def _defer(
        self, cfg: ModelConfig, step: str, messages: list[dict[str, str]], schema: dict[str, Any], key: str
    ) -> None:
        """Queue the request for the next batch, or name the batch failure this run already saw for it."""
        from rqbench.llm.batch import PendingRequest, batch_body

        failed = self._batch_failures.get(key)
        if failed is not None:
            raise LLMCallFailed(step, key, failed[0], failed[1])
        if key not in self.pending:
            try:
                body = batch_body(cfg, messages, self._response_format(cfg, step, schema))
            except Exception as exc:  # litellm refuses a setting for this model, as a direct call would
                raise LLMCallFailed(step, key, type(exc).__name__, str(exc)[:500]) from exc
            request = {"messages": messages, "model": cfg.cache_identity()}
            self.pending[key] = PendingRequest(key, cfg.name, step, body, request)
        raise Deferred(key)

    async def flush_batches(self) -> int:
        """Send what is pending as one batch per model, wait for the replies, store them; the number answered."""
        from rqbench.llm.batch import BatchRunner

        pending, self.pending = list(self.pending.values()), {}
        if not pending:
            return 0
        runner = BatchRunner(self.store, self._configs, run_id=self.run_id, poll_s=self.batch_poll_s)
        result = await runner.run(pending)
        self._batch_failures.update(result.failed or {})
        return result.answered

    async def fill_by_batches(self, one_pass: Callable[[], Awaitable[Any]]) -> None:
        """Run ``one_pass`` (which asks everything a job needs) and batch what it left pending, until nothing is.

        The caller then runs its pass once more, for real: every reply is cached by then,
        and each request that failed in its batch raises ``LLMCallFailed`` with the reason.
        Cache hits of these discovery passes are not logged, so the job's totals count
        its final pass only.
        """
        self._log_hits = False
        try:
            for _ in range(MAX_BATCH_ROUNDS):
                await one_pass()
                if not self.pending:
                    return
                await self.flush_batches()
            await one_pass()
            if self.pending:
                raise RuntimeError(
                    f"{len(self.pending)} request(s) still pending after {MAX_BATCH_ROUNDS} batch rounds"
                )
        finally:
            self._log_hits = True

    async def _send(
        self,
        cfg: ModelConfig,
        step: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        key: str,
        shared_chars: int = 0,
    ) -> tuple[str, str | None]:
        litellm = _litellm()
        kwargs: dict[str, Any] = {
            "model": cfg.litellm_model,
            "messages": with_cache_markers(messages, shared_chars) if needs_cache_markers(cfg) else messages,
            "timeout": cfg.timeout_s,
            "max_retries": 0,  # retries are ours, so Retry-After and the log stay right
            "num_retries": 0,
            "extra_headers": {STEP_HEADER: step},
        }
        if cfg.temperature is not None:  # None: the vendor's default sampling
            kwargs["temperature"] = cfg.temperature
        if cfg.max_tokens:
            kwargs["max_tokens"] = cfg.max_tokens
        if cfg.api_base:
            kwargs["api_base"] = cfg.api_base
        if cfg.api_key:
            kwargs["api_key"] = cfg.api_key
        if cfg.reasoning_effort:
            kwargs["reasoning_effort"] = cfg.reasoning_effort
        if cfg.local:  # the embedded server's sampler: seeded by the request itself, not by the requests before it
            kwargs["seed"] = request_seed(key)
        fmt = self._response_format(cfg, step, schema)
        if fmt is not None:
            kwargs["response_format"] = fmt
        limiter = self._limiter(cfg)
        tokens = sum(len(m.get("content") or "") for m in messages) // 4 + (cfg.max_tokens or 0)
        reach = self._reachability(cfg)
        attempt = 0
        while True:
            attempt += 1
            if reach.broken is not None:  # another call found the address unreachable: do not try again
                raise reach.broken
            await limiter.acquire(tokens)  # the provider's requests and tokens per minute, and any 429 pause
            t0 = time.monotonic()
            try:
                resp = await asyncio.wait_for(litellm.acompletion(**kwargs), timeout=cfg.timeout_s + 5)
                choice = resp.choices[0]
                text = choice.message.content
                finish = getattr(choice, "finish_reason", None)
                # a reply cut by the budget may be empty (all of it spent on reasoning): kept, as cut
                if (text is None or not str(text).strip()) and finish != "length":
                    raise _EmptyReply(f"empty reply (finish_reason={finish})")
            except Exception as exc:  # classified below: retried, or logged and raised
                latency = time.monotonic() - t0
                transient = is_transient(exc) or isinstance(exc, _EmptyReply)
                reason = type(exc).__name__
                self.store.log(
                    step=step,
                    model=cfg.name,
                    key=key,
                    cache="miss",
                    status=f"error:{reason}",
                    run_id=self.run_id,
                    attempt=attempt,
                    latency_s=latency,
                    error=str(exc)[:500],
                )
                no_connection = is_connect_failure(exc)
                if no_connection:
                    reach.connect_failures += 1
                else:
                    reach.answered = True  # a server was reached, whatever it said
                if not transient or attempt > cfg.max_retries:
                    if no_connection and not reach.answered:
                        # a whole retry schedule without one connection, and the address never answered: give up on it
                        reach.broken = reach.broken or ProviderUnreachable(
                            cfg.name, self._address(cfg), reach.connect_failures, f"{reason}: {str(exc)[:200]}"
                        )
                        raise reach.broken from exc
                    raise LLMCallFailed(step, key, reason, str(exc)[:500]) from exc
                wait = retry_after_of(exc)
                if wait is not None:  # the provider said when: honour it, within reason
                    wait = min(wait, MAX_RETRY_AFTER_S)
                else:
                    wait = min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1))
                    wait *= 0.5 + random.random() / 2
                log.warning("%s %s: %s, retry %d in %.1fs", cfg.name, step, reason, attempt, wait)
                if is_rate_limit(exc):
                    limiter.rate_limited(wait)  # every caller of the provider waits; acquire() sleeps it off
                else:
                    await asyncio.sleep(wait)
                continue
            latency = time.monotonic() - t0
            reach.answered = True
            limiter.succeeded()
            use = usage_of(getattr(resp, "usage", None))
            cost = self._cost(resp, cfg)  # litellm prices cached input at the model's cache-read rate
            text = "" if text is None else str(text)
            self.store.put(
                key,
                model=cfg.name,
                step=step,
                request={"messages": messages, "model": cfg.cache_identity()},
                text=text,
                tokens_in=use.tokens_in,
                tokens_out=use.tokens_out,
                cost_usd=cost,
                tokens_cached=use.cached,
                tokens_cache_write=use.cache_write,
                finish_reason=finish,
                provider_model=getattr(resp, "model", None),
            )
            self.store.log(
                step=step,
                model=cfg.name,
                key=key,
                cache="miss",
                status=TRUNCATED if finish == "length" else "ok",
                run_id=self.run_id,
                attempt=attempt,
                tokens_in=use.tokens_in,
                tokens_out=use.tokens_out,
                cost_usd=cost,
                latency_s=latency,
                tokens_cached=use.cached,
                tokens_cache_write=use.cache_write,
            )
            return text, finish

    @staticmethod
    def _cost(resp: Any, cfg: ModelConfig) -> float | None:
        if cfg.local:
            return 0.0
        litellm = _litellm()
        try:
            priced = price_model(cfg.litellm_model)
            if priced == cfg.litellm_model:
                return float(litellm.completion_cost(completion_response=resp))
            return float(litellm.completion_cost(completion_response=resp, model=priced))
        except Exception as exc:  # litellm raises for models missing from its cost map
            log.debug("no price for %s: %s", cfg.litellm_model, exc)
            return None

    # -- dry run ---------------------------------------------------------------
    def _count(self, cfg: ModelConfig, step: str, messages: Sequence[dict[str, str]], key: str) -> None:
        est = self.estimate
        if self.store.get(key) is not None:
            est.cached += 1
            return
        n_in = self._count_tokens(cfg, messages)
        n_out = cfg.max_tokens or 1024
        provider = cfg.provider
        scope = f"{cfg.litellm_model}@{cfg.api_base or ''}"
        n_cached = self._prefix_cache.cached_tokens(scope, messages, n_in, cache_rule(provider, cfg.local))
        rates = FREE if cfg.local else self._prices.rates(cfg.litellm_model, n_in)
        est.add(step, n_in, n_cached, n_out, rates, batchable=self.batch and provider in BATCH_PROVIDERS)

    def _count_tokens(self, cfg: ModelConfig, messages: Sequence[dict[str, str]]) -> int:
        """Input tokens: litellm's counter for the model, or ceil(characters / 4) (``dry_run_tokens="chars/4"``)."""
        if self.dry_run_tokens == "chars/4":
            return estimate_tokens("".join(m["content"] for m in messages))
        return count_tokens(cfg.litellm_model, messages=messages)


class _EmptyReply(RuntimeError):
    """The provider answered 200 with no text: retried like a transient failure."""
