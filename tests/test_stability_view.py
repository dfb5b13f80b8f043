"""The Judges tab's stability and length tables as cells: the same figures as the report's tables."""

from __future__ import annotations

from test_judge_stability import row

from rqbench.evaluate.report.judge_stability import MOVED_MARK, judge_stability
from rqbench.evaluate.report.length_control import judge_length
from rqbench.space import stability_view
from rqbench.testing.synthetic import make_results


def test_the_stability_cells_show_ranks_intervals_the_mark_and_tau():
    rows = [row(m, "A", w) for m, w in (("m1", 0.6), ("m2", 0.4), ("m3", 0.2))]
    rows += [row(m, "B", w) for m, w in (("m1", 0.2), ("m2", 0.4), ("m3", 0.6))]
    rep = judge_stability(rows, "comparative")
    headers, cells = stability_view.stability_table(rep)
    assert [h.label for h in headers] == ["Model", "A", "B", "without A", "without B"]
    first = cells[0]
    assert first[0].text == f"m1 {MOVED_MARK}" and "outside" in first[0].title
    assert (first[1].text, first[1].note) == ("1", "[1-1]")
    assert (first[2].text, first[2].note) == ("3", "[3-3]")
    _, taus = stability_view.tau_table(rep)
    assert [(c[0].text, c[1].text) for c in taus][0] == ("A vs B", "-1.00")
    assert taus[1][1].kind == "missing"  # leave-one-out against an all-tied mean: undefined, and says why


def test_the_length_cells_show_each_judges_preference_and_both_rates():
    results = [make_results(m, judge="A", setting="comparative", n_instances=6, seed=k) for k, m in enumerate("xy")]
    for r in results:
        for k, inst in enumerate(r.instances):
            for c in inst.candidates[1:]:
                c.text += " more" * (k % 2)
    fits = judge_length(results, "comparative", n_boot=20)
    headers, cells = stability_view.length_table(fits)
    assert len(cells) == 2 and headers[4].label == "Length-controlled win %"
    assert cells[0][1].text.endswith(" pts") and cells[0][1].note.startswith("phi ")
    assert cells[0][3].text.endswith("%") and cells[0][3].note.startswith("[")
