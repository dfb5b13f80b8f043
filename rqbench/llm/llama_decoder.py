"""A lean forward pass for llama-architecture chat models (SmolLM2 among them) on the CPU torch, with a static cache.

Why: transformers' eager forward spends about 0.13 s of Python per generated token on a 30-layer model (masks,
cache objects, hooks), which made the compiler-free runtime write replies at a third of llama.cpp's rate. This
module runs the same arithmetic as transformers' ``LlamaForCausalLM`` with a few dozen torch calls per layer:
query, key and value in one matrix product, gate and up in another, attention by ``scaled_dot_product_attention``
with grouped heads, and keys and values written into tensors allocated once for the whole context.

One generated token at a time is bound by reading the weights (0.54 GB in float32 for SmolLM2-135M), so decoding
reads a float16 copy of the matrices (products still summed by torch's CPU kernels, activations cast for each
product): 20.3 against 13.8 tokens/s here, and greedy replies identical to float32 over the tests' prompts. Prompts
(many positions at once) are bound by arithmetic, where float16 is four times slower on a CPU without float16
instructions, so they keep the float32 matrices.

The weights are read from the transformers folder the torch runtime converts from the GGUF file, so what it computes
is checked against transformers' own logits (``tests/test_llama_decoder.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LlamaShape:
    """The few numbers of a llama config the forward pass needs."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    rope_theta: float
    eps: float
    tied: bool

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> "LlamaShape":
        if config.get("model_type") != "llama":
            raise ValueError(f"not a llama-architecture model: model_type={config.get('model_type')!r}")
        rope = config.get("rope_parameters") or config.get("rope_scaling") or {}
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"rope type {rope.get('rope_type')!r} is not supported by the lean decoder")
        heads = int(config["num_attention_heads"])
        return cls(
            layers=int(config["num_hidden_layers"]),
            hidden=int(config["hidden_size"]),
            heads=heads,
            kv_heads=int(config.get("num_key_value_heads") or heads),
            head_dim=int(config.get("head_dim") or config["hidden_size"] // heads),
            vocab=int(config["vocab_size"]),
            rope_theta=float(rope.get("rope_theta") or config.get("rope_theta") or 10000.0),
            eps=float(config["rms_norm_eps"]),
            tied=bool(config.get("tie_word_embeddings", False)),
        )


class LlamaDecoder:
    """Weights fused for few calls per layer, and the key/value cache of one sequence (``n_ctx`` positions)."""

    def __init__(self, folder: Path, *, n_ctx: int):
        import torch
        from safetensors.torch import load_file

        self.torch = torch
        self.shape = s = LlamaShape.from_config(json.loads((folder / "config.json").read_text()))
        w = load_file(str(folder / "model.safetensors"))
        self.n_ctx = n_ctx
        # a tied model's one matrix may be saved under either name
        self.embed = w.get("model.embed_tokens.weight", w.get("lm_head.weight"))
        self.lm_head = self.embed if s.tied else w["lm_head.weight"]
        self.norm = w["model.norm.weight"]
        self.blocks: list[tuple[Any, ...]] = []
        for i in range(s.layers):
            p = f"model.layers.{i}."
            self.blocks.append(
                (
                    w[p + "input_layernorm.weight"],
                    torch.cat([w[p + f"self_attn.{n}_proj.weight"] for n in ("q", "k", "v")]).contiguous(),
                    w[p + "self_attn.o_proj.weight"],
                    w[p + "post_attention_layernorm.weight"],
                    torch.cat([w[p + "mlp.gate_proj.weight"], w[p + "mlp.up_proj.weight"]]).contiguous(),
                    w[p + "mlp.down_proj.weight"],
                )
            )
        # the matrices again, in float16, for one-position steps (norm weights stay float32: they are not products)
        self.half_blocks = [tuple(t if t.dim() == 1 else t.half() for t in block) for block in self.blocks]
        self.half_lm_head = self.lm_head.half()
        inv = 1.0 / (s.rope_theta ** (torch.arange(0, s.head_dim, 2, dtype=torch.float32) / s.head_dim))
        angles = torch.outer(torch.arange(n_ctx, dtype=torch.float32), inv)
        angles = torch.cat([angles, angles], dim=-1)
        self.cos, self.sin = angles.cos(), angles.sin()
        self.keys = torch.zeros(s.layers, 1, s.kv_heads, n_ctx, s.head_dim)
        self.values = torch.zeros_like(self.keys)

    def _rope(self, x: Any, cos: Any, sin: Any) -> Any:
        half = x.shape[-1] // 2
        rotated = self.torch.cat([-x[..., half:], x[..., :half]], dim=-1)
        return x * cos + rotated * sin

    def forward(self, tokens: list[int], start: int) -> Any:
        """Run ``tokens`` at positions ``start..``, keeping their keys and values; the last position's logits.

        Positions from ``start`` on are overwritten, so a prompt that shares its first ``start`` tokens with the
        cached sequence reuses them (the prefix cache)."""
        torch = self.torch
        F = torch.nn.functional
        s = self.shape
        n = len(tokens)
        end = start + n
        if end > self.n_ctx:
            raise ValueError(f"{end} positions exceed the context of {self.n_ctx}")
        q_size, kv_size = s.heads * s.head_dim, s.kv_heads * s.head_dim
        cos, sin = self.cos[start:end], self.sin[start:end]
        mask = None
        if n > 1:  # each new position sees the cached prefix and the new positions up to itself
            mask = torch.ones(n, end, dtype=torch.bool).tril(diagonal=start)
        step = n == 1
        blocks, lm_head = (self.half_blocks, self.half_lm_head) if step else (self.blocks, self.lm_head)

        def linear(x: Any, w: Any) -> Any:
            return F.linear(x.to(w.dtype), w).float() if step else F.linear(x, w)

        with torch.inference_mode():
            h = self.embed[torch.tensor(tokens)].unsqueeze(0)  # (1, n, hidden)
            for i, (ln1, wqkv, wo, ln2, wgu, wdown) in enumerate(blocks):
                x = F.rms_norm(h, (s.hidden,), ln1, s.eps)
                q, k, v = linear(x, wqkv).split([q_size, kv_size, kv_size], dim=-1)
                q = self._rope(q.view(1, n, s.heads, s.head_dim).transpose(1, 2), cos, sin)
                k = self._rope(k.view(1, n, s.kv_heads, s.head_dim).transpose(1, 2), cos, sin)
                self.keys[i, :, :, start:end] = k
                self.values[i, :, :, start:end] = v.view(1, n, s.kv_heads, s.head_dim).transpose(1, 2)
                att = F.scaled_dot_product_attention(
                    q, self.keys[i, :, :, :end], self.values[i, :, :, :end], attn_mask=mask, enable_gqa=True
                )
                h = h + linear(att.transpose(1, 2).reshape(1, n, q_size), wo)
                x = F.rms_norm(h, (s.hidden,), ln2, s.eps)
                gate, up = linear(x, wgu).chunk(2, dim=-1)
                h = h + linear(F.silu(gate) * up, wdown)
            last = F.rms_norm(h[:, -1], (s.hidden,), self.norm, s.eps)
            return linear(last, lm_head)[0]
