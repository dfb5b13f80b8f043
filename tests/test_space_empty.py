"""Every tab's empty and degenerate states, without a browser: the Space on a store with no results and no
benchmark, plots whose points all sit on one value, a judge board with nothing to place on its cost axis, and
the judge reasons and sub-fields a tiny demo model's run leaves in Browse."""

from __future__ import annotations

import html

import pytest

from rqbench.evaluate.criteria import DIMENSIONS, METRICS
from rqbench.evaluate.metrics.summary import summarize
from rqbench.records import UNKNOWN_CATEGORY
from rqbench.space import browse, plots, stability_view
from rqbench.testing.synthetic import make_results

JUNK = "2-SrGh " * 30  # one long reason, the same for every score, as a judge that cannot judge writes


def _fn(demo, name: str):
    return next(f for f in demo.fns.values() if f.name == name)


def _page_load(demo) -> dict:
    """The page load's reply by output elem_id."""
    load = _fn(demo, "page_load")
    reply = load.fn(*[c.value for c in load.inputs])
    return {getattr(b, "elem_id", None): v for b, v in zip(load.outputs, reply, strict=True)}


@pytest.fixture
def empty_app(tmp_path):
    """The Space on a store with no results, no benchmark and no expert-study file."""
    from rqbench.space.stores import SpaceStores
    from rqbench.space.ui import SpaceConfig, build_app

    stores = SpaceStores.local(tmp_path / "store")
    demo = build_app(SpaceConfig(stores=stores, n_boot=50, recheck_after_s=0, expert_study=tmp_path / "none.jsonl"))
    return demo, stores


def one_valued(n_instances: int = 2):
    """The embedded model judged by itself: every novelty score 0, so its row and the GT's sit on one point."""
    r = make_results("local/smollm2-135m", judge="local", n_instances=n_instances)
    for inst in r.instances:
        for c in inst.candidates:
            c.novelty.originality = c.novelty.gap_addressing = c.novelty.non_obviousness = 0
    return r


# -- Plots ---------------------------------------------------------------------------------------------------


def test_the_scatter_spans_each_figures_scale_when_every_point_sits_on_one_value():
    rows = summarize([one_valued()], n_boot=50)
    fig = plots.novelty_vs_narrowness(rows, judge="local")
    (ax,) = fig.axes
    for lim, metric in ((ax.get_xlim(), plots.NARROWNESS), (ax.get_ylim(), plots.NOVELTY)):
        lo, hi = DIMENSIONS[METRICS[metric].dimension][1].scale  # the criterion's scale, not a name here
        assert lim[0] < lo < hi < lim[1] and lim[1] - lim[0] < 1.2 * (hi - lo)  # not -0.04 to 0.04 around 0
        assert lim == pytest.approx(plots.scale_range(metric))
    assert plots.scatter_empty(rows, judge="local") == ""


def test_a_plot_with_nothing_to_show_is_a_sentence_instead(empty_app):
    no_points = plots.scatter_empty([], judge="judge-x")
    assert "judge-x" in no_points and "standalone" in no_points and "nothing to plot" in no_points
    rows = summarize([make_results("model-a", setting="standalone")], n_boot=50)
    assert plots.bars_empty(rows, judge="judge-a", setting="standalone") == ""
    missing = plots.bars_empty(rows, judge="judge-a", setting="comparative", dimension="source_bound_score")
    assert "comparative" in missing and DIMENSIONS["source_bound_score"][1].label in missing
    demo, _ = empty_app
    scatter, scatter_note, bars, bars_note = _fn(demo, "draw_both").fn("combined", "standalone", "non_obviousness")
    assert scatter["visible"] is False and scatter["value"] is None and bars["visible"] is False
    assert (
        scatter_note["visible"] and "nothing to plot" in scatter_note["value"] and "rqb-empty" in scatter_note["value"]
    )
    assert bars_note["visible"] and "win / tie / lose" in bars_note["value"]


# -- Judges --------------------------------------------------------------------------------------------------


