"""``rqbench start``: serve the Space at once and build the sample and its demo evaluation behind it.

The Space starts in seconds with what needs no LLM (the expert study, the judge board's paper rows, every tab's
placeholder) and a progress panel. The background job (``rqbench.space.start_job``, a process of its own, its
output in ``RQB_HOME/start/job.log``) runs ``rqbench setup-sample`` then ``rqbench evaluate`` and keeps
``RQB_HOME/start/progress.json``; this process prints one line per change of it (a step's count at most every
``--every`` seconds) and the page shows it. When the sample is published the Space loads it (Browse's
background papers); results appear on the page as they are written. Ctrl-C stops the job, then the Space.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rqbench import paths
from rqbench.io import RecordError
from rqbench.progress import read_progress, step_words
from rqbench.records.progress import JobProgress

SAMPLE_PHASE = "sample build"  # the phase after which the Space loads the benchmark (start_job.default_phases)
STOP_WAIT_S = 15.0  # after Ctrl-C, how long the job may take to write "stopped" before it is killed


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument(
        "--every", type=float, default=15.0, help="seconds between two lines about one step's count (default 15)"
    )
    # the background job's module (tests run a scripted one); it takes --progress FILE and --log FILE
    p.add_argument("--job-module", default="rqbench.space.start_job", help=argparse.SUPPRESS)


@dataclass
class Seen:
    """What the terminal last said about one step or phase."""

    status: str
    done: int
    said_at: float


def terminal_lines(job: JobProgress, seen: dict[str, Seen], now: float, every_s: float) -> list[str]:
    """The lines to print for ``job`` given what was said before (``seen``, updated in place), in the order things
    happened: a phase that starts, its steps (one that starts or ends, and a new count once ``every_s`` has passed
    since that step's last line), the phase's end; then the job's end."""
    lines: list[str] = []
    for phase in job.phases:
        if phase.status == "waiting":
            continue
        key = f"phase:{phase.name}"
        if key not in seen:
            lines.append(f"[{phase.name}] {phase.command}: running")
            seen[key] = Seen("running", 0, now)
        for step in (s for s in job.steps if s.phase == phase.name):
            skey = f"step:{step.phase}:{step.name}"
            before = seen.get(skey)
            changed = before is None or before.status != step.status
            counted = before is not None and step.done != before.done and now - before.said_at >= every_s
            if changed or counted:
                lines.append(f"[{step.phase}] {step_words(step, now)}")
                seen[skey] = Seen(step.status, step.done, now)
        if phase.status != "running" and seen[key].status != phase.status:
            note = f": {phase.message}" if phase.message else ""
            lines.append(f"[{phase.name}] {phase.command}: {phase.status}{note}")
            seen[key] = Seen(phase.status, 0, now)
    if job.finished and seen.get("job", Seen("", 0, 0)).status != job.status:
        lines.append(f"background job {job.status}")
        seen["job"] = Seen(job.status, 0, now)
    return lines


class Watcher:
    """Reads the progress file once a second: prints its lines, loads the benchmark once the sample is published,
    and, when the job process ends without saying how, records it as failed."""

    def __init__(
        self,
        path: Path,
        job: subprocess.Popen | None,
        every_s: float,
        on_sample: Callable[[], None],
        say: Callable[[str], None] = lambda line: print(line, flush=True),
    ):
        self.path, self.job, self.every_s, self.on_sample, self.say = path, job, every_s, on_sample, say
        self.seen: dict[str, Seen] = {}
        self.sample_loaded = False
        self.stop = threading.Event()

    def look(self) -> JobProgress | None:
        try:
            progress = read_progress(self.path)
        except (RecordError, OSError) as exc:
            self.say(f"rqbench start: the progress file cannot be read: {exc}")
            return None
        if progress is not None and self.job is not None and self.job.poll() is not None and not progress.finished:
            progress = _ended_unsaid(self.path, progress, self.job.returncode)
        if progress is None:
            return None
        for line in terminal_lines(progress, self.seen, time.time(), self.every_s):
            self.say(line)
        phases = {p.name: p for p in progress.phases}
        if not self.sample_loaded and SAMPLE_PHASE in phases and phases[SAMPLE_PHASE].status == "done":
            self.sample_loaded = True
            self.on_sample()
        return progress

    def loop(self) -> None:
        while not self.stop.wait(1.0):
            progress = self.look()
            if progress is not None and progress.finished and (self.job is None or self.job.poll() is not None):
                return


def _ended_unsaid(path: Path, progress: JobProgress, rc: int) -> JobProgress:
    """The job process ended (killed, crashed before it could write) with its file still saying ``running``: the
    running phase, and the job, are recorded as failed with the exit status. The job is gone, so this process is
    the file's only writer now."""
    from rqbench.io import write_atomic

    message = f"the background job ended with exit status {rc} without saying why; see {progress.log or 'its log'}"
    now = time.time()
    for phase in progress.phases:
        if phase.status == "running":
            phase.status, phase.finished_at, phase.message = "failed", now, message
            for s in progress.steps:
                if s.phase == phase.name and s.status == "running":
                    s.status, s.message = "failed", message
    progress.status, progress.updated_at = "failed", now
    write_atomic(path, progress.model_dump_json(indent=1))
    return progress


def start_job(module: str, progress: Path, log: Path) -> subprocess.Popen:
    """The background job in a session of its own, so Ctrl-C reaches it only through ``stop_job`` (which also
    reaches the embedded model's server it started)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", module, "--progress", str(progress), "--log", str(log)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_interrupted_with_parent,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def _interrupted_with_parent() -> None:  # pragma: no cover - runs in the child, before the job starts
    """Linux: the job gets SIGINT (and stops as on Ctrl-C) if this process dies without stopping it."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGINT)  # PR_SET_PDEATHSIG
    except OSError:
        return  # not Linux: the job outlives a killed parent, as any process would


def stop_job(job: subprocess.Popen, wait_s: float = STOP_WAIT_S) -> int:
    """Ctrl-C to the job's process group (the job and its model server), then a kill if it does not end."""
    if job.poll() is None:
        try:
            os.killpg(job.pid, signal.SIGINT)
            return job.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return job.wait()


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM ends ``rqbench start`` the way Ctrl-C does."""
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    folder = paths.home() / "start"
    progress, log = folder / "progress.json", folder / "job.log"
    progress.unlink(missing_ok=True)  # the last job's file would show its end until the new job writes
    # the job starts first: it works while this process imports and builds the page
    job = start_job(args.job_module, progress, log)
    signal.signal(signal.SIGTERM, _interrupt)  # a plain kill ends as Ctrl-C does: the job first, then the Space
    demo = thread = watcher = None
    try:
        from rqbench.space.ui import build_app, config_from_env, launch_options, with_queue

        config = config_from_env(sample_pending=True)  # the job below builds it
        config.progress_file = progress

        def load_sample() -> None:  # the benchmark the Space could not load at start: Browse's papers, submissions
            fresh = config_from_env()
            if fresh.target is not None:
                config.target, config.library, config.dataset_note = fresh.target, fresh.library, fresh.dataset_note

        demo = build_app(config)
        watcher = Watcher(progress, job, args.every, load_sample if config.target is None else lambda: None)
        with_queue(demo).launch(
            server_name=args.host,
            server_port=args.port,
            prevent_thread_lock=True,
            quiet=True,
            **launch_options(config, demo),
        )
        print(f"RQ-Bench Space on http://{args.host}:{args.port}; Ctrl-C stops it and the background job", flush=True)
        print(f"background job: progress in {progress}, output in {log}", flush=True)
        thread = threading.Thread(target=watcher.loop, name="rqbench-start-watch", daemon=True)
        thread.start()
        while True:
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("stopping: the background job first, then the Space", flush=True)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not leave the job running alone
        if watcher is not None:
            watcher.stop.set()
        stop_job(job)
        if thread is not None:
            thread.join(timeout=5)
        if watcher is not None:
            watcher.look()  # the job's last word ("stopped", or how it ended)
        if demo is not None:
            demo.close()
    return 130
