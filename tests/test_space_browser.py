"""The Space in real headless Chromium: leaderboard, submit + worker, deep link, annotate.

One app per module (a Gradio app takes seconds to come up), a handful of tests,
screenshots of each tab in the test output folder. Chromium is Debian's
(/usr/bin/chromium), driven by Playwright with no browser download.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
HOSTILE_MODEL = '<img src=x onerror="window.__pwned=1">'

if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed at /usr/bin/chromium", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SpaceUnderTest:
    """The app on a free loopback port, its stores, and the benchmark its worker judges."""

    def __init__(self, root: Path):
        from rqbench.evaluate.dataset import Benchmark
        from rqbench.space.stores import SpaceStores
        from rqbench.space.submit import BenchmarkTarget
        from rqbench.space.ui import SpaceConfig, build_app

        from rqbench.records import CitedPaper, EvaluationInstance, SectionText
        from rqbench.testing.synthetic import instance_ids, make_results

        self.root = root
        self.stores = SpaceStores.local(root / "store")
        n = 6
        for model, bias, mtype in (("model-a", 0.5, "open"), (HOSTILE_MODEL, -0.5, "closed")):
            for judge in ("judge-a", "judge-b"):
                for setting in ("standalone", "comparative"):
                    self.stores.results.put(make_results(model, judge=judge, setting=setting, bias=bias,
                                                         model_type=mtype, n_instances=n))  # fmt: skip
        sample = make_results("x", n_instances=n)
        papers, insts = {}, []
        for inst in sample.instances:
            for pid in inst.background_paper_ids:
                papers[pid] = CitedPaper(
                    paper_id=pid, title=f"Background study {pid}", abstract=f"Abstract of {pid}.",
                    text_level="full", sections=[SectionText(section="Introduction", text=f"Intro of {pid}."),
                                                 SectionText(section="Method", text=f"Method of {pid}.")],
                )  # fmt: skip
            insts.append(EvaluationInstance(rq_id=inst.rq_id, gt_rq=inst.candidates[0].text, arxiv_id=inst.arxiv_id,
                                            subfield=inst.subfield, background_paper_ids=inst.background_paper_ids))  # fmt: skip
        self.bench = Benchmark(insts, papers, sample.dataset_repo, sample.dataset_revision)
        self.rq_ids = [r for r, _, _ in instance_ids(n)]
        config = SpaceConfig(stores=self.stores, library=papers, n_boot=200,
                             target=BenchmarkTarget(self.bench.repo, self.bench.revision, tuple(self.rq_ids)))  # fmt: skip
        self.demo = build_app(config)
        self.port = _free_port()
        self.demo.queue().launch(server_name="127.0.0.1", server_port=self.port, prevent_thread_lock=True,
                                 quiet=True)  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}/"

    def submission(self, name: str, model: str, *, broken: bool = False) -> Path:
        lines = [{"kind": "metadata", "model": model, "model_type": "open", "prompt_variant": "revised"}]
        for k, rq_id in enumerate(self.rq_ids):
            qs = [f"{model}: which factor {i} explains instance {k}?" for i in range(5)]
            if broken and k == 0:
                qs[1] = "this is not a question"
            if broken and k == 1:
                qs = qs[:2]
            lines.append({"rq_id": rq_id, "research_questions": qs})
        path = self.root / name
        path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
        return path


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    s = SpaceUnderTest(tmp_path_factory.mktemp("space"))
    yield s
    s.demo.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(30_000)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    pg.errors = errors  # type: ignore[attr-defined]
    yield pg
    assert pg.evaluate("window.__pwned === undefined"), "HTML from a submission was executed"
    ctx.close()


def cell(pg, table: str, row: int, col: int):
    return pg.locator(f"#{table} [data-testid='cell-{row}-{col}']").first


def column_values(pg, table: str, col: int) -> list[str]:
    out, row = [], 0
    while pg.locator(f"#{table} [data-testid='cell-{row}-{col}']").count():
        out.append(cell(pg, table, row, col).inner_text().strip())
        row += 1
    return out


def wait_text(locator, pattern: str, timeout_s: float = 30) -> str:
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = locator.input_value() if locator.evaluate("e => 'value' in e") else locator.inner_text()
        if re.search(pattern, text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} did not appear; last text: {text!r}")


def choose(pg, elem_id: str, value: str) -> None:
    """Pick a value in a Gradio dropdown by typing it and pressing Enter."""
    box = pg.locator(f"#{elem_id} input").first
    box.click()
    box.fill(value)
    box.press("Enter")


def open_tab(pg, name: str) -> None:
    pg.get_by_role("tab", name=name).click()


def test_leaderboard_shows_rows_filters_and_sorts(space, page, test_output_dir):
    page.goto(space.url)
    cell(page, "leaderboard-table", 0, 0).wait_for()
    models = column_values(page, "leaderboard-table", 0)
    assert set(models) == {"model-a", HOSTILE_MODEL, "author-anchored (GT)"}  # the hostile name is text
    assert page.locator("#leaderboard-table img").count() == 0
    page.screenshot(path=str(test_output_dir / "leaderboard.png"))
    # sort on Overlap@5, ascending
    choose(page, "lb-sort", "Overlap@5")
    page.locator("#lb-asc input").check()
    headers = [h.strip() for h in page.locator("#leaderboard-table thead th").all_inner_texts()]
    col = headers.index("Overlap@5")
    deadline = time.monotonic() + 20
    while True:
        vals = [float(v) for v in column_values(page, "leaderboard-table", col) if v]
        if (vals and vals == sorted(vals)) or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert vals and vals == sorted(vals)
    # search narrows the rows to one model (plus nothing else)
    page.locator("#lb-search textarea, #lb-search input").first.fill("model-a")
    page.locator("#lb-search textarea, #lb-search input").first.press("Enter")
    deadline = time.monotonic() + 20
    while set(column_values(page, "leaderboard-table", 0)) != {"model-a"} and time.monotonic() < deadline:
        time.sleep(0.3)
    assert set(column_values(page, "leaderboard-table", 0)) == {"model-a"}
    assert page.errors == []


def test_submission_errors_then_queue_then_worker_row(space, page, test_output_dir):
    from rqbench.space.worker import Worker, evaluate_judge
    from scripted_replies import reply as judge_reply

    from rqbench.llm import LLM, CallStore
    from rqbench.testing.scripted_server import ScriptedServer

    page.goto(space.url)
    open_tab(page, "Submit")
    page.locator("#sub-name input, #sub-name textarea").first.fill("tester")
    result = page.locator("#sub-result textarea")
    page.locator("#sub-file input[type=file]").set_input_files(str(space.submission("bad.jsonl", "new-model",
                                                                                     broken=True)))  # fmt: skip
    page.locator("#sub-button").click()
    text = wait_text(result, r"Rejected")
    assert "line 2" in text and "line 3" in text
    page.screenshot(path=str(test_output_dir / "submit-errors.png"))

    page.locator("#sub-file button[aria-label='Clear']").first.click()
    page.locator("#sub-file input[type=file]").set_input_files(str(space.submission("good.jsonl", "new-model")))
    page.locator("#sub-button").click()
    wait_text(result, r"Queued: request")
    (req,) = space.stores.requests.all()
    wait_text(page.locator("#requests-table"), r"pending")
    page.screenshot(path=str(test_output_dir / "submit-queued.png"))

    with ScriptedServer(judge_reply) as srv:
        llm = LLM(CallStore(space.root / "calls.db"))
        llm.register(srv.model_config("scripted/judge-a"))
        judge = evaluate_judge(["scripted/judge-a"], ["standalone"], llm=llm, loader=lambda repo, rev: space.bench)
        # the worker runs in its own thread, as on a Space (Playwright holds this thread's event loop)
        box: list = []
        t = threading.Thread(target=lambda: box.append(Worker(space.stores, judge, work_dir=space.root / "w").run_once()))
        t.start()
        t.join(120)
    report = box[0]
    assert report.request_id == req.request_id and report.status == "finished", report.reason

    page.locator("#req-refresh").click()
    wait_text(page.locator("#requests-table"), r"finished")
    open_tab(page, "Leaderboard")
    page.locator("#lb-refresh").click()
    deadline = time.monotonic() + 20
    while "new-model" not in column_values(page, "leaderboard-table", 0) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert "new-model" in column_values(page, "leaderboard-table", 0)
    page.screenshot(path=str(test_output_dir / "leaderboard-after-worker.png"))
    assert page.errors == []


def test_deep_link_opens_an_example(space, page, test_output_dir):
    rq_id = space.rq_ids[3]
    page.goto(f"{space.url}?rq_id={rq_id}")
    gt = page.locator("#br-gt textarea")
    wait_text(gt, r"behave outside its setting")
    assert page.get_by_role("tab", name="Browse").get_attribute("aria-selected") == "true"
    wait_text(page.locator("#br-link textarea, #br-link input").first, re.escape(f"?rq_id={rq_id}"))
    inst = space.bench.instance(rq_id)
    assert page.get_by_text(f"Background paper 1: {inst.background_paper_ids[0]}").count() >= 1
    assert page.get_by_text("Method", exact=True).count() >= 1  # a section, collapsed
    scores = page.locator("#br-scores")
    wait_text(scores, r"model-a")
    assert HOSTILE_MODEL in scores.inner_text() and scores.locator("img").count() == 0
    page.screenshot(path=str(test_output_dir / "browse.png"), full_page=True)
    open_tab(page, "Plots")
    page.locator("#pl-scatter").wait_for()
    time.sleep(1.0)
    page.screenshot(path=str(test_output_dir / "plots.png"), full_page=True)
    assert page.errors == []


def test_annotate_three_pairs_changes_the_agreement_table(space, page, test_output_dir):
    page.goto(space.url)
    open_tab(page, "Annotate")
    page.locator("#an-name input, #an-name textarea").first.fill("annotator-one")
    page.locator("#an-fields").get_by_label("cs.CL").check()
    agreement = page.locator("#agreement-table")
    before = agreement.inner_text()
    page.locator("#an-start").click()
    status = page.locator("#an-status textarea")
    wait_text(status, r"Pair 1 ")
    page.screenshot(path=str(test_output_dir / "annotate.png"), full_page=True)
    seen = set()
    for k, choice in enumerate(("A is more non-obvious", "B is more non-obvious", "Tie")):
        left = page.locator("#an-left textarea").input_value()
        right = page.locator("#an-right textarea").input_value()
        assert left and right and (left, right) not in seen
        seen.add((left, right))
        page.locator("#an-choice").get_by_label(choice).check()
        page.locator("#an-save").click()
        wait_text(status, rf"You have made {k + 1} judgment")
    assert len(space.stores.annotations.judgments()) == 3
    deadline = time.monotonic() + 20
    while agreement.inner_text() == before and time.monotonic() < deadline:
        time.sleep(0.3)
    after = agreement.inner_text()
    assert after != before and "judge-a" in after and "combined" in after
    page.screenshot(path=str(test_output_dir / "annotate-agreement.png"), full_page=True)
    assert page.errors == []
