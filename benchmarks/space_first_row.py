"""The first leaderboard row in a real browser, alone and with a crowd on the Space.

Headless Chromium (Debian's, driven by Playwright) opens the Space's page in a fresh browser context each time and
times from the navigation's start to the first row of the leaderboard's table being visible: what a visitor waits
for. The Space is the real ``rqbench space`` process on the store ``space_load.py`` builds (500 synthetic models x 2
settings, one judge, 500 finished requests). The baseline is the same probe with no one else on the Space, in this
run; then the probe again while the crowd of ``space_load.py`` (its visitors, actions and pauses, each page open
being ``GET /``) visits the Space: by default 49 other visitors, the goal of issue 36 being the first row within 3 s.

Run: ``.venv/bin/python benchmarks/space_first_row.py`` (about 3 minutes on a quiet 2-core machine);
``--smoke`` checks the script on a tiny store (its figures mean nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
import space_load as sl  # noqa: E402  (the crowd, the Space's start and the store: one definition, there)

from rqbench.testing.synthetic import fill_results_store, instance_ids  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
FIRST_ROW = "#leaderboard-table tbody tr"
GOAL_S = 3.0


def first_row_seconds(url: str, loads: int, timeout_s: float) -> list[float]:
    """Seconds from each page navigation's start to the leaderboard's first row being visible (a new context each
    load: nothing cached between them)."""
    from playwright.sync_api import sync_playwright

    out = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            for _ in range(loads):
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                page = context.new_page()
                t = time.perf_counter()
                page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
                page.locator(FIRST_ROW).first.wait_for(state="visible", timeout=timeout_s * 1000)
                out.append(time.perf_counter() - t)
                context.close()
        finally:
            browser.close()
    return out


class Crowd:
    """The crowd of ``space_load.py`` on its own thread and event loop, from ``start()`` until ``stop()``."""

    def __init__(self, space: sl.Server, plan: sl.Plan, args: argparse.Namespace):
        self.space, self.plan, self.args = space, plan, args
        self.requests = 0
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="crowd")

    def _count(self, n: int) -> None:
        self.requests = n

    async def _visit(self) -> None:
        args = self.args
        async with sl.client_for(args.crowd) as client:
            await sl.crowd(
                lambda: sl.SpaceVisitor(client, self.space.url, self.plan, args.timeout),
                self.plan,
                visitors=args.crowd,
                budget=10**9,
                think_s=args.think,
                deadline=time.monotonic() + args.max_seconds,
                n_models=args.models,
                seed=1,
                on_request=self._count,
            )

    def _run(self) -> None:
        self._task = self._loop.create_task(self._visit())
        try:
            self._loop.run_until_complete(self._task)
        except asyncio.CancelledError:
            pass
        finally:
            self._loop.close()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        while self._task is None and self._thread.is_alive():
            time.sleep(0.05)
        if self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(timeout=60)


def summary(times: list[float]) -> str:
    return f"median {statistics.median(times):.2f} s, worst {max(times):.2f} s over {len(times)} loads"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="a tiny run that only checks the script works")
    ap.add_argument("--crowd", type=int, default=49, help="other visitors on the Space during the probe")
    ap.add_argument("--loads", type=int, default=7, help="page loads per probe")
    ap.add_argument("--models", type=int, default=500, help="synthetic models (x2 settings = leaderboard rows)")
    ap.add_argument("--think", type=float, default=0.5, help="mean pause between a visitor's actions, seconds")
    ap.add_argument("--warm-s", type=float, default=15, help="seconds of crowd before the probe starts")
    ap.add_argument("--timeout", type=float, default=60, help="seconds before a load counts as failed")
    ap.add_argument("--max-seconds", type=float, default=900)
    args = ap.parse_args()
    if args.smoke:
        args.crowd, args.loads, args.models, args.warm_s = 3, 2, 20, 2
    if not CHROMIUM.exists():
        raise SystemExit(f"no Chromium at {CHROMIUM} (scripts/setup.sh installs Debian's)")
    sys.stdout.reconfigure(line_buffering=True)
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"machine: {os.cpu_count()} cores, load average {load} at the start")

    run = Path(tempfile.mkdtemp(prefix="rqb-first-row-"))
    fill_results_store(run / "store", args.models, with_requests=True)
    env = {
        **os.environ,
        "TMPDIR": str(run),
        "GRADIO_TEMP_DIR": str(run / "gradio"),
        "RQB_HOME": str(run / "home"),
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    env.pop("SPACE_ID", None)
    port = sl.free_port()
    cmd = [sys.executable, "-m", "rqbench", "space", "--store", str(run / "store"), "--port", str(port)]
    space = sl.start("the Space", cmd, port, env, run / "space.log", 300)
    try:
        config = httpx.get(space.url + "/config", timeout=120).json()  # the first look reads and summarises
        ids = instance_ids(sl.N_INSTANCES)
        plan = sl.Plan.from_config(config, [r for r, arxiv_id, _ in ids if arxiv_id == ids[0][1]])
        first_row_seconds(space.url, 1, args.timeout)  # Chromium's own start, and the Space's first page
        alone = first_row_seconds(space.url, args.loads, args.timeout)
        print(f"alone: first leaderboard row visible after {summary(alone)}")

        crowd = Crowd(space, plan, args)
        crowd.start()
        time.sleep(args.warm_s)
        try:
            crowded = first_row_seconds(space.url, args.loads, args.timeout)
        finally:
            crowd.stop()
        print(
            f"with {args.crowd} other visitors ({crowd.requests} of their requests answered meanwhile): first row "
            f"visible after {summary(crowded)}"
        )
        ratio = statistics.median(crowded) / statistics.median(alone)
        print(f"ratio, crowded over alone (median): {ratio:.1f}x")
        worst = max(crowded)
        verdict = "met" if worst <= GOAL_S else "NOT met"
        print(f"goal (issue 36): every crowded load's first row within {GOAL_S:.0f} s: {verdict} (worst {worst:.2f} s)")
    finally:
        space.stop()


if __name__ == "__main__":
    main()
