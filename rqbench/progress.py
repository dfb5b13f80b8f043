"""Progress of a background job: the arithmetic of an ETA, its wording, and the file the job keeps up to date.

The builder's stages, generation and judging count their work with :func:`progress_bar`. Run as usual it is
a tqdm bar on the terminal. Inside :func:`reporting_to` (``rqbench start``'s background job, whose output goes
to a log file) it draws nothing and reports each count to a :class:`ProgressWriter`, which keeps the job's
progress file (``rqbench.records.progress.JobProgress``) whole on disk: the terminal and the Space's progress
panel read that file, so neither has to parse a bar.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rqbench.io import read_model, write_atomic
from rqbench.records.progress import JobProgress, PhaseProgress, PhaseStatus, StepProgress

# A count changes the file at most this often; a step or phase starting or ending is written at once.
WRITE_EVERY_S = 0.5


def eta_seconds(done: int, total: int | None, started_at: float, updated_at: float, now: float) -> float | None:
    """Seconds left at ``now`` for a step that had ``done`` of ``total`` at ``updated_at``, at the pace it kept
    since ``started_at``. None while nothing is done or the total is unknown (no pace to go by); 0 once all is
    done or the estimate has run out."""
    if total is None or done <= 0:
        return None
    if done >= total:
        return 0.0
    per_item = max(0.0, updated_at - started_at) / done
    left_at_update = per_item * (total - done)
    return max(0.0, left_at_update - max(0.0, now - updated_at))


def duration_words(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``: whole seconds, the two largest units."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def step_words(step: StepProgress, now: float) -> str:
    """One step as the terminal and the page say it: its count, then its ETA, time taken or failure."""
    count = f"{step.done}/{step.total}" if step.total is not None else f"{step.done} done"
    if step.status == "done":
        return f"{step.name}: {count}, done in {duration_words(step.updated_at - step.started_at)}"
    if step.status in ("failed", "stopped"):
        return f"{step.name}: {count}, {step.status}" + (f": {step.message}" if step.message else "")
    eta = eta_seconds(step.done, step.total, step.started_at, step.updated_at, now)
    if eta is None:
        return f"{step.name}: {count}, ETA after the first item"
    return f"{step.name}: {count}, ETA {duration_words(eta)}" if eta >= 1 else f"{step.name}: {count}, ETA any moment"


def read_progress(path: str | Path) -> JobProgress | None:
    """The job's progress as last written, or None before the job wrote it."""
    try:
        return read_model(path, JobProgress, kind="job progress file")
    except FileNotFoundError:
        return None


class ProgressWriter:
    """Keeps a job's progress file: phases started and ended in order, steps counted inside the running phase.

    Every write replaces the whole file atomically (``rqbench.io.write_atomic``), so a reader never sees half
    of it. Counts are written at most every ``every_s``; everything else at once.
    """

    def __init__(
        self,
        path: str | Path,
        phases: list[tuple[str, str]],
        *,
        log: str = "",
        clock: Callable[[], float] = time.time,
        every_s: float = WRITE_EVERY_S,
    ):
        self.path, self.clock, self.every_s = Path(path), clock, every_s
        now = clock()
        self.job = JobProgress(
            started_at=now,
            updated_at=now,
            pid=os.getpid(),
            log=log,
            phases=[PhaseProgress(name=n, command=c) for n, c in phases],
        )
        self._lock = threading.Lock()
        self._written_at = float("-inf")
        self._current: str | None = None
        self.save()

    def save(self, *, force: bool = True) -> None:
        now = self.clock()
        if not force and now - self._written_at < self.every_s:
            return
        self.job.updated_at = now
        write_atomic(self.path, self.job.model_dump_json(indent=1))
        self._written_at = now

    def start_phase(self, name: str) -> None:
        with self._lock:
            phase = self.job.phase(name)
            phase.status, phase.started_at = "running", self.clock()
            self._current = name
            self.save()

    def end_phase(self, name: str, status: PhaseStatus, message: str = "") -> None:
        """A phase's end; a failed or stopped one takes its unfinished steps with it, the message on each."""
        with self._lock:
            phase = self.job.phase(name)
            phase.status, phase.finished_at, phase.message = status, self.clock(), message
            if status in ("failed", "stopped"):
                for s in self.job.steps:
                    if s.phase == name and s.status == "running":
                        s.status, s.message = status, message
            self._current = None
            self.save()

    def begin_step(self, name: str, total: int | None) -> None:
        """A step of the running phase starts; one of the same name (the same work asked again) starts over."""
        with self._lock:
            now = self.clock()
            phase = self._current or "job"
            self.job.steps = [s for s in self.job.steps if (s.phase, s.name) != (phase, name)]
            self.job.steps.append(StepProgress(phase=phase, name=name, total=total, started_at=now, updated_at=now))
            self.save()

    def advance(self, name: str, done: int) -> None:
        with self._lock:
            step = self.job.step(self._current or "job", name)
            if step is None:
                return
            step.done, step.updated_at = done, self.clock()
            self.save(force=False)

    def end_step(self, name: str) -> None:
        with self._lock:
            step = self.job.step(self._current or "job", name)
            if step is None or step.status != "running":
                return
            step.status, step.updated_at = "done", self.clock()
            self.save()

    def finish(self, status: str) -> None:
        with self._lock:
            self.job.status = status  # type: ignore[assignment]  # validated on assignment
            self.save()


_active: ProgressWriter | None = None


@contextmanager
def reporting_to(writer: ProgressWriter) -> Iterator[ProgressWriter]:
    """Within the block, every enabled :func:`progress_bar` reports to ``writer`` instead of drawing."""
    global _active
    before, _active = _active, writer
    try:
        yield writer
    finally:
        _active = before


class _ReportedBar(tqdm):
    """A bar that draws nothing and gives its count to a ProgressWriter; done when it closes with all counted."""

    def __init__(self, writer: ProgressWriter, **kwargs: Any):
        self._writer, self._step, self._count = writer, str(kwargs.get("desc") or "work"), 0
        super().__init__(**{**kwargs, "disable": True})
        self._target = kwargs.get("total")
        writer.begin_step(self._step, self._target)

    def update(self, n: float | None = 1) -> bool | None:
        self._count += int(n or 0)
        self._writer.advance(self._step, self._count)
        return super().update(n)

    def close(self) -> None:
        if self._target is None or self._count >= self._target:
            self._writer.end_step(self._step)
        super().close()


def progress_bar(*, total: int | None, desc: str, enabled: bool = True, **kwargs: Any) -> tqdm:
    """A counted step's bar: tqdm on the terminal, or a report to the active ProgressWriter (see the module)."""
    if _active is not None and enabled:
        return _ReportedBar(_active, total=total, desc=desc, **kwargs)
    return tqdm(total=total, desc=desc, disable=not enabled, **kwargs)
