"""The expert-labelled pair pool: the paper's printed study (A.6) as pairs, the pool from its parts, its snapshot.

The A.6 samples (``../shared/fixtures/paper_examples/expert_vs_llm.jsonl``, read
where it lies) become pairs with their background as printed: the background
paper's title and summarised abstract, which is all the paper gives. Raters
named ``expert...`` are the experts; the other raters (gemini-3.1-pro and
deepseek-v4-pro) are the paper's judges, kept as reference picks. The Space's
annotated pairs are made beside its Annotate tab (``rqbench.space.expert_pool``,
which loads the whole pool); ``make_pool`` joins the parts and versions them.
A judge-board run writes the pool it ran on (``pool.json``) beside its results,
so ``rqbench report`` shows the board without the Space's stores.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rqbench.evaluate.criteria import headline
from rqbench.evaluate.judge_board.agreement import EXPERT_PREFIX, AnnotationError, ExpertSample, read_expert_samples
from rqbench.io import read_model, write_atomic
from rqbench.records import CitedPaper, ExpertPair, ExpertPool

A6_SOURCE = "the RQ-Bench paper, appendix A.6 (expert evaluation outputs)"
POOL_FILE = "pool.json"
BOARD_DIMENSION = headline("novelty")
BOARD_SETTING = "comparative"


def a6_pair_id(sample: int) -> str:
    return f"a6-{sample}"


def _a6_pair(s: ExpertSample, path: Path) -> ExpertPair:
    where = f"{path}: sample {s.sample}"
    if s.dimension != BOARD_DIMENSION or s.setting != BOARD_SETTING:
        raise AnnotationError(
            f"{where}: the judge board compares {BOARD_SETTING} {BOARD_DIMENSION} picks, not {s.setting} {s.dimension}"
        )
    experts = {r: w for r, w in s.verdicts.items() if r.lower().startswith(EXPERT_PREFIX)}
    if not experts:
        raise AnnotationError(f"{where}: no expert verdict (a rater whose name starts with {EXPERT_PREFIX!r})")
    return ExpertPair(
        pair_id=a6_pair_id(s.sample),
        source="paper_a6",
        rq_id=s.rq_id,
        model=s.model,
        gt_rq=s.gt_rq,
        model_rq=s.model_rq,
        provenance=f"{A6_SOURCE}, sample {s.sample}: the background paper's title and summarised abstract as "
        f"printed; the author-anchored RQ against {s.model}'s best-of-five RQ",
        background=[
            CitedPaper(
                paper_id=f"{a6_pair_id(s.sample)}-background",
                title=s.background_title,
                abstract=s.background_abstract_summary,
                text_level="abstract",
            )
        ],
        expert_picks=experts,
        reference_picks={r: w for r, w in s.verdicts.items() if r not in experts},
    )


def a6_pairs(path: str | Path) -> list[ExpertPair]:
    """The printed samples as pool pairs; a bad line raises ``AnnotationError`` naming the file, line and field."""
    path = Path(path)
    return [_a6_pair(s, path) for s in read_expert_samples(path)]


def make_pool(parts: Iterable[Iterable[ExpertPair]], left_out: Iterable[str] = ()) -> ExpertPool:
    """One pool from its parts (A.6, the Space's annotated pairs) in their order, versioned by its content."""
    pairs = [p for part in parts for p in part]
    seen: dict[str, ExpertPair] = {}
    for p in pairs:
        if p.pair_id in seen:
            raise ValueError(
                f"pair {p.pair_id!r} comes from two places: {seen[p.pair_id].provenance!r} and {p.provenance!r}"
            )
        seen[p.pair_id] = p
    return ExpertPool(pairs=pairs, left_out=list(left_out))


def write_pool(pool: ExpertPool, folder: Path) -> Path:
    return write_atomic(folder / POOL_FILE, pool.model_dump_json(indent=1))


def read_pool(folder: Path) -> ExpertPool | None:
    """The pool a judge-board run last wrote into ``folder``; None when there is none."""
    path = folder / POOL_FILE
    return read_model(path, ExpertPool, kind="expert pool") if path.is_file() else None
