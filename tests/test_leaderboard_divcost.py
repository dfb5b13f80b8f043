"""The leaderboard's diversity and cost columns: they render from what the results files store, sort, and say why a
cell is empty (a dash with its reason on hover, never NaN)."""

from __future__ import annotations

import numpy as np

from rqbench.evaluate.metrics.diversity import DEFAULT_EMBEDDER, NEAR_DUPLICATE, instance_diversity
from rqbench.evaluate.metrics.summary import summarize
from rqbench.records import DiversityRecord, GenerationCost
from rqbench.space import leaderboard as lb
from rqbench.space import leaderboard_cells as lb_cells
from rqbench.testing.synthetic import make_results

SIM, DUP = lb.SIMILARITY_COLUMN.label, lb.NEAR_DUPLICATES_COLUMN.label
GEN, PER = lb.GENERATION_COST_COLUMN.label, lb.PER_DOLLAR_COLUMN.label


def _files():
    """model-a: five copies per instance (similarity 1, 10 pairs), $0.50 of generation; model-b: five orthogonal
    RQs (similarity 0, no pair), $2.00; model-c: nothing stored, generated elsewhere."""
    out = []
    for model, vec, cost in (("model-a", np.tile([[1.0, 0.0]], (5, 1)), 0.5), ("model-b", np.eye(5), 2.0)):
        r = make_results(model, judge="A", setting="comparative", n_instances=3)
        record = DiversityRecord(
            embedder=DEFAULT_EMBEDDER,
            threshold=NEAR_DUPLICATE,
            instances=instance_diversity({inst.rq_id: vec for inst in r.instances}),
        )
        r.diversity = [record]
        r.generation_cost = GenerationCost(requests=3, cost_usd=cost, run_ids=["run-" + model])
        out.append(r)
    out.append(make_results("model-c", judge="A", setting="comparative", n_instances=3))
    return out


def _cells(table, view):
    headers, rows, caption = lb_cells.display(table, view)
    at = {h.label: i for i, h in enumerate(headers)}
    return {row[0].text: row for row in rows}, at, caption


def test_diversity_and_cost_columns_render_sort_and_explain_empty_cells():
    rows = summarize(_files(), n_boot=50)
    table = lb.build_table(rows)
    view = lb.View(judges=(), groups=("model", "diversity", "cost"), sort_by=SIM, ascending=True)
    out = lb.render(table, view)
    # model-b (0.0) before model-a (1.0); model-c has nothing stored and sorts last
    assert list(out["Model"]) == ["model-b", "model-a", "model-c"]
    assert list(out[SIM])[:2] == [0.0, 1.0] and list(out[DUP])[:2] == [0.0, 10.0]
    # generation: $2.00 and $0.50; win points per dollar = 100 * win / cost
    by_model = {r.model: r for r in rows if r.row_kind == "model"}
    win_a = by_model["model-a"].figures["win_non_obviousness"].value
    assert out.set_index("Model").loc["model-a", PER] == round(100 * win_a / 0.5, 1)
    cost_sorted = lb.render(table, lb.View(judges=(), groups=("model", "cost"), sort_by=GEN, ascending=True))
    assert list(cost_sorted["Model"]) == ["model-a", "model-b", "model-c"]

    cells, at, caption = _cells(table, view)
    assert cells["model-b"][at[SIM]].text == "0.000" and cells["model-a"][at[DUP]].text == "10.00"
    assert cells["model-a"][at[GEN]].text == "$0.50" and "run-model-a" in cells["model-a"][at[GEN]].title
    empty = cells["model-c"]
    for label in (SIM, DUP, GEN, PER):
        assert empty[at[label]].text == lb_cells.MISSING and empty[at[label]].kind == "missing"
        assert "nan" not in empty[at[label]].text.lower()
    assert "rqbench diversity" in empty[at[SIM]].title
    assert "Generated elsewhere" in empty[at[GEN]].title
    assert "Generated elsewhere" in caption  # each empty cell's reason is also under the table


def test_an_unknown_generation_cost_is_a_dash_with_its_reason_never_zero():
    files = _files()
    files[0].generation_cost = GenerationCost(requests=3, cost_usd=0.4, unpriced=1)
    table = lb.build_table(summarize(files, n_boot=50))
    cells, at, _ = _cells(table, lb.View(judges=(), groups=("model", "cost")))
    gen = cells["model-a"][at[GEN]]
    assert gen.text == lb_cells.MISSING and "1 request(s) have no price" in gen.title
    assert cells["model-a"][at[PER]].text == lb_cells.MISSING
    shown = lb.render(table, lb.View(judges=(), groups=("model", "cost")))
    assert "nan" not in lb.to_csv(shown).decode().lower()  # the download's unknown cost is an empty field, not 0
    assert ",0.0," not in lb.to_csv(shown).decode()
