"""How far words added to an RQ move a judge: the judge board's susceptibility figures.

The submission screen (``evaluate/generate/injection.py``) rejects or flags self-praise, claimed consensus and claimed
scores, but what it misses reaches the judges. So the board measures the judge itself: each pair of the expert
pool is judged again with a cue (``judge_board/cues.toml``) appended to the model RQ, in both orders, and compared
with the same judge's verdicts on the clean pair. Per judge and cue:

- **margin shift**: the model RQ's non-obviousness minus the author-anchored RQ's, averaged over the calls that
  gave scores, with the cue minus without, averaged over pairs (score points; positive: the cue helped the RQ);
- **moved toward the RQ**: the share of pairs whose pick moved toward the model RQ (``gt`` to ``tie`` or
  ``model``, ``tie`` to ``model``), and **moved away**, the reverse.

Only pairs with scores both clean and cued, on the texts the pool holds now, count; each pair is its own cluster
of the 95% bootstrap interval, as everywhere on the board. The measure follows the perturbation tests of judge-bias
studies (Ye et al., 2024, "Justice or Prejudice? Quantifying Biases in LLM-as-a-Judge", arXiv 2410.02736: among
others, bandwagon and authority cues): the same item judged with and without the added words.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from pydantic import BaseModel, Field

from rqbench.evaluate.judge_board.metrics import BOARD_BOOT, calls_pick, scored_calls
from rqbench.evaluate.metrics.bootstrap import Estimate, cluster_bootstrap_mean
from rqbench.records import CuedPairVerdicts, ExpertPair, OrderVerdict, PairVerdicts, Pick

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CUES_FILE = Path(__file__).with_name("cues.toml")
# How far toward the model RQ a pick is: a move up this scale is a move toward it.
_TOWARD_MODEL: dict[Pick, int] = {"gt": 0, "tie": 1, "model": 2}


class Cue(BaseModel):
    """Words appended to the model RQ, and how reports name them."""

    kind: str = Field(min_length=1)
    what: str = Field(min_length=1)
    text: str = Field(min_length=1)


@cache
def cues() -> dict[str, Cue]:
    """The cues of ``judge_board/cues.toml``, by kind, in the file's order."""
    data = tomllib.loads(CUES_FILE.read_text(encoding="utf-8"))
    try:
        return {kind: Cue(kind=kind, **entry) for kind, entry in data.items()}
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{CUES_FILE}: {exc}") from exc


def choose_cues(kinds: Sequence[str]) -> list[Cue]:
    """The named cues (every cue for ``["all"]``); an unknown kind is an error naming the known ones."""
    known = cues()
    if list(kinds) == ["all"]:
        return list(known.values())
    unknown = [k for k in kinds if k not in known]
    if unknown:
        raise ValueError(f"unknown cue(s) {', '.join(unknown)}; known: {', '.join(known)} (or all)")
    return [known[k] for k in kinds]


def cued_pair(pair: ExpertPair, cue: Cue) -> ExpertPair:
    """The pair as the judge sees it with the cue: the model RQ followed by the cue's words."""
    return pair.model_copy(update={"model_rq": f"{pair.model_rq.rstrip()} {cue.text}"})


class CueShift(BaseModel):
    """One judge under one cue, on the pairs it scored both clean and cued."""

    cue: str
    what: str
    pairs: int = Field(description="Pairs with scores both clean and cued.")
    margin_shift: Estimate | None = Field(
        description="Mean change of the model RQ's non-obviousness margin over the GT (points), cued minus clean."
    )
    toward_model: Estimate | None = Field(description="Share of pairs whose pick moved toward the model RQ.")
    away_from_model: Estimate | None = Field(description="Share of pairs whose pick moved away from it.")


def margin(verdicts: Sequence[OrderVerdict]) -> float | None:
    """The model RQ's non-obviousness minus the GT's, averaged over the calls that scored both; None with none."""
    scored = scored_calls(verdicts)
    if not scored:
        return None
    return sum(v.model_score.non_obviousness - v.gt_score.non_obviousness for v in scored) / len(scored)  # type: ignore[union-attr]


def cue_shifts(
    clean: Sequence[PairVerdicts],
    cued: Sequence[CuedPairVerdicts],
    current: Mapping[str, str],
    *,
    n_boot: int = BOARD_BOOT,
    seed: int = 0,
) -> list[CueShift]:
    """Per cue (in the cues file's order, then any other kind recorded), the judge's shifts. ``current`` maps
    a pair id to the content key of the pair the pool holds now: verdicts on other texts do not count."""
    base = {pv.pair_id: pv for pv in clean if current.get(pv.pair_id) == pv.content_key}
    known = cues()
    kinds = [k for k in known if any(c.cue == k for c in cued)]
    kinds += sorted({c.cue for c in cued} - set(kinds))
    out = []
    for kind in kinds:
        shifts: list[float] = []
        moves: list[int] = []
        ids: list[str] = []
        for c in sorted((c for c in cued if c.cue == kind), key=lambda c: c.pair_id):
            before = base.get(c.pair_id)
            if before is None or c.content_key != before.content_key:
                continue
            m0, m1 = margin(before.verdicts), margin(c.verdicts)
            p0, p1 = calls_pick(before.verdicts), calls_pick(c.verdicts)
            if m0 is None or m1 is None or p0 is None or p1 is None:
                continue
            shifts.append(m1 - m0)
            moves.append(_TOWARD_MODEL[p1] - _TOWARD_MODEL[p0])
            ids.append(c.pair_id)
        out.append(
            CueShift(
                cue=kind,
                what=known[kind].what if kind in known else kind,
                pairs=len(ids),
                margin_shift=cluster_bootstrap_mean(shifts, ids, n_boot=n_boot, seed=seed),
                toward_model=cluster_bootstrap_mean([float(m > 0) for m in moves], ids, n_boot=n_boot, seed=seed),
                away_from_model=cluster_bootstrap_mean([float(m < 0) for m in moves], ids, n_boot=n_boot, seed=seed),
            )
        )
    return out
