"""``rqbench rescore BUNDLE.zip``: a leaderboard row recomputed from its bundle, with no LLM call.

Prints the recomputed row (or writes it with ``--out``) and exits 0 when it is byte-identical to the
row the bundle stores, 1 with a unified diff when it is not, 2 when the bundle cannot be read (a
corrupt archive, a member that does not match the manifest, a call the bundle lacks).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle", type=Path, help="a bundle (rqbench bundle, or a row's download on the Leaderboard tab)")
    p.add_argument("--out", type=Path, help="write the recomputed row here instead of printing it")


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.bundle.bundle import BundleError
    from rqbench.evaluate.bundle.rescore import rescore
    from rqbench.io import RecordError
    from rqbench.llm.client import CallNotCached

    try:
        got = rescore(args.bundle)
    except CallNotCached as exc:
        print(f"rqbench rescore: {args.bundle}: {exc}", file=sys.stderr)
        return 2
    except (BundleError, RecordError) as exc:
        print(f"rqbench rescore: {exc}", file=sys.stderr)
        return 2
    if args.out:
        args.out.write_bytes(got.row)
    else:
        sys.stdout.write(got.row.decode())
    if got.identical:
        print(
            f"rqbench rescore: the row recomputed from {got.calls_read} cached call(s), no request sent, is "
            "byte-identical to the bundle's row.json",
            file=sys.stderr,
        )
        return 0
    for line in got.differences:
        print(f"rqbench rescore: judging differs: {line}", file=sys.stderr)
    print(f"rqbench rescore: the recomputed row differs from the bundle's row.json:\n{got.diff()}", file=sys.stderr)
    return 1
