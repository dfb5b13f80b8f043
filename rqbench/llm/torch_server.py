"""The embedded model's compiler-free runtime: a GGUF chat model on the CPU torch, behind an OpenAI-compatible server.

It answers what the LLM layer asks of llama.cpp's server, on the same command line (``--model --model_alias --n_ctx
--n_threads --seed --host --port``), so litellm calls it as ``openai/<alias>`` like any provider:

- ``GET /v1/models`` (the health check) and ``POST /v1/chat/completions``, not streamed;
- constrained decoding: ``response_format`` ``{"type": "json_object", "schema": ...}`` (llama.cpp's form) or
  ``{"type": "json_schema", "json_schema": {"schema": ...}}``, compiled by llguidance, so every reply is valid JSON
  for the schema unless the reply budget cuts it (``finish_reason`` ``"length"``);
- ``seed``, ``temperature`` (0: greedy), ``top_k``, ``top_p``, ``min_p`` and ``repeat_penalty`` with llama-cpp-python's
  defaults, ``max_tokens``, and usage counts;
- fast-forward: what the schema forces (a key once its quote is written, the colon after it) is run as one step
  instead of a token at a time;
- a prefix cache: the key-value cache of the last prompt is kept, and a request that starts with the same tokens
  (the same instructions and cited papers) computes only what differs.

Why not llama.cpp: llama-cpp-python ships no binary wheel on PyPI, so set-up compiled it for about 13 minutes. The
weights are dequantized from the same GGUF file (``gguf`` reads it; ``accelerate`` loads it into transformers) once,
and kept as a transformers folder beside the other models.

One request at a time, as llama.cpp's Python server does.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import threading
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rqbench.llm.llama_decoder import LlamaDecoder

log = logging.getLogger("rqbench.torch_server")


def reusable_prefix(cached: list[int], prompt: list[int]) -> int:
    """How many leading tokens of ``prompt`` the cache already holds (at most all but the last, which must be run to
    get the next token's logits)."""
    n = 0
    for a, b in zip(cached, prompt[:-1]):
        if a != b:
            break
        n += 1
    return n


class TransformersForward:
    """transformers' own forward and cache, for architectures the lean decoder does not cover (Gemma 3)."""

    def __init__(self, folder: Path):
        import torch
        from transformers import AutoModelForCausalLM

        self.torch = torch
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        self.model.eval()
        self.kv: Any = None
        # transformers 5.2x renamed ``past_key_values`` (argument and output) to ``cache``; 4.x knows only the old name
        self.cache_name = "cache" if "cache" in inspect.signature(self.model.forward).parameters else "past_key_values"

    def forward(self, tokens: list[int], start: int) -> Any:
        """Run ``tokens`` at positions ``start..`` after the cached ones; the last position's logits."""
        torch = self.torch
        if self.kv is None or start == 0:
            from transformers import DynamicCache

            self.kv = DynamicCache()
        elif self.kv.get_seq_length() > start:
            self.kv.crop(start - self.kv.get_seq_length())  # transformers 5 crops by the count of tokens to drop
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([tokens]), **{self.cache_name: self.kv}, use_cache=True)
        self.kv = getattr(out, self.cache_name)
        return out.logits[0, -1, :]


def converted_dir(gguf: Path, cache_dir: Path | None = None) -> Path:
    """Where the GGUF's dequantized weights and tokenizer are kept, named by the file and its size."""
    from rqbench import paths

    return (cache_dir or paths.converted_models_dir()) / f"{gguf.stem}-{gguf.stat().st_size}.torch"


