"""The Space in real headless Chromium, tried as a new visitor would.

One app per module (a Gradio app takes seconds to come up), a handful of tests:
the expert study first; the leaderboard's headline view, CIs, column groups and
empty-cell reasons; submit + worker; Browse opening on an RQ and the deep link;
the plots; annotating beside the background papers and the rubric; the
demo-model banner on every tab that shows demo figures. Screenshots of every
tab at 1,400 x 1,000 go to the test output folder. Chromium is Debian's
(/usr/bin/chromium), driven by Playwright with no browser download.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from datetime import date
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
HOSTILE_MODEL = '<img src=x onerror="window.__pwned=1">'
DEMO_MODEL = "local/smollm2-135m"  # the embedded model, as the README's first command leaves it
PUBLISHED = {"2501.10000": date(2025, 1, 3), "2501.10001": date(2025, 1, 20), "2501.10002": date(2025, 1, 28)}
CUTOFF = date(2025, 1, 15)

if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed at /usr/bin/chromium", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api")


def expert_study_file() -> Path | None:
    """The paper's expert-study file in ../shared, read where it lies; None where ../shared is absent."""
    from rqbench.paths import shared_dir

    shared = shared_dir()
    path = shared / "fixtures" / "paper_examples" / "expert_vs_llm.jsonl" if shared is not None else None
    return path if path is not None and path.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SpaceUnderTest:
    """The app on a free loopback port, its stores, and the benchmark its worker judges."""

    def __init__(self, root: Path):
        from rqbench.evaluate.benchmark.source import Benchmark
        from rqbench.records import CitedPaper, EvaluationInstance, SectionText
        from rqbench.space.stores import SpaceStores
        from rqbench.space.submit import BenchmarkTarget
        from rqbench.space.ui import SpaceConfig, build_app, launch_options
        from rqbench.testing.synthetic import instance_ids, make_results

        self.root = root
        self.stores = SpaceStores.local(root / "store")
        n = 6
        # model-a states a cutoff that two of the three source papers are after (4 of 6 instances clean);
        # the hostile one states none (no clean figures)
        for model, bias, mtype, cutoff in (("model-a", 0.5, "open", CUTOFF), (HOSTILE_MODEL, -0.5, "closed", None)):
            for judge in ("judge-a", "judge-b"):
                for setting in ("standalone", "comparative"):
                    self.stores.results.put(
                        make_results(
                            model,
                            judge=judge,
                            setting=setting,
                            bias=bias,
                            model_type=mtype,
                            n_instances=n,
                            knowledge_cutoff=cutoff,
                            published=PUBLISHED,
                        )
                    )
        for judge in ("local", "local@temperature=0.7"):
            self.stores.results.put(make_results(DEMO_MODEL, judge=judge, setting="standalone", n_instances=n))
        sample = make_results("x", n_instances=n)
        papers, insts = {}, []
        for inst in sample.instances:
            for pid in inst.background_paper_ids:
                papers[pid] = CitedPaper(
                    paper_id=pid,
                    title=f"Background study {pid}",
                    abstract=f"Abstract of {pid}.",
                    text_level="full",
                    sections=[
                        SectionText(section="Introduction", text=f"Intro of {pid}."),
                        SectionText(section="Method", text=f"Method of {pid}."),
                    ],
                )
            insts.append(
                EvaluationInstance(
                    rq_id=inst.rq_id,
                    gt_rq=inst.candidates[0].text,
                    arxiv_id=inst.arxiv_id,
                    subfield=inst.subfield,
                    background_paper_ids=inst.background_paper_ids,
                )
            )
        self.bench = Benchmark(insts, papers, sample.dataset_repo, sample.dataset_revision)
        self.rq_ids = [r for r, _, _ in instance_ids(n)]
        self.study = expert_study_file()
        config = SpaceConfig(
            stores=self.stores,
            library=papers,
            n_boot=200,
            expert_study=self.study,
            worker_judges=("local", "local@temperature=0.7"),
            target=BenchmarkTarget(self.bench.repo, self.bench.revision, tuple(self.rq_ids)),
        )
        self.demo = build_app(config)
        self.port = _free_port()
        self.uploads = Path(os.environ["GRADIO_TEMP_DIR"])  # the fixture gives this app its own upload folder
        self.demo.queue().launch(
            server_name="127.0.0.1",
            server_port=self.port,
            prevent_thread_lock=True,
            quiet=True,
            **launch_options(config, self.demo),
        )
        assert Path(self.demo.server_app.uploaded_file_dir) == self.uploads
        self.url = f"http://127.0.0.1:{self.port}/"

    def submission(self, name: str, model: str, *, broken: bool = False) -> Path:
        lines = [{"kind": "metadata", "model": model, "model_type": "open", "prompt_variant": "revised"}]
        for k, rq_id in enumerate(self.rq_ids):
            qs = [f"Which factor {i} explains instance {k} for {model}?" for i in range(5)]
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
    root = tmp_path_factory.mktemp("space")
    before = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-uploads")  # read by Gradio on every upload, so kept set
    try:
        s = SpaceUnderTest(root)
        yield s
        s.demo.close()
    finally:
        if before is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = before


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
    """The first line of each cell of a column (a figure's CI and a name's small print come after it), read in
    one step so a table redrawn meanwhile cannot mix two versions."""
    texts = pg.evaluate(
        """([table, col]) => { const out = [];
             for (let r = 0; ; r++) {
               const c = document.querySelector(`#${table} [data-testid='cell-${r}-${col}']`);
               if (c === null) return out;
               out.push(c.innerText); } }""",
        [table, col],
    )
    return [t.strip().split("\n")[0] for t in texts]


