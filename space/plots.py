"""The Space's two pictures, drawn from the same summary rows as the leaderboard.

Novelty against narrowness per model (the "novelty mirage": high Best@5
non-obviousness at high source-boundedness), and win/tie/lose bars per judge.
Matplotlib with the Agg backend; figures are returned, the page shows them.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from rqbench.evaluate.summary import COMBINED, SummaryRow


def _err(fig) -> list[list[float]]:
    return [[fig.value - fig.ci_low], [fig.ci_high - fig.value]]


def novelty_vs_narrowness(
    rows: Sequence[SummaryRow],
    *,
    judge: str = COMBINED,
    novelty: str = "best5_non_obviousness",
    narrowness: str = "best5_source_bound_score",
) -> Figure:
    """One point per model (and the GT reference) for one judge, standalone, with 95% CI bars."""
    fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=100)
    drawn = 0
    for r in rows:
        if r.setting != "standalone" or r.judge != judge or r.subfield is not None:
            continue
        x, y = r.figures.get(narrowness), r.figures.get(novelty)
        if x is None or y is None:
            continue
        ref = r.row_kind == "reference"
        ax.errorbar(x.value, y.value, xerr=_err(x), yerr=_err(y), fmt="s" if ref else "o",
                    color="black" if ref else None, capsize=3)  # fmt: skip
        label = r.model if ref else f"{r.model} ({r.prompt_variant})"
        ax.annotate(label, (x.value, y.value), textcoords="offset points", xytext=(5, 5), fontsize=8)
        drawn += 1
    ax.set_xlabel("Best@5 source-boundedness (lower is broader)")
    ax.set_ylabel("Best@5 non-obviousness")
    ax.set_title(f"Novelty against narrowness, judge: {judge}")
    if not drawn:
        ax.text(0.5, 0.5, "no standalone results yet", ha="center", va="center", transform=ax.transAxes)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def verdict_bars(
    rows: Sequence[SummaryRow],
    *,
    setting: str = "standalone",
    dimension: str = "non_obviousness",
    max_bars: int = 30,
) -> Figure:
    """Stacked win/tie/lose shares of each model under each judge (and combined); the ``max_bars`` highest win rates."""
    items = []
    for r in rows:
        if r.row_kind != "model" or r.setting != setting or r.subfield is not None:
            continue
        vals = [r.figures.get(f"{v}_{dimension}") for v in ("win", "tie", "lose")]
        if all(v is not None for v in vals):
            items.append((f"{r.model} / {r.judge}", [v.value for v in vals]))  # type: ignore[union-attr]
    total = len(items)
    if total > max_bars:
        items = sorted(items, key=lambda it: -it[1][0])[:max_bars]
    items.sort()
    fig, ax = plt.subplots(figsize=(6.4, max(2.0, 0.45 * len(items) + 1.2)), dpi=100)
    left = [0.0] * len(items)
    for k, (name, color) in enumerate((("win", "#2a9d8f"), ("tie", "#c9c9c9"), ("lose", "#e76f51"))):
        widths = [100 * v[k] for _, v in items]
        ax.barh([n for n, _ in items], widths, left=left, color=color, label=name)
        left = [a + b for a, b in zip(left, widths)]
    ax.set_xlim(0, 100)
    if total > max_bars:
        ax.set_title(f"The {max_bars} highest win rates of {total} (model, judge) rows", fontsize=9)
    ax.set_xlabel(f"% of instances ({dimension.replace('_', ' ')}, {setting}) vs the author-anchored RQ")
    if not items:
        ax.text(0.5, 0.5, "no results yet", ha="center", va="center", transform=ax.transAxes)
    else:
        ax.legend(loc="lower right", fontsize=8)
    ax.invert_yaxis()
    fig.tight_layout()
    return fig
