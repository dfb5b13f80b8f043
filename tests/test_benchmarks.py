"""Every benchmark script runs at its smoke size, so none can break unseen.

The figures come from full runs (docs/benchmarks.md); here each script only has
to finish and print its lines. Scripts that start the embedded model carry the
``local_model`` marker. Those whose smoke run only needs some OpenAI-compatible
server get the scripted one through ``RQB_LOCAL_API_BASE``: on two cores the
embedded model spends minutes reading their prompts, and the script's path is the
same (the embedded runtime's start and replies are tested in tests/test_local_model.py and by
the scripts kept on it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_replies import REPLIES, reply

from rqbench.testing.scripted_server import ScriptedRequest, ScriptedServer

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
# the scripts that start the embedded model
WITH_LOCAL_MODEL = {"local_model_choice", "local_runtime", "prefix_cache"}
# Scripts that start a runtime of their own (the embedded model, a Ray cluster): the longest smoke runs, kept in
# tests/test_benchmarks_runtimes.py so that two workers (pytest -n 2, files kept whole) run them beside the rest.
RUNTIME_SCRIPTS = WITH_LOCAL_MODEL | {"ray_parse"}
# the scripts whose smoke run is pointed at the scripted server instead (RQB_LOCAL_API_BASE)
ON_SCRIPTED_SERVER = {"judging", "judge_manipulation", "llm_layer"}


def _params(runtime: bool = False):
    for script in SCRIPTS:
        if (script.stem in RUNTIME_SCRIPTS) != runtime:
            continue
        marks = [pytest.mark.local_model] if script.stem in WITH_LOCAL_MODEL else []
        yield pytest.param(script, id=script.stem, marks=marks)


def test_every_benchmark_is_covered():
    assert len(SCRIPTS) >= 12
    for script in SCRIPTS:
        assert "--smoke" in script.read_text(encoding="utf-8"), f"{script.name} has no --smoke size"


# one standalone-novelty score: what the scripts' own warm-up steps and direct-HTTP baselines parse
ONE_SCORE = '{"scores": [{"relevance": 1, "originality": 1, "gap_addressing": 1, "non_obviousness": 1}]}'


def bench_reply(req: ScriptedRequest) -> str:
    """The tests' scripted reply for every project step; one score for a script's own step or an untagged request."""
    return reply(req) if req.step_tag and req.step in REPLIES else ONE_SCORE


@pytest.fixture(scope="module")
def judge_server():
    """One scripted server for the scripts in ON_SCRIPTED_SERVER."""
    with ScriptedServer(bench_reply) as srv:
        yield srv


@pytest.mark.parametrize("script", list(_params()))
def test_benchmark_runs_at_its_smoke_size(script, tmp_path, request):
    run_smoke(script, tmp_path, request)


def run_smoke(script: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Run ``script --smoke`` in its own RQB_HOME; it must exit 0 and print; a scripted-server script must call it."""
    env = {**os.environ, "RQB_HOME": str(tmp_path / "home")}
    if script.stem in ON_SCRIPTED_SERVER:
        srv = request.getfixturevalue("judge_server")
        sent = len(srv.requests)
        env["RQB_LOCAL_API_BASE"] = srv.api_base
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=480
    )
    assert proc.returncode == 0, f"{script.name} --smoke failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{script.name} --smoke printed nothing"
    if script.stem in ON_SCRIPTED_SERVER:
        assert len(srv.requests) > sent, f"{script.name} --smoke sent nothing to RQB_LOCAL_API_BASE"


def _load_script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_space_load_records_an_upload_refused_by_closing_the_connection():
    """A Space refusing an upload over its cap may answer and close while the body is still being sent; httpx then
    raises ReadError. The hostile phase died on that with a traceback: it must record the refusal and go on."""
    import asyncio

    import httpx

    space_load = _load_script("space_load")

    async def run() -> tuple[str, str]:
        async def close_after_headers(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            writer.close()  # no status line: the body is refused by closing

        async def answer_413(reader, writer):  # reads the body, then answers
            head = (await reader.readuntil(b"\r\n\r\n")).decode().lower()
            await reader.readexactly(int(head.split("content-length:")[1].split("\r\n")[0]))
            writer.write(b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            await writer.drain()
            writer.close()

        outcomes = []
        for handler in (close_after_headers, answer_413):
            server = await asyncio.start_server(handler, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
            async with server, httpx.AsyncClient() as client:
                outcomes.append(
                    await space_load.upload_outcome(client, f"http://127.0.0.1:{port}/upload", 4 * 1024 * 1024, 10)
                )
        return outcomes[0], outcomes[1]

    closed, status = asyncio.run(run())
    assert closed.startswith("refused (connection closed: ") and status == "HTTP 413"


def _free_text(node, path="$") -> list[str]:
    """Where a JSON schema lets a model write without bound: a string, key or number not fixed by an enum or const,
    an array with no maxItems, an object open to extra keys."""
    if not isinstance(node, dict):
        return []
    defs = node.get("$defs", {})

    def walk(n, at):
        if "$ref" in n:
            return walk(defs[n["$ref"].rsplit("/", 1)[1]], at)
        if "enum" in n or "const" in n:
            return []
        kind = n.get("type")
        if kind == "object":
            extra = n.get("additionalProperties", False)
            found = [f"{at}: open keys"] if "properties" not in n or extra not in (False, None) else []
            return found + [x for k, v in n.get("properties", {}).items() for x in walk(v, f"{at}.{k}")]
        if kind == "array":
            found = [] if "maxItems" in n else [f"{at}: no maxItems"]
            return found + walk(n.get("items", {}), f"{at}[]")
        return [f"{at}: free {kind}"]

    return walk(node, path)


def test_the_llm_layer_benchmark_asks_for_a_reply_its_grammar_bounds():
    """The transport benchmark must not depend on a 135M model writing valid JSON: on a fresh clone the embedded model
    rambled inside the old shape's free keys until max_tokens cut the reply (JSONDecodeError in the warm-up). Every
    token but the scores' digits is fixed by the schema, so the server's grammar ends the reply in about 40 tokens."""
    from rqbench.records import reply_json_schema

    llm_layer = _load_script("llm_layer")
    assert _free_text(reply_json_schema(llm_layer.ScoresShape)) == []
    assert llm_layer.ScoresShape.model_validate_json(ONE_SCORE)  # what the scripted server answers still parses
    # the check itself finds the old shape's free keys and unbounded list
    assert _free_text(
        {
            "type": "object",
            "properties": {
                "scores": {"type": "array", "items": {"type": "object", "additionalProperties": {"type": "integer"}}}
            },
        }
    ) == [
        "$.scores: no maxItems",
        "$.scores[]: open keys",
    ]
