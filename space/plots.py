"""The Space's two pictures, drawn from the same summary rows as the leaderboard.

Novelty against narrowness per model (the "novelty mirage": high Best@5
non-obviousness at high source-boundedness), and win/tie/lose bars per model.
Both take one judge; "combined" means the leaderboard's default rows (the
combined row, or a lone judge's own). Each stays readable from one model to a
thousand: the width is fixed, labels are cut to one short line, the bar chart
grows with its bars up to ``max_bars`` (the highest win rates; the title says
how many were left out), and the scatter labels and draws intervals only while
there is room for them. Each axis spans its figure's whole scale, as the
criteria declare it (``rqbench.evaluate.criteria``): two points on one value
still sit on a 0-3 axis, never on a range matplotlib made up around them.
When a figure has nothing to show, ``scatter_empty`` and ``bars_empty`` say so
in a sentence, which the page shows instead of the figure. Matplotlib with the
Agg backend; figures are returned, the page shows them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from rqbench.evaluate.criteria import DIMENSIONS, METRICS, headline, headline_figure
from rqbench.evaluate.metrics.summary_row import COMBINED, SummaryRow
from rqbench.evaluate.report.plots import LABEL_CHARS, short_label  # noqa: F401 - LABEL_CHARS: the width labels keep
from rqbench.space.leaderboard import headline_flags

# pyplot keeps global state, so the Space draws one figure at a time whichever visitor's thread asks (concurrent
# draws raised matplotlib's mathtext ParseException under 10 visitors, benchmarks/space_load.py). A lock, not a
# one-event lane in Gradio's queue: a lane of one made every visitor opening Plots or Judges wait in line for
# figures that were already drawn and cached (2.4 s p50 under 50 visitors; 0.15 s with the lock).
DRAWING = threading.Lock()


def drawn(draw: Callable[[], Figure], send: Callable[[Figure], Any]) -> Any:
    """``send(draw())`` (a figure and what the page gets of it, e.g. ``gr.Plot.postprocess``) under ``DRAWING``."""
    with DRAWING:
        return send(draw())


WIDTH_IN = 10.0
SCATTER_LABELS = 12  # points labelled when there are more than this many: the GT and the highest ones
SCATTER_CI_UP_TO = 40  # intervals are drawn up to this many points; beyond, they hide the points
BAR_IN = 0.32  # height of one bar's slot, in inches
COLORS = {"win": "#2a9d8f", "tie": "#c9c9c9", "lose": "#e76f51"}
AXIS_PAD = 0.05  # share of a scale left blank at each end, so points on its ends are drawn whole

# What the page shows instead of a figure with nothing on it: which results are missing, and what gives them
NO_SCATTER = (
    "Novelty against narrowness, judge {judge}: no standalone results give Best@5 {novelty} and {narrowness} "
    "yet, so there is nothing to plot. A model's submission judged in the standalone setting places a point here."
)
NO_BARS = (
    "Win / tie / lose, judge {judge}: no {setting} results give win / tie / lose rates on {dimension} yet, so "
    "there is nothing to plot. A model's submission judged in the {setting} setting adds its bar."
)


def scale_range(metric: str) -> tuple[float, float]:
    """The axis range of a figure: its dimension's scale as the criterion declares it, padded by ``AXIS_PAD``."""
    lo, hi = DIMENSIONS[METRICS[metric].dimension][1].scale
    pad = AXIS_PAD * (hi - lo)
    return lo - pad, hi + pad


def _dimension_label(metric: str) -> str:
    return DIMENSIONS[METRICS[metric].dimension][1].label


def judge_rows(rows: Sequence[SummaryRow], judge: str, setting: str) -> list[SummaryRow]:
    """The rows of one judge and setting over all sub-fields, full runs only (a trial is never drawn beside them);
    for "combined", the leaderboard's default rows."""
    main = [r for r in rows if r.subfield is None and r.setting == setting and r.provenance.trial is None]
    if judge != COMBINED:
        return [r for r in main if r.judge == judge]
    return [r for r, head in zip(main, headline_flags(main)) if head]


