"""Clean (post-cutoff) figures: each model row's figures over the instances whose source paper is newer than
the model's knowledge cutoff, checked against values worked out by hand; and the date rules behind them."""

from __future__ import annotations

from datetime import date

import pytest
from results_factory import results, simple_instance

from rqbench.evaluate.metrics.contamination import Exposure, clean_reason, exposure, is_clean, paper_dates
from rqbench.evaluate.metrics.summary import summarize

CUTOFF = date(2025, 2, 28)


def _five():
    """Four papers, five instances; cutoff 2025-02-28 leaves 2503 and 2504 clean, 2505 undated.

    instance          published    GT       best of five   Best@5 orig.   verdict
    2501.00001_rq0    2025-01-10   1,1,1    2,2,2          2              win
    2501.00001_rq1    2025-01-10   1,1,1    1,1,1          1              tie
    2503.00002_rq0    2025-03-05   3,3,3    1,1,1          1              lose
    2504.00003_rq0    2025-04-20   1,1,1    3,3,3          3              win
    2505.00004_rq0    (none)       1,1,1    0,0,0          0              lose
    """

    def inst(rq_id, gt, best, published):
        return simple_instance(rq_id, gt, [best] + [(0, 0, 0)] * 4, published=published)

    return [
        inst("2501.00001_rq0", (1, 1, 1), (2, 2, 2), date(2025, 1, 10)),
        inst("2501.00001_rq1", (1, 1, 1), (1, 1, 1), date(2025, 1, 10)),
        inst("2503.00002_rq0", (3, 3, 3), (1, 1, 1), date(2025, 3, 5)),
        inst("2504.00003_rq0", (1, 1, 1), (3, 3, 3), date(2025, 4, 20)),
        inst("2505.00004_rq0", (1, 1, 1), (0, 0, 0), None),
    ]


def _row(rows, **want):
    (row,) = [r for r in rows if all(getattr(r, k) == v for k, v in want.items())]
    return row


def test_clean_figures_by_hand():
    f = results(_five(), knowledge_cutoff=CUTOFF)
    row = _row(summarize([f], n_boot=50), row_kind="model")
    assert row.figure("best5_originality").value == pytest.approx((2 + 1 + 1 + 3 + 0) / 5)  # all five
    clean = row.clean
    assert (clean.instances, clean.undated, clean.reason) == (2, 1, None)
    assert clean.figures["best5_originality"].value == 2.0  # (1 + 3) / 2
    assert clean.figures["best5_originality"].n == 2 and clean.figures["best5_originality"].n_clusters == 2
    assert clean.figures["win_originality"].value == 0.5
    assert clean.figures["lose_originality"].value == 0.5
    assert clean.figures["tie_originality"].value == 0.0
    assert set(clean.figures) == set(row.figures)
    # the contamination flag reads the same dates: 2 of the 4 dated instances are not after the cutoff
    p = row.provenance
    assert (p.contaminated, p.contaminated_share, p.earliest_source_date) == (True, 0.5, date(2025, 1, 10))
    assert p.instances_covered == clean.instances + clean.undated + 2


def test_a_paper_dated_on_the_cutoff_day_is_not_clean():
    f = results(_five(), knowledge_cutoff=date(2025, 3, 5))
    clean = _row(summarize([f], n_boot=20), row_kind="model").clean
    assert clean.instances == 1 and clean.figures["best5_originality"].value == 3.0  # 2504 only


def test_combined_rows_take_the_same_clean_instances_from_each_judge():
    a = results(_five(), knowledge_cutoff=CUTOFF, label="judge-a")
    b = results(_five(), knowledge_cutoff=CUTOFF, label="judge-b", judge_model="deepseek/deepseek-v4-pro")
    for combine, n in (("pooled", 4), ("mean_scores", 2)):
        row = _row(summarize([a, b], combine=combine, n_boot=20), row_kind="model", judge="combined")
        assert row.clean.instances == 2
        assert row.clean.figures["best5_originality"].value == 2.0
        assert row.clean.figures["best5_originality"].n == n


def test_every_instance_clean_gives_the_rows_own_figures():
    insts = [i for i in _five() if i.paper_published is not None]
    row = _row(summarize([results(insts, knowledge_cutoff=date(2024, 12, 31))], n_boot=50), row_kind="model")
    assert (row.clean.instances, row.clean.undated) == (4, 0)
    assert row.clean.figures == row.figures
    assert row.provenance.contaminated is False and row.provenance.contaminated_share == 0.0