def convert(gguf: Path, target: Path) -> None:
    """Dequantize ``gguf`` once into a transformers folder (config, safetensors weights, tokenizer): reading the GGUF
    and its tokenizer takes about 40 s, the converted folder under a second. Written aside, then renamed into place,
    so a crash or a second server never leaves half a folder."""
    import copy
    import shutil

    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = copy.deepcopy(model.config)
    if hasattr(config, "quantization_config"):  # the weights are plain float32 now
        del config.quantization_config
    tmp = target.with_name(f"{target.name}.part-{uuid.uuid4().hex[:8]}")
    tmp.mkdir(parents=True)
    try:
        config.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))
        tokenizer.save_pretrained(tmp)
        tmp.rename(target)
    except OSError:
        if not (target / "model.safetensors").exists():
            raise
        # another server converted it first
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass(frozen=True)
class Sampler:
    """How the next token is picked: llama-cpp-python's server defaults (0.3.36), so that the embedded model behaves
    as it did there. The repeat penalty reads the last ``penalty_last_n`` tokens (prompt included) and applies at
    every temperature; the others only when sampling (temperature above 0; 0 is greedy)."""

    temperature: float = 0.8
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.1
    penalty_last_n: int = 64

    def pick(self, logits: Any, recent: list[int], generator: Any) -> int:
        import torch

        logits = logits.clone()
        if self.repeat_penalty != 1.0 and recent:
            ids = torch.tensor(sorted(set(recent[-self.penalty_last_n :])))
            seen = logits[ids]
            logits[ids] = torch.where(seen > 0, seen / self.repeat_penalty, seen * self.repeat_penalty)
        if self.temperature <= 0:
            return int(torch.argmax(logits))
        if self.top_k > 0:
            cut = torch.topk(logits, min(self.top_k, logits.shape[0])).values[-1]
            logits[logits < cut] = float("-inf")
        probs = torch.softmax(logits.float() / self.temperature, dim=-1)
        sorted_p, order = torch.sort(probs, descending=True)
        drop = (torch.cumsum(sorted_p, 0) - sorted_p) > self.top_p  # keep the smallest head reaching top_p
        drop |= sorted_p < self.min_p * sorted_p[0]
        drop[0] = False
        sorted_p[drop] = 0.0
        return int(order[torch.multinomial(sorted_p / sorted_p.sum(), 1, generator=generator)])


