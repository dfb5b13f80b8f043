"""The judge board on the page: its cells as text, the Markdown section of report.md, and what each column means.

The Space's Judges tab and ``rqbench report`` lay out the same ``Board``
(``rqbench.evaluate.judge_board.board``) with the same cell texts, so a figure reads
the same in both. Every cell that is a share or a kappa carries its interval and
``n``, the pairs behind it; the experts' agreement with each other is a row of
its own, placed where it ranks: the ceiling.
"""

from __future__ import annotations

from collections.abc import Sequence

from rqbench.demo import banner_text
from rqbench.evaluate.judge_board.board import Board, BoardRow
from rqbench.evaluate.metrics.bootstrap import Estimate

MAX_EXPERT_COLUMNS = 6
CEILING_LABEL = "Experts with each other (the ceiling)"
SOURCES = {"paper_a6": "from the paper's appendix A.6", "annotate": "annotated in the Space"}

# Column -> what it means; docs/evaluate.md explains each at length.
COLUMNS: dict[str, str] = {
    "Judge": "the judge configuration (label and prompt set), or a judge of the paper with its published verdicts",
    "vs majority": "share of pairs where the judge's pick equals the experts' majority pick (pairs with one)",
    "κ vs majority": "Cohen's kappa of the judge's picks against the majority's: agreement beyond chance",
    "vs expert": "share of the pairs an expert picked on where the judge made the same pick",
    "Position consistency": "share of pairs where the judge picked the same in both candidate orders",
    "Tie rate": "share of pairs the judge called a tie",
    "Invalid replies": "calls whose reply failed validation at least once (re-asked), of all calls",
    "Rule repairs": "rubric rules the replies broke and the reply models repaired",
    "Cost / 1,000 pairs": "dollars for 1,000 pairs (two calls each) at the cost the call log recorded",
    "Seconds / pair": "seconds of requests per pair (both calls), as the call log recorded them",
    "Pairs": "pairs of the pool the judge picked on, of all pairs",
}


def pct(e: Estimate | None) -> str:
    return "—" if e is None else f"{100 * e.value:.1f}% [{100 * e.ci_low:.0f}, {100 * e.ci_high:.0f}] n={e.n}"


def kappa_text(e: Estimate | None) -> str:
    return "—" if e is None else f"{e.value:.2f} [{e.ci_low:.2f}, {e.ci_high:.2f}] n={e.n}"


def shift_text(e: Estimate | None) -> str:
    """A margin shift in score points, signed, with its interval and n."""
    return "—" if e is None else f"{e.value:+.2f} [{e.ci_low:+.2f}, {e.ci_high:+.2f}] n={e.n}"


SUSCEPTIBILITY_HEADERS = ("Judge", "Cue", "Pairs", "Margin shift (points)", "Moved toward the RQ", "Moved away")
SUSCEPTIBILITY_NOTE = (
    "Each pair judged again with words added to the model RQ (the cue), in both orders. Margin shift: the model "
    "RQ's non-obviousness minus the author-anchored RQ's, with the cue minus without, mean over pairs (positive: "
    "the words helped). Moved toward the RQ / away: share of pairs whose pick moved toward the model RQ, or away "
    "from it. 95% bootstrap intervals over pairs."
)


def susceptibility_rows(board: Board) -> list[list[str]]:
    """One row per (judge, cue) measured: the cells both report.md and the Judges tab show."""
    return [
        [
            r.judge,
            c.what,
            str(c.pairs),
            shift_text(c.margin_shift),
            pct(c.toward_model),
            pct(c.away_from_model),
        ]
        for r in board.rows
        for c in r.susceptibility
    ]


def money(v: float | None) -> str:
    return "—" if v is None else f"${v:,.2f}"


def seconds(v: float | None) -> str:
    return "—" if v is None else f"{v:.1f}"


def expert_names(experts: Sequence[str]) -> dict[str, str]:
    """``expert_1`` -> ``Expert 1`` (the paper's); a hashed annotator id -> ``annotator 1``, ``annotator 2``..."""
    out, k = {}, 0
    for e in experts:
        if e.lower().startswith("expert"):
            out[e] = e.replace("_", " ").capitalize()
        else:
            k += 1
            out[e] = f"annotator {k}"
    return out


def expert_columns(board: Board) -> list[str]:
    """The experts shown as columns: those with the most picks behind the rows, at most ``MAX_EXPERT_COLUMNS``."""
    count = {
        e: max((r.vs_expert[e].n for r in board.rows if r.vs_expert.get(e) is not None), default=0)
        for e in board.experts
    }
    return sorted(board.experts, key=lambda e: (-count[e], board.experts.index(e)))[:MAX_EXPERT_COLUMNS]


def judge_text(r: BoardRow) -> str:
    if r.origin == "paper":
        return f"{r.judge} (the paper's verdicts, A.6)"
    return r.judge if r.prompt_set is None or r.prompt_set.startswith("rqbench-v1 ") else f"{r.judge} [{r.prompt_set}]"


