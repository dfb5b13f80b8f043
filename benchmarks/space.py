"""Leaderboard speed with 1,000 rows: the Space's page against a plain pandas HTML table, in one run.

Rows come from real results files (500 synthetic models x 2 settings, one judge:
1,000 model rows, all of them in the default view, and the reference rows)
through the real path: store -> summarize -> leaderboard table. Measured:

- build: results files to the table the page shows (build_table + render, and the page's cells),
  against building the same rows into a DataFrame with pandas alone and ``to_html``;
- in headless Chromium (when /usr/bin/chromium exists): time from opening the Space (it opens on
  its Leaderboard tab) to the first table cell (the whole page: Gradio's start and the table the
  page carries, baked in once per data version), and the latency of a search-filter change, against the same rows as a static pandas
  ``to_html`` page and a filter done by pandas + ``page.set_content``. The first-render ratio is
  the figure to watch (target: at most 1.2x).

Run: ``.venv/bin/python benchmarks/space.py`` (a few minutes on a busy 2-core machine).
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd

from rqbench.evaluate.metrics.summary import summarize
from rqbench.space import leaderboard as lb
from rqbench.space import leaderboard_cells as lb_cells
from rqbench.testing.synthetic import fill_results_store

N_MODELS, JUDGES, SETTINGS = 500, ("j1",), ("standalone", "comparative")
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="rqb-space-bench-"))
    # the filters ask for model-04, -01, -09
    stores = fill_results_store(tmp / "store", 100 if args.smoke else N_MODELS, judges=JUDGES, settings=SETTINGS)
    results, _ = stores.results.load()

    rows_t, rows = timed(lambda: summarize(results, n_boot=200), repeat=1)
    n_model_rows = sum(1 for r in rows if r.row_kind == "model" and r.subfield is None)
    print(f"{len(results)} results files -> {n_model_rows} model rows (+ reference rows); summarize {rows_t:.2f}s")

    ours_t, shown = timed(lambda: lb_cells.display(lb.build_table(rows), lb.View()))
    plain_t, _ = timed(lambda: pd.DataFrame([r.flat() for r in rows]).to_html())
    print(
        f"table from summary rows: leaderboard {ours_t * 1000:.1f} ms, plain pandas flat+to_html "
        f"{plain_t * 1000:.1f} ms, ratio {ours_t / plain_t:.2f}x ({len(shown[1])} rows shown)"
    )

    table = lb.build_table(rows)
    filt_ours, _ = timed(lambda: lb_cells.display(table, lb.View(search="model-04")), repeat=5)
    flat = pd.DataFrame([r.flat() for r in rows])
    filt_plain, _ = timed(lambda: flat[flat["model"].str.contains("model-04", regex=False)].to_html(), repeat=5)
    print(
        f"filter change (table cached): leaderboard {filt_ours * 1000:.1f} ms, pandas {filt_plain * 1000:.1f} ms, "
        f"ratio {filt_ours / filt_plain:.2f}x"
    )

    if not CHROMIUM.exists():
        print("browser timings skipped: /usr/bin/chromium is not installed")
        return
    from playwright.sync_api import sync_playwright

    from rqbench.space.ui import SpaceConfig, build_app, launch_options

    config = SpaceConfig(stores=stores, n_boot=200)
    demo = build_app(config)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # as the Space serves it: launch_options brings the page's baked opening view up to date before each page
    demo.queue().launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options(config, demo)
    )
    html_path = tmp / "plain.html"
    html_path.write_text(flat.to_html(), encoding="utf-8")
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            first = []
            for _ in range(3):  # a fresh page each time; the first load also pays for summarize
                pg = b.new_page(viewport={"width": 1400, "height": 1000})
                t = time.perf_counter()
                pg.goto(f"http://127.0.0.1:{port}/")  # the page opens on the leaderboard
                pg.locator("#leaderboard-table [data-testid='cell-0-0']").first.wait_for(timeout=120_000)
                first.append(time.perf_counter() - t)
                shown_rows = pg.locator("#leaderboard-table tbody tr").count()
                time.sleep(3)  # let the page settle before it is closed
                pg.close()
            pg = b.new_page(viewport={"width": 1400, "height": 1000})
            pg.goto(f"http://127.0.0.1:{port}/")  # the page opens on the leaderboard
            pg.locator("#leaderboard-table [data-testid='cell-0-0']").first.wait_for(timeout=120_000)
            time.sleep(3)
            lat = []
            box = pg.locator("#lb-search textarea, #lb-search input").first
            for q in ("model-04", "model-01", "model-09"):
                t = time.perf_counter()
                box.fill(q)
                box.press("Enter")
                pg.wait_for_function(
                    "q => { const c = document.querySelector(\"#leaderboard-table [data-testid='cell-0-0']\");"
                    " return c && c.innerText.includes(q); }",
                    arg=q,
                    timeout=60_000,
                )
                lat.append(time.perf_counter() - t)
            base_first = []
            for _ in range(3):
                t = time.perf_counter()
                pg.goto(html_path.as_uri())
                pg.locator("table tbody tr").first.wait_for()
                base_first.append(time.perf_counter() - t)
            base_lat = []
            for q in ("model-04", "model-01", "model-09"):
                t = time.perf_counter()
                pg.set_content(flat[flat["model"].str.contains(q, regex=False)].to_html())
                pg.locator("table tbody tr").first.wait_for()
                base_lat.append(time.perf_counter() - t)
            b.close()
    finally:
        demo.close()
    f_ours, f_base = statistics.median(first), statistics.median(base_first)
    l_ours, l_base = statistics.median(lat), statistics.median(base_lat)
    print(
        f"browser first render of {shown_rows} rows (median of 3, the first includes summarize): Space "
        f"{f_ours:.2f}s, pandas HTML of {len(flat)} rows {f_base:.2f}s, ratio {f_ours / f_base:.2f}x "
        f"(target: at most 1.2x)"
    )
    print(
        f"browser filter change (median of 3): Space {l_ours:.2f}s, pandas HTML {l_base:.2f}s, "
        f"ratio {l_ours / l_base:.2f}x"
    )


if __name__ == "__main__":
    main()
