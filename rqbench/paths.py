"""Where RQ-Bench keeps its state: one folder, ``RQB_HOME`` (default ``./data``).

Tests point ``RQB_HOME`` at a temporary folder; nothing here is created on import.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from rqbench.hashing import content_hash

SAMPLE_NAME = "rq-bench-sample"


_NOT_IN_SLUG = {"file": re.compile(r"[^A-Za-z0-9._-]+"), "id": re.compile(r"[^a-z0-9]+")}


def slug(text: str, *, alphabet: Literal["file", "id"] = "file", max_len: int | None = 60, empty: str = "x") -> str:
    """``text`` as a name safe in a file name or an id: every run of other characters one '-'.

    ``"file"`` keeps case, letters, digits and ``._-`` (results, submission and judge-board file names);
    ``"id"`` is lower-case letters and digits (a local paper's id, which must not change between builds).
    Over ``max_len`` a slug keeps a prefix and a hash of the whole text, so long names stay distinct;
    ``empty`` stands in for a text with nothing left.
    """
    s = _NOT_IN_SLUG[alphabet].sub("-", text.lower() if alphabet == "id" else text).strip("-.") or empty
    if max_len is None or len(s) <= max_len:
        return s
    return f"{s[: max_len - 11].rstrip('-.')}-{content_hash(text).removeprefix('b2:')[:10]}"


def home() -> Path:
    return Path(os.environ.get("RQB_HOME", "data")).resolve()


def calls_db() -> Path:
    """The SQLite file that holds the LLM response cache and the call log."""
    return Path(os.environ.get("RQB_CALLS_DB", home() / "calls.db"))


def models_dir() -> Path:
    return home() / "models"


def converted_models_dir() -> Path:
    """The embedded model's weights converted for its torch runtime (``RQB_CONVERTED_MODELS``, else under the home):
    derived from installed files only, so one folder can serve every home on a machine (the tests share the
    checkout's)."""
    override = os.environ.get("RQB_CONVERTED_MODELS")
    return Path(override).resolve() if override else models_dir()


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
