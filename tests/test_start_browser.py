"""``rqbench start``'s page in headless Chromium: a Space on a store with no results and no sample, a scripted
background job (tests/start_fake_job.py) behind it. Every tab opens on its placeholder under the progress panel;
the panel shows a step's done/total and ETA; a results file the job writes reaches the leaderboard without a
reload; a failure is named with its message; the panel stops asking once the job has ended; a reload keeps it
all. Screenshots of every tab while the build runs go to the test output folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_space_browser import CHROMIUM, LAUNCH_ARGS, _free_port, open_tab

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

TESTS = Path(__file__).resolve().parent
TABS = {  # tab -> (an element of its placeholder or its content, the words in it)
    "Leaderboard": ("#leaderboard-table", "No results yet"),
    "Browse": ("#br-empty", "Nothing to browse yet"),
    "Plots": ("#pl-scatter-empty", "nothing to plot"),
    "Annotate": ("#an-empty", "Nothing to annotate yet"),
    "Judges": ("#tab-judges", "the paper's published verdicts"),  # the judge board's paper rows
    "Expert study": ("#tab-expert-study", "Expert 1"),  # the paper's A.6 study
}


def test_the_page_serves_before_the_sample_with_a_progress_panel(tmp_path, rqb_home, shared, test_output_dir):
    from rqbench.space.stores import SpaceStores
    from rqbench.space.ui import SpaceConfig, build_app, launch_options

    progress, hold = tmp_path / "progress.json", tmp_path / "hold"
    hold.touch()
    os.environ["GRADIO_TEMP_DIR"] = str(tmp_path / "gradio")
    # no sample (no target, no library) and no results; results are read where the job writes them
    config = SpaceConfig(stores=SpaceStores.local(), n_boot=50, progress_file=progress)
    demo = build_app(config)
    port = _free_port()
    demo.queue().launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options(config, demo)
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "RQB_FAKE_HOLD": str(hold),
        "RQB_FAKE_STEP_S": "3",  # 2 of 4 in about 6 s: an ETA of about 6 s, counting down
        "RQB_FAKE_FAIL": "scripted: the judge's server refused the connection",
    }
    job = subprocess.Popen(
        [sys.executable, "-m", "start_fake_job", "--progress", str(progress), "--log", str(tmp_path / "job.log")],
        env=env,
    )
    shots = Path("/tmp/shots")
    shots.mkdir(exist_ok=True)
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            polls: list[float] = []
            page.on("request", lambda r: polls.append(time.monotonic()) if "progress.json" in r.url else None)
            page.goto(f"http://127.0.0.1:{port}/")
            panel = page.locator("#progress-panel")
            # the build counting: done/total and an ETA in seconds (the job holds at 2 of 4)
            panel.get_by_text(re.compile(r"parse: 2/4, ETA \d+ s")).wait_for()
            assert "sample build" in panel.inner_text() and "demo evaluation (rqbench evaluate): waiting" in (
                panel.inner_text()
            )
            for tab, (where, words) in TABS.items():
                open_tab(page, tab)
                page.locator(where).get_by_text(words).first.wait_for(state="visible")
                assert panel.is_visible(), f"{tab}: no progress panel"
                name = tab.lower().replace(" ", "-")
                page.screenshot(path=str(test_output_dir / f"start-{name}.png"))
                page.screenshot(path=str(shots / f"i32-test-{name}.png"))
            # the build goes on; the evaluation writes a results file, then fails by name
            hold.unlink()
            failure = panel.locator("#progress-failure")
            failure.get_by_text("Failed at demo evaluation › judge local standalone").wait_for()
            assert "RuntimeError: scripted: the judge's server refused the connection" in failure.inner_text()
            assert "parse: 4/4, done" not in panel.inner_text()  # a finished phase is one line
            assert "sample build (rqbench setup-sample): done in" in panel.inner_text()
            # the row landed on the leaderboard without a reload
            open_tab(page, "Leaderboard")
            page.locator("#leaderboard-table").get_by_text("fake/first-row").first.wait_for()
            page.screenshot(path=str(test_output_dir / "start-failed.png"))
            page.screenshot(path=str(shots / "i32-test-failed.png"))
            # the job has ended: the panel stops asking
            time.sleep(1)
            asked = len(polls)
            time.sleep(6)  # three polling periods
            assert len(polls) == asked, "the panel kept polling after the job ended"
            # a reload keeps everything: the row and the named failure
            page.reload()
            page.locator("#progress-failure").get_by_text("Failed at demo evaluation").wait_for()
            open_tab(page, "Leaderboard")
            page.locator("#leaderboard-table").get_by_text("fake/first-row").first.wait_for()
            assert errors == []
            browser.close()
    finally:
        hold.unlink(missing_ok=True)
        job.wait(timeout=60)
        demo.close()
        os.environ.pop("GRADIO_TEMP_DIR", None)
    assert job.returncode == 1
