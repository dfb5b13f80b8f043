"""``rqbench`` commands run in forked children, so that a test can SIGKILL them mid-run (the kill tests).

A fork starts at once (the parent has imported the heavy modules) but copies every lock as it stands. When tqdm's
monitor thread in the test's process held tqdm's write lock at that moment, the forked worker waited on it forever
at its first progress bar (a CI run hung in ``test_queue_kills``). A command started as its own process never
inherits a held lock; a forked child gets new tqdm locks before it runs.
"""

from __future__ import annotations

import multiprocessing
import os
import threading


def _fresh_tqdm_locks() -> None:
    from tqdm.std import TqdmDefaultWriteLock, tqdm

    TqdmDefaultWriteLock.th_lock = threading.RLock()
    TqdmDefaultWriteLock.mp_lock = multiprocessing.get_context("fork").RLock()
    tqdm.set_lock(TqdmDefaultWriteLock())


def _child(argv: list[str], env: dict[str, str]) -> None:
    _fresh_tqdm_locks()
    os.environ.clear()
    os.environ.update(env)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    from rqbench.cli import main

    os._exit(main(argv))


def start(argv: list[str], env: dict[str, str]) -> multiprocessing.Process:
    """``rqbench ARGV`` in a forked child with exactly ``env`` as its environment, its output discarded."""
    proc = multiprocessing.get_context("fork").Process(target=_child, args=(argv, env))
    proc.start()
    return proc
