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
import re
import time

import httpx

from rqbench.llm.catalog import LOCAL_MODELS
from rqbench.llm.local_model import LOCAL_THREADS, LocalModelServer, model_path


def matmul_gflops(n: int, repeats: int) -> float:
    import torch

    torch.set_num_threads(LOCAL_THREADS)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b  # warm-up
    t0 = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n**3 * repeats / (time.perf_counter() - t0) / 1e9


def torch_rates(prompt_tokens: int, reply_tokens: int) -> tuple[float, float, int]:
    """(prefill tokens/s, decode tokens/s, parameters) of the torch runtime's model, called in process."""
    import torch
    from transformers import DynamicCache

    from rqbench.llm.torch_server import TorchChatModel

    m = TorchChatModel(model_path(LOCAL_MODELS["smollm2-135m"]), n_ctx=8192, threads=LOCAL_THREADS)
    params = sum(p.numel() for p in m.model.parameters())
    ids = torch.randint(100, 10_000, (1, prompt_tokens))
    with torch.no_grad():
        m.model(input_ids=ids[:, :16], past_key_values=DynamicCache(), use_cache=True)  # warm-up
        kv = DynamicCache()
        t0 = time.perf_counter()
        out = m.model(input_ids=ids, past_key_values=kv, use_cache=True)
        prefill = prompt_tokens / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        for i in range(reply_tokens):
            out = m.model(input_ids=torch.tensor([[200 + i]]), past_key_values=out.past_key_values, use_cache=True)
        decode = reply_tokens / (time.perf_counter() - t0)
    return prefill, decode, params


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
    prefill, decode, params = torch_rates(args.prompt_tokens, args.reply_tokens)
    flops_per_token = 2 * params
    print(f"cores: {ceiling:.1f} GFLOP/s fp32 matmul on {LOCAL_THREADS} threads")
    print(f"model: {params / 1e6:.1f}M parameters, {flops_per_token / 1e9:.2f} GFLOP per token")
    for name, rate in (("prefill", prefill), ("decode", decode)):
        share = rate * flops_per_token / 1e9 / ceiling
        print(f"torch runtime {name}: {rate:8.1f} tokens/s = {share:.0%} of the cores' matmul rate")
    llama = None if args.smoke else llama_rates(args.prompt_tokens, args.reply_tokens)
    if llama is None:
        print("llama.cpp runtime: not measured (not installed, or --smoke); ratio lines need it")
        return
    for name, ours, theirs in (("prefill", prefill, llama[0]), ("decode", decode, llama[1])):
        print(f"llama.cpp {name}: {theirs:8.1f} tokens/s; torch / llama.cpp = {ours / theirs:.2f}x")


if __name__ == "__main__":
    main()
