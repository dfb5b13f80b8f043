"""What judging a leaderboard row cost: from the call log into the results' totals, summed per row, unknown when a
request had no price (never counted as free)."""

from __future__ import annotations

from rqbench.evaluate.metrics.summary import summarize
from rqbench.evaluate.metrics.summary_row import COMBINED
from rqbench.llm import CallStore
from rqbench.records import CallTotals
from rqbench.space.leaderboard import judging_cost
from rqbench.testing.synthetic import make_results


def test_the_call_log_counts_requests_with_no_price_apart(tmp_path):
    store = CallStore(tmp_path / "calls.db")
    common = dict(step="novelty_standalone", model="judge-x", cache="miss")
    store.log(key="k1", status="ok", cost_usd=0.25, **common)  # priced
    store.log(key="k2", status="ok", cost_usd=None, **common)  # answered, no price: unknown
    store.log(key="k3", status="truncated", cost_usd=None, **common)  # cut, still billed: unknown
    store.log(key="k4", status="server_error", cost_usd=None, **common)  # failed: not billed, not unpriced
    store.log(key="k1", status="ok", step="novelty_standalone", model="judge-x", cache="hit")  # a hit costs nothing
    (row,) = store.summary()
    assert (row["requests"], row["cost_usd"], row["unpriced"]) == (4, 0.25, 2)


def _rows(totals: dict[str, CallTotals]):
    files = []
    for k, (judge, t) in enumerate(totals.items()):
        r = make_results("model-a", judge=judge, setting="comparative", n_instances=4, bias=0.1 * k)
        r.totals = t
        files.append(r)
    return {r.judge: r for r in summarize(files) if r.subfield is None and r.row_kind == "model"}


def test_a_rows_judging_cost_is_the_sum_of_its_files_and_unknown_with_one_unpriced_request():
    # judge-a: $0.40 for 10 requests; judge-b: $0.10 for 6: the combined row $0.50 for 16 requests
    rows = _rows({"judge-a": CallTotals(calls=10, cost_usd=0.4), "judge-b": CallTotals(calls=6, cost_usd=0.1)})
    assert rows[COMBINED].provenance.judging_cost_usd == 0.5 and rows[COMBINED].provenance.judging_requests == 16
    assert judging_cost(rows[COMBINED]) == "$0.50 for 16 requests"
    assert judging_cost(rows["judge-b"]) == "$0.10 for 6 requests"
    # one request of judge-b has no price: its row and the combined row are unknown, judge-a's is not
    rows = _rows(
        {"judge-a": CallTotals(calls=10, cost_usd=0.4), "judge-b": CallTotals(calls=6, cost_usd=0.1, unpriced=1)}
    )
    assert rows[COMBINED].provenance.judging_cost_usd is None
    assert judging_cost(rows[COMBINED]) == "unknown: 1 of 16 requests have no price"
    assert judging_cost(rows["judge-a"]) == "$0.40 for 10 requests"
    # the embedded model is priced at zero by the cost map: free, not unknown
    free = _rows({"judge-a": CallTotals(calls=3, cost_usd=0.0)})
    assert judging_cost(free["judge-a"]) == "$0.00 for 3 requests"
