"""``RQB_LOCAL_API_BASE``: every process, the benchmark scripts included, uses the server already running there."""

from __future__ import annotations

import httpx

from rqbench.llm import local_model
from rqbench.llm.local_model import local_config, script_server


def test_a_server_at_rqb_local_api_base_is_used_as_is_never_started_or_stopped(monkeypatch, scripted_server):
    monkeypatch.setenv("RQB_LOCAL_API_BASE", scripted_server.api_base)
    shared_before = dict(local_model._shared)
    with script_server() as srv:
        assert srv.proc is None and srv.api_base == scripted_server.api_base
        cfg = srv.model_config(max_tokens=16)
    assert cfg.api_base == scripted_server.api_base and cfg.local and cfg.max_tokens == 16
    assert httpx.get(f"{scripted_server.api_base}/models", timeout=5).status_code == 200  # still up after the block
    judged = local_config("local@temperature=0.7")
    assert judged.api_base == scripted_server.api_base and judged.name == "local/smollm2-135m@temperature=0.7"
    assert local_model._shared == shared_before  # no embedded server was started for either


def test_without_it_a_script_gets_a_server_of_its_own(monkeypatch):
    monkeypatch.delenv("RQB_LOCAL_API_BASE", raising=False)
    srv = script_server()
    assert srv.external_api_base is None and srv.proc is None  # started by ``with``, stopped when the block ends
    assert srv.spec.id == local_model.DEFAULT_LOCAL_MODEL
