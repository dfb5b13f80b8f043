"""The background job of ``rqbench start``: the sample build, then the demo evaluation, reported to a file.

Run as ``python -m rqbench.space.start_job --progress FILE`` in a process of its own (its output goes to a log
file). Each phase is one of the usual commands run in this process, ``rqbench setup-sample`` then ``rqbench
evaluate``, with every progress bar reporting to the progress file (``rqbench.progress``). Both commands resume:
a rerun rebuilds nothing stored and pays for no call already answered (the stage files and the call cache).
A phase that raises or exits non-zero ends the job as failed, named with its message; Ctrl-C (SIGINT) ends it
as stopped.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rqbench import paths
from rqbench.progress import ProgressWriter, reporting_to

STOPPED_RC = 130  # what ``rqbench`` returns after Ctrl-C


@dataclass(frozen=True)
class Phase:
    """One command of the job. ``finished_anyway(rc, started_at)``: whether a non-zero exit still left its work
    done (``rqbench evaluate`` exits 1 when some judge calls failed, with its results written)."""

    name: str
    command: str
    run: Callable[[], int]
    finished_anyway: Callable[[int, float], bool] = lambda rc, started_at: False


class LastLines:
    """A text stream that passes everything to ``inner`` and keeps the last few lines (a failure's message)."""

    def __init__(self, inner: TextIO, keep: int = 20):
        self.inner, self.keep, self.lines, self._part = inner, keep, [], ""

    def write(self, text: str) -> int:
        self.inner.write(text)
        *whole, self._part = (self._part + text).replace("\r", "\n").split("\n")
        self.lines = [*self.lines, *(w for w in whole if w.strip())][-self.keep :]
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def last(self) -> str:
        return (self._part.strip() or (self.lines[-1] if self.lines else "")).strip()

    def __getattr__(self, name: str):  # isatty, fileno, encoding: the inner stream's
        return getattr(self.inner, name)


def run_phases(writer: ProgressWriter, phases: list[Phase]) -> int:
    """Each phase in turn under ``writer``; the job's exit status (0, 1 failed, 130 stopped)."""
    for phase in phases:
        writer.start_phase(phase.name)
        started = time.time()
        tee = LastLines(sys.stderr)
        sys.stderr = tee
        try:
            with reporting_to(writer):
                rc = phase.run()
        except KeyboardInterrupt:
            rc = STOPPED_RC
        except Exception as exc:  # the job's one report of a crash: named on the page and in the terminal
            import traceback

            traceback.print_exc()
            writer.end_phase(phase.name, "failed", f"{type(exc).__name__}: {exc}")
            writer.finish("failed")
            return 1
        finally:
            sys.stderr = tee.inner
        if rc == STOPPED_RC:
            writer.end_phase(phase.name, "stopped", "stopped by Ctrl-C; a rerun resumes where it stopped")
            writer.finish("stopped")
            return STOPPED_RC
        if rc != 0 and not phase.finished_anyway(rc, started):
            writer.end_phase(phase.name, "failed", tee.last() or f"{phase.command} exited with {rc}")
            writer.finish("failed")
            return 1
        writer.end_phase(phase.name, "done", tee.last() if rc != 0 else "")
    writer.finish("done")
    return 0


def results_written_since(folder: Path, started_at: float) -> bool:
    """Whether a results file in ``folder`` was written at or after ``started_at``."""
    return any(p.stat().st_mtime >= started_at for p in folder.rglob("*.json")) if folder.is_dir() else False


def default_phases() -> list[Phase]:
    """The sample build and the demo evaluation on the embedded model: the README's first command's work."""
    from rqbench.cli import main

    return [
        Phase("sample build", "rqbench setup-sample", lambda: main(["setup-sample"])),
        Phase(
            "demo evaluation",
            "rqbench evaluate",
            lambda: main(["evaluate"]),
            finished_anyway=lambda rc, started: rc == 1 and results_written_since(paths.results_dir(), started),
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rqbench.space.start_job", description=__doc__.splitlines()[0])
    p.add_argument("--progress", type=Path, required=True, help="the progress file to keep")
    p.add_argument("--log", default="", help="where this job's output goes (named in the progress file)")
    args = p.parse_args(argv)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C even when started with SIGINT ignored
    phases = default_phases()
    writer = ProgressWriter(args.progress, [(ph.name, ph.command) for ph in phases], log=args.log)
    return run_phases(writer, phases)


if __name__ == "__main__":
    sys.exit(main())
