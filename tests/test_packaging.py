"""What the wheel ships: the product and its data files, not the test support (``rqbench/testing``, which
tests/test_product_imports.py keeps the product from importing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Left out of the copy the wheel is built from: what is not source, and an earlier build's folder, whose stale files
# setuptools would pack again.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "data", "*.egg-info", "__pycache__", "test-output"
)


def test_the_wheel_ships_the_product_and_its_data_but_not_the_test_support(tmp_path):
    source, out = tmp_path / "src", tmp_path / "wheel"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("rqbench/testing/")]
    for needed in (
        "rqbench/evaluate/judge_board/cues.toml",
        "rqbench/prompts/rqbench-v1/novelty_comparative.system.md",
        "rqbench/space/app.py",
        "rqbench/dataset_card/template.md",
    ):
        assert needed in names, needed
