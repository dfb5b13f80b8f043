"""``rqbench rescore BUNDLE.zip``: a leaderboard row recomputed from its bundle, with no LLM call.

Prints the recomputed row (or writes it with ``--out``) and exits 0 when it is byte-identical to the
row the bundle stores, 1 with a unified diff when it is not, 2 when the bundle cannot be read (a
corrupt archive, a member that does not match the manifest, a call the bundle lacks).

A row judged with a criterion declared as data carries the criterion's folder (``criteria/<name>/``).
The criteria are read once, when the tools start, from the folders ``RQB_CRITERIA`` names; so where it
names none, the command extracts the bundle's folders to a temporary one and runs itself again with
``RQB_CRITERIA`` pointing there. They are data (a TOML file and prompt templates), never code.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# what a bundle's member of a declared criterion may be called: criteria/<name>/<file>, one level, no ".."
_CRITERION_MEMBER = re.compile(r"^criteria/([a-z][a-z0-9_]*)/([A-Za-z0-9_.-]+\.(?:toml|md))$")


def configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("bundle", type=Path, help="a bundle (rqbench bundle, or a row's download on the Leaderboard tab)")
    p.add_argument("--out", type=Path, help="write the recomputed row here instead of printing it")


def _bundled_criteria(bundle: Path) -> dict[str, bytes]:
    """The bundle's members that hold criteria declared as data, by name ({} for an unreadable archive: the
    re-score itself then says what is wrong with it)."""
    try:
        with zipfile.ZipFile(bundle) as zf:
            return {n: zf.read(n) for n in zf.namelist() if _CRITERION_MEMBER.match(n)}
    except (OSError, zipfile.BadZipFile, EOFError):
        return {}


def _with_bundled_criteria(args: argparse.Namespace, members: dict[str, bytes]) -> int:
    """Run this command again in a fresh interpreter whose RQB_CRITERIA names the bundle's criterion folders."""
    with tempfile.TemporaryDirectory(prefix="rqb-criteria-") as tmp:
        for name, data in members.items():
            target = Path(tmp, *name.split("/")[1:])
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        names = sorted({n.split("/")[1] for n in members})
        print(f"rqbench rescore: criteria declared as data, read from the bundle: {', '.join(names)}", file=sys.stderr)
        again = [sys.executable, "-m", "rqbench", "rescore", str(args.bundle)]
        again += ["--out", str(args.out)] if args.out else []
        return subprocess.run(again, env={**os.environ, "RQB_CRITERIA": tmp}, check=False).returncode


def run(args: argparse.Namespace) -> int:
    if not os.environ.get("RQB_CRITERIA"):
        bundled = _bundled_criteria(args.bundle)
        if bundled:
            return _with_bundled_criteria(args, bundled)
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
