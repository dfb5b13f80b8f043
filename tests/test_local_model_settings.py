"""What decides the embedded model's replies is pinned, whatever machine runs it (issue 32: a newcomer's sample
must not depend on the core count)."""

from __future__ import annotations

import os
from pathlib import Path

from rqbench.llm.local_model import LOCAL_SEED, LOCAL_THREADS, LocalModelServer


def _flag(cmd: list[str], name: str) -> str:
    return cmd[cmd.index(name) + 1]


def test_threads_and_seed_are_the_same_on_a_two_core_and_a_sixteen_core_machine(monkeypatch):
    commands = []
    for cores in (2, 16):
        monkeypatch.setattr(os, "cpu_count", lambda cores=cores: cores)
        commands.append(LocalModelServer().command(Path("/models/m.gguf"), 8080))
    assert commands[0] == commands[1]
    assert _flag(commands[0], "--n_threads") == str(LOCAL_THREADS) == "2"
    assert _flag(commands[0], "--seed") == str(LOCAL_SEED)


def test_the_torch_runtime_runs_on_one_instruction_set_path_whatever_the_cpu(monkeypatch):
    import subprocess
    import sys

    from rqbench.llm.local_model import TORCH_RUNTIME_ENV

    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx512")  # whatever the caller's environment says
    env = LocalModelServer(runtime="torch").environment()
    assert {k: env[k] for k in TORCH_RUNTIME_ENV} == {
        "MKL_CBWR": "AVX2",
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
    }
    assert LocalModelServer(runtime="llama.cpp").environment()["ATEN_CPU_CAPABILITY"] == "avx512"  # not torch's
    # torch reads the variable: told to, it takes its plainest kernels even on a CPU with AVX2
    probe = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    out = subprocess.run(
        [sys.executable, "-c", probe], env={**env, "ATEN_CPU_CAPABILITY": "default"}, capture_output=True, text=True
    )
    assert out.stdout.strip() == "DEFAULT", out.stderr[-500:]


def test_an_explicit_thread_count_is_kept():
    assert _flag(LocalModelServer(threads=4).command(Path("m.gguf"), 1), "--n_threads") == "4"


GOOD = '{"scores": [{"relevance": 1, "originality": 1, "gap_addressing": 1, "non_obviousness": 1}]}'


def _ask(tmp_path, srv, name: str, text: str, **cfg):
    import asyncio

    from rqbench.llm import LLM, CallStore
    from rqbench.records import StandaloneNoveltyReply

    llm = LLM(CallStore(tmp_path / f"{name}.db"))
    llm.register(srv.model_config(name=name, **cfg))
    messages = [{"role": "system", "content": "judge"}, {"role": "user", "content": text}]
    return asyncio.run(llm.ask(name, "novelty_standalone", messages, StandaloneNoveltyReply, prompt_hash="b2:t"))


def test_the_embedded_models_sampler_is_seeded_by_the_request_alone(tmp_path, scripted_server):
    from rqbench.llm.client import request_seed

    scripted_server.responder = lambda req: GOOD
    a = _ask(tmp_path, scripted_server, "local-a", "[0] Does X hold?", local=True)
    b = _ask(tmp_path, scripted_server, "local-b", "[0] Does Y hold?", local=True)
    seeds = [r.get("seed") for r in scripted_server.requests]
    assert seeds == [request_seed(a.key), request_seed(b.key)] and seeds[0] != seeds[1]
    # the same request in another store (another run, another machine): the same seed
    again = _ask(tmp_path, scripted_server, "local-a2", "[0] Does X hold?", local=True)
    assert scripted_server.requests[-1]["seed"] == request_seed(again.key)
    # a hosted model is sent no seed: its sampling is the provider's
    _ask(tmp_path, scripted_server, "hosted", "[0] Does X hold?")
    assert "seed" not in scripted_server.requests[-1]


def test_an_offline_or_dry_run_config_keys_calls_as_the_started_server_does(tmp_path, monkeypatch):
    """A dry run's estimate and an offline re-score (a reproduction bundle) must find the calls a started embedded
    model made: its configuration without a server has the started one's cache identity, under either runtime."""
    import pytest

    from rqbench.llm import LLM, CallStore

    for runtime in ("torch", "llama.cpp"):
        monkeypatch.setenv("RQB_LOCAL_RUNTIME", runtime)
        started = LocalModelServer().model_config(name="local/smollm2-135m@temperature=0.8", temperature=0.8)
        for mode in ({"offline": True}, {"dry_run": True}):
            llm = LLM(CallStore(tmp_path / f"{runtime}-{len(mode)}.db"), **mode)
            assert llm.model("local@temperature=0.8").cache_identity() == started.cache_identity(), (runtime, mode)
    monkeypatch.setenv("RQB_LOCAL_RUNTIME", "vllm")
    with pytest.raises(Exception, match="RQB_LOCAL_RUNTIME='vllm' is not a runtime"):
        LLM(CallStore(tmp_path / "x.db"), offline=True).model("local")
