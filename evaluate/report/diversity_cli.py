"""``rqbench diversity``: embed each submission's RQs once and store their diversity in its results files.

The leaderboard and ``rqbench report`` read the stored values (``ResultsFile.diversity``); this command is the one
place that embeds. It is idempotent: a submission that already has a record for the embedding model is not embedded
again, and only the files that gain a record are rewritten.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench.evaluate.metrics.diversity import DEFAULT_EMBEDDER, NEAR_DUPLICATE


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", nargs="+", type=Path, help="results files, or folders of them (every *.json under it)")
    p.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        metavar="NAME",
        help=f"the sentence-transformers model (default {DEFAULT_EMBEDDER}, offline from its PyPI package)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=NEAR_DUPLICATE,
        help=f"the cosine at or above which two RQs are near-duplicates (default {NEAR_DUPLICATE:g})",
    )


def _paths(given: list[Path]) -> list[Path]:
    out = []
    for p in given:
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.json") if q.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such results file or folder")
    return out


def run(args: argparse.Namespace) -> int:
    from rqbench.evaluate.judge.run import read_results, write_results
    from rqbench.evaluate.metrics.diversity import attach_diversity
    from rqbench.evaluate.metrics.similarity import Embedder, EmbedderUnavailable

    try:
        paths = _paths(args.results)
    except FileNotFoundError as exc:
        print(f"rqbench diversity: {exc}", file=sys.stderr)
        return 2
    files = {p: read_results(p) for p in paths}
    try:
        changed = {
            id(r) for r in attach_diversity(list(files.values()), Embedder(args.embedder), threshold=args.threshold)
        }
    except EmbedderUnavailable as exc:
        print(f"rqbench diversity: {exc}; nothing written", file=sys.stderr)
        return 1
    for path, r in files.items():
        if id(r) in changed:
            write_results(path, r)
    subs = len({r.submission_hash for r in files.values()})
    print(
        f"diversity under {args.embedder}: {len(changed)} of {len(files)} results file(s) updated, {subs} submission(s)"
    )
    return 0
