"""The judge board's picture: agreement with the experts' majority against cost per 1,000 pairs.

One point per judge configuration whose cost the call log knows, with its 95%
interval; the experts' agreement with each other is the ceiling, a dashed line
with its interval as a band. Rows without a known cost (the paper's published
verdicts, unpriced models) cannot be placed on the cost axis and are named
under the plot instead. The cost axis is linear up to $1 and logarithmic
beyond, so a free embedded judge and a paid one share it. When no row can be
placed, ``nothing_placed`` says why in a sentence, which the Space shows instead
of an empty plot. Matplotlib with the Agg backend; the report saves the figure,
the Space shows it.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from rqbench.evaluate.judge_board.board import Board, BoardRow  # noqa: E402
from rqbench.evaluate.report.judge_board_section import judge_text  # noqa: E402
from rqbench.evaluate.report.plots import short_label  # noqa: E402

# Why the plot has no point, from the first thing missing: a judge run, a priced call, an expert majority
NO_JUDGE_RUN = (
    "No judge has been run on the expert pairs yet, so no judge has a cost to plot against its agreement "
    "(the paper's rows are published verdicts, with no calls to price). Run one with rqbench judge-board "
    "--judge MODEL."
)
NO_PRICED_CALLS = (
    "No judge has priced calls: the call log records no cost for the calls of {judges}, so none can be placed "
    "on the cost axis. A judge whose calls are priced is plotted once it has run on the pairs."
)
NO_MAJORITY = (
    "No priced judge can be plotted yet: agreement is measured on the pairs where the experts have a majority "
    "pick ({majority} in the pool), and {judges} judged none of them."
)


def placed(board: Board) -> list[BoardRow]:
    """The rows the plot places: agreement with the majority and cost both known."""
    return [r for r in board.rows if r.vs_majority is not None and r.cost_per_1000 is not None]


def nothing_placed(board: Board) -> str:
    """The sentence shown instead of the plot when it would place no judge; "" when it places one."""
    if placed(board):
        return ""
    runs = [r for r in board.rows if r.origin == "run"]
    if not runs:
        return NO_JUDGE_RUN
    priced = [r for r in runs if r.cost_per_1000 is not None]
    if not priced:
        return NO_PRICED_CALLS.format(judges=_names(runs))
    return NO_MAJORITY.format(judges=_names(priced), majority=board.majority_pairs)


def _names(rows: list[BoardRow], shown: int = 3) -> str:
    names = [judge_text(r) for r in rows]
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def agreement_cost_figure(board: Board) -> Figure:
    """Agreement with the majority (y, %) against dollars per 1,000 pairs (x), the ceiling across."""
    fig, ax = plt.subplots(figsize=(8.0, 4.6), dpi=110)
    on_axis = placed(board)
    off = [judge_text(r) for r in board.rows if r not in on_axis]
    for r in on_axis:
        e = r.vs_majority
        assert e is not None and r.cost_per_1000 is not None
        x, y = r.cost_per_1000, 100 * e.value
        ax.errorbar(
            [x],
            [y],
            yerr=[[y - 100 * e.ci_low], [100 * e.ci_high - y]],
            fmt="o",
            capsize=3,
            color="#c92a2a" if r.demo else "#1c7ed6",
        )
        ax.annotate(
            short_label(judge_text(r)) + (" (demo)" if r.demo else ""),
            (x, y),
            textcoords="offset points",
            xytext=(6, 4),
            fontsize=8,
        )
    top = max([r.cost_per_1000 or 0.0 for r in on_axis] + [1.0])
    if board.ceiling is not None:
        c = board.ceiling
        ax.axhspan(100 * c.ci_low, 100 * c.ci_high, color="#868e96", alpha=0.15, lw=0)
        ax.axhline(100 * c.value, color="#495057", ls="--", lw=1)
        ax.text(
            0,
            100 * c.value + 1.5,
            f" experts with each other: {100 * c.value:.0f}% (n={c.n})",
            fontsize=8,
            color="#495057",
        )
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(-0.1, top * 3)
    ax.set_ylim(-5, 105)
    ax.set_xlabel("cost per 1,000 pairs (US$, as the call log recorded it)")
    ax.set_ylabel("agreement with the experts' majority (%)")
    ax.set_title(
        f"Judge board on {board.pool_pairs} expert pairs ({board.majority_pairs} with a majority)", fontsize=10
    )
    if not on_axis:  # the Space shows nothing_placed's sentence instead; the report's figure says it
        ax.text(0.5, 0.5, "no judge with a known cost yet", transform=ax.transAxes, ha="center", color="#868e96")
    if off:
        fig.text(0.01, 0.01, _short_list("not on the cost axis (cost unknown): ", off), fontsize=7, color="#495057")
    ax.grid(alpha=0.3)
    fig.tight_layout(rect=(0, 0.05 if off else 0, 1, 1))
    return fig


def _short_list(lead: str, names: list[str], width: int = 150) -> str:
    text = lead + "; ".join(names)
    return text if len(text) <= width else text[: width - 1] + "…"


def write_figure(board: Board, path) -> None:  # type: ignore[no-untyped-def]
    fig = agreement_cost_figure(board)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    plt.close(fig)
