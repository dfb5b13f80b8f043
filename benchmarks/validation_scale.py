"""Submission validation is linear: seconds per 1,000 lines at 2k, 20k and 200k lines stay flat.

Three submissions per size, each line with five distinct RQs (so no cache
helps): every rq_id unknown to the dataset, one rq_id repeated on every line,
and every line valid (each of its RQs then also passes the manipulation
screen). Printed per size and kind: CPU seconds of this process (the machine
is shared, so wall time is printed beside it but CPU time is the figure), CPU
seconds per 1,000 lines, and the ratio of that to the 2k figure (1.0 = linear).

Baseline in the same run: the collector validation used before it was made
linear, which rescanned every problem found so far for each line (2k and 4k
lines of unknown rq_ids; its per-1,000 time grows with the size). The ratio
printed is its time over the linear collector's at the same size.

    .venv/bin/python benchmarks/validation_scale.py [--sizes 2000,20000,200000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from rqbench.evaluate.generate import submission_files as sub

TOPICS = [
    "sparse attention",
    "reward models",
    "retrieval augmentation",
    "LLM judges",
    "instruction tuning",
    "mixture-of-experts routing",
    "speculative decoding",
    "preference optimisation",
    "chain-of-thought prompts",
    "tool-using agents",
]
ASPECTS = [
    "calibration",
    "robustness to paraphrase",
    "position bias",
    "long-context recall",
    "sample efficiency",
    "refusal rate",
    "score variance",
    "transfer across domains",
]
VERBS = ["change", "predict", "reduce", "explain", "depend on"]


def question(i: int, k: int) -> str:
    return f"Does {TOPICS[(i + k) % len(TOPICS)]} {VERBS[k]} {ASPECTS[(i * 7 + k) % len(ASPECTS)]} in setting {i}-{k}?"


def write(path: Path, n: int, kind: str) -> list[str]:
    """A submission of n entry lines; the dataset's rq_ids it is checked against."""
    known = [f"2501.{i:05d}_rq0" for i in range(n)]
    with path.open("w", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "metadata", "model": "bench"}) + "\n")
        for i in range(n):
            rq_id = {"unknown": f"9999.{i:05d}_rq0", "repeated": "2501.00000_rq0", "valid": known[i]}[kind]
            f.write(json.dumps({"rq_id": rq_id, "research_questions": [question(i, k) for k in range(5)]}) + "\n")
    return known if kind == "valid" else known[:1434]


class PreFixCollector(sub.Collector):
    """The collector before the fix: every problem kept, and the error count recounted by a scan per use."""

    def __init__(self, per_rule: int = 20) -> None:
        super().__init__(per_rule=10**12)

    @property
    def n_errors(self) -> int:  # the old code counted errors with a list comprehension twice per entry
        return len([p for p in self.problems if p.severity == "error"])

    @n_errors.setter
    def n_errors(self, value: int) -> None:
        pass  # the count is always recomputed from the kept problems, as before


def timed(path: Path, known: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one validation."""
    c0, w0 = time.process_time(), time.perf_counter()
    report = sub.validate_submission(path, known, max_bytes=1 << 30)
    took = time.process_time() - c0, time.perf_counter() - w0
    assert report.summary()
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,20000,200000")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    sizes = [200, 2000] if args.smoke else [int(x) for x in args.sizes.split(",")]
    baseline_sizes = (200, 400) if args.smoke else (2000, 4000)
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm-up.jsonl"  # imports, compiled patterns and caches, outside the timings
        timed(warm, write(warm, 500, "valid"))
        base: dict[str, float] = {}
        print(f"{'kind':9s} {'lines':>8s} {'cpu s':>7s} {'wall s':>7s} {'cpu s/1k lines':>14s} {'vs 2k':>6s}")
        for kind in ("unknown", "repeated", "valid"):
            for n in sizes:
                path = Path(tmp) / f"{kind}-{n}.jsonl"
                known = write(path, n, kind)
                cpu, wall = timed(path, known)
                per_k = cpu / n * 1000
                base.setdefault(kind, per_k)
                print(f"{kind:9s} {n:8d} {cpu:7.2f} {wall:7.2f} {per_k:14.3f} {per_k / base[kind]:6.2f}")
                path.unlink()
        print("baseline: the pre-fix collector (problems rescanned per line), unknown rq_ids")
        for n in baseline_sizes:
            path = Path(tmp) / f"old-{n}.jsonl"
            known = write(path, n, "unknown")
            linear = timed(path, known)[0]
            real = sub.Collector
            sub.Collector = PreFixCollector  # type: ignore[misc]
            try:
                old = timed(path, known)[0]
            finally:
                sub.Collector = real  # type: ignore[misc]
            print(
                f"  {n:6d} lines: pre-fix {old:6.2f} cpu s ({old / n * 1000:.3f} s/1k), linear {linear:5.2f} cpu s, "
                f"ratio pre-fix/linear x{old / linear:.1f}"
            )


if __name__ == "__main__":
    main()
