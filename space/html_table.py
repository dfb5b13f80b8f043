"""A plain HTML table for the Space, with every piece of text escaped.

The Leaderboard and Browse tables are drawn as one ``gr.HTML`` string: a static
table renders as fast as a pandas ``to_html`` page (``benchmarks/space.py``),
wraps long text, keeps its header one line high, and carries hover text (a
figure's CI, why a cell is empty, how "combined" was made). Text from papers
and submissions goes through ``html.escape`` in cells and attributes alike, so
it is shown as text and never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape


@dataclass(frozen=True)
class Quote:
    """Words quoted under a cell's text: a lead that says whose words they are and about what, then the words.

    ``folded``: the words wait behind the lead (a ``<details>`` element) until the reader opens it.
    """

    lead: str
    text: str = ""
    folded: bool = False


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, an optional smaller second line, hover text, a style, and quoted words."""

    text: str
    note: str = ""
    title: str = ""
    kind: str = ""  # CSS classes: "num" (a figure), "missing" (greyed, explained on hover), "long" (wrapped prose)
    quotes: tuple[Quote, ...] = ()


@dataclass(frozen=True)
class Header:
    """One column header: its label, hover text, and the style of its cells' column."""

    label: str
    title: str = ""
    kind: str = ""


# Scoped to the component by gr.HTML's css_template.
TABLE_CSS = """
.rqb-wrap { overflow: auto; max-height: var(--rqb-max-height, 720px); border: 1px solid var(--border-color-primary);
  border-radius: 6px; }
table.rqb { border-collapse: separate; border-spacing: 0; width: 100%; font-size: 13px; line-height: 1.35; }
table.rqb th { position: sticky; top: 0; z-index: 2; background: var(--background-fill-secondary); text-align: left;
  font-weight: 600; padding: 6px 8px; border-bottom: 1px solid var(--border-color-primary); vertical-align: bottom;
  line-height: 1.2; }
table.rqb th.num { text-align: right; max-width: 10em; }
table.rqb th[title] { text-decoration: underline dotted; text-underline-offset: 3px; cursor: help; }
table.rqb td { padding: 5px 8px; border-bottom: 1px solid var(--border-color-primary); vertical-align: top;
  color: var(--body-text-color); }
table.rqb tr:nth-child(even) td { background: var(--table-even-background-fill, rgba(0,0,0,0.02)); }
table.rqb td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.rqb td.missing { color: var(--body-text-color-subdued); text-align: center; cursor: help; }
table.rqb td.long { min-width: 13em; max-width: 40em; white-space: pre-wrap; overflow-wrap: anywhere; }
table.rqb td.short { white-space: nowrap; }
table.rqb td.first { position: sticky; left: 0; z-index: 1; background: var(--background-fill-primary);
  min-width: 11em; max-width: 22em; overflow-wrap: anywhere; white-space: normal; }
table.rqb th.first { position: sticky; left: 0; z-index: 3; }
table.rqb .note { font-size: 11px; color: var(--body-text-color-subdued); margin-left: 2px; }
table.rqb td.stacked .note, table.rqb td.paper .note { display: block; margin-left: 0; }
table.rqb td.paper { font-weight: 600; }
table.rqb td.paper .note { margin-top: 4px; font-weight: 400; font-size: 12px; color: var(--body-text-color); }
table.rqb th.pick { white-space: nowrap; }
table.rqb td.pick-gt { color: #1d5fa8; font-weight: 600; }
table.rqb td.pick-model { color: #b4501f; font-weight: 600; }
table.rqb td.pick-tie { color: var(--body-text-color-subdued); }
table.rqb td[title]:not(.missing) { cursor: help; }
table.rqb td.ceiling { font-style: italic; border-top: 2px dashed var(--body-text-color-subdued);
  border-bottom: 2px dashed var(--body-text-color-subdued); }
.rqb-block { font-weight: 600; font-size: 14px; margin: 14px 2px 6px 2px; }
table.rqb td.text { min-width: 18em; }
.rqb-caption { font-size: 12px; color: var(--body-text-color-subdued); margin: 6px 2px 0 2px; }
.rqb-pager { font-size: 13px; color: var(--body-text-color-subdued); margin: 0 2px 6px 2px; }
.rqb-empty { padding: 16px; color: var(--body-text-color-subdued); }
table.rqb .quote { display: block; margin-top: 4px; font-size: 12px; }
table.rqb .quote .lead, table.rqb details.quote summary { font-style: italic; color: var(--body-text-color-subdued); }
table.rqb details.quote summary { cursor: pointer; }
"""


def _attr(name: str, value: str) -> str:
    return f' {name}="{escape(value, quote=True)}"' if value else ""


def _quote(q: Quote) -> str:
    words = f"“{escape(q.text)}”" if q.text else ""
    if q.folded:
        return f'<details class="quote"><summary>{escape(q.lead)}</summary>{words}</details>'
    return f'<span class="quote"><span class="lead">{escape(q.lead)}</span>{" " + words if words else ""}</span>'


def render_table(
    headers: Sequence[Header],
    rows: Sequence[Sequence[Cell]],
    *,
    caption: str = "",
    empty: str = "No rows.",
    sticky_first: bool = True,
) -> str:
    """The table as one HTML string; ``caption`` lines go under it, ``empty`` replaces it when there are no rows.

    Every cell carries ``data-testid="cell-<row>-<col>"`` so tests can read the table as they read Gradio's.
    """
    caption_html = "".join(f'<div class="rqb-caption">{escape(line)}</div>' for line in caption.splitlines() if line)
    if not rows:
        return f'<div class="rqb-empty">{escape(empty)}</div>{caption_html}'
    first = " first" if sticky_first else ""
    head = "".join(
        f'<th class="{escape(h.kind)}{first if k == 0 else ""}"{_attr("title", h.title)}>{escape(h.label)}</th>'
        for k, h in enumerate(headers)
    )
    body = []
    for r, row in enumerate(rows):
        cells = []
        for c, cell in enumerate(row):
            cls = (cell.kind or "short") + (first if c == 0 else "")
            note = f' <span class="note">{escape(cell.note)}</span>' if cell.note else ""
            quotes = "".join(_quote(q) for q in cell.quotes)
            cells.append(
                f'<td class="{cls}" data-testid="cell-{r}-{c}"{_attr("title", cell.title)}>'
                f"{escape(cell.text)}{note}{quotes}</td>"
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="rqb-wrap"><table class="rqb"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>{caption_html}"
    )
