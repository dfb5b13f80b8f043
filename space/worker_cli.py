"""``rqbench worker``: judge pending leaderboard submissions, once or on a schedule; review flagged ones.

It can be tried safely: ``--list`` shows the queue in the order the worker takes
it, ``--dry-run`` prices each queued request (calls, tokens, cost, through the
LLM layer's estimator; nothing is sent and no status changes), ``--limit N``
judges at most N requests and stops, and ``--instances N`` makes it a trial: the
first N instances of each request, published as a trial, the request left
waiting. Each request judged prints its run id, so ``rqbench calls --run ID``
shows what it cost.

A submission whose RQs the manipulation screen flagged waits with status
``review``. ``--review`` lists them with the reasons; ``--approve ID`` lets one
be judged and published, ``--reject ID --note TEXT`` fails it. Each decision
records who made it (``--by``, default the login name).
"""

from __future__ import annotations

import argparse
import getpass
import signal
import tempfile
import threading
from collections import Counter
from pathlib import Path

from rqbench import paths
from rqbench.evaluate.generate.cli import at_least_one


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--once", action="store_true", help="handle the waiting requests, then exit")
    p.add_argument(
        "--judge",
        action="append",
        default=None,
        metavar="MODEL",
        help="judge model (litellm name, 'local', or name@key=value,...); repeat for several "
        "(default: local and local@temperature=0.7)",
    )
    p.add_argument("--setting", choices=["standalone", "comparative", "both"], default="both")
    p.add_argument("--interval", type=float, default=60.0, metavar="S", help="seconds between polls (default 60)")
    p.add_argument("--store", type=Path, default=None, help="local store folder (default: RQB_HOME/space)")
    p.add_argument("--dataset", default=None, help="read the benchmark from here instead of each request's repo")
    p.add_argument("--orderings", type=int, default=1, help="shuffled orderings per comparative call")
    p.add_argument(
        "--allow-partial",
        action="store_true",
        help="judge submissions that cover only some instances (those accepted as partial always are)",
    )
    p.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="judge at most N requests, then stop (with --once: at most N of those waiting)",
    )
    p.add_argument(
        "--instances",
        type=at_least_one,
        default=None,
        metavar="N",
        help="a trial: judge only the first N instances of each request taken (with --once or --limit), "
        "publish the results marked as a trial (never ranked beside full runs) and leave the request "
        "waiting for its full run; with --dry-run, price that trial",
    )
    trial = p.add_argument_group("look before judging (no judging, no status change)")
    trial.add_argument(
        "--list", action="store_true", help="the requests waiting to be judged, in the order the worker takes them"
    )
    trial.add_argument(
        "--dry-run",
        action="store_true",
        help="the calls, tokens and cost each waiting request would take (up to --limit of them)",
    )
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


SHOWN_OPTIONS = ("temperature", "reasoning_effort", "max_tokens")  # never api_base, keys or other addresses


def shown_judges(judges: list[str]) -> str:
    """The judges as a log line may name them: the model and its sampling options, never an address or a key."""
    from rqbench.llm.catalog import parse_model_spec

    out = []
    for spec in judges:
        name, options = parse_model_spec(spec)
        safe = ",".join(f"{k}={v}" for k, v in options.items() if k in SHOWN_OPTIONS)
        out.append(f"{name}@{safe}" if safe else name)
    return ", ".join(out)


def request_line(r) -> str:  # type: ignore[no-untyped-def]
    """One queued request as ``--list`` shows it (never its contact)."""
    partial = ", partial" if r.partial else ""
    resumed = " (left running by a stopped worker: resumed first)" if r.status == "running" else ""
    return (
        f"{r.request_id}  {r.metadata.model}  from {r.user}  {r.instances} instance(s){partial}  {r.status}"
        f"{resumed}  submitted {r.submitted_at:%Y-%m-%d %H:%M} UTC  dataset {r.dataset_repo}@{r.dataset_revision}"
    )


def list_command(stores) -> int:  # type: ignore[no-untyped-def]
    """--list: the queue in the worker's order, then what waits for review and how many are done."""
    from rqbench.space.worker import queued

    every = stores.requests.all()
    waiting = queued(every)
    print(f"{len(waiting)} request(s) waiting to be judged in {stores.backend}, in the order the worker takes them:")
    for n, r in enumerate(waiting, 1):
        print(f"  {n}. {request_line(r)}")
    counts = Counter(r.status for r in every)
    if counts["review"]:
        print(f"{counts['review']} held for review (rqbench worker --review lists them with the reasons)")
    print(f"{counts['finished']} finished, {counts['failed']} failed")
    return 0