def _err(fig) -> list[list[float]]:
    return [[fig.value - fig.ci_low], [fig.ci_high - fig.value]]


def _name(r: SummaryRow) -> str:
    """The model's name, and its prompt variant when it is not the original prompt."""
    if r.row_kind == "reference" or r.prompt_variant in ("", "original"):
        return r.model
    return f"{r.model} ({r.prompt_variant})"


def _labelled(candidates: Sequence[tuple]) -> set[int]:
    """The rows to label, in the given order of preference, up to ``SCATTER_LABELS`` plus the GT, skipping any
    whose point sits on one already labelled (within 4% of either axis' range), so labels do not pile up."""
    xs = [x.value for _, x, _ in candidates] or [0.0]
    ys = [y.value for _, _, y in candidates] or [0.0]
    dx, dy = 0.04 * ((max(xs) - min(xs)) or 1.0), 0.04 * ((max(ys) - min(ys)) or 1.0)
    chosen: list[tuple[float, float]] = []
    out: set[int] = set()
    for r, x, y in candidates:
        if len(out) > SCATTER_LABELS:
            break
        if any(abs(x.value - cx) < dx and abs(y.value - cy) < dy for cx, cy in chosen):
            continue
        chosen.append((x.value, y.value))
        out.add(id(r))
    return out


NOVELTY = headline_figure("novelty", "best5")
NARROWNESS = headline_figure("narrowness", "best5")


def scatter_points(rows: Sequence[SummaryRow], judge: str, novelty: str, narrowness: str) -> list[tuple]:
    """(row, narrowness figure, novelty figure) for each standalone row of the judge that has both."""
    points = []
    for r in judge_rows(rows, judge, "standalone"):
        x, y = r.figures.get(narrowness), r.figures.get(novelty)
        if x is not None and y is not None:
            points.append((r, x, y))
    return points


def scatter_empty(
    rows: Sequence[SummaryRow], *, judge: str = COMBINED, novelty: str = NOVELTY, narrowness: str = NARROWNESS
) -> str:
    """The sentence shown instead of the scatter when it would have no point; "" when it has one."""
    if scatter_points(rows, judge, novelty, narrowness):
        return ""
    return NO_SCATTER.format(judge=judge, novelty=_dimension_label(novelty), narrowness=_dimension_label(narrowness))


def novelty_vs_narrowness(
    rows: Sequence[SummaryRow],
    *,
    judge: str = COMBINED,
    novelty: str = NOVELTY,
    narrowness: str = NARROWNESS,
) -> Figure:
    """One point per model (and the GT reference) for one judge, standalone, with 95% CI bars while they fit;
    both axes span their scales."""
    points = scatter_points(rows, judge, novelty, narrowness)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 5.0), dpi=100)
    with_ci = len(points) <= SCATTER_CI_UP_TO
    models = sorted((p for p in points if p[0].row_kind == "model"), key=lambda p: -p[2].value)
    labelled = _labelled([p for p in points if p[0].row_kind == "reference"] + models)
    for r, x, y in points:
        ref = r.row_kind == "reference"
        style = {
            "fmt": "s" if ref else "o",
            "color": "black" if ref else "#3a6ea5",
            "markersize": 7 if ref else 5,
            "alpha": 1.0 if ref or with_ci else 0.55,
        }
        if with_ci:
            ax.errorbar(x.value, y.value, xerr=_err(x), yerr=_err(y), capsize=3, elinewidth=0.8, **style)
        else:
            ax.errorbar(x.value, y.value, **style)
        if id(r) in labelled:
            ax.annotate(
                short_label(_name(r), 32), (x.value, y.value), textcoords="offset points", xytext=(5, 4), fontsize=8
            )
    ax.set_xlabel("Best@5 source-boundedness (lower is broader)")
    ax.set_ylabel("Best@5 non-obviousness (higher is more novel)")
    title = f"Novelty against narrowness, judge: {short_label(judge, 30)}, {len(points)} point(s)"
    notes = []
    if len(models) > SCATTER_LABELS:
        notes.append(f"labels: the GT and up to {SCATTER_LABELS} of the highest, where they fit")
    if not with_ci:
        notes.append(f"95% CIs drawn up to {SCATTER_CI_UP_TO} points; see the leaderboard")
    ax.set_title(title + ("\n" + "; ".join(notes) if notes else ""), fontsize=10)
    ax.set_xlim(*scale_range(narrowness))
    ax.set_ylim(*scale_range(novelty))
    if not points:  # the page shows scatter_empty's sentence instead; a saved figure still says it
        ax.text(0.5, 0.5, "no standalone results for this judge yet", ha="center", va="center", transform=ax.transAxes)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def bar_items(rows: Sequence[SummaryRow], judge: str, setting: str, dimension: str) -> list[tuple[str, list[float]]]:
    """(model name, [win, tie, lose] in %) for each model row of the judge and setting that has all three."""
    items = []
    for r in judge_rows(rows, judge, setting):
        if r.row_kind != "model":
            continue
        vals = [r.figures.get(f"{v}_{dimension}") for v in ("win", "tie", "lose")]
        if all(v is not None for v in vals):
            items.append((_name(r), [100 * v.value for v in vals]))  # type: ignore[union-attr]
    return items


