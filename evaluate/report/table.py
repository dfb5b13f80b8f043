"""The report's table and its writers: formatted cells, a tidy numeric frame, and Markdown, LaTeX and CSV files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rqbench.evaluate.metrics.bootstrap import Estimate
from rqbench.evaluate.metrics.summary_row import Figure

TIDY_COLUMNS = ["row", "column", "value", "ci_low", "ci_high", "std", "n", "unjudged"]

# Beside a figure that lacks instances a judge's calls failed on (``Figure.unjudged``): the row is incomplete.
UNJUDGED_MARK = "†"


@dataclass
class Table:
    """One report table: ``display`` for Markdown/LaTeX, ``data`` (tidy, numeric) for CSV."""

    name: str
    caption: str
    paper_table: str
    display: pd.DataFrame
    data: pd.DataFrame


def _mark(f: Figure | Estimate | None) -> str:
    return f" {UNJUDGED_MARK}" if isinstance(f, Figure) and f.unjudged else ""


def fmt_score(f: Figure | Estimate | None) -> str:
    return "–" if f is None else f"{f.value:.2f} ± {f.std:.2f}{_mark(f)}"


def fmt_pct(f: Figure | Estimate | None, ci: bool = True) -> str:
    if f is None:
        return "–"
    s = f"{100 * f.value:.1f}"
    return f"{s} [{100 * f.ci_low:.1f}, {100 * f.ci_high:.1f}]" if ci else s


def fmt_rate_pair(main: Figure | None, other: Figure | None) -> str:
    """The paper's "win (tie)" / "win (lose)" cell, with the main rate's CI."""
    if main is None:
        return "–"
    return f"{fmt_pct(main)} ({fmt_pct(other, ci=False)}){_mark(main)}"


def tidy_frame(entries: list[tuple[str, str, Figure | Estimate | None]]) -> pd.DataFrame:
    recs = []
    for row, col, f in entries:
        if f is None:
            continue
        recs.append(
            {
                "row": row,
                "column": col,
                "value": f.value,
                "ci_low": f.ci_low,
                "ci_high": f.ci_high,
                "std": f.std,
                "n": f.n,
                "unjudged": f.unjudged if isinstance(f, Figure) else None,
            }
        )
    return pd.DataFrame(recs, columns=TIDY_COLUMNS)


def to_markdown(t: Table) -> str:
    df = t.display.reset_index()
    header = [str(c) for c in df.columns]
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    lines = [
        f"### {t.caption}",
        "",
        f"*{t.paper_table}*",
        "",
        "| " + " | ".join(map(esc, header)) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(esc(v) for v in row.tolist()) + " |")
    return "\n".join(lines) + "\n"


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "%": r"\%",
    "&": r"\&",
    "_": r"\_",
    "#": r"\#",
    "$": r"\$",
    "{": r"\{",
    "}": r"\}",
}


def tex_escape(text: str) -> str:
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(t: Table, demo_note: str = "") -> str:
    """The table as LaTeX; a ``demo_note`` ends its caption, so a demo figure never travels without it."""
    df = t.display.reset_index()
    caption = f"{t.caption} ({t.paper_table})" + (f" Demo output, not results. {demo_note}" if demo_note else "")
    return df.to_latex(
        index=False,
        caption=tex_escape(caption),
        label=f"tab:{t.name}",
        escape=True,
        column_format="l" + "c" * (len(df.columns) - 1),
    )


def comment_lines(marker: str, lines: Sequence[str]) -> str:
    """``lines`` as comment lines opening a file (``# `` for CSV, ``% `` for LaTeX), each kept to one line."""
    return "".join(f"{marker}{' '.join(line.split())}\n" for line in lines)


def write_table(t: Table, out_dir: Path, provenance: Sequence[str] = (), demo_note: str = "") -> list[Path]:
    """Write ``<name>.md``, ``<name>.csv`` (tidy numbers with CIs) and ``<name>.tex``.

    The CSV and LaTeX files open with comment lines (``#``, ``%``) holding ``provenance`` (what report.md says
    the numbers come from) and the ``demo_note``; pandas reads such a CSV with ``comment="#"``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    md, csv, tex = (out_dir / f"{t.name}{ext}" for ext in (".md", ".csv", ".tex"))
    head = ([f"Demo output, not results. {demo_note}"] if demo_note else []) + list(provenance)
    md.write_text(to_markdown(t), encoding="utf-8")
    csv.write_text(comment_lines("# ", head) + t.data.to_csv(index=False), encoding="utf-8")
    tex.write_text(comment_lines("% ", head) + to_latex(t, demo_note), encoding="utf-8")
    return [md, csv, tex]
