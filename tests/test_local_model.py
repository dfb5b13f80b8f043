"""The embedded model end to end on its default runtime: the server, litellm, the layer, a real judge prompt."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from rqbench.llm import CallStore
from rqbench.llm.local_model import LocalModelServer, runtime_installed
from rqbench.llm.selfcheck import judge_once
from rqbench.records import StandaloneNoveltyReply

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(not runtime_installed(), reason="the embedded model's runtime or its GGUF is not installed"),
]


def test_local_model_answers_a_judge_prompt_with_valid_json(tmp_path):
    with LocalModelServer() as srv:
        assert srv.api_base.startswith("http://127.0.0.1:")
        store = CallStore(tmp_path / "calls.db")
        reply, _ = asyncio.run(judge_once(srv.model_config(), store))
        assert isinstance(reply, StandaloneNoveltyReply) and len(reply.scores) == 1
        # the rerun is served from the cache: the log shows one request and one hit
        asyncio.run(judge_once(srv.model_config(), store))
        row = store.summary()[0]
        assert row["model"] == "local/smollm2-135m" and row["requests"] >= 1 and row["cache_hits"] >= 1
        proc = srv.proc
    assert proc.poll() is not None, "the server must stop when the context exits"
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{srv.api_base}/models", timeout=1.0)