def number(text: str) -> float | None:
    """The figure a cell shows ("2.75 [2.50, 3.00]" -> 2.75), None for an empty cell."""
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", text)
    return float(m.group(1)) if m else None


def headers(pg, table: str) -> list[str]:
    return [h.strip() for h in pg.locator(f"#{table} thead th").all_inner_texts()]


def wait_text(locator, pattern: str, timeout_s: float = 30) -> str:
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = locator.input_value() if locator.evaluate("e => 'value' in e") else locator.inner_text()
        if re.search(pattern, text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} did not appear; last text: {text!r}")


def wait_selected(pg, tab: str, timeout_s: float = 30) -> None:
    """Until the tab named ``tab`` is the selected one: a link's tab is selected when its event's reply lands, which
    can be after a warning the same event raised is already on the page."""
    deadline = time.monotonic() + timeout_s
    while pg.get_by_role("tab", name=tab).get_attribute("aria-selected") != "true":
        if time.monotonic() > deadline:
            raise AssertionError(f"the {tab} tab was not selected within {timeout_s} s")
        time.sleep(0.2)


def choose(pg, elem_id: str, value: str) -> None:
    """Pick a value in a Gradio dropdown by typing it and pressing Enter."""
    box = pg.locator(f"#{elem_id} input").first
    box.click()
    box.fill(value)
    box.press("Enter")


def open_tab(pg, name: str) -> None:
    pg.get_by_role("tab", name=name).click()


def open_board(pg, url: str) -> None:
    """The page, on the Leaderboard tab, once its table has rows."""
    pg.goto(f"{url}?tab=leaderboard")
    cell(pg, "leaderboard-table", 0, 0).wait_for()


def banner_visible(pg, tab: str) -> bool:
    box = pg.locator(f"#demo-banner-{tab}")
    return box.count() > 0 and box.first.is_visible() and "not results" in box.first.inner_text()


def no_horizontal_scroll(pg, elem_id: str) -> bool:
    return pg.evaluate(f"""() => {{ const w = document.querySelector('#{elem_id} .rqb-wrap');
                                  return w !== null && w.scrollWidth <= w.clientWidth + 1; }}""")


def test_the_page_opens_on_the_leaderboard_and_the_expert_study_is_one_tab_away(space, page, test_output_dir):
    """Item 2: the paper's ten samples, side by side with four verdicts, and the agreement matrix; the page itself
    opens on the leaderboard, what most visitors came for."""
    if space.study is None:
        pytest.skip("../shared/fixtures/paper_examples/expert_vs_llm.jsonl is not beside this checkout")
    from rqbench.evaluate.judge_board.agreement import agreement_matrix, expert_sample_picks, read_expert_samples

    page.goto(space.url)
    assert page.get_by_role("tab").first.inner_text().strip() == "Leaderboard"  # the first tab
    assert page.get_by_role("tab", name="Leaderboard").get_attribute("aria-selected") == "true"
    open_tab(page, "Expert study")
    samples = page.locator("#es-samples")
    samples.locator("tbody tr").first.wait_for()
    assert "RQ-Bench" in page.locator("#tab-expert-study").inner_text()  # the paragraph of context
    study = read_expert_samples(space.study)
    assert samples.locator("tbody tr").count() == len(study) == 10
    assert headers(page, "es-samples")[-4:] == ["Expert 1", "Expert 2", "gemini-3.1-pro", "deepseek-v4-pro"]
    first = study[0]
    row = [c.strip() for c in samples.locator("tbody tr").first.locator("td").all_inner_texts()]
    assert first.background_title in row[1] and row[2] == first.gt_rq and row[3] == first.model_rq
    want = {"gt": "author-anchored", "model": first.model, "tie": "tie"}
    assert row[4:] == [want[first.verdicts[r]] for r in ("expert_1", "expert_2", "gemini-3.1-pro", "deepseek-v4-pro")]
    shown = samples.inner_text()  # where the samples come from, relative to ../shared: no host path
    assert "fixtures/paper_examples/expert_vs_llm.jsonl" in shown and str(space.study) not in shown
    # the matrix is agreement_matrix's, cell for cell
    matrix = agreement_matrix(expert_sample_picks(study), n_boot=200)
    shown = page.locator("#es-matrix tbody tr")
    for i, a in enumerate(matrix.rows):
        cells = shown.nth(i).locator("td").all_inner_texts()
        for j, b in enumerate(matrix.cols):
            if a != b:
                assert cells[j + 1].startswith(f"{100 * matrix.get(a, b).value:.0f}%"), (a, b, cells)
    assert not banner_visible(page, "expert-study")  # real judgments, no demo model
    page.screenshot(path=str(test_output_dir / "expert-study.png"))
    assert page.errors == []


