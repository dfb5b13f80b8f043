"""Batch endpoints: requests the LLM layer deferred, sent as one JSONL file per model at the batch price.

In batch mode ``LLM.ask`` answers a cache miss by recording the request
(``PendingRequest``) and raising ``Deferred``. ``BatchRunner.run`` then, per
model, writes the requests as an OpenAI-shaped batch file
(``{custom_id, method, url, body}`` a line, ``custom_id`` = the cache key and the step),
uploads it (``litellm.acreate_file``), creates the batch
(``litellm.acreate_batch``), polls it (``litellm.aretrieve_batch``) and reads
the output and error files (``litellm.afile_content``). Each reply goes into
the response cache and the call log exactly as a direct call's would (priced
with litellm's batch rates), so the caller's next pass finds it in the cache
and validates it as usual.

Resumable at any point. Before anything is uploaded, the batch and the cache
keys it holds are stored in the call database (``batches``,
``batch_requests``); the file id and the batch id are stored the moment the
provider returns them. A rerun never resubmits a key held by a batch that has
not been collected: it polls that batch instead. A crash after the create
request left but before its id was stored is found again by listing the
provider's batches for our ``metadata.rqbench_batch`` id, so the provider is
not asked to run (and bill) the same requests twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rqbench.llm.config import BATCH_PROVIDERS, ModelConfig
from rqbench.llm.provider_errors import is_transient, retry_after_of
from rqbench.llm.store import CallStore
from rqbench.llm.usage import batch_cost, usage_of

log = logging.getLogger(__name__)

ENDPOINT = "/v1/chat/completions"
TERMINAL = ("completed", "failed", "expired", "cancelled")
DEFAULT_POLL_S = 30.0


class BatchUnsupported(ValueError):
    """A model whose provider has no batch endpoint litellm can reach."""


def check_batchable(cfg: ModelConfig) -> None:
    if cfg.local or cfg.provider not in BATCH_PROVIDERS:
        raise BatchUnsupported(
            f"--batch: model {cfg.name!r} (provider {cfg.provider!r}) has no batch endpoint; "
            f"batch mode works for providers {sorted(BATCH_PROVIDERS)}"
        )


@dataclass(frozen=True)
class PendingRequest:
    """One deferred call: what to send, and what to store once it is answered."""

    key: str
    model: str  # the config's name, as the cache and log record it
    step: str
    body: dict[str, Any]  # an OpenAI chat-completions body
    request: dict[str, Any]  # what ``CallStore.put`` keeps beside the reply


def batch_body(
    cfg: ModelConfig, messages: Sequence[dict[str, str]], response_format: dict[str, Any] | None
) -> dict[str, Any]:
    """The OpenAI-shaped body of one batch line, with the sampling settings a direct call would send.

    litellm maps the settings to the model's parameter names (``max_completion_tokens``
    for reasoning models) and refuses the ones the model does not take, as it would
    for a direct call.
    """
    import litellm
    from litellm.utils import get_optional_params

    model_name = litellm.get_llm_provider(cfg.litellm_model)[0]
    settings: dict[str, Any] = {}
    if cfg.temperature is not None:  # None: the vendor's default sampling, as in a direct call
        settings["temperature"] = cfg.temperature
    if cfg.max_tokens:
        settings["max_tokens"] = cfg.max_tokens
    if cfg.reasoning_effort:
        settings["reasoning_effort"] = cfg.reasoning_effort
    if response_format is not None:
        settings["response_format"] = response_format
    params = get_optional_params(model=model_name, custom_llm_provider="openai", **settings)
    params = {k: v for k, v in params.items() if k not in ("stream", "extra_body") or v}
    return {"model": model_name, "messages": list(messages), **params}


CUSTOM_ID_SEPARATOR = "|"


def custom_id(key: str, step: str) -> str:
    """A batch line's id: the cache key, tagged with the step as a direct request's header is."""
    return f"{key}{CUSTOM_ID_SEPARATOR}{step}"


def split_custom_id(value: str) -> tuple[str, str | None]:
    """(cache key, step) of a batch line's id; a line without a step tag gives None for it."""
    key, sep, step = str(value).partition(CUSTOM_ID_SEPARATOR)
    return key, (step if sep else None)


