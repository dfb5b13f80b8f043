"""Where RQ-Bench keeps its state: one folder, ``RQB_HOME`` (default ``./data``).

Tests point ``RQB_HOME`` at a temporary folder; nothing here is created on import.
"""

from __future__ import annotations

import os
from pathlib import Path

SAMPLE_NAME = "rq-bench-sample"


def home() -> Path:
    return Path(os.environ.get("RQB_HOME", "data")).resolve()


def calls_db() -> Path:
    """The SQLite file that holds the LLM response cache and the call log."""
    return Path(os.environ.get("RQB_CALLS_DB", home() / "calls.db"))


def models_dir() -> Path:
    return home() / "models"


def sample_build_dir() -> Path:
    return home() / "builds" / SAMPLE_NAME


def sample_dataset_dir() -> Path:
    """The locally published sample dataset (a git repository with version tags)."""
    return home() / "datasets" / SAMPLE_NAME


def results_dir() -> Path:
    return home() / "results"


def judge_board_dir() -> Path:
    """The judge board's results files and the expert pool they were run on (``rqbench judge-board``)."""
    return home() / "judge-board"


def space_store_dir() -> Path:
    return home() / "space"


def shared_dir() -> Path | None:
    """``../shared`` beside the checkout, when present (fixtures, docs)."""
    env = os.environ.get("RQB_SHARED")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve().parent.parent
    candidates += [here.parent / "shared", Path.cwd().parent / "shared"]
    for c in candidates:
        if (c / "fixtures").is_dir():
            return c
    return None
