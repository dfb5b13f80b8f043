"""Every benchmark script runs at its smoke size, so none can break unseen.

The figures come from full runs (docs/benchmarks.md); here each script only has
to finish and print its lines. Scripts that start the embedded model carry the
``local_model`` marker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
# the scripts that start the embedded llama.cpp model
WITH_LOCAL_MODEL = {"judging", "llm_layer", "local_model_choice", "prefix_cache", "judge_manipulation"}


def _params():
    for script in SCRIPTS:
        marks = [pytest.mark.local_model] if script.stem in WITH_LOCAL_MODEL else []
        yield pytest.param(script, id=script.stem, marks=marks)


def test_every_benchmark_is_covered():
    assert len(SCRIPTS) >= 12
    for script in SCRIPTS:
        assert "--smoke" in script.read_text(encoding="utf-8"), f"{script.name} has no --smoke size"


@pytest.mark.parametrize("script", _params())
def test_benchmark_runs_at_its_smoke_size(script, tmp_path):
    env = {**os.environ, "RQB_HOME": str(tmp_path / "home")}
    proc = subprocess.run(
        [sys.executable, str(script), "--smoke"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=480
    )
    assert proc.returncode == 0, f"{script.name} --smoke failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    assert proc.stdout.strip(), f"{script.name} --smoke printed nothing"
