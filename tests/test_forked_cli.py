"""The kill tests' forked children do not inherit a held tqdm lock (tests/forked_cli.py)."""

import multiprocessing
import os

from forked_cli import _fresh_tqdm_locks


def _bar_then_exit(fresh: bool) -> None:
    from tqdm import tqdm

    if fresh:
        _fresh_tqdm_locks()
    for _ in tqdm(range(3), file=open(os.devnull, "w")):
        pass
    os._exit(0)


def _fork(fresh: bool) -> multiprocessing.Process:
    proc = multiprocessing.get_context("fork").Process(target=_bar_then_exit, args=(fresh,))
    proc.start()
    return proc


def test_a_child_forked_while_the_tqdm_lock_is_held_still_draws_its_progress_bar():
    from tqdm import tqdm

    lock = tqdm.get_lock()
    lock.acquire()  # as tqdm's monitor thread holds it for a moment every few seconds
    stuck = fresh = None
    try:
        stuck, fresh = _fork(False), _fork(True)
        fresh.join(30)
        stuck.join(3)
        assert fresh.exitcode == 0
        assert stuck.is_alive()  # what the kill tests' workers did before: waited forever
    finally:
        # the stuck child is killed while this process still holds the lock: released first, the child could take
        # tqdm's process-shared semaphore and die holding it, and every later progress bar here would wait forever
        for child in (stuck, fresh):
            if child is not None and child.is_alive():
                child.kill()
                child.join(5)
        lock.release()
    for _ in tqdm(range(2), file=open(os.devnull, "w")):  # this process's bars still draw
        pass