# How the reply's JSON is laid out, by what the reply must hold (``json_layout``):
# - free text (a required string the schema does not enumerate: a question, a gap, a contribution, a verdict's
#   reasoning): llama.cpp's grammar whitespace (one space, or a newline and at most 20 spaces or tabs, between any two
#   tokens). Forced compact JSON was an unfamiliar form for the 135M model: the offline sample kept 1 RQ on it, 2 on
#   json.dumps' fixed layout, 5 with this rule;
# - only numbers, booleans and enumerated strings (a judge's scores, labels, verdicts; an optional note aside):
#   json.dumps' layout (", " between items, ": " after a key, nothing else), so every structural token is forced and
#   fast-forward runs it at once: 3 score replies took 24 decode steps against 130 under the whitespace rule.
# Unbounded whitespace is never allowed: a weak model fills its budget with it.
PROSE_LAYOUT: dict[str, Any] = {"whitespace_flexible": True, "whitespace_pattern": r"(?: |\n[ \t]{0,20})?"}
FIXED_LAYOUT: dict[str, Any] = {"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": "}


def requires_free_text(schema: Any, defs: dict[str, Any] | None = None) -> bool:
    """Whether a reply to ``schema`` must hold a string the schema does not enumerate (``enum``/``const``): a
    required property's, an array item's or an alternative's, through ``$ref``."""
    if defs is None:
        defs = schema.get("$defs", {}) if isinstance(schema, dict) else {}
    if not isinstance(schema, dict):
        return False
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return requires_free_text(defs.get(ref.removeprefix("#/$defs/"), {}), defs)
    if "enum" in schema or "const" in schema:
        return False
    kind = schema.get("type")
    if kind == "string" or (isinstance(kind, list) and "string" in kind):
        return True
    for key in ("anyOf", "oneOf", "allOf"):
        if any(requires_free_text(alt, defs) for alt in schema.get(key) or []):
            return True
    if "items" in schema and requires_free_text(schema["items"], defs):
        return True
    props = schema.get("properties") or {}
    return any(requires_free_text(props[name], defs) for name in schema.get("required") or [] if name in props)


def json_layout(schema: dict[str, Any]) -> dict[str, Any]:
    """The layout for a reply to ``schema``: the whitespace rule for free text, json.dumps' otherwise."""
    return PROSE_LAYOUT if requires_free_text(schema) else FIXED_LAYOUT


class ContextExceeded(ValueError):
    """The prompt and its reply budget do not fit the context window (llama.cpp answers 400 too)."""


class TorchChatModel:
    """A causal LM and its tokenizer, with one generation at a time."""

    def __init__(self, gguf: Path, *, n_ctx: int, threads: int, cache_dir: Path | None = None):
        import torch
        from transformers import AutoTokenizer

        pinned_kernels(torch)
        torch.set_num_threads(threads)
        self.torch = torch
        self.n_ctx = n_ctx
        converted = converted_dir(gguf, cache_dir)
        if not (converted / "model.safetensors").exists():
            convert(gguf, converted)
        self.tokenizer = AutoTokenizer.from_pretrained(converted)
        try:
            self.engine: Any = LlamaDecoder(converted, n_ctx=n_ctx)
        except ValueError as exc:  # not a llama-architecture model
            log.info("transformers' forward for %s (%s)", gguf.name, exc)
            self.engine = TransformersForward(converted)
        self.eos = {t for t in [self.tokenizer.eos_token_id] if t is not None}
        # the tokens whose keys and values the engine holds, in order; emptied while a request runs, so that a
        # request that fails midway leaves no claim on a half-written cache
        self.cached: list[int] = []
        self.lock = threading.Lock()
        self._ll_tokenizer = None

    def _matcher(self, schema: dict[str, Any] | None):
        if schema is None:
            return None
        import llguidance
        import llguidance.hf

        if self._ll_tokenizer is None:
            self._ll_tokenizer = llguidance.hf.from_tokenizer(self.tokenizer)
        grammar = llguidance.LLMatcher.grammar_from_json_schema(closed_objects(schema), overrides=json_layout(schema))
        matcher = llguidance.LLMatcher(self._ll_tokenizer, grammar)
        if matcher.is_error():
            raise ValueError(f"response_format schema not usable: {matcher.get_error()}")
        return matcher

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        ids = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        if isinstance(ids, dict) or hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
        return list(ids)

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int,
        temperature: float,
        seed: int,
        schema: dict[str, Any] | None,
        sampler: Sampler | None = None,
        fast_forward: bool = True,
    ) -> tuple[str, str, int, int]:
        """(text, finish_reason, prompt tokens, completion tokens).

        ``fast_forward``: tokens the schema forces (llguidance's fast-forward tokens: a key after its opening quote,
        its colon) are taken without sampling and run in one step; off, each is sampled under the mask and run alone
        (the baseline ``benchmarks/local_runtime.py`` compares with)."""
        torch = self.torch
        prompt = self.prompt_tokens(messages)
        if len(prompt) + max_tokens > self.n_ctx:
            raise ContextExceeded(
                f"Requested tokens ({len(prompt) + max_tokens}) exceed context window of {self.n_ctx}"
            )
        matcher = self._matcher(schema)
        bitmask = None
        if matcher is not None:
            import llguidance.torch

            bitmask = llguidance.torch.allocate_token_bitmask(1, self._ll_tokenizer.vocab_size)
        gen = torch.Generator().manual_seed(seed)
        sampler = replace(sampler or Sampler(), temperature=temperature)
        with self.lock, torch.no_grad():
            reuse = reusable_prefix(self.cached, prompt)
            self.cached = []
            t0 = time.perf_counter()
            logits = self.engine.forward(prompt[reuse:], reuse)
            # one line per request, read by benchmarks/prefix_cache.py: what the prefix cache saved
            log.info(
                "prompt tokens evaluated: %d of %d in %.0f ms",
                len(prompt) - reuse,
                len(prompt),
                (time.perf_counter() - t0) * 1000,
            )
            reply: list[int] = []
            finish = "length"
            held = len(prompt)  # the positions whose keys and values the engine holds
            while len(reply) < max_tokens:
                forced = matcher.compute_ff_tokens() if matcher is not None and fast_forward else []
                forced = forced[: max_tokens - len(reply)]
                if forced:
                    # what the schema leaves no choice about (a key, its quotes and colon) is taken as it is and run
                    # as one step, like a prompt, instead of a step per token
                    if not matcher.consume_tokens(forced):
                        raise RuntimeError(f"constrained decoding failed: {matcher.get_error()}")
                    reply.extend(forced)
                    if matcher.is_stopped():
                        finish = "stop"
                        break
                    logits = self.engine.forward(forced, held)
                    held += len(forced)
                    continue
                if matcher is not None:
                    llguidance.torch.fill_next_token_bitmask(matcher, bitmask, 0)
                    logits = logits.unsqueeze(0)
                    llguidance.torch.apply_token_bitmask_inplace(logits, bitmask)
                    logits = logits[0]
                token = sampler.pick(logits, prompt[-sampler.penalty_last_n :] + reply, gen)
                if token in self.eos:
                    finish = "stop"
                    break
                if matcher is not None:
                    if not matcher.consume_token(token):
                        raise RuntimeError(f"constrained decoding failed: {matcher.get_error()}")
                reply.append(token)
                if matcher is not None and matcher.is_stopped():
                    finish = "stop"
                    break
                logits = self.engine.forward([token], held)
                held += 1
            # the cache holds the prompt and the reply as far as it was run; the next prompt reuses what it shares
            self.cached = (list(prompt) + reply)[:held]
        text = self.tokenizer.decode(reply, skip_special_tokens=True)
        return text, finish, len(prompt), len(reply)


