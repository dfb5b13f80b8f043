"""The Judges tab's table: the judge board as cells, each figure with its interval and the pairs behind it.

The same ``Board`` and the same texts as report.md's section
(``rqbench.evaluate.report.judge_board_section``): ranked by agreement with the experts'
majority, the experts' agreement with each other placed as a row where it ranks
(the ceiling), the paper's published verdicts marked as the paper's. Hover a
header for what the column means, a figure for its n.
"""

from __future__ import annotations

from rqbench.evaluate.judge_board.board import Board, BoardRow
from rqbench.evaluate.metrics.bootstrap import Estimate
from rqbench.evaluate.report.judge_board_section import (
    CEILING_LABEL,
    COLUMNS,
    FIGURE_COLUMNS,
    SUSCEPTIBILITY_HEADERS,
    SUSCEPTIBILITY_NOTE,
    expert_columns,
    expert_names,
    invalid_text,
    money,
    seconds,
    susceptibility_rows,
)
from rqbench.space.html_table import Cell, Header

CEILING_NOTE = "how often two experts made the same pick on a pair both picked on"
CAPTION = (
    "Ranked by agreement with the experts' majority. Brackets: 95% bootstrap intervals over pairs; "
    "n: the pairs behind a figure (for the ceiling, the pairs of experts compared). "
    "The paper's rows are its published verdicts on the pairs of its appendix A.6. "
    "On ten pairs every interval is wide, and one with no width (all agreed, or none) is not certainty: "
    "on n pairs the true share can lie about 3/n away from it."
)


def _share(e: Estimate | None, why: str) -> Cell:
    if e is None:
        return Cell("—", kind="missing", title=why)
    return Cell(
        f"{100 * e.value:.0f}%",
        note=f"[{100 * e.ci_low:.0f}, {100 * e.ci_high:.0f}] n={e.n}",
        title=f"{100 * e.value:.1f}% on n = {e.n}",
        kind="num stacked",
    )


def _kappa(e: Estimate | None) -> Cell:
    if e is None:
        return Cell("—", kind="missing", title="undefined: no shared pair, or one and the same pick throughout")
    return Cell(f"{e.value:.2f}", note=f"[{e.ci_low:.2f}, {e.ci_high:.2f}] n={e.n}", kind="num stacked")


def headers(board: Board, experts: list[str]) -> list[Header]:
    names = expert_names(board.experts)
    return [
        Header("#", kind="num"),
        Header("Judge", title=COLUMNS["Judge"]),
        Header("vs majority", kind="num", title=COLUMNS["vs majority"]),
        Header("κ vs majority", kind="num", title=COLUMNS["κ vs majority"]),
        *[Header(f"vs {names[e]}", kind="num", title=COLUMNS["vs expert"]) for e in experts],
        *[Header(c, kind="num", title=COLUMNS[c]) for c in FIGURE_COLUMNS],
    ]


def _short_prompts(prompt_set: str | None) -> str:
    """``rqbench-v1 (b2:bd0b2e6054…)``: the prompt set's name and the start of its hash (all of it on hover)."""
    if not prompt_set:
        return ""
    name, _, digest = prompt_set.partition(" (")
    return f"{name} ({digest.rstrip(')')[:13]}…)"


def _row(rank: int, r: BoardRow, experts: list[str]) -> list[Cell]:
    paper = r.origin == "paper"
    no_calls = "the paper publishes verdicts only: no calls, so no order, reply checks, cost or time"
    judge = Cell(
        r.judge,
        note="the paper's published verdicts (A.6)" if paper else _short_prompts(r.prompt_set),
        title=r.prompt_set or "",
        kind="long stacked",
    )
    cells = [
        Cell(str(rank), kind="num"),
        judge,
        _share(r.vs_majority, "no pair with both a pick by this judge and an expert majority"),
        _kappa(r.kappa_majority),
    ]
    cells += [_share(r.vs_expert.get(e), "this judge and this expert share no pair") for e in experts]
    cells += [
        _share(r.position_consistency, no_calls if paper else "no pair with a verdict in both orders"),
        _share(r.tie_rate, "no pick"),
    ]
    if paper:
        cells += [Cell("—", kind="missing", title=no_calls) for _ in range(4)]
    else:
        cells += [
            Cell(invalid_text(r), kind="num"),
            Cell(str(r.rule_repairs), kind="num"),
            Cell(
                money(r.cost_per_1000),
                kind="num" if r.cost_per_pair is not None else "missing",
                title="" if r.cost_per_pair is not None else "a call's cost is not in the call log",
            ),
            Cell(seconds(r.latency_per_pair), kind="num"),
        ]
    cells.append(
        Cell(
            f"{r.pairs_judged}/{r.pairs_judged + r.pairs_not_judged}",
            kind="num",
            title=f"{r.pairs_not_judged} pair(s) of the pool not judged" if r.pairs_not_judged else "",
        )
    )
    return cells


def _ceiling(board: Board, width: int) -> list[Cell]:
    c = board.ceiling
    share = _share(c, "no pair with two experts")
    return [
        Cell("", kind="ceiling"),
        Cell(CEILING_LABEL, title=CEILING_NOTE, kind="long ceiling"),
        Cell(share.text, note=share.note, title=share.title, kind=share.kind + " ceiling"),
    ] + [Cell("", kind="ceiling") for _ in range(width - 3)]


def table(board: Board) -> tuple[list[Header], list[list[Cell]]]:
    """The ranked rows with the ceiling row where it ranks."""
    experts = expert_columns(board)
    head = headers(board, experts)
    rows: list[list[Cell]] = []
    ceiling_done = board.ceiling is None
    for i, r in enumerate(board.rows):
        if not ceiling_done and (r.vs_majority is None or r.vs_majority.value < board.ceiling.value):  # type: ignore[union-attr]
            rows.append(_ceiling(board, len(head)))
            ceiling_done = True
        rows.append(_row(i + 1, r, experts))
    if not ceiling_done:
        rows.append(_ceiling(board, len(head)))
    return head, rows


NO_SUSCEPTIBILITY = (
    "No judge has been measured with added words yet: `rqbench judge-board --judge MODEL --susceptibility` judges "
    "every pair again with each cue added to the model RQ."
)


# The susceptibility table's columns: judge and cue as text, the figures right-aligned.
_SUSCEPTIBILITY_KINDS = ("", "", "num", "num", "num", "num")


def susceptibility_html() -> tuple[list[Header], str]:
    """The susceptibility table's headers and its caption."""
    headers = [Header(h, kind=k) for h, k in zip(SUSCEPTIBILITY_HEADERS, _SUSCEPTIBILITY_KINDS, strict=True)]
    return headers, SUSCEPTIBILITY_NOTE


def susceptibility_cells(board: Board) -> list[list[Cell]]:
    """Each (judge, cue) measured, as cells: the report's texts."""
    return [
        [Cell(text, kind=k) for text, k in zip(row, _SUSCEPTIBILITY_KINDS, strict=True)]
        for row in susceptibility_rows(board)
    ]