def bars_empty(
    rows: Sequence[SummaryRow],
    *,
    judge: str = COMBINED,
    setting: str = "standalone",
    dimension: str = headline("novelty"),
) -> str:
    """The sentence shown instead of the bars when no model has them; "" when one has."""
    if bar_items(rows, judge, setting, dimension):
        return ""
    return NO_BARS.format(judge=judge, setting=setting, dimension=_dimension_label(f"win_{dimension}"))


def verdict_bars(
    rows: Sequence[SummaryRow],
    *,
    judge: str = COMBINED,
    setting: str = "standalone",
    dimension: str = headline("novelty"),
    max_bars: int = 30,
) -> Figure:
    """Stacked win/tie/lose shares per model for one judge; the ``max_bars`` highest win rates when there are more."""
    items = bar_items(rows, judge, setting, dimension)
    total = len(items)
    items = sorted(items, key=lambda it: (-it[1][0], it[0]))[:max_bars]
    height = 1.8 + BAR_IN * max(len(items), 1)
    fig = plt.figure(figsize=(WIDTH_IN, height), dpi=100)
    # fixed margins in inches, so a bar keeps its thickness and labels keep their room at any count
    ax = fig.add_axes((0.33, 1.1 / height, 0.62, (height - 1.8) / height))
    labels = [short_label(name) for name, _ in items]
    left = [0.0] * len(items)
    for k, part in enumerate(("win", "tie", "lose")):
        widths = [v[k] for _, v in items]
        ax.barh(range(len(items)), widths, left=left, color=COLORS[part], label=part, height=0.75)
        left = [a + b for a, b in zip(left, widths)]
    for y, (_, v) in enumerate(items):
        if v[0] >= 8:
            ax.text(v[0] / 2, y, f"{v[0]:.0f}%", ha="center", va="center", fontsize=8, color="white")
    ax.set_yticks(range(len(items)), labels, fontsize=9)
    ax.set_ylim(len(items) - 0.5 if items else 0.5, -0.5)
    ax.set_xlim(0, 100)
    dim = DIMENSIONS[dimension][1].label
    ax.set_xlabel(
        f"% of instances where the best of five RQs wins / ties / loses\nagainst the author-anchored RQ "
        f"({dim}, {setting})",
        fontsize=9,
    )
    shown = f"the {len(items)} highest win rates of {total} models" if total > len(items) else f"{total} model(s)"
    fig.text(
        0.02, 1 - 0.25 / height, f"Win / tie / lose, judge: {short_label(judge, 30)}: {shown}", fontsize=10, va="top"
    )
    if items:
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=3, fontsize=8, frameon=False)
    else:
        ax.set_yticks([])
        ax.text(50, 0, "no win/tie/lose results for this judge and setting yet", ha="center", va="center")
    ax.grid(axis="x", alpha=0.3)
    return fig
