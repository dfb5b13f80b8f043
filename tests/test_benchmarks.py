"""Every benchmark script runs at its smoke size, so none can break unseen.

The figures come from full runs (docs/benchmarks.md); here each script only has
to finish and print its lines. Scripts that start the embedded model carry the
``local_model`` marker. Those whose smoke run only needs some OpenAI-compatible
server get the scripted one through ``RQB_LOCAL_API_BASE``: on two cores the
embedded model spends minutes reading their prompts, and the script's path is the
same (llama.cpp's start and replies are tested in tests/test_local_model.py and by
the scripts kept on it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from scripted_replies import reply

from rqbench.testing.scripted_server import ScriptedServer

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
# the scripts that start the embedded llama.cpp model
WITH_LOCAL_MODEL = {"llm_layer", "local_model_choice", "prefix_cache"}
# the scripts whose smoke run is pointed at the scripted server instead (RQB_LOCAL_API_BASE)
ON_SCRIPTED_SERVER = {"judging", "judge_manipulation"}


def _params():
    for script in SCRIPTS:
        marks = [pytest.mark.local_model] if script.stem in WITH_LOCAL_MODEL else []
        yield pytest.param(script, id=script.stem, marks=marks)


def test_every_benchmark_is_covered():
    assert len(SCRIPTS) >= 12
    for script in SCRIPTS:
        assert "--smoke" in script.read_text(encoding="utf-8"), f"{script.name} has no --smoke size"


@pytest.fixture(scope="module")
def judge_server():
    """One scripted server for the module: a valid reply for every tagged LLM step, ``{}`` to a bare request
    (the scripts' direct-HTTP baselines only time the round trip)."""
    with ScriptedServer(lambda req: reply(req) if req.step_tag else "{}") as srv:
        yield srv


@pytest.mark.parametrize("script", _params())
def test_benchmark_runs_at_its_smoke_size(script, tmp_path, request):
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
