"""The Space on a store with no results, no benchmark and no expert-study file, in headless Chromium: every tab
opens on a designed empty state (a sentence saying what is missing and what would fill it), never an empty plot
with a made-up axis or a box with nothing in it. Screenshots of each tab go to the test output folder."""

from __future__ import annotations

import os
import time

import pytest
from test_space_browser import CHROMIUM, LAUNCH_ARGS, _free_port, open_tab

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    from rqbench.space.stores import SpaceStores
    from rqbench.space.ui import SpaceConfig, build_app, launch_options

    root = tmp_path_factory.mktemp("empty-space")
    before = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-uploads")
    config = SpaceConfig(stores=SpaceStores.local(root / "store"), n_boot=50, expert_study=root / "none.jsonl")
    demo = build_app(config)
    port = _free_port()
    demo.queue().launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options(config, demo)
    )
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
        if before is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = before


def test_every_tab_of_an_empty_space_says_what_is_missing(url, test_output_dir):
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        page.set_default_timeout(30_000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.get_by_role("tab", name="About").wait_for()
        time.sleep(2)  # the page load
        # each tab: the sentence shown, and the boxes it replaces hidden
        expected = {
            "Plots": ("#pl-scatter-empty", "nothing to plot", ["#pl-scatter", "#pl-bars"]),
            "Judges": ("#jb-plot-empty", "No judge has been run", ["#jb-plot"]),
            "Annotate": ("#an-empty", "Nothing to annotate yet", ["#an-work", "#an-left", "#an-status"]),
            "Browse": ("#br-empty", "Nothing to browse yet", ["#br-work", "#br-gt", "#br-subfield"]),
            "Leaderboard": ("#leaderboard-table", "No results yet", []),
        }
        for tab, (sentence, words, hidden) in expected.items():
            open_tab(page, tab)
            shown = page.locator(sentence)
            shown.get_by_text(words).first.wait_for(state="visible")
            for box in hidden:
                assert not page.locator(box).first.is_visible(), f"{tab}: {box} is shown with nothing in it"
            if tab == "Plots":
                assert page.locator("#pl-bars-empty").get_by_text("win / tie / lose").first.is_visible()
            page.screenshot(path=str(test_output_dir / f"empty-{tab.lower()}.png"), full_page=True)
        assert page.locator("#jb-plot img").count() == 0  # no plot of nothing on axes 0 and 10^0
        assert errors == []
        browser.close()
