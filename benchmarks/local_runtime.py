"""How fast the embedded model's runtime reads and writes, against what this machine's cores can do.

Three figures on the same GGUF (SmolLM2-135M), each process alone on its cores:

1. The cores' fp32 matrix-multiply rate (GFLOP/s), with torch on ``LOCAL_THREADS`` threads: the physical ceiling
   a CPU runtime can approach, since a forward pass is almost all matrix multiplies.
2. The torch runtime (``rqbench.llm.torch_server``, the default): prompt tokens per second for one long prompt
   (prefill) and reply tokens per second (decode), and each as a share of the ceiling, counting 2 FLOPs per
   parameter per token (attention over the context adds a little; it is left out, so the share is a lower bound).
3. llama.cpp's server (``RQB_LOCAL_RUNTIME=llama.cpp``, if installed): the same prompt through its
   OpenAI-compatible route, timed from its own log lines; the ratio line compares the two runtimes in this process.

    .venv/bin/python benchmarks/local_runtime.py [--prompt-tokens 2000] [--reply-tokens 64]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import time

import httpx

from rqbench.llm.catalog import LOCAL_MODELS
from rqbench.llm.local_model import LOCAL_THREADS, TORCH_RUNTIME_ENV, LocalModelServer, model_path

# the kernels the runtime's server pins for itself, here too: the in-process decoder and the ceiling it is held
# against run the same arithmetic as the product (set before this process's first torch operation)
os.environ.update(TORCH_RUNTIME_ENV)


def matmul_gflops(n: int, repeats: int) -> float:
    import torch

    torch.set_num_threads(LOCAL_THREADS)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n**3 * repeats / (time.perf_counter() - t0) / 1e9


def engine_rates(engine, prompt_tokens: int, reply_tokens: int) -> tuple[float, float]:
    """(prefill tokens/s, decode tokens/s) of a forward engine: one long prompt, then one token at a time."""
    import random

    rng = random.Random(0)
    ids = [rng.randrange(100, 10_000) for _ in range(prompt_tokens)]
    engine.forward(ids[:16], 0)  # warm-up
    t0 = time.perf_counter()
    engine.forward(ids, 0)
    prefill = prompt_tokens / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(reply_tokens):
        engine.forward([200 + i], prompt_tokens + i)
    return prefill, reply_tokens / (time.perf_counter() - t0)


# a judge's reply shape: one score per dimension, every key forced by the schema
SCORE_SCHEMA = {
    "type": "object",
    "properties": {
        "scores": {
            "type": "array",
            "minItems": 1,
            "maxItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    k: {"type": "integer", "minimum": 0, "maximum": 3}
                    for k in ("relevance", "originality", "gap_addressing", "non_obviousness")
                },
                "required": ["relevance", "originality", "gap_addressing", "non_obviousness"],
            },
        }
    },
    "required": ["scores"],
}


def fast_forward_seconds(model, repeats: int) -> tuple[float, float, int]:
    """(seconds with fast-forward, without, reply tokens) for a judge-shaped reply to a short prompt, the prompt
    cached; each the best of ``repeats``."""
    ask = [
        {"role": "system", "content": "You score research questions for novelty. " * 20},
        {"role": "user", "content": "Score: does magnitude pruning help small graph networks generalise?"},
    ]
    kw = dict(max_tokens=120, temperature=0.0, seed=1, schema=SCORE_SCHEMA)
    model.complete(ask, **kw)  # the prompt into the cache
    best = {}
    for ff in (True, False):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            _, _, _, n_reply = model.complete(ask, fast_forward=ff, **kw)
            times.append(time.perf_counter() - t0)
        best[ff] = min(times)
    return best[True], best[False], n_reply


def torch_rates(prompt_tokens: int, reply_tokens: int) -> dict[str, tuple[float, float]]:
    """The torch runtime's engine (the lean decoder) and transformers' own forward on the same weights, in process."""
    from rqbench.llm.llama_decoder import LlamaDecoder
    from rqbench.llm.torch_server import TorchChatModel, TransformersForward, converted_dir

    m = TorchChatModel(model_path(LOCAL_MODELS["smollm2-135m"]), n_ctx=8192, threads=LOCAL_THREADS)
    assert isinstance(m.engine, LlamaDecoder)
    rates = {"lean decoder": engine_rates(m.engine, prompt_tokens, reply_tokens)}
    on, off, n = fast_forward_seconds(m, 1 if reply_tokens < 16 else 3)
    print(f"judge-shaped reply ({n} tokens): {on:.2f} s with fast-forward, {off:.2f} s without = {off / on:.2f}x")
    del m
    folder = converted_dir(model_path(LOCAL_MODELS["smollm2-135m"]))
    rates["transformers forward"] = engine_rates(TransformersForward(folder), prompt_tokens, reply_tokens)
    return rates


def parameter_count() -> int:
    from math import prod

    from safetensors import safe_open

    from rqbench.llm.torch_server import converted_dir

    folder = converted_dir(model_path(LOCAL_MODELS["smollm2-135m"]))
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        return sum(prod(f.get_slice(k).get_shape()) for k in f.keys())


LLAMA_TIMES = re.compile(
    r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens.*?\n.*?eval time =\s*([\d.]+) ms /\s*(\d+) runs"
)


def llama_rates(prompt_tokens: int, reply_tokens: int) -> tuple[float, float] | None:
    """(prefill, decode) tokens/s of llama.cpp's server from its own timing lines, or None if not installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    with LocalModelServer("smollm2-135m", runtime="llama.cpp") as srv:
        offset = srv._log_path.stat().st_size
        text = " ".join(f"w{i}" for i in range(prompt_tokens // 2))
        body = {
            "model": "smollm2-135m",
            "messages": [{"role": "user", "content": text}],
            "max_tokens": reply_tokens,
            "temperature": 0,
        }
        httpx.post(f"{srv.api_base}/chat/completions", json=body, timeout=600)
        log = srv._log_path.read_text(errors="replace")[offset:]
    m = LLAMA_TIMES.search(log)
    if m is None:
        return None
    return int(m.group(2)) / float(m.group(1)) * 1000, int(m.group(4)) / float(m.group(3)) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompt-tokens", type=int, default=2000)
    ap.add_argument("--reply-tokens", type=int, default=64)
    ap.add_argument("--smoke", action="store_true", help="a tiny run that only checks the script works")
    args = ap.parse_args()
    if args.smoke:
        args.prompt_tokens, args.reply_tokens = 64, 4
    ceiling = matmul_gflops(256 if args.smoke else 2048, 2 if args.smoke else 10)
    rates = torch_rates(args.prompt_tokens, args.reply_tokens)
    params = parameter_count()
    flops_per_token = 2 * params
    print(f"cores: {ceiling:.1f} GFLOP/s fp32 matmul on {LOCAL_THREADS} threads")
    print(f"model: {params / 1e6:.1f}M parameters, {flops_per_token / 1e9:.2f} GFLOP per token")
    for engine, (prefill, decode) in rates.items():
        for name, rate in (("prefill", prefill), ("decode", decode)):
            share = rate * flops_per_token / 1e9 / ceiling
            print(f"torch runtime, {engine}, {name}: {rate:8.1f} tokens/s = {share:.0%} of the cores' matmul rate")
    ours, baseline = rates["lean decoder"], rates["transformers forward"]
    for i, name in enumerate(("prefill", "decode")):
        print(f"{name}: lean decoder / transformers forward = {ours[i] / baseline[i]:.2f}x")
    llama = None if args.smoke else llama_rates(args.prompt_tokens, args.reply_tokens)
    if llama is None:
        print("llama.cpp runtime: not measured (not installed, or --smoke)")
        return
    for i, name in enumerate(("prefill", "decode")):
        print(f"llama.cpp {name}: {llama[i]:8.1f} tokens/s; lean decoder / llama.cpp = {ours[i] / llama[i]:.2f}x")


if __name__ == "__main__":
    main()
