"""``rqbench worker``: judge pending leaderboard submissions, once or on a schedule; review flagged ones.

A submission whose RQs the manipulation screen flagged waits with status
``review``. ``--review`` lists them with the reasons; ``--approve ID`` lets one
be judged and published, ``--reject ID --note TEXT`` fails it. Each decision
records who made it (``--by``, default the login name).
"""

from __future__ import annotations

import argparse
import getpass
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
    review = p.add_argument_group("review of flagged submissions (no judging)")
    review.add_argument("--review", action="store_true", help="list the requests held for review, with the reasons")
    review.add_argument("--approve", metavar="REQUEST_ID", default=None, help="let a flagged request be judged")
    review.add_argument("--reject", metavar="REQUEST_ID", default=None, help="fail a flagged request")
    review.add_argument("--note", default="", help="the reason for a decision (shown with a rejection)")
    review.add_argument("--by", default=None, help="who decides (default: the login name)")


def review_command(args: argparse.Namespace, stores) -> int:
    """--review / --approve / --reject: print what was done; exit 2 with the reason when it cannot be done."""
    from rqbench.space.worker import ReviewError, approve, reject

    if args.approve and args.reject:
        print("error: --approve and --reject name one decision; give one of them")
        return 2
    if args.review:
        requests, unreadable = stores.requests.load()
        held = [r for r in requests if r.status == "review"]
        for r in held:
            print(f"{r.request_id}  {r.metadata.model}  from {r.user}  {r.flagged_count} RQ(s) flagged")
            for line in r.flags:
                print(f"    {line}")
        print(f"{len(held)} request(s) held for review in {stores.backend}")
        for bad in unreadable:  # damaged files are named, never a traceback
            print(f"unreadable request file: {bad}")
        return 0
    by = args.by or getpass.getuser()
    try:
        if args.approve:
            req = approve(stores, args.approve, by=by, note=args.note)
            print(f"request {req.request_id} ({req.metadata.model}) approved by {by}: pending, judged next")
        else:
            req = reject(stores, args.reject, by=by, note=args.note)
            print(f"request {req.request_id} ({req.metadata.model}) rejected by {by}: {req.reason}")
    except ReviewError as exc:
        print(f"error: {exc}")
        return 2
    return 0


def run(args: argparse.Namespace) -> int:
    from rqbench.space.stores import SpaceStores
    from rqbench.space.worker import Worker, evaluate_judge

    stores = SpaceStores.from_env(args.store)
    if args.review or args.approve or args.reject:
        return review_command(args, stores)
    judges = args.judge or ["local", "local@temperature=0.7"]
    settings = ["standalone", "comparative"] if args.setting == "both" else [args.setting]
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
