"""The expert pool as the Space and ``rqbench judge-board`` load it: the paper's A.6 pairs and the Annotate tab's.

One loader for both, so the board a visitor sees and the pool a judge-board
run judges are the same pool. The paper's study file is read where it lies
(``expert_study.study_path``); annotated pairs come from the Space's stored
judgments, the results their pairs were drawn from, and the benchmark's papers
(``annotate.pool_pairs``). What cannot enter the pool is listed with why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rqbench.evaluate.judge_board.expert_pool import a6_pairs, make_pool
from rqbench.records import CitedPaper, ExpertPool, ResultsFile
from rqbench.space.annotate import pool_pairs
from rqbench.space.records import HumanJudgment


def load_pool(
    study: Path | None,
    judgments: Sequence[HumanJudgment] = (),
    results: Sequence[ResultsFile] = (),
    library: Mapping[str, CitedPaper] | None = None,
) -> ExpertPool:
    """The A.6 pairs of ``study`` (when given and found), then every annotated pair, as one versioned pool.

    A study file that is given but unreadable raises ``AnnotationError`` naming the file, line and field.
    """
    parts, left_out = [], []
    if study is not None and study.is_file():
        parts.append(a6_pairs(study))
    elif study is not None:
        left_out.append(f"{study}: the paper's expert-study file was not found; its pairs are not in the pool")
    if judgments:
        annotated, missing = pool_pairs(judgments, results, library or {})
        parts.append(annotated)
        left_out += missing
    return make_pool(parts, left_out)
