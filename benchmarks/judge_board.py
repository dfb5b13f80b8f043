"""The judge board's refresh: a Space recomputes it whenever an annotation arrives.

Prints, against baselines measured in this run:
1. Kappa with its bootstrap interval (1,000 resamples) for one judge against 30
   experts of 7-20 pairs each and the majority of 100 pairs: the vectorised
   ``judge_board_metrics.kappa`` vs ``bootstrap.cluster_bootstrap`` over the same
   picks (its resample-by-resample loop, which the board used first), with a check
   that both give the same point and intervals of the same kind.
2. ``make_board`` for 5 judge configurations on that pool (100 pairs, 30 experts).

    .venv/bin/python benchmarks/judge_board.py
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import datetime, timezone

from rqbench.evaluate.judge_board.board import make_board
from rqbench.evaluate.judge_board.expert_pool import make_pool
from rqbench.evaluate.judge_board.metrics import cohen_kappa, kappa, majority, order_pick
from rqbench.evaluate.metrics.bootstrap import cluster_bootstrap
from rqbench.records import (
    CitedPaper,
    ExpertPair,
    JudgeBoardFile,
    JudgeSpec,
    NoveltyScore,
    OrderVerdict,
    PairVerdicts,
    PromptSetRef,
    RawReply,
)

PICKS = ("gt", "model", "tie")
N_PAIRS, N_EXPERTS, N_JUDGES, N_BOOT = 100, 30, 5, 1000


def loop_kappa(judge, reference, n_boot):  # the baseline: cluster_bootstrap over a kappa of item indices
    import numpy as np

    shared = sorted(set(judge) & set(reference))
    a = np.asarray([judge[k] for k in shared], dtype=object)
    b = np.asarray([reference[k] for k in shared], dtype=object)

    def stat(idx):
        k = cohen_kappa(list(a[idx]), list(b[idx]))
        return float("nan") if k is None else k

    return cluster_bootstrap(stat, shared, n_boot=n_boot, seed=0)


def main() -> None:
    global N_PAIRS, N_EXPERTS, N_JUDGES, N_BOOT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    if ap.parse_args().smoke:
        N_PAIRS, N_EXPERTS, N_JUDGES, N_BOOT = 24, 3, 2, 50
    rng = random.Random(0)
    experts = [f"ann-{e}" for e in range(N_EXPERTS)]
    picks: dict[str, dict[str, str]] = {f"p{i}": {} for i in range(N_PAIRS)}
    for e in experts:
        for i in rng.sample(range(N_PAIRS), rng.randint(7, 20)):
            picks[f"p{i}"][e] = rng.choice(PICKS)
    for pid in picks:  # every pair has two experts at least
        while len(picks[pid]) < 2:
            picks[pid][rng.choice(experts)] = rng.choice(PICKS)
    judge = {pid: rng.choice(PICKS) for pid in picks}
    maj = {pid: m for pid, p in picks.items() if (m := majority(p)) is not None}
    refs = [maj] + [{pid: p[e] for pid, p in picks.items() if e in p} for e in experts]

    t0 = time.perf_counter()
    base = [loop_kappa(judge, r, N_BOOT) for r in refs]
    t_loop = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = [kappa(judge, r, n_boot=N_BOOT) for r in refs]
    t_fast = time.perf_counter() - t0
    same = all((x is None) == (y is None) and (x is None or abs(x.value - y.value) < 1e-12) for x, y in zip(base, fast))
    print(
        f"kappa with its interval, {len(refs)} references: loop {t_loop:.2f} s, vectorised {t_fast:.3f} s "
        f"({t_fast / t_loop:.3f}x); same points: {same}"
    )

    pairs = [
        ExpertPair(
            pair_id=pid,
            source="annotate",
            provenance="synthetic",
            rq_id=f"2501.{i:05d}_rq0",
            model="m",
            gt_rq=f"Author question {pid}?",
            model_rq=f"Model question {pid}?",
            background=[CitedPaper(paper_id=f"b{pid}", title="t", abstract="a", text_level="abstract")],
            expert_picks=p,
        )
        for i, (pid, p) in enumerate(picks.items())
    ]
    pool = make_pool([pairs])
    values = {"gt": (3, 1), "model": (1, 3), "tie": (2, 2)}
    files = []
    for j in range(N_JUDGES):
        verdicts = []
        for p in pool.pairs:
            gt, model = (
                NoveltyScore(relevance=1, originality=1, gap_addressing=1, non_obviousness=v)
                for v in values[rng.choice(PICKS)]
            )
            calls = [
                OrderVerdict(
                    order=o,
                    pick=order_pick(gt, model),
                    gt_score=gt,
                    model_score=model,
                    cost_usd=0.01,
                    latency_s=1.0,
                    raw=RawReply(step="novelty_comparative", cache_key="k", text="{}"),
                )
                for o in ("gt_first", "model_first")
            ]
            verdicts.append(PairVerdicts(pair_id=p.pair_id, content_key=p.content_key(), verdicts=calls))
        spec = JudgeSpec(
            model=f"j{j}",
            label=f"j{j}",
            setting="comparative",
            orderings=2,
            prompt_set=PromptSetRef(name="rqbench-v1", hash="b2:x"),
        )
        files.append(
            JudgeBoardFile(
                judge=spec,
                step="novelty_comparative",
                pool_version=pool.version,
                pool_pairs=N_PAIRS,
                created_at=datetime.now(timezone.utc),
                pairs=verdicts,
            )
        )
    t0 = time.perf_counter()
    board = make_board(pool, files, n_boot=500)
    print(
        f"make_board: {N_JUDGES} judges, {N_PAIRS} pairs, {N_EXPERTS} experts, 500 resamples: "
        f"{time.perf_counter() - t0:.2f} s ({len(board.rows)} rows)"
    )


if __name__ == "__main__":
    main()