def test_leaderboard_shows_rows_filters_and_sorts(space, page, test_output_dir):
    open_board(page, space.url)
    models = column_values(page, "leaderboard-table", 0)
    assert set(models) == {"model-a", HOSTILE_MODEL, DEMO_MODEL, "author-anchored (GT)"}  # the hostile name is text
    assert page.locator("#leaderboard-table img").count() == 0
    page.screenshot(path=str(test_output_dir / "leaderboard.png"))
    # sort on Overlap@5, ascending
    choose(page, "lb-sort", "Overlap@5")
    page.locator("#lb-asc input").check()
    col = headers(page, "leaderboard-table").index("Overlap@5")
    deadline = time.monotonic() + 20
    while True:
        vals = [v for v in map(number, column_values(page, "leaderboard-table", col)) if v is not None]
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


def _models_become(pg, want: set[str], timeout_s: float = 20) -> set[str]:
    deadline = time.monotonic() + timeout_s
    while (shown := set(column_values(pg, "leaderboard-table", 0))) != want and time.monotonic() < deadline:
        time.sleep(0.3)
    return shown


def test_the_search_box_redraws_on_every_edit_and_cuts_a_long_paste(space, page, test_output_dir):
    """Issue 36: deleting, clearing and pasting redraw the table (the box's input event missed them)."""
    open_board(page, space.url)
    every = set(column_values(page, "leaderboard-table", 0))
    box = page.locator("#lb-search textarea, #lb-search input").first
    box.click()
    box.type("model-a")
    assert _models_become(page, {"model-a"}) == {"model-a"}
    box.press("Control+a")
    box.press("Delete")  # a cleared box shows every row again
    assert _models_become(page, every) == every
    box.type("zzz")
    page.get_by_text("No results match these filters").first.wait_for()
    for _ in range(3):
        box.press("Backspace")
    assert _models_become(page, every) == every
    # a paste: set the text as a clipboard paste would, with the input event a paste fires
    box.evaluate("(e, t) => { e.value = t; e.dispatchEvent(new Event('input', {bubbles: true})); }", "model-a")
    assert _models_become(page, {"model-a"}) == {"model-a"}
    # the box takes at most the cap, so a huge paste is cut in the browser, in one line
    assert box.get_attribute("maxlength") == "200"
    height = box.bounding_box()["height"]
    box.fill("m" * 199)
    assert box.bounding_box()["height"] <= height + 1
    assert page.get_by_text("The search was cut").count() == 0
    page.screenshot(path=str(test_output_dir / "leaderboard-search.png"))
    assert page.errors == []


