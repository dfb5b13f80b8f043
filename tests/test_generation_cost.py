"""What generating a submission cost, from the call log by its generation log's keys, and the win-rate points a
dollar of it bought: hand-set costs, an unpriced request, a cache hit, a key the log never saw."""

from __future__ import annotations

import json

import pytest

from rqbench.evaluate.generate.cost import generation_cost, per_dollar, submission_generation_cost
from rqbench.evaluate.generate.run import LOG_FILE
from rqbench.evaluate.metrics.summary import summarize
from rqbench.llm import CallStore
from rqbench.records import GenerationCost
from rqbench.testing.synthetic import make_results


def _log(store: CallStore, key: str, cost: float | None, *, cache: str = "miss", status: str = "ok", run: str = "r1"):
    store.log(step="generation_original", model="gen-x", key=key, cache=cache, status=status, cost_usd=cost, run_id=run)


def test_generation_cost_sums_distinct_keys_once_and_a_cache_hit_costs_nothing(tmp_path):
    store = CallStore(tmp_path / "calls.db")
    _log(store, "k1", 0.30)  # instance 1, paid in run r1
    _log(store, "k2", 0.20)  # instance 2's first reply, invalid: re-asked
    _log(store, "k3", 0.05)  # instance 2's re-ask
    _log(store, "k1", None, cache="hit", run="r2")  # a rerun read k1 from the cache: no new request, no cost
    _log(store, "k4", None, status="server_error")  # instance 3 failed in transport: not billed
    folder = tmp_path / "sub"
    folder.mkdir()
    lines = [
        {"rq_id": "a", "cache_key": "k1"},
        {"rq_id": "b", "cache_key": "k2", "reask_key": "k3"},
        {"rq_id": "c", "cache_key": "k4", "failure": "server_error: 500"},
        {"rq_id": "a2", "cache_key": "k1"},  # the same request twice: paid once
    ]
    (folder / LOG_FILE).write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = submission_generation_cost(folder, store)
    # 0.30 + 0.20 + 0.05 = 0.55 over 3 distinct requests sent in run r1; k4 was never delivered, so not counted
    assert (got.requests, got.cost_usd, got.unpriced, got.unlogged) == (3, pytest.approx(0.55), 0, 0)
    assert got.run_ids == ["r1"] and got.known
    assert submission_generation_cost(tmp_path / "elsewhere", store) is None  # no generation log: made elsewhere


def test_an_unpriced_or_unlogged_request_makes_the_cost_unknown(tmp_path):
    store = CallStore(tmp_path / "calls.db")
    _log(store, "k1", 0.30)
    _log(store, "k2", None)  # answered, but litellm's cost map had no price
    spent = store.spent(["k1", "k2", "k9"])
    got = generation_cost([{"cache_key": "k1"}, {"cache_key": "k2"}], spent)
    assert (got.requests, got.cost_usd, got.unpriced, got.known) == (2, pytest.approx(0.30), 1, False)
    # k9 answered an instance, but this log never saw it sent (generated on another machine)
    got = generation_cost([{"cache_key": "k1"}, {"cache_key": "k9"}], spent)
    assert (got.requests, got.unlogged, got.known) == (1, 1, False)


def test_points_per_dollar_by_hand_and_none_when_unknown_or_free():
    assert per_dollar(40.0, 0.5) == 80.0  # 40 win-rate points for $0.50
    assert per_dollar(40.0, None) is None and per_dollar(40.0, 0.0) is None and per_dollar(None, 1.0) is None


def test_a_rows_generation_cost_and_points_per_dollar_come_from_its_stored_results():
    r = make_results("model-a", judge="A", setting="comparative", n_instances=4)
    r.generation_cost = GenerationCost(requests=4, cost_usd=0.5, run_ids=["r1"])
    (row,) = [x for x in summarize([r], n_boot=50) if x.row_kind == "model"]
    win = row.figures["win_non_obviousness"]
    assert row.generation_cost_usd == 0.5 and row.provenance.generation_cost.run_ids == ["r1"]
    # points per dollar: 100 * win rate / $0.50 = 200 * win rate, and the interval alike
    assert row.per_dollar.value == pytest.approx(200 * win.value)
    assert row.per_dollar.ci_low == pytest.approx(200 * win.ci_low)
    r.generation_cost = GenerationCost(requests=4, cost_usd=0.5, unpriced=1)
    (row,) = [x for x in summarize([r], n_boot=50) if x.row_kind == "model"]
    assert row.generation_cost_usd is None and row.per_dollar is None  # unknown, never a smaller cost


def test_the_report_cost_table_says_unknown_and_gives_points_per_dollar():
    from rqbench.evaluate.report.tables import cost_table

    a = make_results("model-a", judge="A", setting="comparative", n_instances=4)
    a.generation_cost = GenerationCost(requests=4, cost_usd=0.5, run_ids=["r1"])
    b = make_results("model-b", judge="A", setting="comparative", n_instances=4)  # generated elsewhere
    rows = summarize([a, b], n_boot=50)
    table = cost_table(rows)
    shown = table.display.reset_index().set_index("model")
    assert shown.loc["model-a", "generation $"] == "$0.5000" and shown.loc["model-a", "generation runs"] == "r1"
    assert shown.loc["model-b", "generation $"] == "unknown (generated elsewhere)"
    assert shown.loc["model-b", "win points per generation $ [95% CI]"] == "–"
    data = table.data.set_index("model")
    win = next(r for r in rows if r.model == "model-a").figures["win_non_obviousness"].value
    assert data.loc["model-a", "win_points_per_dollar"] == pytest.approx(200 * win)  # 100 * win / $0.50
