"""Summary at the paper's scale: the vectorised cluster bootstrap and the columnar summary, each against its baseline.

Prints two figures, each against a baseline measured in this run:
1. One 95% CI over 1,434 RQs in 746 papers (1,000 replicates): the vectorised
   ``cluster_bootstrap_mean`` vs a plain Python loop resampling papers.
2. ``summarize`` for 6 submissions x 2 judges x 2 settings at 1,434 instances:
   the columnar path (``evaluate/metrics/score_table.py``) vs the per-instance path it
   replaced (tests/summary_reference.py), with a check that their rows are equal.

    .venv/bin/python benchmarks/summary_scale.py
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from results_factory import cand, instance, results  # noqa: E402
from summary_reference import reference_summarize  # noqa: E402

from rqbench.evaluate.metrics.bootstrap import cluster_bootstrap_mean  # noqa: E402
from rqbench.evaluate.metrics.summary import summarize  # noqa: E402

N_RQ, N_PAPERS, N_BOOT = 1434, 746, 1000


def loop_bootstrap(values, clusters, n_boot, seed=0):
    rng = random.Random(seed)
    members: dict[str, list[float]] = {}
    for v, c in zip(values, clusters):
        members.setdefault(c, []).append(v)
    keys = list(members)
    reps = []
    for _ in range(n_boot):
        tot = cnt = 0.0
        for _ in keys:
            vs = members[rng.choice(keys)]
            tot += sum(vs)
            cnt += len(vs)
        reps.append(tot / cnt)
    return float(np.quantile(reps, 0.025)), float(np.quantile(reps, 0.975))


def main() -> None:
    global N_RQ, N_PAPERS, N_BOOT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    if args.smoke:
        N_RQ, N_PAPERS, N_BOOT = 40, 20, 50
    rng = random.Random(1)
    clusters = [f"p{rng.randrange(N_PAPERS)}" for _ in range(N_RQ)]
    values = [float(rng.random() < 0.3) for _ in range(N_RQ)]
    t0 = time.perf_counter()
    loop_bootstrap(values, clusters, N_BOOT)
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    cluster_bootstrap_mean(values, clusters, n_boot=N_BOOT)
    t_vec = time.perf_counter() - t0
    print(
        f"one CI ({N_RQ} RQs, {N_PAPERS} papers, {N_BOOT} replicates): loop {t_loop:.3f}s, "
        f"vectorised {t_vec:.4f}s, speed-up x{t_loop / t_vec:.1f}"
    )

    def inst(k: int):
        paper = f"2501.{k // 2:05d}"
        gt = cand("gt", tuple(rng.randint(0, 3) for _ in range(3)), sb=rng.randint(0, 3))
        model = [cand(f"m{i}", tuple(rng.randint(0, 3) for _ in range(3)), sb=rng.randint(0, 3)) for i in range(5)]
        return instance(f"{paper}_rq{k % 2}", gt, model, overlap=[rng.randint(0, 4) for _ in range(5)])

    files = []
    for s in range(6):
        for j in ("judge-a", "judge-b"):
            for setting in ("standalone", "comparative"):
                files.append(results([inst(k) for k in range(N_RQ)], model=f"model-{s}", label=j, setting=setting))
    t0 = time.perf_counter()
    rows = summarize(files)
    t_sum = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = reference_summarize(files)
    t_ref = time.perf_counter() - t0
    same = [r.model_dump() for r in rows] == [r.model_dump() for r in ref]
    n_figs = sum(len(r.figures) for r in rows)
    print(
        f"summarize: {len(rows)} rows, {n_figs} figures with CIs in {t_sum:.2f}s (columnar) vs {t_ref:.2f}s "
        f"(per-instance path), speed-up x{t_ref / t_sum:.1f}; identical rows: {same}"
    )


if __name__ == "__main__":
    main()