def dry_run_command(
    args: argparse.Namespace,
    stores,
    judges: list[str],  # type: ignore[no-untyped-def]
    settings: list[str],
) -> int:
    """--dry-run: each waiting request judged in dry-run mode (nothing sent, no status changed), then the total."""
    from rqbench.llm.client import LLM
    from rqbench.llm.estimate import Estimate
    from rqbench.space.worker import evaluate_judge, queued

    waiting = queued(stores.requests.all())[: args.limit]
    estimates = []
    trial = f"; a trial of the first {args.instances} instance(s) of each" if args.instances else ""
    print(
        f"dry run over {len(waiting)} waiting request(s) in {stores.backend}; judges {shown_judges(judges)}, "
        f"settings {', '.join(settings)}{trial}"
    )
    with tempfile.TemporaryDirectory(prefix="rqbench-worker-dry-") as tmp:
        for r in waiting:
            llm = LLM(dry_run=True)
            raw = stores.submissions.get(r.submission_file)
            if raw is None:
                print(
                    f"request {r.request_id} ({r.metadata.model}): its raw submission {r.submission_file} is "
                    "missing from the store; the worker would fail it"
                )
                continue
            sub_path = Path(tmp) / r.request_id / "submission.jsonl"
            sub_path.parent.mkdir(parents=True)
            sub_path.write_bytes(raw)
            judge = evaluate_judge(
                judges,
                settings,
                llm=llm,
                dataset=args.dataset,
                orderings=args.orderings,
                allow_partial=args.allow_partial,
                instances=args.instances,
            )
            try:
                judge(r, sub_path)
            except Exception as exc:  # what would fail the request when judged: said, and the next one priced
                print(
                    f"request {r.request_id} ({r.metadata.model}): the worker would fail it: "
                    f"{type(exc).__name__}: {redacted(exc)}"
                )
                continue
            estimates.append(llm.estimate)
            print(f"request {r.request_id} ({r.metadata.model}, {r.instances} instance(s)): {llm.estimate.line()}")
    if len(estimates) > 1:
        print(f"all {len(estimates)} priced requests: {Estimate.total(estimates).line()}")
    return 0


def redacted(exc: Exception) -> str:
    from rqbench.space.safety import redact

    return redact(str(exc))[:500]


def run(args: argparse.Namespace) -> int:
    from rqbench.llm.client import LLM
    from rqbench.space.stores import SpaceStores
    from rqbench.space.worker import Worker, evaluate_judge

    if args.limit is not None and args.limit < 1:
        print("rqbench worker: --limit must be at least 1")
        return 2
    stores = SpaceStores.from_env(args.store)
    if args.review or args.approve or args.reject:
        return review_command(args, stores)
    if args.list:
        return list_command(stores)
    judges = args.judge or ["local", "local@temperature=0.7"]
    settings = ["standalone", "comparative"] if args.setting == "both" else [args.setting]
    if args.dry_run:
        return dry_run_command(args, stores, judges, settings)
    if args.instances is not None and not (args.once or args.limit is not None):
        print(
            "rqbench worker: --instances N tries each request on its first N instances and leaves it waiting, so "
            "a worker polling for ever would try the same requests again and again; give --once (each waiting "
            "request once) or --limit N with it"
        )
        return 2
    trial = f" (a trial: the first {args.instances} instance(s))" if args.instances else ""

    def judge(req, sub_path):  # type: ignore[no-untyped-def]
        llm = LLM()  # one per request: its run id is the request's in the call log
        print(f"request {req.request_id} ({req.metadata.model}): judging{trial}, {llm.run_note()}", flush=True)
        return evaluate_judge(
            judges,
            settings,
            llm=llm,
            dataset=args.dataset,
            orderings=args.orderings,
            allow_partial=args.allow_partial,
            progress=True,
            instances=args.instances,
        )(req, sub_path)

    worker = Worker(stores, judge, work_dir=paths.home() / "space-work", trial=args.instances)
    print(f"worker {worker.worker_id}: store {stores.backend}; judges {shown_judges(judges)}")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.once or args.limit is not None:
        n, failed = 0, 0
        while args.limit is None or n < args.limit:
            rep = worker.run_once()
            if rep is None:
                if args.once or stop.wait(args.interval):
                    break
                continue
            n += 1
            failed += rep.status == "failed"
            tail = f": {rep.reason}" if rep.reason else ""
            print(f"request {rep.request_id}: {rep.status}{tail}", flush=True)
        left = len(queued_now(stores))
        print(
            f"{n} request(s) handled, {failed} failed; {left} still waiting"
            + (" (rqbench worker --list)" if left else "")
        )
        return 1 if failed else 0  # like judge and evaluate: a script sees that a request failed
    worker.run(interval_s=args.interval, stop=stop)
    return 0


def queued_now(stores) -> list:  # type: ignore[no-untyped-def]
    from rqbench.space.worker import queued

    return queued(stores.requests.all())
