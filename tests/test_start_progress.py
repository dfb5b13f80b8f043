"""``rqbench start``'s progress without a browser: the ETA arithmetic, the progress file and the bars that feed
it, the job's phases and their failures by name, the terminal's lines, the panel, and the command itself
(its lines, and Ctrl-C stopping the job and the Space)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rqbench.progress import (
    ProgressWriter,
    duration_words,
    eta_seconds,
    progress_bar,
    read_progress,
    reporting_to,
    step_words,
)
from rqbench.records.progress import StepProgress
from rqbench.space import progress_view
from rqbench.space.start_cli import Seen, terminal_lines
from rqbench.space.start_job import LastLines, Phase, run_phases

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


class Clock:
    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_eta_on_hand_values():
    # 3 of 10 done 60 s after the start: 20 s an item, 7 left = 140 s at that update; 10 s later, 130 s
    assert eta_seconds(3, 10, started_at=100.0, updated_at=160.0, now=170.0) == pytest.approx(130.0)
    # at the update itself: 140 s
    assert eta_seconds(3, 10, started_at=100.0, updated_at=160.0, now=160.0) == pytest.approx(140.0)
    # 1 of 4 in 30 s: 3 left x 30 s = 90 s; 100 s later the estimate has run out: 0, never negative
    assert eta_seconds(1, 4, started_at=0.0, updated_at=30.0, now=130.0) == 0.0
    # nothing done yet, or no total: no pace to go by
    assert eta_seconds(0, 10, started_at=0.0, updated_at=5.0, now=6.0) is None
    assert eta_seconds(2, None, started_at=0.0, updated_at=5.0, now=6.0) is None
    # all done: 0
    assert eta_seconds(10, 10, started_at=0.0, updated_at=50.0, now=50.0) == 0.0


def test_durations_and_a_step_in_words():
    assert duration_words(42.4) == "42 s"
    assert duration_words(185) == "3 min 05 s"  # 185 = 3 x 60 + 5
    assert duration_words(3720) == "1 h 02 min"  # 3720 = 3600 + 2 x 60
    step = StepProgress(phase="sample build", name="parse", done=3, total=10, started_at=100.0, updated_at=160.0)
    assert step_words(step, now=170.0) == "parse: 3/10, ETA 2 min 10 s"  # 130 s, as above
    step.status = "done"
    assert step_words(step, now=170.0) == "parse: 3/10, done in 1 min 00 s"
    step.status, step.message = "failed", "RuntimeError: refused"
    assert step_words(step, now=170.0) == "parse: 3/10, failed: RuntimeError: refused"


def test_the_writer_keeps_a_whole_file_and_writes_counts_at_most_every_half_second(tmp_path):
    clock = Clock()
    path = tmp_path / "progress.json"
    w = ProgressWriter(path, [("sample build", "rqbench setup-sample")], clock=clock, every_s=0.5)
    w.start_phase("sample build")
    w.begin_step("parse", 4)
    clock.t += 0.1
    w.advance("parse", 1)  # 0.1 s after the last write: kept in memory only
    assert read_progress(path).steps[0].done == 0
    clock.t += 0.5
    w.advance("parse", 2)  # 0.6 s after: written
    assert read_progress(path).steps[0].done == 2
    w.end_step("parse")
    w.end_phase("sample build", "done")
    w.finish("done")
    job = read_progress(path)
    assert (job.status, job.phases[0].status, job.steps[0].status) == ("done", "done", "done")
    assert [p.name for p in tmp_path.iterdir()] == ["progress.json"]  # no temporary file left beside it


def test_bars_report_to_the_active_writer_and_draw_nothing(tmp_path, capsys):
    clock = Clock()
    w = ProgressWriter(tmp_path / "p.json", [("demo evaluation", "rqbench evaluate")], clock=clock, every_s=0)
    w.start_phase("demo evaluation")
    with reporting_to(w):
        bar = progress_bar(total=3, desc="judge local standalone")
        clock.t += 10
        bar.update(1)
        bar.update(1)
        partial = read_progress(tmp_path / "p.json").steps[0]
        bar.update(1)
        bar.close()
        off = progress_bar(total=2, desc="estimate", enabled=False)  # a dry run's bar: not a step
        off.update(2)
        off.close()
    job = read_progress(tmp_path / "p.json")
    assert (partial.done, partial.total, partial.status) == (2, 3, "running")
    assert [(s.name, s.done, s.status) for s in job.steps] == [("judge local standalone", 3, "done")]
    assert capsys.readouterr().err == ""  # nothing drawn on the terminal
    # outside the block a bar is tqdm's again, drawing on stderr
    plain = progress_bar(total=1, desc="plain", file=sys.stderr)
    plain.update(1)
    plain.close()
    assert "plain" in capsys.readouterr().err


def _writer(tmp_path, phases):
    return ProgressWriter(tmp_path / "p.json", [(p.name, p.command) for p in phases])


def test_a_failing_phase_is_named_with_its_message_and_the_next_does_not_run(tmp_path):
    ran = []

    def build():
        bar = progress_bar(total=4, desc="cited_text")
        bar.update(1)
        raise RuntimeError("the fixture folder is gone")

    phases = [
        Phase("sample build", "rqbench setup-sample", build),
        Phase("demo evaluation", "rqbench evaluate", lambda: ran.append(1) or 0),
    ]
    assert run_phases(_writer(tmp_path, phases), phases) == 1
    job = read_progress(tmp_path / "p.json")
    assert job.status == "failed" and ran == []
    assert (
        progress_view.failure_line(job)
        == "Failed at sample build › cited_text: RuntimeError: the fixture folder is gone"
    )
    assert [p.status for p in job.phases] == ["failed", "waiting"]


def test_a_non_zero_exit_fails_with_its_last_line_unless_its_work_is_done(tmp_path):
    def says_and_exits(rc):
        def run():
            print("rqbench evaluate: the submission is not valid", file=sys.stderr)
            return rc

        return run

    phases = [Phase("demo evaluation", "rqbench evaluate", says_and_exits(1))]
    assert run_phases(_writer(tmp_path, phases), phases) == 1
    job = read_progress(tmp_path / "p.json")
    assert job.phases[0].message == "rqbench evaluate: the submission is not valid"
    # the same exit when the phase's results were written: done, the line kept as a note
    phases = [Phase("demo evaluation", "rqbench evaluate", says_and_exits(1), lambda rc, t: rc == 1)]
    assert run_phases(_writer(tmp_path, phases), phases) == 0
    job = read_progress(tmp_path / "p.json")
    assert (job.status, job.phases[0].status) == ("done", "done")
    assert job.phases[0].message == "rqbench evaluate: the submission is not valid"

    # Ctrl-C inside a phase (rqbench returns 130): stopped, the phase and its counting step with it
    def interrupted():
        progress_bar(total=2, desc="parse").update(1)
        raise KeyboardInterrupt

    phases = [Phase("sample build", "rqbench setup-sample", interrupted)]
    assert run_phases(_writer(tmp_path, phases), phases) == 130
    job = read_progress(tmp_path / "p.json")
    assert (job.status, job.phases[0].status, job.steps[0].status) == ("stopped", "stopped", "stopped")


def test_last_lines_keeps_the_end_of_what_was_written():
    inner = io.StringIO()
    tee = LastLines(inner, keep=2)
    tee.write("one\ntwo\n\nthree\rfour")
    assert inner.getvalue() == "one\ntwo\n\nthree\rfour"
    assert tee.lines == ["two", "three"] and tee.last() == "four"  # a bar's \r counts as a line end


def test_terminal_lines_say_each_change_once_and_a_count_at_most_every_few_seconds(tmp_path):
    clock = Clock(0.0)
    w = ProgressWriter(tmp_path / "p.json", [("sample build", "rqbench setup-sample")], clock=clock, every_s=0)
    seen: dict[str, Seen] = {}
    w.start_phase("sample build")
    w.begin_step("parse", 10)
    assert terminal_lines(w.job, seen, 0.0, every_s=15) == [
        "[sample build] rqbench setup-sample: running",
        "[sample build] parse: 0/10, ETA after the first item",
    ]
    for k in range(1, 6):  # five counts within 5 s: no line (the step's last line was at 0 s)
        clock.t = float(k)
        w.advance("parse", k)
        assert terminal_lines(w.job, seen, clock.t, every_s=15) == []
    clock.t = 20.0
    w.advance("parse", 8)  # 20 s on, 8 of 10 in 20 s: 2.5 s an item, 2 left = 5 s
    assert terminal_lines(w.job, seen, 20.0, every_s=15) == ["[sample build] parse: 8/10, ETA 5 s"]
    assert terminal_lines(w.job, seen, 21.0, every_s=15) == []  # nothing new
    w.end_phase("sample build", "failed", "OSError: disk full")
    w.finish("failed")
    assert terminal_lines(w.job, seen, 22.0, every_s=15) == [
        "[sample build] parse: 8/10, failed: OSError: disk full",
        "[sample build] rqbench setup-sample: failed: OSError: disk full",
        "background job failed",
    ]


def test_the_panel_reply_names_the_failure_and_stops_the_polling(tmp_path):
    path = tmp_path / "p.json"
    reply = progress_view.progress_reply(path, now=0.0)  # before the job wrote anything
    assert reply["active"] is True and "Starting the background job" in reply["html"]
    clock = Clock(100.0)
    w = ProgressWriter(path, [("sample build", "rqbench setup-sample")], clock=clock, every_s=0)
    w.start_phase("sample build")
    w.begin_step("parse", 4)
    clock.t = 130.0
    w.advance("parse", 1)  # 1 of 4 in 30 s: 90 s left
    reply = progress_view.progress_reply(path, now=130.0)
    assert reply["active"] is True and "parse: 1/4, ETA 1 min 30 s" in reply["html"]
    running = reply["stamp"]
    w.end_phase("sample build", "failed", "ValueError: <no bibliography>")
    w.finish("failed")
    reply = progress_view.progress_reply(path, now=131.0)
    assert reply["active"] is False and reply["stamp"] != running
    assert "Failed at sample build › parse: ValueError: &lt;no bibliography&gt;" in reply["html"]  # escaped
    path.write_text("{}", encoding="utf-8")  # not a progress file: said, and asked again
    reply = progress_view.progress_reply(path, now=132.0)
    assert reply["active"] is True and "cannot be read" in reply["html"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(tmp_path, rqb_home, extra_env: dict[str, str], every: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "RQB_HOME": str(rqb_home),
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "GRADIO_TEMP_DIR": str(tmp_path / "gradio"),
        "RQB_EXPERT_STUDY": str(tmp_path / "none.jsonl"),
        **extra_env,
    }
    cmd = [sys.executable, "-m", "rqbench", "start", "--job-module", "start_fake_job", "--port", str(_free_port())]
    return subprocess.Popen(
        [*cmd, "--every", every], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _lines_until(proc: subprocess.Popen, wanted: str, timeout_s: float = 180) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if wanted in line:
            return lines
    raise AssertionError(f"no line with {wanted!r}; got:\n" + "\n".join(lines))


def test_the_command_prints_one_line_per_change_and_ctrl_c_stops_the_job_and_the_space(tmp_path, rqb_home):
    hold = tmp_path / "hold"
    hold.touch()
    proc = _start(tmp_path, rqb_home, {"RQB_FAKE_HOLD": str(hold), "RQB_FAKE_STEP_S": "0.3"}, every="600")
    try:
        lines = _lines_until(proc, "[sample build] parse: ")  # the build is counting; it holds at 2/4
        progress = rqb_home / "start" / "progress.json"
        deadline = time.monotonic() + 30
        while (read_progress(progress).steps or [None])[0] is None or read_progress(progress).steps[0].done < 2:
            assert time.monotonic() < deadline, "the job did not count to 2"
            time.sleep(0.2)
        job_pid = read_progress(progress).pid
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        rest = proc.communicate(timeout=60)[0].splitlines()
    finally:
        if proc.poll() is None:
            proc.kill()
    out = lines + rest
    progress_lines = [line for line in out if line.startswith("[")]
    # one line per change: the phase, the step as first seen (no count line within --every 600), then its stop
    stopped = "stopped: stopped by Ctrl-C; a rerun resumes where it stopped"
    assert len(progress_lines) == 4, out
    assert progress_lines[0] == "[sample build] rqbench setup-sample: running"
    assert re.fullmatch(r"\[sample build\] parse: [0-2]/4, ETA .+", progress_lines[1]), out
    assert progress_lines[2:] == [
        f"[sample build] parse: 2/4, {stopped}",
        f"[sample build] rqbench setup-sample: {stopped}",
    ]
    assert "background job stopped" in out and proc.returncode == 130
    with pytest.raises(ProcessLookupError):
        os.kill(job_pid, 0)  # the job is gone
    assert read_progress(progress).status == "stopped"


def test_the_command_says_a_failure_by_name_on_the_terminal(tmp_path, rqb_home):
    proc = _start(tmp_path, rqb_home, {"RQB_FAKE_FAIL": "scripted: the judge's server refused"}, every="0")
    try:
        lines = _lines_until(proc, "background job failed")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (
        "[demo evaluation] judge local standalone: 1/3, failed: RuntimeError: scripted: the judge's server refused"
        in lines
    )
    assert "[demo evaluation] rqbench evaluate: failed: RuntimeError: scripted: the judge's server refused" in lines
    written = json.loads((rqb_home / "start" / "progress.json").read_text(encoding="utf-8"))
    assert written["status"] == "failed"
