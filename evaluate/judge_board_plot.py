"""The judge board's picture: agreement with the experts' majority against cost per 1,000 pairs.

One point per judge configuration whose cost the call log knows, with its 95%
interval; the experts' agreement with each other is the ceiling, a dashed line
with its interval as a band. Rows without a known cost (the paper's published
verdicts, unpriced models) cannot be placed on the cost axis and are named
under the plot instead. The cost axis is linear up to $1 and logarithmic
beyond, so a free embedded judge and a paid one share it. Matplotlib with the
Agg backend; the report saves the figure, the Space shows it.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from rqbench.evaluate.judge_board import Board  # noqa: E402
from rqbench.evaluate.judge_board_report import judge_text  # noqa: E402
from rqbench.evaluate.plots import short_label  # noqa: E402


def agreement_cost_figure(board: Board) -> Figure:
    """Agreement with the majority (y, %) against dollars per 1,000 pairs (x), the ceiling across."""
    fig, ax = plt.subplots(figsize=(8.0, 4.6), dpi=110)
    placed = [r for r in board.rows if r.vs_majority is not None and r.cost_per_1000 is not None]
    off = [judge_text(r) for r in board.rows if r not in placed]
    for r in placed:
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
    top = max([r.cost_per_1000 or 0.0 for r in placed] + [1.0])
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
    if not placed:
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