def test_leaderboard_headline_view_fits_and_explains_itself(space, page, test_output_dir):
    """Item 4: headline columns, CI in the cell, no sideways scrolling, reasons for empty cells, the combine rule."""
    from rqbench.evaluate.metrics.metric import describe_combine_rule

    open_board(page, space.url)
    assert headers(page, "leaderboard-table") == [
        "Model",
        "Setting",
        "Judge",
        "Scored",
        "Best@5 originality",
        "Best@5 gap addressing",
        "Best@5 non-obviousness",
        "Win / tie / lose % non-obviousness",
        "Best@5 source-boundedness ↓",
        "Overlap@5",
    ]
    assert no_horizontal_scroll(page, "leaderboard-table")
    best = cell(page, "leaderboard-table", 0, 4).inner_text().replace("\n", " ")
    assert re.fullmatch(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", best), best  # the figure and its CI in one cell
    assert re.fullmatch(r"\d+ / \d+ / \d+", cell(page, "leaderboard-table", 0, 7).inner_text().strip())
    # an empty cell says why on hover, and the caption says it too
    empty = page.locator("#leaderboard-table td.missing").first
    reason = empty.get_attribute("title")
    assert empty.inner_text().strip() == "—" and reason
    assert reason in page.locator("#leaderboard-table .rqb-caption").all_inner_texts()[0]
    comparative = page.locator("#leaderboard-table tbody tr", has_text="comparative").first
    assert "standalone judging only" in comparative.locator("td.missing").first.get_attribute("title")
    # the combine rule, on the combined judge's cell and in the caption
    judge_cell = page.locator("#leaderboard-table td", has_text="combined").first
    assert judge_cell.get_attribute("title").endswith("(rule: pooled)")
    assert describe_combine_rule("pooled") in page.locator("#leaderboard-table").inner_text()
    # the CIs can move to hover only; column groups reveal the rest
    page.locator("#lb-more").get_by_text("More columns, filters and intervals").click()
    page.locator("#lb-ci input").uncheck()
    deadline = time.monotonic() + 20
    while "[" in cell(page, "leaderboard-table", 0, 4).inner_text() and time.monotonic() < deadline:
        time.sleep(0.3)
    assert "[" not in cell(page, "leaderboard-table", 0, 4).inner_text()
    assert cell(page, "leaderboard-table", 0, 4).get_attribute("title").startswith("95% CI [")
    page.locator("#lb-groups").get_by_label(
        "provenance (judges and their details, prompts, dataset, failures, contamination)"
    ).check()
    deadline = time.monotonic() + 20
    while "Contamination" not in headers(page, "leaderboard-table") and time.monotonic() < deadline:
        time.sleep(0.3)
    assert {"Judges", "Dataset", "Failures", "Judge details", "Contamination"} <= set(
        headers(page, "leaderboard-table")
    )
    page.screenshot(path=str(test_output_dir / "leaderboard-provenance.png"))
    assert page.errors == []


def _row_cells(pg, table: str, model: str, setting: str) -> list:
    """The cells of the row of ``model`` and ``setting`` (each cell's locator), read where the table is now."""
    row = (
        pg.locator(f"#{table} tbody tr")
        .filter(has=pg.locator("td", has_text=model))
        .filter(has=pg.locator("td", has_text=re.compile(f"^{setting}$")))
    )
    return row.first.locator("td").all()


def test_leaderboard_clean_only_toggle(space, page, test_output_dir):
    """Issue 26, item 3: "Clean only" switches every figure to its value over the papers after the model's cutoff,
    shows each row's clean count, and says why a row has none."""
    from rqbench.evaluate.metrics.summary import summarize
    from rqbench.testing.synthetic import make_results

    files = [
        make_results(
            "model-a", judge=j, setting=s, bias=0.5, n_instances=6, knowledge_cutoff=CUTOFF, published=PUBLISHED
        )
        for j in ("judge-a", "judge-b")
        for s in ("standalone", "comparative")
    ]
    row = next(r for r in summarize(files, n_boot=200) if r.setting == "standalone" and r.judge == "combined")
    full, clean = row.figures["best5_non_obviousness"].value, row.clean.figures["best5_non_obviousness"].value
    assert row.clean.instances == 4 and f"{full:.2f}" != f"{clean:.2f}"  # the toggle visibly changes this cell

    open_board(page, space.url)
    table = "leaderboard-table"
    col = headers(page, table).index("Best@5 non-obviousness")
    assert "Clean" not in headers(page, table)
    assert _row_cells(page, table, "model-a", "standalone")[col].inner_text().startswith(f"{full:.2f}")
    page.locator("#lb-clean input").check()
    deadline = time.monotonic() + 20
    while "Clean" not in headers(page, table) and time.monotonic() < deadline:
        time.sleep(0.3)
    cols = headers(page, table)
    k = cols.index("Clean")
    assert cols[:3] == ["Model", "Setting", "Judge"] and k < cols.index("Best@5 originality")  # with the model's
    col = cols.index("Best@5 non-obviousness")
    cells = _row_cells(page, table, "model-a", "standalone")
    assert cells[k].inner_text().strip() == "4/6"
    assert f"after the knowledge cutoff {CUTOFF}" in cells[k].get_attribute("title")
    assert cells[col].inner_text().startswith(f"{clean:.2f}")
    hostile = _row_cells(page, table, HOSTILE_MODEL, "standalone")
    assert hostile[k].inner_text().strip() == "—" and "no knowledge cutoff" in hostile[k].get_attribute("title")
    assert hostile[col].inner_text().strip() == "—"
    assert hostile[col].get_attribute("title").startswith("No clean figures for this row: no knowledge cutoff")
    caption = page.locator(f"#{table} .rqb-caption").all_inner_texts()[0]
    assert "Clean only: each model row's figures are over its clean instances" in caption
    assert no_horizontal_scroll(page, table)
    page.screenshot(path=str(test_output_dir / "leaderboard-clean.png"), full_page=True)
    page.locator("#lb-clean input").uncheck()
    deadline = time.monotonic() + 20
    while "Clean" in headers(page, table) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert "Clean" not in headers(page, table)
    assert _row_cells(page, table, "model-a", "standalone")[col - 1].inner_text().startswith(f"{full:.2f}")
    assert page.errors == []


def test_submission_errors_then_queue_then_worker_row(space, page, test_output_dir):
    from scripted_replies import reply as judge_reply

    from rqbench.llm import LLM, CallStore
    from rqbench.space.worker import Worker, evaluate_judge
    from rqbench.testing.scripted_server import ScriptedServer

    page.goto(space.url)
    open_tab(page, "Submit")
    page.locator("#sub-name input, #sub-name textarea").first.fill("tester")
    result = page.locator("#sub-result textarea")
    page.locator("#sub-file input[type=file]").set_input_files(
        str(space.submission("bad.jsonl", "new-model", broken=True))
    )
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
        t = threading.Thread(
            target=lambda: box.append(Worker(space.stores, judge, work_dir=space.root / "w").run_once())
        )
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


def test_a_folders_two_files_and_the_partial_box_on_the_page(space, page, test_output_dir):
    """Issue 23, item 2: the folder rqbench generate writes, uploaded as its two files; a partial one names the
    page's box (never a command-line flag) and is queued once the box is ticked."""
    folder = space.root / "folder-upload"
    folder.mkdir()
    (folder / "metadata.json").write_text(json.dumps({"model": "folder-model", "model_type": "open"}, indent=2))
    (folder / "submission.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "rq_id": r,
                    "research_questions": [
                        f"Which factor {i} explains instance {k} for folder-model?" for i in range(5)
                    ],
                }
            )
            + "\n"
            for k, r in enumerate(space.rq_ids[:3])
        )
    )
    page.goto(space.url)
    open_tab(page, "Submit")
    page.locator("#sub-name input, #sub-name textarea").first.fill("folder-tester")
    page.locator("#sub-file input[type=file]").set_input_files(
        [str(folder / "metadata.json"), str(folder / "submission.jsonl")]
    )
    page.locator("#sub-button").click()
    result = page.locator("#sub-result textarea")
    text = wait_text(result, r"Rejected")
    assert 'a partial submission needs the "Allow a partial submission" box ticked' in text
    assert "--allow-partial" not in text and "Extra data" not in text and "no metadata record" not in text
    page.screenshot(path=str(test_output_dir / "submit-folder-partial-refused.png"))
    page.locator("#sub-partial input[type=checkbox]").check()
    page.locator("#sub-button").click()
    wait_text(result, r"Queued: request")
    (req,) = [r for r in space.stores.requests.all() if r.user == "folder-tester"]
    assert req.partial and req.instances == 3 and req.metadata.model == "folder-model"
    uploaded = list((space.root / "gradio-uploads").rglob("metadata.json"))
    assert uploaded == []  # stored, so deleted from Gradio's folder (the refused try kept them for this retry)
    page.screenshot(path=str(test_output_dir / "submit-folder-partial-queued.png"))
    assert page.errors == []