def test_empty_clean_figures_say_why():
    unknown = _row(summarize([results(_five())], n_boot=20), row_kind="model").clean  # openai/gpt-5.5, no cutoff
    assert unknown.figures == {} and unknown.instances == 0 and unknown.undated == 1
    assert unknown.reason.startswith("no knowledge cutoff for ")
    assert "OpenAI's model page is not among the stored vendor pages" in unknown.reason
    demo = _row(summarize([results(_five(), model="local/smollm2-135m")], n_boot=20), row_kind="model").clean
    assert "embedded demo model" in demo.reason
    undated = [i.model_copy(update={"paper_published": None}) for i in _five()]
    none_dated = _row(summarize([results(undated, knowledge_cutoff=CUTOFF)], n_boot=20), row_kind="model").clean
    assert none_dated.figures == {} and none_dated.undated == 5
    assert none_dated.reason.startswith("no source paper of the 5 instance(s) has a first-version date")
    late = _row(summarize([results(_five(), knowledge_cutoff=date(2025, 12, 31))], n_boot=20), row_kind="model")
    assert late.clean.figures == {} and late.clean.reason == (
        "none of the 4 dated instance(s) has a source paper first published after the cutoff 2025-12-31"
    )
    assert late.provenance.contaminated is True and late.provenance.contaminated_share == 1.0


def test_source_dates_date_only_the_undated_papers():
    f = results(_five(), knowledge_cutoff=CUTOFF)
    stated = {"2505.00004": date(2025, 5, 2), "2501.00001": date(2025, 6, 1)}  # the second is ignored: it has one
    clean = _row(summarize([f], source_dates=stated, n_boot=20), row_kind="model").clean
    assert (clean.instances, clean.undated) == (3, 0)
    assert clean.figures["best5_originality"].value == pytest.approx((1 + 3 + 0) / 3)


def test_reference_rows_and_sub_field_rows():
    rows = summarize([results(_five(), knowledge_cutoff=CUTOFF)], by_subfield=True, n_boot=20)
    assert all(r.clean is None for r in rows if r.row_kind == "reference")
    split = _row(rows, row_kind="model", subfield="cs.CL")
    assert split.clean.instances == 2


# --------------------------------------------------------------------------
# The date rules (pure functions)
# --------------------------------------------------------------------------


def test_paper_dates_take_the_instances_then_the_stated_ones_and_the_earliest_on_disagreement():
    a = results([simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5, published=date(2025, 1, 20))])
    b = results(
        [
            simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5, published=date(2025, 1, 18)),
            simple_instance("2502.00002_rq0", (1, 1, 1), [(1, 1, 1)] * 5),
        ],
        label="other",
    )
    assert paper_dates([a, b]) == {"2501.00001": date(2025, 1, 18)}
    stated = {"2501.00001": date(2020, 1, 1), "2502.00002": date(2025, 2, 3)}
    assert paper_dates([a, b], stated) == {"2501.00001": date(2025, 1, 18), "2502.00002": date(2025, 2, 3)}


def test_is_clean_and_exposure():
    cut = date(2025, 1, 31)
    assert is_clean(date(2025, 2, 1), cut) and not is_clean(cut, cut) and not is_clean(None, cut)
    e = exposure([date(2025, 1, 2), date(2025, 3, 1), None, date(2025, 4, 1)], cut)
    assert (e.contaminated, e.share, e.earliest) == (True, pytest.approx(1 / 3), date(2025, 1, 2))
    e = exposure([date(2025, 3, 1), None], cut)  # none seen, but one could be: unknown
    assert (e.contaminated, e.share) == (None, 0.0)
    assert exposure([date(2025, 3, 1)], cut).contaminated is False
    assert exposure([date(2025, 3, 1)], None) == Exposure(None, None, date(2025, 3, 1))  # no cutoff: unknown
    assert exposure([None, None], cut) == exposure([], cut) == Exposure(None, None, None)


def test_clean_reason_names_each_case():
    assert clean_reason("gemini/gemini-3.1-pro", date(2025, 1, 31), 4, 4, 2) is None
    assert "no knowledge cutoff for some/model" in clean_reason("some/model", None, 4, 4, 0)
    assert "has a first-version date" in clean_reason("m", date(2025, 1, 31), 4, 0, 0)
    assert "none of the 3 dated instance(s)" in clean_reason("m", date(2025, 1, 31), 4, 3, 0)
