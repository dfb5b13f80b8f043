"""A scripted stand-in for ``rqbench start``'s background job (``rqbench.space.start_job``), for the tests.

Same phases, same progress file and the same ``run_phases``, but no LLM: the "sample build" counts a step
``parse`` of 4 items, the "demo evaluation" a step ``judge local standalone`` of 3, and after its first item
writes one results file into ``RQB_HOME/results`` (so the page has a row to pick up). Set by the environment:

- ``RQB_FAKE_STEP_S``: seconds per item (default 0.2);
- ``RQB_FAKE_HOLD``: a file; while it exists the build waits after its second item (the page shows 2/4 and
  an ETA for as long as a test needs);
- ``RQB_FAKE_FAIL``: a message; the evaluation raises it after its first item (a named failure).

Run as ``python -m start_fake_job --progress FILE --log FILE`` with ``tests/`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from results_factory import results, simple_instance

from rqbench import paths
from rqbench.evaluate.judge.run import write_results
from rqbench.progress import ProgressWriter, progress_bar
from rqbench.space.start_job import Phase, run_phases

STEP_S = float(os.environ.get("RQB_FAKE_STEP_S", "0.2"))


def _hold() -> None:
    hold = os.environ.get("RQB_FAKE_HOLD")
    while hold and Path(hold).exists():
        time.sleep(0.1)


def build() -> int:
    bar = progress_bar(total=4, desc="parse")
    for k in range(4):
        time.sleep(STEP_S)
        bar.update(1)
        if k == 1:
            _hold()
    bar.close()
    return 0


def evaluate() -> int:
    bar = progress_bar(total=3, desc="judge local standalone")
    time.sleep(STEP_S)
    bar.update(1)
    rf = results([simple_instance("2401.00001_rq0", (2, 2, 2), [(3, 3, 3)] * 5)], model="fake/first-row")
    write_results(paths.results_dir() / "fake-first-row__gemini-3.1-pro__standalone.json", rf)
    failure = os.environ.get("RQB_FAKE_FAIL")
    if failure:
        raise RuntimeError(failure)
    for _ in range(2):
        time.sleep(STEP_S)
        bar.update(1)
    bar.close()
    return 0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--progress", type=Path, required=True)
    p.add_argument("--log", default="")
    args = p.parse_args()
    phases = [
        Phase("sample build", "rqbench setup-sample", build),
        Phase("demo evaluation", "rqbench evaluate", evaluate),
    ]
    return run_phases(ProgressWriter(args.progress, [(x.name, x.command) for x in phases], log=args.log), phases)


if __name__ == "__main__":
    sys.exit(main())