def pinned_kernels(torch: Any) -> None:
    """Refuse to run the model on torch's AVX-512 kernels: the runtime is pinned to AVX2 (``TORCH_RUNTIME_ENV``) so
    that a reply is the same on every machine, and on an AMD EPYC with AVX-512 the decoder's one-token steps ended
    in "double free or corruption" under torch 2.13's AVX-512 path. The server gets the pin from its environment;
    a process that builds the model itself must set it before its first torch operation."""
    from rqbench.llm.local_model import TORCH_RUNTIME_ENV

    running = torch.backends.cpu.get_cpu_capability()
    if running.upper().startswith("AVX512"):
        pins = " ".join(f"{k}={v}" for k, v in TORCH_RUNTIME_ENV.items())
        raise RuntimeError(
            f"torch runs its {running} kernels here; the embedded model runs on AVX2 kernels on every machine. "
            f"Set {pins} in the environment before torch's first operation (rqbench local-model does)."
        )


def closed_objects(schema: Any) -> Any:
    """``schema`` with every object that lists its properties closed to others (``additionalProperties: false``
    where it says nothing), and compact JSON. llama.cpp's grammar compiler closes them by default and the layer's
    schemas were written for it; an open object let the embedded model append invented keys until the reply budget
    ran out."""
    if isinstance(schema, list):
        return [closed_objects(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: closed_objects(v) for k, v in schema.items()}
    if isinstance(out.get("properties"), dict) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def _schema_of(fmt: Any) -> dict[str, Any] | None:
    if not isinstance(fmt, dict):
        return None
    if fmt.get("type") == "json_object":
        return fmt.get("schema") or {"type": "object"}
    if fmt.get("type") == "json_schema":
        return (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
    return None


def build_app(model: TorchChatModel, alias: str, default_seed: int):
    """The server's routes (starlette, as gradio and uvicorn already bring it)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def models(_: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": alias, "object": "model", "owned_by": "rqbench"}]})

    async def chat(request: Request) -> JSONResponse:
        try:
            body = await request.json()
            messages = [{"role": m["role"], "content": m.get("content") or ""} for m in body["messages"]]
            max_tokens = int(body.get("max_tokens") or 512)
            temperature = float(body.get("temperature") if body.get("temperature") is not None else 0.8)
            seed = int(body["seed"]) if body.get("seed") is not None else default_seed
            schema = _schema_of(body.get("response_format"))
            sampler = Sampler(
                **{
                    k: type(getattr(Sampler, k))(body[k])
                    for k in ("top_k", "top_p", "min_p", "repeat_penalty")
                    if body.get(k) is not None
                }
            )
        except (ValueError, KeyError, TypeError) as exc:
            return JSONResponse({"error": {"message": f"bad request: {exc}", "type": "invalid_request_error"}}, 400)
        try:
            text, finish, n_prompt, n_reply = await asyncio.to_thread(
                model.complete,
                messages,
                max_tokens=max_tokens,
                temperature=temperature,
                seed=seed,
                schema=schema,
                sampler=sampler,
            )
        except ValueError as exc:  # ContextExceeded, or a schema llguidance refuses
            return JSONResponse({"error": {"message": str(exc), "type": "invalid_request_error"}}, 400)
        return JSONResponse(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": alias,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_reply, "total_tokens": n_prompt + n_reply},
            }
        )

    return Starlette(
        routes=[
            Route("/v1/models", models),
            Route("/models", models),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/chat/completions", chat, methods=["POST"]),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m rqbench.llm.torch_server", description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, type=Path, help="the GGUF file")
    p.add_argument("--model_alias", required=True)
    p.add_argument("--n_ctx", type=int, default=8192)
    p.add_argument("--n_threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--cache_dir", type=Path, default=None, help="where the converted weights are kept")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    model = TorchChatModel(args.model, n_ctx=args.n_ctx, threads=args.n_threads, cache_dir=args.cache_dir)
    import uvicorn

    uvicorn.run(build_app(model, args.model_alias, args.seed), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
