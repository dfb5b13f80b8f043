"""``rqbench worker``: judge pending leaderboard submissions, once or on a schedule."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

from rqbench import paths


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--once", action="store_true", help="handle the waiting requests, then exit")
    p.add_argument("--judge", action="append", default=None, metavar="MODEL",
                   help="judge model (litellm name, 'local', or name@key=value,...); repeat for several "
                        "(default: local and local@temperature=0.7)")  # fmt: skip
    p.add_argument("--setting", choices=["standalone", "comparative", "both"], default="both")
    p.add_argument("--interval", type=float, default=60.0, metavar="S", help="seconds between polls (default 60)")
    p.add_argument("--store", type=Path, default=None, help="local store folder (default: RQB_HOME/space)")
    p.add_argument("--dataset", default=None, help="read the benchmark from here instead of each request's repo")
    p.add_argument("--orderings", type=int, default=1, help="shuffled orderings per comparative call")
    p.add_argument("--allow-partial", action="store_true", help="judge submissions that cover only some instances")


def run(args: argparse.Namespace) -> int:
    from rqbench.space.stores import SpaceStores
    from rqbench.space.worker import Worker, evaluate_judge

    judges = args.judge or ["local", "local@temperature=0.7"]
    settings = ["standalone", "comparative"] if args.setting == "both" else [args.setting]
    stores = SpaceStores.from_env(args.store)
    judge = evaluate_judge(judges, settings, dataset=args.dataset, orderings=args.orderings,
                           allow_partial=args.allow_partial, progress=True)  # fmt: skip
    worker = Worker(stores, judge, work_dir=paths.home() / "space-work")
    print(f"worker {worker.worker_id}: store {stores.backend}; judges {', '.join(j.split('@')[0] for j in judges)}")
    if args.once:
        n = 0
        while (rep := worker.run_once()) is not None:
            n += 1
            tail = f": {rep.reason}" if rep.reason else ""
            print(f"request {rep.request_id}: {rep.status}{tail}")
        print(f"{n} request(s) handled")
        return 0
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.run(interval_s=args.interval, stop=stop)
    return 0
