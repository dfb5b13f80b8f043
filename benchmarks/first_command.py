"""The README's first command, timed end to end as a newcomer meets it: set-up, the first page, a filled leaderboard.

A fresh clone of this checkout's HEAD (``../shared`` linked beside it, as CI places it) runs the README's first
line in two halves, each timed:

1. ``bash scripts/setup.sh``; ``--cold`` empties pip's cache for it (``PIP_NO_CACHE_DIR=1``), as on a newcomer's
   machine. The baseline, in the same process: a bare virtual environment and the pinned CPU torch wheel alone,
   the floor any set-up of this stack pays; the ratio line is set-up / baseline.
2. ``.venv/bin/rqbench start``: seconds to the Space's first page (HTTP 200), then each phase and step of the
   background job as ``RQB_HOME/start/progress.json`` records it, and the seconds until the page's leaderboard
   shows the embedded model's row (the job done and the results picked up).

    .venv/bin/python benchmarks/first_command.py [--cold] [--keep DIR] [--deadline-min 40]

``--smoke`` checks the machinery only: no clone and no set-up (this checkout's environment), the tests' scripted
background job instead of the real one, a scripted row on the leaderboard; its times mean nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd: list[str] | str, *, cwd: Path, env: dict[str, str], log: Path) -> float:
    """Run ``cmd`` to its end with its output in ``log``; its seconds, or an error naming the log."""
    t0 = time.perf_counter()
    with open(log, "ab") as out:
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, shell=isinstance(cmd, str))
    if rc != 0:
        raise SystemExit(f"{cmd!r} exited with {rc}; see {log}")
    return time.perf_counter() - t0


def baseline_s(workdir: Path, env: dict[str, str], log: Path) -> float:
    """A bare venv and the pinned torch wheel alone (the set-up's floor), with the same pip cache setting."""
    venv = workdir / "baseline-venv"
    return timed(
        f"{sys.executable} -m venv {venv} && {venv}/bin/python -m pip install -q torch==2.13.0",
        cwd=workdir,
        env=env,
        log=log,
    )


def clone(workdir: Path) -> Path:
    """A fresh clone of HEAD with ``../shared`` beside it, as CI has it."""
    repo = workdir / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    if SHARED.exists() and not (workdir / "shared").exists():
        (workdir / "shared").symlink_to(SHARED)
    return repo


def watch_start(repo: Path, env: dict[str, str], log: Path, deadline_s: float, row_text: str) -> dict[str, float]:
    """Run ``rqbench start`` until the leaderboard shows ``row_text`` (or the job fails, or the deadline passes);
    the seconds of each event from the command's start."""
    from rqbench.progress import read_progress

    port = _free_port()
    home = Path(env["RQB_HOME"])
    progress_file = home / "start" / "progress.json"
    cmd = [
        str(repo / ".venv" / "bin" / "rqbench"),
        "start",
        "--port",
        str(port),
        *env.get("RQB_START_ARGS", "").split(),
    ]
    t0 = time.perf_counter()
    events: dict[str, float] = {}
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        while time.perf_counter() - t0 < deadline_s:
            if proc.poll() is not None:
                raise SystemExit(f"rqbench start exited with {proc.returncode}; see {log}")
            now = time.perf_counter() - t0
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/", timeout=10)
            except httpx.HTTPError:
                page = None
            if page is not None and page.status_code == 200:
                events.setdefault("first page (HTTP 200)", now)
            job = read_progress(progress_file) if progress_file.exists() else None
            if job is not None:
                for phase in job.phases:
                    if phase.started_at and phase.finished_at:
                        events.setdefault(f"{phase.name}: {phase.status}", phase.finished_at - phase.started_at)
                if job.status == "failed":
                    raise SystemExit(f"the background job failed; see {home / 'start' / 'job.log'}")
            if page is not None and job is not None and job.status == "done" and row_text in page.text:
                events["leaderboard filled"] = now
                break
            time.sleep(2.0)
        else:
            raise SystemExit(f"no leaderboard row {row_text!r} within {deadline_s:.0f} s; see {log}")
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
    return events


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold", action="store_true", help="set-up with pip's cache off (PIP_NO_CACHE_DIR=1)")
    ap.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it (default: a temp one)")
    ap.add_argument("--deadline-min", type=float, default=40.0, help="give up on the leaderboard after this")
    ap.add_argument("--smoke", action="store_true", help="no clone, no set-up, the scripted job: checks the script")
    args = ap.parse_args()
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="rqb-first-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "first_command.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RQB_")}
    if args.cold:
        env["PIP_NO_CACHE_DIR"] = "1"
    figures: dict[str, float] = {}
    try:
        if args.smoke:
            repo = ROOT
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
            env["RQB_START_ARGS"] = "--job-module start_fake_job"
            env["RQB_FAKE_STEP_S"] = "0.05"
            env["GRADIO_TEMP_DIR"] = str(workdir / "gradio")
            row_text = "fake/first-row"  # the scripted job's results (tests/start_fake_job.py)
        else:
            repo = clone(workdir)
            figures["baseline: venv + torch wheel"] = baseline_s(workdir, env, log)
            figures["set-up (scripts/setup.sh)"] = timed(["bash", "scripts/setup.sh"], cwd=repo, env=env, log=log)
            row_text = "smollm2"
        env["RQB_HOME"] = str(workdir / "home")
        events = watch_start(repo, env, log, args.deadline_min * 60, row_text)
    finally:
        if args.keep is None and not args.smoke:
            shutil.rmtree(workdir, ignore_errors=True)
    for name, seconds in {**figures, **events}.items():
        print(f"{name}: {seconds:7.1f} s")
    setup = figures.get("set-up (scripts/setup.sh)")
    if setup is not None:
        cache = "off" if args.cold else "on"
        print(f"set-up / baseline = {setup / figures['baseline: venv + torch wheel']:.2f}x")
        print(f"first command to the first page: {(setup + events['first page (HTTP 200)']) / 60:.1f} min")
        print(f"first command to a filled leaderboard: {(setup + events['leaderboard filled']) / 60:.1f} min")
        print(f"(pip cache {cache})")


if __name__ == "__main__":
    main()
