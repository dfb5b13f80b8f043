"""The leaderboard's length-control group: each judge's row shows the report's length-controlled figures and the
longest-of-five rule; rows with none (combined, reference, trial, the clean view) say why."""

from __future__ import annotations

import dataclasses

import pytest

from rqbench.evaluate.metrics.summary import summarize
from rqbench.evaluate.metrics.summary_row import COMBINED
from rqbench.evaluate.report.length_control import LENGTH_METRIC, judge_length, length_by_row
from rqbench.space import leaderboard as lb
from rqbench.space import leaderboard_cells as lb_cells
from rqbench.space import length_columns as lc
from rqbench.space.tabs.leaderboard import EXTRA_GROUPS
from rqbench.testing.synthetic import make_results

NOVELTY = lc.CONTROLLED_COLUMNS[LENGTH_METRIC].label
NARROW = lc.CONTROLLED_COLUMNS["win_source_bound_score"].label
LONGEST = lc.LONGEST_COLUMN.label
VIEW = lb.View(judges=(), settings=("comparative",), groups=("model", lc.GROUP))


def _files(vary: bool = True):
    """m1 and m2, each judged by A and B (comparative) and by A alone (standalone, which gives the author-anchored
    reference rows); with ``vary`` the model RQs get 0-2 extra phrases by instance, so the word difference varies
    and each judge's length preference can be fitted."""
    runs = [("m1", "A", "comparative"), ("m2", "A", "comparative"), ("m1", "B", "comparative")]
    runs += [("m2", "B", "comparative"), ("m1", "A", "standalone"), ("m2", "A", "standalone")]
    files = [make_results(m, judge=j, setting=s, n_instances=8, seed=int(m[1:])) for m, j, s in runs]
    for r in files:
        for k, inst in enumerate(r.instances):
            gt, *model = inst.candidates
            for c in model:
                c.text = gt.text + (" and more" * (k % 3) if vary else "")
    return files


def _table(files):
    return lb.build_table(summarize(files, n_boot=50), lengths=length_by_row(files, n_boot=50))


def _cells(table, view=VIEW):
    headers, rows, caption = lb_cells.display(table, view)
    at = {h.label: i for i, h in enumerate(headers)}
    return {(row[0].text, row[at["Judge"]].text): row for row in rows}, at, caption


def test_each_judges_row_shows_the_reports_length_controlled_figures():
    files = _files()
    table = _table(files)
    out = lb.render(table, VIEW).set_index(["Model", "Judge"])
    for fit in judge_length(files, "comparative", n_boot=50):
        for m in fit.models:
            assert out.loc[(m.model, fit.judge), NOVELTY] == round(100 * m.controlled.value, 1)
            assert out.loc[(m.model, fit.judge), LONGEST] == round(100 * m.longest_rule, 1)
    for fit in judge_length(files, "comparative", metric="win_source_bound_score", n_boot=50):
        for m in fit.models:
            assert out.loc[(m.model, fit.judge), NARROW] == round(100 * m.controlled.value, 1)
    cells, at, _ = _cells(table)
    cell = cells[("m1", "A")][at[NOVELTY]]
    assert cell.kind == "num" and cell.note.startswith("[")
    assert "raw" in cell.title and "A's length preference" in cell.title
    assert "judge's verdict matches" in cells[("m1", "A")][at[LONGEST]].title
    # sortable like any figure with an interval
    assert NOVELTY in lb.numeric_columns()
    ranked = lb.render(
        table, lb.View(judges=("A",), settings=("comparative",), groups=("model", lc.GROUP), sort_by=NOVELTY)
    )
    values = [v for v in ranked[NOVELTY] if v == v]
    assert values == sorted(values, reverse=True)


def test_with_no_length_difference_the_controlled_figure_is_the_raw_one():
    # every model RQ as long as the author-anchored RQ: nothing to control, the figure stays the raw win rate
    files = _files(vary=False)
    rows = summarize(files, n_boot=50)
    table = lb.build_table(rows, lengths=length_by_row(files, n_boot=50))
    out = lb.render(table, VIEW).set_index(["Model", "Judge"])
    for r in rows:
        if r.row_kind == "model" and r.judge != COMBINED and r.setting == "comparative":
            raw = 100 * r.figures[LENGTH_METRIC].value
            assert out.loc[(r.model, r.judge), NOVELTY] == pytest.approx(raw, abs=1.0)
            assert out.loc[(r.model, r.judge), LONGEST] == 0.0  # no RQ is longer than the author-anchored one


def test_rows_without_a_controlled_figure_say_why():
    table = _table(_files())
    cells, at, caption = _cells(table)
    combined = cells[("m1", COMBINED)][at[NOVELTY]]
    assert combined.text == lb_cells.MISSING and combined.title == lc.WHY_COMBINED
    standalone, at, _ = _cells(table, lb.View(judges=(), settings=("standalone",), groups=("model", lc.GROUP)))
    (reference,) = [row for key, row in standalone.items() if key[0] == lb.REFERENCE_MODEL]
    assert reference[at[LONGEST]].title == lc.WHY_REFERENCE
    assert standalone[("m1", "A")][at[NOVELTY]].kind == "num"  # standalone wins are controlled too
    assert lc.WHY_COMBINED in caption  # each empty cell's reason is also under the table
    clean, at, _ = _cells(table, dataclasses.replace(VIEW, clean_only=True))
    assert clean[("m1", "A")][at[NOVELTY]].text == lb_cells.MISSING
    assert "no clean value" in clean[("m1", "A")][at[NOVELTY]].title
    # a table built without the fits (no results) has the columns, empty with a reason, never NaN
    bare = lb.build_table(summarize(_files(), n_boot=50))
    bare_cells, at, _ = _cells(bare)
    assert bare_cells[("m1", "A")][at[NOVELTY]].title == lc.WHY_NONE
    assert "nan" not in lb.to_csv(lb.render(bare, VIEW)).decode().lower()


def test_the_group_is_offered_on_the_page():
    assert lc.GROUP in {group for _, group in EXTRA_GROUPS}
    assert set(lb.table_columns((lc.GROUP,), show_ci=False)) >= {NOVELTY, NARROW, LONGEST}
