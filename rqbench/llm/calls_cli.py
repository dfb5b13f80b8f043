"""``rqbench calls``: what the LLM layer sent, per model and step, from the call log.

Input tokens are shown in total and split: ``in_billed`` at the full rate, ``in_cached``
read from the provider's prompt-prefix cache at its cache rate; ``by_batch`` counts the
requests that went through a batch endpoint.
"""

from __future__ import annotations

import argparse
import json
import time

from rqbench import paths
from rqbench.llm.store import CallStore


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", default=None, help="call log database (default: $RQB_HOME/calls.db)")
    p.add_argument("--run", default=None, help="only this run id")
    p.add_argument("--since-hours", type=float, default=None, help="only calls from the last N hours")
    p.add_argument("--json", action="store_true", help="print JSON rows instead of a table")


def format_table(rows: list[dict]) -> str:
    head = ["model", "step", "requests", "cache_hits", "by_batch", "failures", "tokens_in", "in_billed", "in_cached",
            "tokens_out", "cost_usd", "mean_latency_s"]  # fmt: skip
    cells = [head]
    for r in rows:
        cells.append(
            [
                str(r["model"]),
                str(r["step"]),
                str(r["requests"] or 0),
                str(r["cache_hits"] or 0),
                str(r["by_batch"] or 0),
                str(r["failures"] or 0),
                str(r["tokens_in"] or 0),
                str(r["tokens_in_billed"] or 0),
                str(r["tokens_in_cached"] or 0),
                str(r["tokens_out"] or 0),
                "unknown" if r["cost_usd"] is None else f"{r['cost_usd']:.4f}",
                "-" if r["mean_latency_s"] is None else f"{r['mean_latency_s']:.2f}",
            ]
        )
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells)


def run(args: argparse.Namespace) -> int:
    store = CallStore(args.db or paths.calls_db())
    since = time.time() - args.since_hours * 3600 if args.since_hours else None
    rows = store.summary(run_id=args.run, since=since)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print(f"no calls logged in {store.path}")
    else:
        print(format_table(rows))
    return 0
