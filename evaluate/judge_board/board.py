"""The judge board: every judge configuration a row, ranked by how often it agrees with the experts' majority.

Rows are computed from judge-board results files (``JudgeBoardFile``) against
the expert pool as it stands, so the board follows new annotations: a new pick
on a pair a judge has judged counts at once; a new pair counts once the judge
is run again (its cached answers cost nothing). A verdict counts only on the
texts it was given (``ExpertPair.content_key``). The paper's published verdicts
on the A.6 pairs are rows too (``origin="paper"``), on exactly the pairs they
judged, with the figures those verdicts give; they have no calls, so no
position consistency, reply checks or cost. The experts' agreement with each
other is the ceiling. Nothing here calls a model or reads a file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from rqbench.demo import is_demo_model
from rqbench.evaluate.judge_board.metrics import (
    BOARD_BOOT,
    agreement,
    calls_pick,
    expert_agreement,
    kappa,
    majority,
    order_pick,
    per_pair_mean,
    pick_rate,
    position_consistency,
    scored_calls,
)
from rqbench.evaluate.judge_board.susceptibility import CueShift, cue_shifts
from rqbench.evaluate.metrics.bootstrap import Estimate
from rqbench.records import ExpertPool, JudgeBoardFile, Pick

PAPER_NOTE = "the paper's published verdicts (appendix A.6)"


class BoardRow(BaseModel):
    """One judge configuration (or the paper's published verdicts of one judge) against the experts."""

    judge: str = Field(description="The judge's label; for a paper row, the judge's name as the paper prints it.")
    origin: Literal["run", "paper"]
    prompt_set: str | None = Field(default=None, description="'name (hash)' of the prompts it was asked with.")
    demo: bool = False
    run_pool_version: str | None = Field(default=None, description="The pool version of the judge's last run.")
    pairs_judged: int = Field(description="Pairs of the pool with a pick by this judge.")
    pairs_not_judged: int = Field(description="Pairs of the pool the judge was not run on (a rerun judges them).")
    pairs_changed: int = Field(default=0, description="Verdicts on texts a pair no longer has: not counted.")
    vs_majority: Estimate | None = None
    kappa_majority: Estimate | None = None
    vs_expert: dict[str, Estimate | None] = Field(default_factory=dict)
    kappa_expert: dict[str, Estimate | None] = Field(default_factory=dict)
    position_consistency: Estimate | None = None
    tie_rate: Estimate | None = None
    calls: int | None = Field(default=None, description="Calls behind the counted verdicts (two a pair).")
    invalid_replies: int | None = Field(default=None, description="Calls whose reply failed validation at least once.")
    no_verdict: int | None = Field(default=None, description="Calls that ended without a verdict.")
    rule_repairs: int | None = Field(default=None, description="Rubric rules broken and repaired, over all replies.")
    cost_per_pair: float | None = Field(default=None, description="Dollars per pair (both calls); None: unknown.")
    latency_per_pair: float | None = Field(default=None, description="Seconds of requests per pair; None: unknown.")
    susceptibility: list[CueShift] = Field(
        default_factory=list, description="How far each cue added to the model RQ moved the judge (run rows only)."
    )

    @property
    def cost_per_1000(self) -> float | None:
        return None if self.cost_per_pair is None else 1000 * self.cost_per_pair


class Board(BaseModel):
    """The ranked rows, the ceiling, and the pool they were computed on."""

    pool_version: str
    pool_pairs: int
    sources: dict[str, int] = Field(description="Pairs per source (paper_a6, annotate).")
    experts: list[str]
    majority_pairs: int = Field(description="Pairs with a strict expert majority.")
    ceiling: Estimate | None = Field(description="How often two experts agree on a pair they both picked on.")
    n_boot: int = Field(description="Bootstrap resamples behind every interval.")
    rows: list[BoardRow]
    notes: list[str] = Field(default_factory=list)


def _expert_views(pool: ExpertPool) -> tuple[dict[str, Pick], dict[str, dict[str, Pick]]]:
    """(majority pick per pair, and per expert their pick per pair)."""
    maj = {p.pair_id: m for p in pool.pairs if (m := majority(p.expert_picks)) is not None}
    per_expert: dict[str, dict[str, Pick]] = {}
    for p in pool.pairs:
        for e, w in p.expert_picks.items():
            per_expert.setdefault(e, {})[p.pair_id] = w
    return maj, per_expert


def _against_experts(row: BoardRow, picks: dict[str, Pick], pool: ExpertPool, n_boot: int, seed: int) -> BoardRow:
    maj, per_expert = _expert_views(pool)
    row.vs_majority = agreement(picks, maj, n_boot=n_boot, seed=seed)
    row.kappa_majority = kappa(picks, maj, n_boot=n_boot, seed=seed)
    for e, theirs in per_expert.items():
        if set(theirs) & set(picks):
            row.vs_expert[e] = agreement(picks, theirs, n_boot=n_boot, seed=seed)
            row.kappa_expert[e] = kappa(picks, theirs, n_boot=n_boot, seed=seed)
    row.tie_rate = pick_rate(picks, "tie", n_boot=n_boot, seed=seed)
    return row


def judge_row(f: JudgeBoardFile, pool: ExpertPool, *, n_boot: int = BOARD_BOOT, seed: int = 0) -> BoardRow:
    """A run's row: its verdicts on the pool's pairs whose texts it was given, against the experts."""
    by_id = {p.pair_id: p for p in pool.pairs}
    counted = [pv for pv in f.pairs if pv.pair_id in by_id and pv.content_key == by_id[pv.pair_id].content_key()]
    changed = sum(1 for pv in f.pairs if pv.pair_id in by_id and pv.content_key != by_id[pv.pair_id].content_key())
    picks: dict[str, Pick] = {}
    by_order: dict[str, list[Pick]] = {}
    for pv in counted:
        scored = scored_calls(pv.verdicts)
        pick = calls_pick(pv.verdicts)
        if pick is not None:
            picks[pv.pair_id] = pick
            by_order[pv.pair_id] = [order_pick(v.gt_score, v.model_score) for v in scored]  # type: ignore[arg-type]
    calls = [v for pv in counted for v in pv.verdicts]
    ps = f.judge.prompt_set
    row = BoardRow(
        judge=f.judge.label,
        origin="run",
        prompt_set=f"{ps.name} ({ps.hash})",
        demo=is_demo_model(f.judge.label),
        run_pool_version=f.pool_version,
        pairs_judged=len(picks),
        pairs_not_judged=len(by_id) - len(counted),
        pairs_changed=changed,
        position_consistency=position_consistency(by_order, n_boot=n_boot, seed=seed),
        calls=len(calls),
        invalid_replies=sum(v.reasked or (v.failure or "").startswith("invalid_reply") for v in calls),
        no_verdict=sum(v.pick is None for v in calls),
        rule_repairs=sum(len(v.rule_corrections) for v in calls),
        cost_per_pair=per_pair_mean({pv.pair_id: _total([v.cost_usd for v in pv.verdicts]) for pv in counted}),
        latency_per_pair=per_pair_mean({pv.pair_id: _total([v.latency_s for v in pv.verdicts]) for pv in counted}),
        susceptibility=(
            cue_shifts(f.pairs, f.cued, {k: p.content_key() for k, p in by_id.items()}, n_boot=n_boot, seed=seed)
            if f.cued
            else []
        ),
    )
    return _against_experts(row, picks, pool, n_boot, seed)


def _total(amounts: Sequence[float | None]) -> float | None:
    return None if any(a is None for a in amounts) else sum(a for a in amounts if a is not None)


def paper_rows(pool: ExpertPool, *, n_boot: int = BOARD_BOOT, seed: int = 0) -> list[BoardRow]:
    """A row per published judge: its picks on the pairs it judged (the A.6 pairs), nothing else."""
    names: list[str] = []
    for p in pool.pairs:
        names += [n for n in p.reference_picks if n not in names]
    rows = []
    for name in names:
        picks = {p.pair_id: p.reference_picks[name] for p in pool.pairs if name in p.reference_picks}
        row = BoardRow(
            judge=name, origin="paper", pairs_judged=len(picks), pairs_not_judged=len(pool.pairs) - len(picks)
        )
        rows.append(_against_experts(row, picks, pool, n_boot, seed))
    return rows


def rank(rows: Sequence[BoardRow]) -> list[BoardRow]:
    """By agreement with the experts' majority, highest first; then kappa; rows without a figure last."""

    def key(r: BoardRow) -> tuple:
        a = r.vs_majority.value if r.vs_majority is not None else None
        k = r.kappa_majority.value if r.kappa_majority is not None else None
        return (a is None, -(a or 0.0), k is None, -(k or 0.0), r.origin != "paper", r.judge, r.prompt_set or "")

    return sorted(rows, key=key)


def make_board(pool: ExpertPool, files: Sequence[JudgeBoardFile], *, n_boot: int = BOARD_BOOT, seed: int = 0) -> Board:
    """Every run's row and the paper's rows, ranked, with the experts' ceiling, on ``pool``."""
    seen: dict[tuple[str, str], JudgeBoardFile] = {}
    for f in files:
        key = (f.judge.label, f.judge.prompt_set.hash)
        if key in seen:
            raise ValueError(f"two judge-board files for {f.judge.label} with prompt set {f.judge.prompt_set.hash}")
        seen[key] = f
    maj, _ = _expert_views(pool)
    rows = [judge_row(f, pool, n_boot=n_boot, seed=seed) for f in files] + paper_rows(pool, n_boot=n_boot, seed=seed)
    notes = []
    for r in rows:
        if r.origin == "run" and r.pairs_not_judged:
            notes.append(
                f"{r.judge}: {r.pairs_not_judged} of {len(pool.pairs)} pairs not judged yet; running "
                "rqbench judge-board with this judge again judges them"
            )
        if r.pairs_changed:
            notes.append(f"{r.judge}: {r.pairs_changed} verdict(s) on texts the pairs no longer have are not counted")
    sources: dict[str, int] = {}
    for p in pool.pairs:
        sources[p.source] = sources.get(p.source, 0) + 1
    return Board(
        pool_version=pool.version,
        pool_pairs=len(pool.pairs),
        sources=sources,
        experts=pool.experts(),
        majority_pairs=len(maj),
        n_boot=n_boot,
        ceiling=expert_agreement({p.pair_id: p.expert_picks for p in pool.pairs}, n_boot=n_boot, seed=seed),
        rows=rank(rows),
        notes=notes + list(pool.left_out),
    )
