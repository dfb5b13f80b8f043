"""What the clean (post-cutoff) figures cost ``summarize`` at the paper's scale.

6 submissions x 2 judges x 2 settings at 1,434 instances (746 papers), every
paper dated, every submission with a knowledge cutoff that leaves about half
the papers after it: ``summarize`` with the clean figures (each model row's
figures again, over its clean instances) against the same files with no
cutoff (the clean figures empty, with their reason), in this run. Times are
this process's CPU seconds (``summarize`` runs on one thread), the least of
``--repeats`` runs taken in turn, so other jobs on the machine move them little.
Also checks that the headline figures are the same both ways.

    .venv/bin/python benchmarks/clean_figures.py
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from results_factory import cand, instance, results  # noqa: E402

from rqbench.evaluate.metrics.summary import summarize  # noqa: E402

N_RQ, N_PAPERS = 1434, 746
FIRST = date(2025, 1, 1)
CUTOFF = date(2025, 6, 30)  # the papers span a year: about half are after it


def main() -> None:
    global N_RQ, N_PAPERS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    ap.add_argument("--repeats", type=int, default=3, help="runs of each, taken in turn (default 3)")
    args = ap.parse_args()
    if args.smoke:
        N_RQ, N_PAPERS = 40, 20
    rng = random.Random(1)
    published = {p: FIRST + timedelta(days=rng.randrange(365)) for p in range(N_PAPERS)}
    papers = [rng.randrange(N_PAPERS) for _ in range(N_RQ)]

    def inst(k: int):
        p = papers[k]
        gt = cand("gt", tuple(rng.randint(0, 3) for _ in range(3)), sb=rng.randint(0, 3))
        model = [cand(f"m{i}", tuple(rng.randint(0, 3) for _ in range(3)), sb=rng.randint(0, 3)) for i in range(5)]
        return instance(
            f"25{published[p].month:02d}.{p:05d}_rq{k}",
            gt,
            model,
            overlap=[rng.randint(0, 4)] * 5,
            published=published[p],
        )

    dated, plain = [], []
    for s in range(6):
        for j in ("judge-a", "judge-b"):
            for setting in ("standalone", "comparative"):
                insts = [inst(k) for k in range(N_RQ)]
                kw = dict(model=f"model-{s}", label=j, setting=setting)
                dated.append(results(insts, knowledge_cutoff=CUTOFF, **kw))
                plain.append(results([i.model_copy(deep=True) for i in insts], **kw))
    best = {"plain": float("inf"), "dated": float("inf")}
    out = {}
    for k in range(1 if args.smoke else args.repeats):
        for name in ("plain", "dated") if k % 2 == 0 else ("dated", "plain"):  # alternate which goes first
            t0 = time.process_time()
            out[name] = summarize(plain if name == "plain" else dated)
            best[name] = min(best[name], time.process_time() - t0)
    base, rows = out["plain"], out["dated"]
    t_plain, t_clean = best["plain"], best["dated"]
    same = [r.figures for r in rows] == [r.figures for r in base]
    model_rows = [r for r in rows if r.row_kind == "model"]
    share = sum(r.clean.instances for r in model_rows) / sum(r.provenance.instances_covered for r in model_rows)
    n_clean = sum(len(r.clean.figures) for r in model_rows)
    print(
        f"summarize with clean figures: {len(rows)} rows, {n_clean} clean figures over {100 * share:.0f}% of the "
        f"instances, {t_clean:.2f} CPU s vs {t_plain:.2f} without (no cutoff), x{t_clean / t_plain:.2f}; "
        f"headline figures identical: {same}"
    )


if __name__ == "__main__":
    main()