def invalid_text(r: BoardRow) -> str:
    if r.calls is None:
        return "—"
    failed = f", {r.no_verdict} without a verdict" if r.no_verdict else ""
    return f"{r.invalid_replies}/{r.calls}{failed}"


def row_cells(r: BoardRow, experts: Sequence[str]) -> list[str]:
    """A row's cells after its rank, in the order of ``headers``."""
    return [
        judge_text(r),
        pct(r.vs_majority),
        kappa_text(r.kappa_majority),
        *[pct(r.vs_expert.get(e)) for e in experts],
        pct(r.position_consistency),
        pct(r.tie_rate),
        invalid_text(r),
        "—" if r.rule_repairs is None else str(r.rule_repairs),
        money(r.cost_per_1000),
        seconds(r.latency_per_pair),
        f"{r.pairs_judged}/{r.pairs_judged + r.pairs_not_judged}",
    ]


# the columns after the agreement ones, in the order the report and the Space show them
FIGURE_COLUMNS = (
    "Position consistency",
    "Tie rate",
    "Invalid replies",
    "Rule repairs",
    "Cost / 1,000 pairs",
    "Seconds / pair",
    "Pairs",
)


def headers(board: Board, experts: Sequence[str]) -> list[str]:
    names = expert_names(board.experts)
    return [
        "#",
        "Judge",
        "vs majority",
        "κ vs majority",
        *[f"vs {names[e]}" for e in experts],
        *FIGURE_COLUMNS,
    ]


def ceiling_at(board: Board) -> int | None:
    """Where the ceiling row goes among the ranked rows: before the first row whose majority agreement is lower."""
    if board.ceiling is None:
        return None
    for i, r in enumerate(board.rows):
        if r.vs_majority is None or r.vs_majority.value < board.ceiling.value:
            return i
    return len(board.rows)


def pool_line(board: Board) -> str:
    parts = ", ".join(f"{n} {SOURCES.get(s, s)}" for s, n in board.sources.items())
    return (
        f"Pool {board.pool_version}: {board.pool_pairs} pair(s) ({parts or 'none'}), {len(board.experts)} "
        f"expert(s), {board.majority_pairs} pair(s) with a strict expert majority."
    )


def demo_line(board: Board) -> str:
    return banner_text([r.judge for r in board.rows if r.demo], lead="Rows of this board come from")


def markdown(board: Board, *, plot: str | None = None) -> str:
    """report.md's section: the ranked table with the ceiling row, the pool, what each run was, and notes."""
    experts = expert_columns(board)
    cols = headers(board, experts)
    lines = ["## Judge board: agreement with experts", ""]
    demo = demo_line(board)
    if demo:
        lines += [f"> **Demo output, not results.** {demo}", ""]
    lines += [
        pool_line(board) + " Ranked by agreement with the experts' majority; each share has its 95% "
        f"bootstrap interval over pairs ({board.n_boot:,} resamples) and n, the pairs behind it. On so few "
        "pairs the intervals are wide, and one with no width (every pair agreed, or none) is not "
        "certainty: on n pairs the true share can lie about 3/n from it (docs/evaluate.md).",
        "",
    ]
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    at = ceiling_at(board)
    blank = ["—"] * (len(cols) - 4)
    for i, r in enumerate(board.rows):
        if i == at:
            lines.append(f"| | {CEILING_LABEL} | {pct(board.ceiling)} | | " + " | ".join(blank) + " |")
        lines.append(f"| {i + 1} | " + " | ".join(row_cells(r, experts)) + " |")
    if at == len(board.rows):
        lines.append(f"| | {CEILING_LABEL} | {pct(board.ceiling)} | | " + " | ".join(blank) + " |")
    if len(experts) < len(board.experts):
        lines += ["", f"{len(board.experts) - len(experts)} more expert(s) are not shown as columns."]
    lines += ["", "Where each row comes from:", ""]
    for r in board.rows:
        if r.origin == "paper":
            lines.append(
                f"- {r.judge}: {r.pairs_judged} published verdicts of the paper's appendix A.6; no calls, "
                "so no position consistency, reply checks, cost or time"
            )
        else:
            lines.append(f"- {r.judge}: prompt set {r.prompt_set}, last run on pool {r.run_pool_version}")
    cued = susceptibility_rows(board)
    if cued:
        lines += ["", "### Susceptibility to words added to the RQ", "", SUSCEPTIBILITY_NOTE, ""]
        lines += ["| " + " | ".join(SUSCEPTIBILITY_HEADERS) + " |", "|" + "---|" * len(SUSCEPTIBILITY_HEADERS)]
        lines += ["| " + " | ".join(row) + " |" for row in cued]
    if board.notes:
        lines += ["", "Notes:", "", *[f"- {n}" for n in board.notes]]
    if plot:
        lines += ["", f"![Agreement with the experts' majority against cost per 1,000 pairs]({plot})"]
    return "\n".join(lines) + "\n"
