"""Shared test set-up: every test gets its own RQB_HOME, and fixtures come from ../shared by path."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

from rqbench.llm.local_model import TORCH_RUNTIME_ENV  # noqa: E402 (imports no torch)
from rqbench.paths import shared_dir  # noqa: E402

# torch's kernels pinned as the embedded model's server pins them, so that a test building the model in-process runs
# the very arithmetic the product runs, on any CPU; set before any test runs a torch operation
for _var, _value in TORCH_RUNTIME_ENV.items():
    os.environ.setdefault(_var, _value)

TEST_OUTPUT = Path(__file__).resolve().parent.parent / "test-output"
# the embedded model's converted weights (derived from installed packages only): converted once, by the first test
# that starts the model, for every test and worker, as for the README's own runs in ./data
os.environ.setdefault("RQB_CONVERTED_MODELS", str(Path(__file__).resolve().parent.parent / "data" / "models"))


@pytest.fixture(autouse=True)
def rqb_home(tmp_path, monkeypatch) -> Path:
    """A fresh state folder per test, so no test sees another's cache or call log."""
    home = tmp_path / "rqb-home"
    monkeypatch.setenv("RQB_HOME", str(home))
    monkeypatch.delenv("RQB_CALLS_DB", raising=False)
    for var in ("GEMINI_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def shared() -> Path:
    """``../shared`` (fixtures, docs); tests that need it skip where it is absent."""
    d = shared_dir()
    if d is None:
        pytest.skip("../shared is not beside this checkout")
    return d


@pytest.fixture(scope="session")
def fixtures_dir(shared) -> Path:
    return shared / "fixtures"


@pytest.fixture
def scripted_server():
    """A loopback OpenAI-compatible server whose replies a test scripts (see rqbench.testing.scripted_server)."""
    from rqbench.testing.scripted_server import ScriptedServer

    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def test_output_dir(request) -> Path:
    """A folder under test-output/ for artefacts a person may look at (screenshots, reports)."""
    d = TEST_OUTPUT / request.node.name.replace("/", "_")
    d.mkdir(parents=True, exist_ok=True)
    return d


def schema_reply(step_json: dict) -> str:
    return json.dumps(step_json)
