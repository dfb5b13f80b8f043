"""``rqbench calls``: what the LLM layer sent, per model and step, from the call log, with the totals.

Input tokens are shown in total and split: ``in_billed`` at the full rate, ``in_cached``
read from the provider's prompt-prefix cache at its cache rate; ``by_batch`` counts the
requests that went through a batch endpoint. ``--run ID`` keeps one job's calls (every
job that calls a model prints its run id when it starts; ``--runs`` lists them), and
``--since`` keeps the calls from a moment on: ``2h``, ``30m``, ``7d``, or a date or
time (``2026-12-02``, ``2026-12-02T14:30``, local time unless it names a zone).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import datetime

from rqbench import paths
from rqbench.llm.store import CallStore

_AGO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
SUMMED = (
    "requests",
    "cache_hits",
    "by_batch",
    "failures",
    "tokens_in",
    "tokens_in_billed",
    "tokens_in_cached",
    "tokens_out",
)


def parse_since(text: str, now: float | None = None) -> float:
    """``--since`` as a Unix time: a span back from now (``90m``, ``2h``, ``7d``) or an ISO date or date-time."""
    now = time.time() if now is None else now
    m = _AGO.match(text)
    if m:
        return now - float(m.group(1)) * _UNIT_S[m.group(2).lower()]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()  # naive: local time
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a span (90m, 2h, 7d, 1w) nor a date or time (2026-12-02, 2026-12-02T14:30)"
        ) from None


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None, help="call log database (default: $RQB_HOME/calls.db)")
    p.add_argument("--run", default=None, metavar="ID", help="only this run id (each job prints its own)")
    p.add_argument("--runs", action="store_true", help="list the runs (id, when, requests, cost) instead")
    p.add_argument(
        "--since",
        type=parse_since,
        default=None,
        metavar="WHEN",
        help="only calls from then on: a span back from now (90m, 2h, 7d) or a date or time "
        "(2026-12-02, 2026-12-02T14:30; local time)",
    )
    p.add_argument("--since-hours", type=float, default=None, help=argparse.SUPPRESS)  # the older spelling of --since
    p.add_argument("--json", action="store_true", help="print JSON rows instead of a table")


def totals(rows: list[dict]) -> dict:
    """The summary rows added up; the cost is None when no row has a known price, and a partial sum otherwise."""
    out: dict = {"model": "total", "step": "all"}
    for key in SUMMED:
        out[key] = sum(r[key] or 0 for r in rows)
    priced = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    out["cost_usd"] = sum(priced) if priced else None
    out["cost_unknown_rows"] = sum(1 for r in rows if r["cost_usd"] is None and (r["requests"] or 0))
    sent = sum(r["requests"] or 0 for r in rows if r["mean_latency_s"] is not None)
    out["mean_latency_s"] = (
        sum((r["mean_latency_s"] or 0) * (r["requests"] or 0) for r in rows) / sent if sent else None
    )
    return out


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.4f}"


def _table(head: list[str], cells: list[list[str]]) -> str:
    cells = [head, *cells]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def format_table(rows: list[dict]) -> str:
    head = [
        "model",
        "step",
        "requests",
        "cache_hits",
        "by_batch",
        "failures",
        "tokens_in",
        "in_billed",
        "in_cached",
        "tokens_out",
        "cost_usd",
        "mean_latency_s",
    ]

    def cells(r: dict) -> list[str]:
        return [
            str(r["model"]),
            str(r["step"]),
            *(str(r[k] or 0) for k in SUMMED),
            _cost(r["cost_usd"]),
            "-" if r["mean_latency_s"] is None else f"{r['mean_latency_s']:.2f}",
        ]

    total = totals(rows)
    body = [cells(r) for r in rows] + [["-" * len(h) for h in head], cells(total)]
    out = _table(head, body)
    if total["cost_unknown_rows"] and total["cost_usd"] is not None:
        out += f"\n(the total cost leaves out {total['cost_unknown_rows']} model/step pair(s) of unknown price)"
    return out


def format_runs(runs: list[dict]) -> str:
    head = ["run_id", "started", "ended", "requests", "cache_hits", "failures", "cost_usd", "models"]

    def when(ts: float) -> str:
        return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")

    body = [
        [
            str(r["run_id"]),
            when(r["first_ts"]),
            when(r["last_ts"]),
            str(r["requests"] or 0),
            str(r["cache_hits"] or 0),
            str(r["failures"] or 0),
            _cost(r["cost_usd"]),
            str(r["models"] or ""),
        ]
        for r in runs
    ]
    return _table(head, body)


def run(args: argparse.Namespace) -> int:
    store = CallStore(args.db or paths.calls_db())
    since = args.since
    if since is None and args.since_hours:
        since = time.time() - args.since_hours * 3600
    if args.runs:
        found = store.runs(since=since)
        if args.json:
            print(json.dumps(found, indent=2))
        else:
            print(format_runs(found) if found else f"no calls logged in {store.path}")
        return 0
    rows = store.summary(run_id=args.run, since=since)
    if args.json:
        print(json.dumps(rows, indent=2))  # the rows as before; the total is their sum
    elif not rows:
        which = f" for run {args.run}" if args.run else ""
        print(
            f"no calls logged{which} in {store.path}" + (" (rqbench calls --runs lists the runs)" if args.run else "")
        )
    else:
        print(format_table(rows))
    return 0