def _board(*rows, majority: int = 0):
    from rqbench.evaluate.judge_board.board import Board

    return Board(
        pool_version="p",
        pool_pairs=10,
        sources={},
        experts=[],
        majority_pairs=majority,
        ceiling=None,
        n_boot=10,
        rows=list(rows),
    )


def _row(judge: str, *, origin="run", cost=None, agree=None):
    from rqbench.evaluate.judge_board.board import BoardRow
    from rqbench.evaluate.metrics.bootstrap import Estimate

    vs = None if agree is None else Estimate(value=agree, ci_low=agree, ci_high=agree, n=7, n_clusters=7)
    return BoardRow(judge=judge, origin=origin, pairs_judged=10, pairs_not_judged=0, cost_per_pair=cost, vs_majority=vs)


def test_the_cost_plot_says_why_it_places_no_judge():
    from rqbench.evaluate.report import judge_board_plot as jp

    paper_only = _board(_row("gemini-3.1-pro", origin="paper", agree=0.7), majority=7)
    assert jp.nothing_placed(paper_only) == jp.NO_JUDGE_RUN
    unpriced = jp.nothing_placed(_board(_row("judge-u", agree=0.6), majority=7))
    assert "judge-u" in unpriced and unpriced.startswith("No judge has priced calls")
    no_majority = jp.nothing_placed(_board(_row("judge-p", cost=0.01)))
    assert "judge-p" in no_majority and "(0 in the pool)" in no_majority
    assert jp.nothing_placed(_board(_row("judge-p", cost=0.01, agree=0.6), majority=7)) == ""


def test_the_judges_tab_on_an_empty_store_shows_sentences_not_an_empty_plot(empty_app):
    from rqbench.evaluate.report.judge_board_plot import NO_JUDGE_RUN
    from rqbench.space.judges_view import CAPTION
    from rqbench.space.tabs.judges import NO_EXPERT_PAIRS

    demo, _ = empty_app
    _page_load(demo)
    banner, table, pool, plot, note, stability, length, cued = _fn(demo, "opened").fn()
    assert plot["visible"] is False and plot["value"] is None
    assert note["visible"] and NO_JUDGE_RUN.split(",")[0] in note["value"]
    assert NO_EXPERT_PAIRS.split(":")[0] in table and CAPTION.split(".")[0] not in table  # no caption of no figures
    assert stability_view.NO_STABILITY.split(";")[0] in stability
    assert html.escape(stability_view.NO_LENGTH) in length
    assert "No judge has been measured with added words yet" in cued and "<table" not in cued


def test_the_judges_tab_ranks_the_models_per_judge_and_shows_each_judges_length_preference(empty_app):
    demo, stores = empty_app
    for k, (model, judge) in enumerate([("m1", "A"), ("m2", "A"), ("m1", "B"), ("m2", "B")]):
        r = make_results(model, judge=judge, setting="comparative", n_instances=6, seed=k)
        for i, inst in enumerate(r.instances):  # RQ lengths that vary, so a preference can be measured
            for c in inst.candidates[1:]:
                c.text += " more" * (i % 2)
        stores.results.put(r)
    _page_load(demo)
    *_, stability, length, _cued = _fn(demo, "opened").fn()
    assert "Comparative judging" in stability and "A vs B" in stability and "without A" in stability
    assert stability_view.NO_STABILITY.split(";")[0] not in stability
    assert "Length-controlled win %" in length and " pts" in length


# -- Annotate ------------------------------------------------------------------------------------------------


def test_annotate_without_a_pair_hides_its_boxes_and_says_what_would_fill_them(empty_app):
    from rqbench.space.tabs.annotate import NO_PAIRS

    demo, stores = empty_app
    reply = _page_load(demo)
    assert reply["an-work"]["visible"] is False  # the name, fields, status, papers, questions and buttons
    assert reply["an-empty"]["visible"] and "Nothing to annotate yet" in reply["an-empty"]["value"]
    assert "judged" in NO_PAIRS  # what fills it
    stores.results.put(make_results("model-a"))
    reply = _page_load(demo)
    assert reply["an-work"]["visible"] is True and reply["an-empty"]["visible"] is False
    assert reply["an-fields"].choices


