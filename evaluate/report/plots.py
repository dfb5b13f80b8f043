"""PNG plots for the report: the "novelty mirage" scatter and win/tie/lose bars per judge.

matplotlib with the Agg backend (no display needed); each function reads
``SummaryRow``s and writes one PNG. A plot shows the combined judge where the
rows have one (two or more judges scored), and each judge's own rows otherwise:
one judge's figures are never labelled "combined".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rqbench.evaluate.criteria import CRITERIA, headline, headline_figure
from rqbench.evaluate.metrics.summary_row import COMBINED, SummaryRow

NOVELTY_SCATTER_DIMS = CRITERIA["novelty"].tie_break  # the mean of the three that pick a best RQ
COLORS = {"win": "#2b8a3e", "tie": "#adb5bd", "lose": "#c92a2a"}


LABEL_CHARS = 40  # a label's width in a plot


def short_label(text: str, width: int = LABEL_CHARS) -> str:
    """One line of at most ``width`` characters; a cut label keeps its start and its end (where model names
    differ: ``org/model-…-v2-instruct``) around an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    head = (width - 1) * 2 // 5
    return flat[:head] + "…" + flat[len(flat) - (width - 1 - head) :]


def _name(r: SummaryRow) -> str:
    return r.name


def _mean_novelty(r: SummaryRow) -> tuple[float, float, float] | None:
    """The mean of the three Best@5 novelty means, with the mean of their CI bounds."""
    figs = [r.figure(f"best5_{d}") for d in NOVELTY_SCATTER_DIMS]
    if any(f is None for f in figs):
        return None
    k = len(figs)
    return (sum(f.value for f in figs) / k, sum(f.ci_low for f in figs) / k, sum(f.ci_high for f in figs) / k)


def plotted_judges(rows: Sequence[SummaryRow]) -> list[str]:
    """The judges a plot shows: the combined one when the rows have it, else every judge's own rows."""
    if any(r.judge == COMBINED for r in rows):
        return [COMBINED]
    return sorted({r.judge for r in rows})


def novelty_vs_source_bound(rows: Sequence[SummaryRow], path: Path, *, judge: str | None = None) -> Path:
    """Each model's Best@5 novelty against its Best@5 source-boundedness (standalone), GT as reference.

    Points high and to the right are judged novel yet stay close to one source
    paper: the "novelty mirage" the paper describes. One panel per judge in
    ``plotted_judges`` unless ``judge`` names one.
    """
    standalone = [r for r in rows if r.setting == "standalone" and r.subfield is None]
    judges = [judge] if judge else plotted_judges(standalone) or ["no judge"]
    fig, axes = plt.subplots(1, len(judges), figsize=(6.4 * len(judges), 4.8), dpi=120, squeeze=False)
    for ax, j in zip(axes[0], judges):
        _scatter(ax, [r for r in standalone if r.judge == j], j)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def _scatter(ax, use: Sequence[SummaryRow], judge: str) -> None:  # type: ignore[no-untyped-def]
    plotted = 0
    for r in sorted(use, key=lambda r: (r.row_kind, _name(r))):
        nov, sb = _mean_novelty(r), r.figure(headline_figure("narrowness", "best5"))
        if nov is None or sb is None:
            continue
        ref = r.row_kind == "reference"
        ax.errorbar(
            sb.value,
            nov[0],
            xerr=[[sb.value - sb.ci_low], [sb.ci_high - sb.value]],
            yerr=[[nov[0] - nov[1]], [nov[2] - nov[0]]],
            fmt="*" if ref else "o",
            markersize=12 if ref else 7,
            color="black" if ref else None,
            capsize=3,
            alpha=0.9,
        )
        ax.annotate(_name(r), (sb.value, nov[0]), textcoords="offset points", xytext=(6, 4), fontsize=8)
        plotted += 1
    if plotted == 0:
        ax.text(
            0.5, 0.5, "no standalone novelty and narrowness scores", ha="center", va="center", transform=ax.transAxes
        )
    ax.set_xlabel("Best@5 source-boundedness (0-3, lower is broader)")
    ax.set_ylabel("Best@5 novelty (mean of three dimensions, 0-3)")
    ax.set_title(f"Novelty vs source-boundedness ({judge} judge, standalone)", fontsize=9)
    ax.grid(alpha=0.3)


def win_tie_lose_bars(rows: Sequence[SummaryRow], path: Path, *, dimension: str = headline("novelty")) -> Path:
    """Stacked win/tie/lose bars of each model: one row of panels per setting, one panel per judge."""
    use = [r for r in rows if r.row_kind == "model" and r.subfield is None and r.figure(f"win_{dimension}") is not None]
    settings = [s for s in ("standalone", "comparative") if any(r.setting == s for r in use)] or ["standalone"]
    judges = sorted({r.judge for r in use}, key=lambda j: (j == COMBINED, j)) or ["no judge"]
    fig, axes = plt.subplots(
        len(settings),
        len(judges),
        figsize=(2.8 * len(judges) + 1.2, 3.6 * len(settings)),
        dpi=120,
        squeeze=False,
        sharey=True,
    )
    for si, setting in enumerate(settings):
        for ji, judge in enumerate(judges):
            ax = axes[si][ji]
            mine = sorted((r for r in use if (r.setting, r.judge) == (setting, judge)), key=_name)
            names = [_name(r) for r in mine]
            bottom = [0.0] * len(mine)
            for outcome in ("win", "tie", "lose"):
                vals = [100 * r.figure(f"{outcome}_{dimension}").value for r in mine]
                ax.bar(names, vals, bottom=bottom, color=COLORS[outcome], label=outcome, width=0.6)
                bottom = [b + v for b, v in zip(bottom, vals)]
            ax.set_title(f"{judge} ({setting})", fontsize=9)
            ax.tick_params(axis="x", labelrotation=30, labelsize=7)
            for lab in ax.get_xticklabels():
                lab.set_horizontalalignment("right")
            ax.set_ylim(0, 100)
            if not mine:
                ax.text(0.5, 0.5, "no rates", ha="center", va="center", transform=ax.transAxes)
        axes[si][0].set_ylabel(f"Pass@5 {dimension.replace('_', '-')} (%)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS[o]) for o in ("win", "tie", "lose")]
    fig.legend(handles, ["win", "tie", "lose"], loc="upper right", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.93, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    plt.close(fig)
    return path