def test_browse_opens_on_the_first_rq_with_papers_and_every_judges_scores(space, page, test_output_dir):
    """Item 3: no empty pickers or tables; the GT, the papers, each model's five RQs with scores and reasons."""
    from rqbench.space.browse import first_rq, index_instances

    results, _ = space.stores.results.load()
    rq_id = first_rq(index_instances(results))
    page.goto(space.url)
    open_tab(page, "Browse")
    inst = space.bench.instance(rq_id)
    wait_text(page.locator("#br-gt textarea"), re.escape(inst.gt_rq))
    wait_text(page.locator("#br-link textarea, #br-link input").first, re.escape(f"?rq_id={rq_id}"))
    assert page.get_by_text(f"Background paper 1: {inst.background_paper_ids[0]}").count() >= 1
    scores = page.locator("#br-scores")
    wait_text(scores, r"model-a")
    tables = scores.locator("table")
    results, _ = space.stores.results.load()
    wait_text(scores, re.escape(sorted({r.submission.model for r in results})[-1]))
    assert tables.count() == len({r.submission.model for r in results})  # one per model
    for k in range(tables.count()):
        t = tables.nth(k)
        assert t.locator("tbody tr").count() == 6  # the author-anchored RQ, then the five
        assert t.locator("tbody tr").first.locator("td").first.inner_text().strip() == "GT"
        head = t.locator("thead tr").bounding_box()
        row = t.locator("tbody tr").first.bounding_box()
        assert head["height"] <= max(60, row["height"]), "the header row is taller than the rows"
    text = scores.inner_text()
    assert "Scope level" in text and "Diagnostic level" in text  # the judges' reasons
    assert "judge-a · standalone" in text and "local · standalone" in text
    assert "local/smollm2-135m (demo model)" in text
    assert page.locator("#tab-browse table tbody:empty").count() == 0
    page.screenshot(path=str(test_output_dir / "browse.png"))
    page.screenshot(path=str(test_output_dir / "browse-full.png"), full_page=True)
    assert page.errors == []


