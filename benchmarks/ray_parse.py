"""The parse stage on Ray (a local instance) against local processes, over the fixture papers.

Prints, for the same items in the same run: seconds for ``run_stage`` of the parse
stage with the local process pool (``--workers N``), with one process, and on a
local Ray instance of N CPUs (``--executor ray``, Ray's start-up timed apart), and
the ratio Ray / local processes. Every run parses into its own folder and the
parsed records are checked to be the same.

Run: .venv/bin/python benchmarks/ray_parse.py [--copies 4] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from rqbench.builder.input_stages import SourcedPaper, parse_stage
from rqbench.builder.stages import Stage, StageStore, run_stage
from rqbench.paths import shared_dir
from rqbench.records import ParsedPaper, SourcePaper


def items(copies: int) -> list[SourcedPaper]:
    """Each fixture paper ``copies`` times, under distinct ids (the parse stage keys items by arXiv id)."""
    root = shared_dir()
    if root is None:
        raise SystemExit("../shared is not beside this checkout")
    folders = sorted(p for p in (root / "fixtures" / "latex").iterdir() if p.is_dir())
    out = []
    for k in range(copies):
        for f in folders:
            aid = f"{f.name}-{k}"
            paper = SourcePaper(
                arxiv_id=aid,
                title=f.name,
                primary_category="cs.CL",
                source="local",
                published=datetime(2025, 1, 1, tzinfo=timezone.utc),
            )
            out.append(SourcedPaper(arxiv_id=aid, paper=paper, folder=str(f)))
    return out


def parsed(out: Path) -> list:
    lines = StageStore(out, "parse").items_path.read_text().splitlines()
    return [(d["item_id"], d["status"], d.get("records")) for d in map(json.loads, lines)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=4, help="passes over the fixture papers (default 4)")
    ap.add_argument("--workers", type=int, default=2, help="processes, and Ray CPUs (default 2)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    if args.smoke:
        args.copies = 1
    stage = Stage("parse", ("filter",), ParsedPaper, parse_stage, "cpu")
    inputs = {"filter": items(args.copies)}
    with tempfile.TemporaryDirectory() as tmp:
        runs: dict[str, float] = {}

        def timed(name: str, **kw) -> None:
            t0 = time.perf_counter()
            run_stage(stage, Path(tmp) / name, inputs, progress=False, **kw)
            runs[name] = time.perf_counter() - t0

        timed("one-process")
        timed("processes", workers=args.workers)
        import ray

        os.environ.setdefault("RAY_DISABLE_USAGE_STATS", "1")
        t0 = time.perf_counter()
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
        start = time.perf_counter() - t0
        try:
            timed("ray", executor="ray")
        finally:
            ray.shutdown()
        same = parsed(Path(tmp) / "ray") == parsed(Path(tmp) / "processes") == parsed(Path(tmp) / "one-process")
    n = len(inputs["filter"])
    print(
        f"parse stage, {n} papers ({args.copies} x the {n // args.copies} fixture papers), ray {ray.__version__}, "
        f"{os.cpu_count()} cores:"
    )
    print(f"  one process        {runs['one-process']:.2f}s")
    print(f"  {args.workers} processes        {runs['processes']:.2f}s")
    print(f"  ray, {args.workers} cpus         {runs['ray']:.2f}s (+ {start:.2f}s to start Ray)")
    print(f"  ratio ray / processes: {runs['ray'] / runs['processes']:.2f}x; same parsed records: {same}")


if __name__ == "__main__":
    main()