# -- Browse --------------------------------------------------------------------------------------------------


def test_browse_on_an_empty_store_says_nothing_is_stored_instead_of_empty_pickers(empty_app):
    from rqbench.space.tabs.browse import NO_INSTANCES

    demo, stores = empty_app
    reply = _page_load(demo)
    assert reply["br-work"]["visible"] is False
    assert reply["br-empty"]["visible"] and NO_INSTANCES.split(":")[0] in reply["br-empty"]["value"]
    stores.results.put(make_results("model-a"))
    reply = _page_load(demo)
    assert reply["br-work"]["visible"] is True and reply["br-empty"]["visible"] is False


def test_a_judges_repeated_reasons_are_quoted_once_labelled_and_long_ones_folded():
    r = make_results("local/smollm2-135m", judge="local", n_instances=1)
    for c in r.instances[0].candidates:
        for s in c.narrowness.values():
            s.short_reason_source_bound = s.short_reason_diagnostic = JUNK
    (block,) = browse.candidates_tables([r], r.instances[0].rq_id)
    cells = [row[2] for row in block.rows]
    html = browse_html(block)
    assert (
        html.count(" ".join(JUNK.split())) == 1
    )  # twelve reasons of the same words (two per RQ, six RQs): quoted once
    first = cells[0]
    assert "2-SrGh" not in first.text  # the scores' lines hold no reason
    (quote,) = first.quotes
    assert quote.folded and "judge's reason" in quote.lead and "source-bound and diagnostic" in quote.lead
    for later in cells[1:]:
        (q,) = later.quotes
        assert not q.text and "the same words it gave for the GT above" in q.lead
    assert "<details" in html and "“" in html


def test_a_short_reason_is_shown_whole_and_each_distinct_one_once():
    r = make_results("model-a", n_instances=1)
    (block,) = browse.candidates_tables([r], r.instances[0].rq_id)
    gt = block.rows[0][2]
    sb, dg = (
        next(iter(r.instances[0].candidates[0].narrowness.values()))
        .model_dump(include={"short_reason_source_bound", "short_reason_diagnostic"})
        .values()
    )
    assert [q.text for q in gt.quotes] == [sb, dg] and not any(q.folded for q in gt.quotes)


def browse_html(block) -> str:
    from rqbench.space import html_table

    return html_table.render_table(block.headers, block.rows)


def test_a_subfield_the_dataset_does_not_know_is_named_as_not_recorded_and_why():
    assert browse.subfield_label("cs.CL") == "cs.CL" and browse.subfield_note("cs.CL") == ""
    label, why = browse.subfield_label(UNKNOWN_CATEGORY), browse.subfield_note(UNKNOWN_CATEGORY)
    assert label != UNKNOWN_CATEGORY and "not recorded" in label and "arXiv" in why
    from rqbench.space.tabs.browse import subfield_picker

    index = {"r": browse.InstanceRef("r", "2501.1", UNKNOWN_CATEGORY, "Why?", ("p",))}
    picker = subfield_picker(index, UNKNOWN_CATEGORY)
    assert picker.choices == [(label, UNKNOWN_CATEGORY)] and picker.info == why


def test_a_space_started_before_its_sample_says_the_sample_is_being_built_not_to_build_it(caplog):
    """``rqbench start`` serves the page while the sample is built: its absence then is no warning telling the
    newcomer to run ``rqbench setup-sample`` (which is already running); ``rqbench space`` alone still warns."""
    import logging

    from rqbench.space.ui import config_from_env

    with caplog.at_level(logging.INFO, logger="rqbench.space.ui"):
        pending = config_from_env(sample_pending=True)
    assert pending.target is None and "being built behind this page" in pending.dataset_note
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="rqbench.space.ui"):
        alone = config_from_env()
    assert alone.dataset_note.startswith("Benchmark not loaded") and "setup-sample" in alone.dataset_note
    assert [r for r in caplog.records if r.levelno == logging.WARNING]