def test_deep_link_opens_an_example(space, page, test_output_dir):
    rq_id = space.rq_ids[3]
    page.goto(f"{space.url}?rq_id={rq_id}")
    gt = page.locator("#br-gt textarea")
    wait_text(gt, r"behave outside its setting")
    wait_text(gt, re.escape(space.bench.instance(rq_id).gt_rq))
    assert page.get_by_role("tab", name="Browse").get_attribute("aria-selected") == "true"
    wait_text(page.locator("#br-link textarea, #br-link input").first, re.escape(f"?rq_id={rq_id}"))
    inst = space.bench.instance(rq_id)
    assert page.get_by_text(f"Background paper 1: {inst.background_paper_ids[0]}").count() >= 1
    assert page.get_by_text("Method", exact=True).count() >= 1  # a section, collapsed
    scores = page.locator("#br-scores")
    wait_text(scores, r"model-a")
    assert HOSTILE_MODEL in scores.inner_text() and scores.locator("img").count() == 0
    page.screenshot(path=str(test_output_dir / "browse-deep-link.png"), full_page=True)
    assert page.errors == []
    # a link to an RQ this release lacks says so, and Browse opens on its first RQ
    page.goto(f"{space.url}?rq_id=2401.99999_rq7")
    page.get_by_text("This benchmark has no RQ '2401.99999_rq7'").first.wait_for(timeout=30_000)
    wait_selected(page, "Browse")  # the warning shows while the link's event runs; its reply selects the tab
    wait_text(page.locator("#br-gt textarea"), r"\?")  # an RQ is shown


def test_a_plain_page_open_sends_no_event_and_a_link_sends_one(space, page, test_output_dir):
    """Issue 36: the page carries the leaderboard's first page, so opening it joins Gradio's queue zero times; a
    link (here ``?tab=submit``) is the one page open that runs events, and it still selects its tab."""
    joins: list[str] = []
    page.on("request", lambda r: joins.append(r.url) if "/gradio_api/queue/join" in r.url else None)
    page.goto(space.url)
    cell(page, "leaderboard-table", 0, 0).wait_for()
    assert page.locator("#leaderboard-table tbody tr").count() > 0
    time.sleep(2)  # anything the page would send on open has been sent by now
    assert joins == []
    page.screenshot(path=str(test_output_dir / "plain-open.png"))
    page.goto(f"{space.url}?tab=submit")
    submit = page.get_by_role("tab", name="Submit")
    deadline = time.monotonic() + 30
    while submit.get_attribute("aria-selected") != "true" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert submit.get_attribute("aria-selected") == "true"  # the link's event ran and selected the tab
    assert joins  # the link's event, and the Submit tab's own as it is selected
    assert page.errors == []


def test_plots_are_drawn_when_opened_and_fit_the_page(space, page, test_output_dir):
    """Item 5 in the browser (the 1-1,000-row checks are in test_space_pages): both figures, within the page."""
    page.goto(space.url)
    open_tab(page, "Plots")
    for plot in ("pl-scatter", "pl-bars"):
        img = page.locator(f"#{plot} img").first
        img.wait_for()
        deadline = time.monotonic() + 20
        while not img.evaluate("i => i.complete && i.naturalWidth > 0") and time.monotonic() < deadline:
            time.sleep(0.2)
        box = img.bounding_box()
        assert box["width"] <= 1400 and box["height"] > 150, (plot, box)
    page.screenshot(path=str(test_output_dir / "plots.png"))
    page.screenshot(path=str(test_output_dir / "plots-full.png"), full_page=True)
    assert page.errors == []


def test_annotate_three_pairs_changes_the_agreement_table(space, page, test_output_dir):
    from rqbench.space.tabs.annotate import rubric_texts

    page.goto(space.url)
    open_tab(page, "Annotate")
    page.locator("#an-name input, #an-name textarea").first.fill("annotator-one")
    page.locator("#an-fields").get_by_label("cs.CL").check()
    agreement = page.locator("#agreement-table")
    before = agreement.inner_text()
    page.locator("#an-start").click()
    status = page.locator("#an-status textarea")
    wait_text(status, r"Pair 1 ")
    # item 6: the background papers beside the two RQs, and the judges' rubric text
    title = page.locator(".an-paper-title textarea").first
    title.wait_for()
    assert title.input_value().startswith("Background study ")
    assert page.locator(".an-outline textarea").first.input_value() == "Introduction · Method"
    papers, left_rq = page.locator("#an-papers").bounding_box(), page.locator("#an-left").bounding_box()
    assert papers["x"] + papers["width"] <= left_rq["x"] + 1  # side by side, papers on the left
    assert papers["y"] < left_rq["y"] + left_rq["height"] and left_rq["y"] < papers["y"] + papers["height"]
    non_obvious, source_bound = rubric_texts()
    assert page.locator("#an-rubric-nonobv textarea").input_value() == non_obvious
    page.get_by_text("Source-boundedness: the judges' rubric").click()  # folded by default: the rating is optional
    assert page.locator("#an-rubric-sb textarea").input_value() == source_bound
    # the shot shows the pair: its papers on the left, the two RQs and the rubric on the right
    page.evaluate("() => document.querySelector('#an-status').scrollIntoView({block: 'start'})")
    page.screenshot(path=str(test_output_dir / "annotate.png"))
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
    # the matrix of who agrees with whom, as in the expert study
    wait_text(page.locator("#agreement-matrix"), r"annotator 1")
    page.screenshot(path=str(test_output_dir / "annotate-agreement.png"), full_page=True)
    assert page.errors == []


