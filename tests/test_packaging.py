"""What the wheel ships: the product and its data files, not the test support (``rqbench/testing``, which
tests/test_product_imports.py keeps the product from importing)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_ships_the_product_and_its_data_but_not_the_test_support(tmp_path):
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("rqbench/testing/")]
    for needed in (
        "rqbench/evaluate/judge_board_cues.toml",
        "rqbench/prompts/rqbench-v1/novelty_comparative.system.md",
        "rqbench/space/app.py",
        "rqbench/dataset_card/template.md",
    ):
        assert needed in names, needed
