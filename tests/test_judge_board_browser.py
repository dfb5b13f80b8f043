"""The Judges tab in real headless Chromium: the ranked board, the ceiling, the paper's rows, the plot, the banner,
and the board following a new annotation.

The store holds two judge-board files on the paper's A.6 pairs, written by hand:
``judge-b`` picks what expert 1 picked (so it matches the experts' majority on
all seven pairs that have one), and the embedded model (a demo judge) calls
every pair a tie. With the paper's two judges and the experts' 70% ceiling the
order is known in advance. Screenshots go to test-output/.
"""

from __future__ import annotations

import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from test_space_browser import (
    CHROMIUM,
    LAUNCH_ARGS,
    _free_port,
    banner_visible,
    column_values,
    expert_study_file,
    wait_text,
)

pytestmark = pytest.mark.browser
sync_api = pytest.importorskip("playwright.sync_api")

DEMO = "local/smollm2-135m"


def board_file(pool, label: str, picks: dict[str, str]):
    """A judge-board file whose two calls on each pair both give ``picks[pair]``."""
    from rqbench.evaluate.judge_board.metrics import order_pick
    from rqbench.evaluate.judge_board.run import board_path
    from rqbench.prompts import load_prompt_set
    from rqbench.records import (
        JudgeBoardFile,
        JudgeSpec,
        NoveltyScore,
        OrderVerdict,
        PairVerdicts,
        PromptSetRef,
        RawReply,
    )

    values = {"gt": (3, 1), "model": (1, 3), "tie": (2, 2)}
    prompts = load_prompt_set()
    pairs = []
    for p in pool.pairs:
        gt, model = (
            NoveltyScore(relevance=1, originality=1, gap_addressing=1, non_obviousness=v)
            for v in values[picks[p.pair_id]]
        )
        calls = [
            OrderVerdict(
                order=o,
                pick=order_pick(gt, model),
                gt_score=gt,
                model_score=model,
                cost_usd=0.002,
                latency_s=4.0,
                raw=RawReply(step="novelty_comparative", cache_key="k", text="{}"),
            )
            for o in ("gt_first", "model_first")
        ]
        pairs.append(PairVerdicts(pair_id=p.pair_id, content_key=p.content_key(), verdicts=calls))
    spec = JudgeSpec(
        model=label, label=label, setting="comparative", orderings=2, prompt_set=PromptSetRef(**prompts.ref())
    )
    f = JudgeBoardFile(
        judge=spec,
        step="novelty_comparative",
        pool_version=pool.version,
        pool_pairs=len(pool.pairs),
        created_at=datetime.now(timezone.utc),
        pairs=pairs,
    )
    return f, board_path(Path("."), label, prompts).name


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    study = expert_study_file()
    if study is None:
        pytest.skip("../shared/fixtures/paper_examples/expert_vs_llm.jsonl is not beside this checkout")
    from rqbench.evaluate.judge_board.expert_pool import a6_pairs, make_pool
    from rqbench.records import CitedPaper
    from rqbench.space.stores import SpaceStores
    from rqbench.space.ui import SpaceConfig, build_app, launch_options
    from rqbench.testing.synthetic import make_results

    root = tmp_path_factory.mktemp("judges")
    before = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-uploads")
    stores = SpaceStores.local(root / "store")
    pool = make_pool([a6_pairs(study)])
    expert_1 = {p.pair_id: p.expert_picks["expert_1"] for p in pool.pairs}
    for label, picks in (("judge-b", expert_1), (DEMO, {p.pair_id: "tie" for p in pool.pairs})):
        stores.judge_board.put(*board_file(pool, label, picks))
    results = make_results("model-a", setting="comparative", n_instances=2)  # a pair for annotators
    stores.results.put(results)
    papers = {
        pid: CitedPaper(paper_id=pid, title=f"Background {pid}", abstract="A.", text_level="abstract")
        for inst in results.instances
        for pid in inst.background_paper_ids
    }
    config = SpaceConfig(stores=stores, library=papers, n_boot=200, expert_study=study, recheck_after_s=0.0)
    demo = build_app(config)
    port = _free_port()
    demo.queue().launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options(config, demo)
    )
    try:
        yield {"url": f"http://127.0.0.1:{port}/", "stores": stores, "results": results, "pool": pool}
    finally:
        demo.close()
        if before is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = before


@pytest.fixture
def page():
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        pg = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
        pg.set_default_timeout(30_000)
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.errors = errors  # type: ignore[attr-defined]
        yield pg
        browser.close()


def test_the_judges_tab_ranks_judges_against_the_experts(app, page, test_output_dir):
    from rqbench.space import annotate as an

    page.goto(f"{app['url']}?tab=judges")
    page.locator("#judges-table [data-testid='cell-0-1']").wait_for()
    assert page.get_by_role("tab", name="Judges").get_attribute("aria-selected") == "true"
    names = [n.strip() for n in column_values(page, "judges-table", 1)]
    assert names == ["judge-b", "Experts with each other (the ceiling)", "gemini-3.1-pro", "deepseek-v4-pro", DEMO]
    rows = page.locator("#judges-table tbody tr")
    gemini = [c.strip() for c in rows.nth(2).locator("td").all_inner_texts()]
    # the paper's verdicts: 3 of 7 majority pairs, 40% and 50% against the two experts, marked as the paper's
    assert gemini[2].startswith("43%") and "n=7" in gemini[2]
    assert gemini[4].startswith("40%") and gemini[5].startswith("50%") and "n=10" in gemini[4]
    assert "published verdicts" in gemini[1]
    ceiling = [c.strip() for c in rows.nth(1).locator("td").all_inner_texts()]
    assert ceiling[2].startswith("70%") and "n=10" in ceiling[2]
    top = [c.strip() for c in rows.nth(0).locator("td").all_inner_texts()]
    assert top[2].startswith("100%") and top[-1] == "10/10" and top[-3] == "$4.00"  # two calls of $0.002 a pair
    # what each column means is on its header
    assert "majority" in page.locator("#judges-table thead th").nth(2).get_attribute("title")
    assert banner_visible(page, "judges")  # the embedded model is a row
    assert DEMO in page.locator("#demo-banner-judges").inner_text()
    page.locator("#jb-plot img, #jb-plot canvas").first.wait_for()
    assert "10 pair(s) (10 from the paper's appendix A.6)" in page.locator("#jb-pool textarea").input_value()
    page.screenshot(path=str(test_output_dir / "judges.png"), full_page=True)

    # a new annotation joins the pool: opening the tab again shows it, the paper's rows stay on their pairs
    pair = an.build_pairs([app["results"]])[0]
    now = datetime.now(timezone.utc)
    app["stores"].annotations.append(an.make_judgment("ann-x", pair, "left", shown_at=now, now=now))
    page.get_by_role("tab", name="About").click()
    time.sleep(0.5)
    page.get_by_role("tab", name="Judges").click()
    wait_text(page.locator("#jb-pool textarea"), r"11 pair\(s\) \(10 from the paper's appendix A.6, 1 annotated")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        gemini = next(r for r in page.locator("#judges-table tbody tr").all() if "gemini" in r.inner_text())
        cells = [c.strip() for c in gemini.locator("td").all_inner_texts()]
        if cells[-1] == "10/11":
            break
        time.sleep(0.3)
    assert cells[-1] == "10/11" and cells[2].startswith("43%")  # still 3 of 7, on the A.6 pairs
    assert "1 of 11 pairs not judged yet" in page.locator("#jb-pool textarea").input_value()
    page.screenshot(path=str(test_output_dir / "judges-after-annotation.png"), full_page=True)
    assert page.errors == []