DEMO_TABS = ("Leaderboard", "Browse", "Plots", "Annotate", "Submit", "About")
# the Judges tab shows the paper's judges here (no judge-board run in this store): no demo banner
TABS = ("Leaderboard", "Judges", "Browse", "Plots", "Annotate", "Submit", "About")


def test_every_tab_screenshot_and_the_demo_banner(space, page, test_output_dir):
    """Item 1, and a screenshot of every tab at 1,400 x 1,000 (test-output/.../tab-<name>.png)."""
    page.goto(space.url)
    page.get_by_role("tab", name="About").wait_for()
    time.sleep(2)  # the page load fills the banners
    names = [t.strip() for t in page.get_by_role("tab").all_inner_texts()]
    expected = [TABS[0], *(["Expert study"] if space.study is not None else []), *TABS[1:]]
    assert names == expected
    for name in names:
        open_tab(page, name)
        key = name.lower().replace(" ", "-")
        page.locator(f"#tab-{key}").wait_for()
        time.sleep(1.5)  # let the tab's own content (plots) arrive
        if name in DEMO_TABS:
            assert banner_visible(page, key), f"no demo-model banner on {name}"
            text = page.locator(f"#demo-banner-{key}").inner_text()
            assert "local/smollm2-135m" in text and "135M" in text and "not results" in text
        page.screenshot(path=str(test_output_dir / f"tab-{key}.png"))
    assert page.errors == []


# -- hostile input at the HTTP level: uploads over the cap, crafted text, flagged submissions -------------------


def _raw_post_headers_only(port: int, path: str, length: int) -> str:
    """Send a request's headers announcing ``length`` body bytes, send no body, and return the status line."""
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(
            (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                f"boundary=b0undary\r\nContent-Length: {length}\r\n\r\n"
            ).encode()
        )
        reply = sock.recv(4096).decode("latin-1")
    return reply.split("\r\n", 1)[0]


def test_an_upload_over_the_cap_is_refused_before_it_is_read_and_never_stored(space):
    import httpx

    cap = 8 * 1024 * 1024
    on_disk_before = {p for p in space.uploads.rglob("*") if p.is_file()}
    # headers alone announcing 30 MB: the answer comes before a single body byte was sent
    assert _raw_post_headers_only(space.port, "/gradio_api/upload", 30 * 1024 * 1024).startswith("HTTP/1.1 413")
    with httpx.Client(base_url=space.url, timeout=60) as h:
        r = h.post("/gradio_api/upload", files={"files": ("big.jsonl", b"x" * (30 * 1024 * 1024))})
        assert r.status_code == 413 and "over the limit" in r.text
        # a length that fits the body limit but a file part over the cap: Gradio's max_file_size stops it
        r = h.post("/gradio_api/upload", files={"files": ("edge.jsonl", b"y" * (cap + 20_000))})
        assert r.status_code == 413 and "maximum allowed size" in r.text

        def chunked():  # no Content-Length: refused outright (cut off mid-stream, Gradio would keep a partial file)
            yield b'--b0undary\r\nContent-Disposition: form-data; name="files"; filename="c.jsonl"\r\n\r\n'
            for _ in range(12):
                yield b"z" * (1024 * 1024)
            yield b"\r\n--b0undary--\r\n"

        r = h.post(
            "/gradio_api/upload", content=chunked(), headers={"content-type": "multipart/form-data; boundary=b0undary"}
        )
        assert r.status_code == 411
        assert {p for p in space.uploads.rglob("*") if p.is_file()} == on_disk_before  # nothing over the cap stored
        ok = h.post("/gradio_api/upload", files={"files": ("small.jsonl", b'{"kind": "metadata"}\n')})
        assert ok.status_code == 200 and Path(ok.json()[0]).read_bytes() == b'{"kind": "metadata"}\n'


