"""A small local Ray instance for the tests of ``--executor ray`` (no dashboard, one CPU).

Ray's old ``local_mode`` is gone in current releases, so this starts a real single-node
instance, as a laptop would. Its workers import the test modules' stage functions, so the
tests folder is put on their PYTHONPATH. Started once per test module that asks for it, stopped
at that module's end: a Ray driver left running (its gRPC threads) can deadlock a child that a
later module forks from the test process (tests/test_queue_kills.py hung 600 s that way once).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        yield ray
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(
            "PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH")]))
        )
        mp.setenv("RAY_DISABLE_USAGE_STATS", "1")
        mp.delenv("RAY_ADDRESS", raising=False)  # never a cluster the environment happens to name
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()
