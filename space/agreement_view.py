"""Agreement matrices on the page: who agrees with whom, as table cells.

The Expert study tab (the paper's printed samples) and the Annotate tab (the
Space's own annotators) both compute their matrix with
``rqbench.evaluate.judge_board.agreement.agreement_matrix`` and lay it out here, so the
two tables mean the same thing and are read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rqbench.evaluate.judge_board.agreement import (
    AgreementMatrix,
    Annotation,
    agreement_matrix,
    evaluators,
)
from rqbench.records import ResultsFile
from rqbench.space.html_table import Cell, Header
from rqbench.space.records import HumanJudgment

MISSING_SELF = "·"
MATRIX_NOTE = (
    "Share of shared samples on which the two raters picked the same RQ (author-anchored, model, or tie), "
    "with its 95% bootstrap interval over source papers; n is the number of shared samples."
)


def matrix_cells(
    matrix: AgreementMatrix, names: Mapping[str, str] | None = None
) -> tuple[list[Header], list[list[Cell]]]:
    """The matrix as a table: one row and one column per rater, each cell ``70% [40, 90]`` with n on hover."""
    names = names or {}
    show = lambda e: names.get(e, e)  # noqa: E731
    headers = [Header("Rater")] + [Header(show(c), kind="num") for c in matrix.cols]
    rows = []
    for r in matrix.rows:
        row = [Cell(show(r))]
        for c in matrix.cols:
            est = matrix.get(r, c)
            if r == c:
                row.append(Cell(MISSING_SELF, title="a rater always agrees with itself", kind="missing"))
            elif est is None:
                row.append(Cell("—", title="these two raters share no sample", kind="missing"))
            else:
                row.append(
                    Cell(
                        f"{100 * est.value:.0f}%",
                        note=f"[{100 * est.ci_low:.0f}, {100 * est.ci_high:.0f}]",
                        title=f"n = {est.n} shared samples",
                        kind="num",
                    )
                )
        rows.append(row)
    return headers, rows


def annotator_names(picks: Sequence[Annotation]) -> dict[str, str]:
    """Hashed annotator ids -> "annotator 1", "annotator 2", ... in the order the matrix lists them."""
    humans = [e for e in evaluators(picks) if any(p.evaluator == e and p.group == "human" for p in picks)]
    return {e: f"annotator {k + 1}" for k, e in enumerate(humans)}


def annotation_matrices(
    judgments: Sequence[HumanJudgment], results: Sequence[ResultsFile], *, n_boot: int = 500
) -> dict[tuple[str, str], tuple[AgreementMatrix, dict[str, str]]]:
    """(model, setting) -> the agreement matrix of its annotators and judges on the annotated pairs, and the
    annotators' display names. Human picks are pinned to the RQ they were shown (``pin_to_shown``) and judge
    picks are ``llm_picks`` on those same pairs, as for the leaderboard's agreement column."""
    from rqbench.space.annotate import annotated_picks

    out: dict[tuple[str, str], tuple[AgreementMatrix, dict[str, str]]] = {}
    for files, setting, humans, judges in annotated_picks(judgments, results):
        picks = [*humans, *judges]
        out[(files[0].submission.model, setting)] = (agreement_matrix(picks, n_boot=n_boot), annotator_names(picks))
    return out