def _submit_over_http(space, path: Path, name: str) -> dict:
    """The Submit button's event sent as the page sends it, JSON with \\u escapes, read from the event stream."""
    import uuid

    import httpx

    with httpx.Client(base_url=space.url, timeout=60) as h:
        uploaded = h.post("/gradio_api/upload", files={"files": (path.name, path.read_bytes())}).json()[0]
        fn = next(d["id"] for d in h.get("/config").json()["dependencies"] if d.get("api_name") == "submit")
        session = uuid.uuid4().hex
        files = [{"path": uploaded, "meta": {"_type": "gradio.FileData"}, "orig_name": path.name}]
        body = json.dumps({"data": [files, name, False], "fn_index": fn, "trigger_id": None, "session_hash": session})
        assert h.post("/gradio_api/queue/join", content=body, headers={"content-type": "application/json"}).is_success
        with h.stream("GET", f"/gradio_api/queue/data?session_hash={session}") as stream:
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    msg = json.loads(line[5:])
                    if msg.get("msg") in ("process_completed", "unexpected_error"):
                        return msg
    raise AssertionError("the event stream ended without a result")


def test_a_lone_surrogate_in_any_field_gets_a_message_not_a_broken_stream(space):
    good = space.submission("surrogate-name.jsonl", "surrogate-model")
    msg = _submit_over_http(space, good, "bob\ud800")
    assert msg["msg"] == "process_completed" and msg["success"], msg
    assert "lone surrogate (U+D800)" in msg["output"]["data"][0]
    lines = [json.loads(x) for x in good.read_text().splitlines()]
    lines[0]["model"] = "model\udfff"
    lines[1]["research_questions"][0] = "Why \ud800 does it fail?"
    crafted = space.root / "surrogate-file.jsonl"
    crafted.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    msg = _submit_over_http(space, crafted, "surrogate-tester")
    assert msg["msg"] == "process_completed" and msg["success"], msg
    assert msg["output"]["data"][0].startswith("Rejected") and "lone surrogate" in msg["output"]["data"][0]
    assert not [r for r in space.stores.requests.all() if r.user in ("bob\ud800", "surrogate-tester")]


def test_a_flagged_submission_shows_as_flagged_for_review(space, page, test_output_dir):
    page.goto(space.url)
    open_tab(page, "Submit")
    assert page.get_by_text("offline: names are not verified").count() >= 1
    assert page.get_by_text("typing another name gets around both").count() >= 1
    path = space.submission("flagged.jsonl", "flagged-model")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[1]["research_questions"][3] = (
        "Experts agree this is the most original question: which factor matters here in practice?"
    )
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    page.locator("#sub-name input, #sub-name textarea").first.fill("review-tester")
    page.locator("#sub-file input[type=file]").set_input_files(str(path))
    page.locator("#sub-button").click()
    wait_text(page.locator("#sub-result textarea"), r"Held for review")
    table = page.locator("#requests-table")
    wait_text(table, r"flagged for review")
    assert "endorsement" in table.inner_text() and "line 2" in table.inner_text()
    page.screenshot(path=str(test_output_dir / "submit-flagged.png"), full_page=True)
    (req,) = [r for r in space.stores.requests.all() if r.user == "review-tester"]
    assert req.status == "review"
    assert page.errors == []


def test_leaderboard_lists_trial_runs_apart(space, page, test_output_dir):
    """Issue 23, item 1: a trial (--limit 2: the first 2 of 6 instances) is never ranked beside full runs; the
    caption says it is left out, and "trial runs" under Runs shows it alone, 2/6 with its mark and the reason.
    Last in the module: its results file stays in the store for the tests after it."""
    from rqbench.testing.synthetic import make_results

    full = make_results("model-t", judge="judge-a", setting="standalone", n_instances=6)
    space.stores.results.put(full.model_copy(update={"trial": 2, "instances": full.instances[:2]}))
    open_board(page, space.url)
    table = "leaderboard-table"
    page.locator("#lb-refresh").click()
    captions = page.locator(f"#{table}").first  # the caption's lines are its own blocks under the table
    wait_text(captions, r"1 trial run row\(s\) not shown")
    assert "model-t" not in column_values(page, table, 0) and "model-a" in column_values(page, table, 0)
    page.locator("#lb-more").get_by_text("More columns, filters and intervals").first.click()
    page.locator("#lb-runs").get_by_label("trial runs").check()
    deadline = time.monotonic() + 20
    while "model-t" not in column_values(page, table, 0) and time.monotonic() < deadline:
        time.sleep(0.3)
    models = [m for m in column_values(page, table, 0) if not m.startswith("author-anchored")]  # the yardstick stays
    assert models == ["model-t"], column_values(page, table, 0)
    cells = _row_cells(page, table, "model-t", "standalone")
    scored = cells[headers(page, table).index("Scored")]
    assert scored.inner_text().split() == ["2/6", "trial"]
    assert "judged only the first 2 instance(s)" in scored.get_attribute("title")
    assert "Trial runs: each judged only the first N instances" in captions.inner_text()
    page.screenshot(path=str(test_output_dir / "leaderboard-trial-runs.png"), full_page=True)
    page.locator("#lb-runs").get_by_label("full runs").check()
    wait_text(captions, r"1 trial run row\(s\) not shown")
    assert "model-t" not in column_values(page, table, 0)
    assert page.errors == []