def batch_file(lines: Iterable[tuple[str, str, dict[str, Any]]]) -> bytes:
    """The JSONL batch input file: one (cache key, step, body) a line, ``custom_id`` = key|step."""
    return b"".join(
        json.dumps({"custom_id": custom_id(key, step), "method": "POST", "url": ENDPOINT, "body": body}).encode()
        + b"\n"
        for key, step, body in lines
    )


@dataclass
class RoundResult:
    """What one ``BatchRunner.run`` achieved."""

    answered: int = 0
    failed: dict[str, tuple[str, str]] | None = None  # key -> (reason, detail)
    batches: int = 0


def _report_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class BatchRunner:
    """Submits, polls and collects batches for one set of pending requests; see the module docstring."""

    def __init__(
        self,
        store: CallStore,
        configs: dict[str, ModelConfig],
        *,
        run_id: str,
        poll_s: float = DEFAULT_POLL_S,
        report: Callable[[str], None] | None = _report_stderr,
    ):
        self.store = store
        self.configs = configs
        self.run_id = run_id
        self.poll_s = poll_s
        self.report = report or (lambda line: None)

    # -- the round -------------------------------------------------------------
    async def run(self, pending: Sequence[PendingRequest]) -> RoundResult:
        """Answer ``pending``: resume the open batches that hold some of it, submit the rest, wait, collect."""
        result = RoundResult(failed={})
        held = self.store.open_batch_keys()
        fresh: dict[str, list[PendingRequest]] = {}
        waiting: set[str] = set()
        for r in pending:
            if r.key in held:
                waiting.add(held[r.key])
            else:
                fresh.setdefault(self._scope(r.model), []).append(r)
        for reqs in fresh.values():
            waiting.add(self._record(reqs))
        result.batches = len(waiting)
        outcomes = await asyncio.gather(*(self._drive(local_id) for local_id in sorted(waiting)))
        for answered, failed in outcomes:
            result.answered += answered
            result.failed.update(failed)  # type: ignore[union-attr]
        return result

    def _scope(self, model: str) -> str:
        cfg = self.configs[model]
        return f"{cfg.provider}|{cfg.litellm_model}|{cfg.api_base or ''}"

    def _record(self, reqs: list[PendingRequest]) -> str:
        """Store a new batch and its keys before anything leaves the machine."""
        cfg = self.configs[reqs[0].model]
        local_id = f"rqb-{uuid.uuid4().hex[:16]}"
        self.store.batch_create(
            local_id,
            provider=cfg.provider,
            litellm_model=cfg.litellm_model,
            api_base=cfg.api_base,
            model=cfg.name,
            run_id=self.run_id,
            requests=[(r.key, r.model, r.step, json.dumps(r.body), json.dumps(r.request)) for r in reqs],
        )
        return local_id

    # -- one batch, from wherever it stands --------------------------------------
    async def _drive(self, local_id: str) -> tuple[int, dict[str, tuple[str, str]]]:
        row = self.store.batch(local_id)
        cfg = self.configs.get(row["model"]) or ModelConfig(
            name=row["model"], litellm_model=row["litellm_model"], api_base=row["api_base"]
        )
        creds = self._creds(cfg)
        if row["file_id"] is None:
            content = batch_file(
                (q["key"], q["step"], json.loads(q["body"])) for q in self.store.batch_requests(local_id)
            )
            file_obj = await self._call(
                "upload",
                cfg,
                self._litellm().acreate_file,
                file=(f"{local_id}.jsonl", content, "application/jsonl"),
                purpose="batch",
                **creds,
            )
            self.store.batch_update(local_id, file_id=file_obj.id, state="uploaded")
            row = self.store.batch(local_id)
        if row["batch_id"] is None:
            found = await self._find_created(cfg, creds, local_id, row["file_id"])
            if found is None:
                created = await self._call(
                    "create",
                    cfg,
                    self._litellm().acreate_batch,
                    completion_window="24h",
                    endpoint=ENDPOINT,
                    input_file_id=row["file_id"],
                    metadata={"rqbench_batch": local_id},
                    model=cfg.litellm_model,
                    **creds,
                )
                found = created.id
            self.store.batch_update(local_id, batch_id=found, state="submitted")
            self.report(f"batch {found} ({cfg.name}): {row['n_requests']} requests submitted")
            row = self.store.batch(local_id)
        batch = await self._wait(cfg, creds, row)
        return await self._collect(cfg, creds, local_id, batch)

    async def _find_created(self, cfg: ModelConfig, creds: dict[str, Any], local_id: str, file_id: str) -> str | None:
        """A batch created for ``local_id`` whose id we did not get to store (a crash mid-request)."""
        try:
            listing = await self._litellm().alist_batches(limit=100, **creds)
        except Exception as exc:  # a provider without a list endpoint: nothing to adopt
            log.info("cannot list %s batches (%s); creating one", cfg.provider, exc)
            return None
        for b in getattr(listing, "data", None) or []:
            meta = getattr(b, "metadata", None) or {}
            if meta.get("rqbench_batch") == local_id or getattr(b, "input_file_id", None) == file_id:
                return str(b.id)
        return None

    async def _wait(self, cfg: ModelConfig, creds: dict[str, Any], row: dict[str, Any]) -> Any:
        last = None
        while True:
            batch = await self._call(
                "retrieve", cfg, self._litellm().aretrieve_batch, batch_id=row["batch_id"], **creds
            )
            status = str(batch.status)
            counts = getattr(batch, "request_counts", None)
            done = f" {counts.completed + counts.failed}/{counts.total} done" if counts else ""
            if status != last:
                self.report(f"batch {row['batch_id']} ({cfg.name}): {status}{done}")
                self.store.batch_update(row["local_id"], provider_status=status)
                last = status
            if status in TERMINAL:
                return batch
            await asyncio.sleep(self.poll_s)

    async def _collect(
        self, cfg: ModelConfig, creds: dict[str, Any], local_id: str, batch: Any
    ) -> tuple[int, dict[str, tuple[str, str]]]:
        """Store every answered line in the cache and log; name every failed one."""
        reqs = {q["key"]: q for q in self.store.batch_requests(local_id)}
        lines: list[dict[str, Any]] = []
        for file_id in (getattr(batch, "output_file_id", None), getattr(batch, "error_file_id", None)):
            if file_id:
                content = await self._call("download", cfg, self._litellm().afile_content, file_id=file_id, **creds)
                lines += [json.loads(x) for x in content.content.decode("utf-8").splitlines() if x.strip()]
        answered, failed = 0, {}
        seen: set[str] = set()
        for line in lines:
            key, _ = split_custom_id(line.get("custom_id", ""))
            if key not in reqs or key in seen:
                continue
            seen.add(key)
            q = reqs[key]
            text, reason, detail, body = self._line_reply(line)
            if text is None:
                failed[key] = (reason, detail)
                self.store.batch_request_done(local_id, key, "failed", f"{reason}: {detail}")
                self.store.log(
                    step=q["step"],
                    model=q["model"],
                    key=key,
                    cache="miss",
                    status=f"error:{reason}",
                    run_id=self.run_id,
                    error=detail[:500],
                    batch_id=batch.id,
                )
                continue
            answered += 1
            if self.store.get(key) is None:  # a re-collection after a crash logs nothing twice
                use = usage_of(body.get("usage"))
                cost = 0.0 if cfg.local else batch_cost(body.get("usage") or {}, cfg.litellm_model)
                finish = body["choices"][0].get("finish_reason")  # "length": cut at the budget, replays as cut
                self.store.put(
                    key,
                    model=q["model"],
                    step=q["step"],
                    request=json.loads(q["request"]),
                    text=text,
                    tokens_in=use.tokens_in,
                    tokens_out=use.tokens_out,
                    cost_usd=cost,
                    tokens_cached=use.cached,
                    tokens_cache_write=use.cache_write,
                    finish_reason=finish,
                )
                status = "truncated" if finish == "length" else "ok"
                self.store.log(
                    step=q["step"],
                    model=q["model"],
                    key=key,
                    cache="miss",
                    status=status,
                    run_id=self.run_id,
                    tokens_in=use.tokens_in,
                    tokens_out=use.tokens_out,
                    cost_usd=cost,
                    tokens_cached=use.cached,
                    tokens_cache_write=use.cache_write,
                    batch_id=batch.id,
                )
            self.store.batch_request_done(local_id, key, "done", None)
        status = str(batch.status)
        for key, q in reqs.items():
            if key not in seen:
                detail = f"batch {batch.id} ended {status} without a line for this request"
                failed[key] = (f"batch_{status}", detail)
                self.store.batch_request_done(local_id, key, "failed", detail)
                self.store.log(
                    step=q["step"],
                    model=q["model"],
                    key=key,
                    cache="miss",
                    status=f"error:batch_{status}",
                    run_id=self.run_id,
                    error=detail,
                    batch_id=batch.id,
                )
        self.store.batch_update(local_id, state="collected")
        self.report(f"batch {batch.id} ({cfg.name}): {answered} answered, {len(failed)} failed")
        return answered, failed

    @staticmethod
    def _line_reply(line: dict[str, Any]) -> tuple[str | None, str, str, dict[str, Any]]:
        """(text, reason, detail, body) of one output or error line; text None when it failed."""
        resp = line.get("response") or {}
        err = line.get("error")
        status = resp.get("status_code")
        body = resp.get("body") or {}
        if err or status != 200:
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                err = err or body["error"]
            message = (err or {}).get("message") if isinstance(err, dict) else str(err or "")
            code = (err or {}).get("code") if isinstance(err, dict) else None
            return None, f"batch_line_{code or status or 'error'}", str(message or f"status {status}"), body
        try:
            choice = body["choices"][0]
            text = choice["message"]["content"]
        except (KeyError, IndexError, TypeError):
            return None, "batch_line_malformed", "no choices[0].message.content in the reply body", body
        if (text is None or not str(text).strip()) and choice.get("finish_reason") != "length":
            return None, "batch_line_empty", f"empty reply (finish_reason={choice.get('finish_reason')})", body
        return "" if text is None else str(text), "", "", body  # a reply cut at the budget may be empty

    # -- plumbing ----------------------------------------------------------------
    @staticmethod
    def _litellm() -> Any:
        import litellm

        litellm.suppress_debug_info = True
        return litellm

    @staticmethod
    def _creds(cfg: ModelConfig) -> dict[str, Any]:
        out: dict[str, Any] = {"custom_llm_provider": cfg.provider, "timeout": cfg.timeout_s}
        if cfg.api_base:
            out["api_base"] = cfg.api_base
        if cfg.api_key:
            out["api_key"] = cfg.api_key
        return out

    async def _call(self, what: str, cfg: ModelConfig, fn: Callable[..., Any], **kwargs: Any) -> Any:
        """One batch-API request, retried like a direct call on rate limits, 5xx and dropped connections."""

        attempt = 0
        while True:
            attempt += 1
            try:
                return await fn(**kwargs)
            except Exception as exc:  # classified: retried, or raised with what failed
                if not is_transient(exc) or attempt > cfg.max_retries:
                    raise RuntimeError(f"batch {what} for {cfg.name} failed: {type(exc).__name__}: {exc}") from exc
                wait = retry_after_of(exc) or min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1))
                log.warning("batch %s for %s: %s, retry %d in %.1fs", what, cfg.name, type(exc).__name__, attempt, wait)
                await asyncio.sleep(wait)
