"""What the Space's pages are made of, without a browser: the demo-model rule and banner, the
leaderboard's cells, Browse's tables, the expert study, the plots at 1 to 1,000 rows, the rubric
text, the agreement matrix, the page-load cache, and the page without the expert-study file."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from rqbench import demo as dm
from rqbench.evaluate.metrics.summary import summarize
from rqbench.evaluate.metrics.summary_row import COMBINED, Figure, Provenance, SummaryRow
from rqbench.space import browse, html_table, plots
from rqbench.space import leaderboard as lb
from rqbench.space import leaderboard_cells as lb_cells
from rqbench.testing.synthetic import make_results

HOSTILE = '<img src=x onerror="window.__pwned=1">'


# -- the demo-model rule and its banner ----------------------------------------------------------


@pytest.mark.parametrize("name", ["local", "local/smollm2-135m", "local@temperature=0.7", "local/gemma3-270m@x=1"])
def test_embedded_models_are_demo_models(name, monkeypatch):
    monkeypatch.delenv(dm.DEMO_MODELS_ENV, raising=False)
    assert dm.is_demo_model(name)


def test_other_models_are_not_unless_configured(monkeypatch):
    monkeypatch.delenv(dm.DEMO_MODELS_ENV, raising=False)
    assert not dm.is_demo_model("gemini/gemini-3.1-pro")
    assert not dm.is_demo_model("localhost-model") and not dm.is_demo_model("")
    monkeypatch.setenv(dm.DEMO_MODELS_ENV, " Tiny/Model , other@temperature=1")
    assert dm.configured_demo_models() == ("tiny/model", "other")
    assert dm.is_demo_model("tiny/model@temperature=0.2") and dm.is_demo_model("OTHER")
    assert not dm.is_demo_model("gemini/gemini-3.1-pro")
    assert dm.is_demo_model("x", flagged=["x"]) and not dm.is_demo_model("x", flagged=[])


def test_the_banner_says_what_the_model_is_and_that_its_scores_are_not_results(monkeypatch):
    monkeypatch.delenv(dm.DEMO_MODELS_ENV, raising=False)
    assert dm.banner_text(["gemini/gemini-3.1-pro", "model-a"]) == ""
    text = dm.banner_text(["local", "local@temperature=0.7", "model-a"])
    assert "local/smollm2-135m" in text and "SmolLM2-135M" in text and "offline" in text
    assert "not results" in text and "model-a" not in text
    flagged = dm.banner_text(["tiny"], flagged=["tiny"])
    assert "RQB_DEMO_MODELS" in flagged and "not results" in flagged


def test_no_text_from_a_submission_reaches_the_banner():
    from rqbench.space.tabs.common import banner_html

    text = dm.banner_text([f"local/{HOSTILE}"])
    assert HOSTILE not in text and "local/(an embedded model this Space does not know)" in text
    assert "<img" not in banner_html([f"local/{HOSTILE}"])


# -- the HTML table ------------------------------------------------------------------------------


def test_the_html_table_escapes_cells_notes_titles_and_headers():
    out = html_table.render_table(
        [html_table.Header(HOSTILE, title=HOSTILE)],
        [[html_table.Cell(HOSTILE, note=HOSTILE, title='"><script>')]],
        caption=HOSTILE,
    )
    assert "<img" not in out and "<script>" not in out and "&lt;img" in out
    assert 'data-testid="cell-0-0"' in out
    assert "No rows yet" in html_table.render_table([html_table.Header("a")], [], empty="No rows yet")


# -- the leaderboard's cells ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def rows():
    res = []
    for judge in ("judge-a", "judge-b"):
        for setting in ("standalone", "comparative"):
            res.append(make_results("open-model", judge=judge, setting=setting, bias=0.4))
    res.append(make_results("local/smollm2-135m", judge="local", setting="standalone"))
    return summarize(res, n_boot=100)


def test_the_default_view_is_the_headline_figures_each_with_its_ci(rows):
    table = lb.build_table(rows)
    headers, cells, _ = lb_cells.display(table, lb.View())
    assert [h.label for h in headers] == [
        "Model",
        "Setting",
        "Judge",
        "Scored",
        "Best@5 originality",
        "Best@5 gap addressing",
        "Best@5 non-obviousness",
        "Win / tie / lose % non-obviousness",
        "Best@5 source-boundedness ↓",
        "Overlap@5",
    ]
    shown = lb.render(table, lb.View())
    for row, rec in zip(cells, shown.to_dict("records")):
        best = row[6]
        if rec["Best@5 non-obviousness"] is not None and rec["Best@5 non-obviousness"] == rec["Best@5 non-obviousness"]:
            assert (
                f"{best.text} {best.note}"
                == f"{rec['Best@5 non-obviousness']:.2f} {rec['Best@5 non-obviousness 95% CI']}"
            )
            assert best.title == f"95% CI {rec['Best@5 non-obviousness 95% CI']}"
    model_row = next(r for r in cells if r[0].text == "open-model" and r[1].text == "standalone")
    assert re.fullmatch(r"\d+ / \d+ / \d+", model_row[7].text) and "win" in model_row[7].title
    assert model_row[3].text == "6/6" and model_row[3].note == ""  # every instance scored: no mark
    demo_row = next(r for r in cells if r[0].text == "local/smollm2-135m")
    assert "demo model" in demo_row[0].note and "demo" in demo_row[2].note
    _, no_ci, _ = lb_cells.display(table, lb.View(show_ci=False))
    assert all(c.note == "" for r in no_ci for c in r[4:] if c.kind == "num")


def test_every_empty_cell_says_why_and_the_caption_lists_the_reasons(rows):
    headers, cells, caption = lb_cells.display(lb.build_table(rows), lb.View())
    missing = [c for r in cells for c in r if c.kind == "missing"]
    assert missing and all(c.text == lb_cells.MISSING and c.title for c in missing)
    comparative = next(r for r in cells if r[1].text == "comparative")
    assert "standalone judging only" in comparative[4].title  # no Best@5 in comparative, by design
    reference = next(r for r in cells if r[0].text == "author-anchored (GT)")
    assert "yardstick" in reference[7].title
    for c in missing:
        assert c.title in caption


def test_the_combine_rule_is_on_the_combined_judge_and_in_the_caption(rows):
    from rqbench.evaluate.metrics.metric import describe_combine_rule

    _, cells, caption = lb_cells.display(lb.build_table(rows), lb.View())
    combined = next(r for r in cells if r[0].text == "open-model" and r[2].text == COMBINED)
    assert combined[2].title == describe_combine_rule("pooled", ["judge-a", "judge-b"])
    assert describe_combine_rule("pooled") in caption
    lone = next(r for r in cells if r[0].text == "local/smollm2-135m")
    assert lone[2].text == "local" and lone[2].title == ""  # one judge: no combined row, no rule


def test_column_groups_add_their_columns_to_the_headline(rows):
    table = lb.build_table(rows)
    labels = [h.label for h in lb_cells.display(table, lb.View(groups=("model", "headline", "provenance")))[0]]
    assert labels[-8:] == [
        "Judges",
        "Prompt set",
        "Dataset",
        "Instances",
        "Failures",
        "Judge details",
        "Submitted",
        "Contamination",
    ]
    labels = [h.label for h in lb_cells.display(table, lb.View(groups=("model", "headline", "cost")))[0]]
    assert labels[-3:] == ["Generation $", "Win points per generation $ (non-obviousness)", "Judging cost"]
    labels = [h.label for h in lb_cells.display(table, lb.View(groups=("model", "headline", "novelty")))[0]]
    assert "Win % originality" in labels and "Tie % gap addressing" in labels


# -- Browse ----------------------------------------------------------------------------------------


def test_browse_opens_on_the_first_rq_and_lists_each_models_rqs_with_every_judge():
    res = [
        make_results("model-a", judge=j, setting=s)
        for j in ("judge-a", "judge-b")
        for s in ("standalone", "comparative")
    ]
    res.append(make_results("model-b", judge="judge-a"))
    index = browse.index_instances(res)
    first = browse.first_rq(index)
    assert first == browse.rq_choices(index, browse.paper_choices(index, browse.subfield_choices(index)[0])[0])[0]
    assert browse.first_rq({}) is None
    blocks = browse.candidates_tables(res, first)
    assert [b.model for b in blocks] == ["model-a", "model-b"]
    a, b = blocks
    assert [h.label for h in a.headers] == [
        "RQ",
        "Research question",
        "judge-a · standalone",
        "judge-b · standalone",
        "judge-a · comparative",
        "judge-b · comparative",
    ]
    assert [h.label for h in b.headers][2:] == ["judge-a · standalone"]  # only the judges that judged it
    assert [r[0].text for r in a.rows] == ["GT", "1", "2", "3", "4", "5"]
    gt = res[0].instances[0].candidates[0]
    assert a.rows[0][1].text == gt.text
    scores = a.rows[1][2].text
    assert "non-obv" in scores and "source-bound" in scores and "diagnostic" in scores and "overlap" in scores
    reason = next(iter(res[0].instances[0].candidates[1].narrowness.values())).short_reason_source_bound
    assert reason in [q.text for row in a.rows for q in row[2].quotes]  # quoted under the scores, once per column
    labels = browse.rq_labels(index, res[0].instances[0].arxiv_id)
    assert labels[0][1] == res[0].instances[0].rq_id and labels[0][0].startswith(res[0].instances[0].rq_id + ": ")


# -- the expert study ----------------------------------------------------------------------------


def test_the_expert_study_is_read_where_it_lies_and_uses_agreement_matrix(fixtures_dir, monkeypatch):
    from rqbench.evaluate.judge_board.agreement import agreement_matrix, expert_sample_picks, read_expert_samples
    from rqbench.space import expert_study as es

    path = fixtures_dir / "paper_examples" / "expert_vs_llm.jsonl"
    monkeypatch.delenv(es.EXPERT_STUDY_ENV, raising=False)
    assert es.study_path() == path
    monkeypatch.setenv(es.EXPERT_STUDY_ENV, "/elsewhere/study.jsonl")
    assert str(es.study_path()) == "/elsewhere/study.jsonl"
    study = es.load_study(path, n_boot=200)
    want = agreement_matrix(expert_sample_picks(read_expert_samples(path)), n_boot=200)
    assert study.matrix == want
    headers, rows = es.samples_table(study)
    assert len(rows) == 10 and [h.label for h in headers][-4:] == [
        "Expert 1",
        "Expert 2",
        "gemini-3.1-pro",
        "deepseek-v4-pro",
    ]
    first = study.samples[0]
    assert rows[0][1].text == first.background_title and rows[0][1].note == first.background_abstract_summary
    assert (rows[0][2].text, rows[0][3].text) == (first.gt_rq, first.model_rq)
    _, wins = es.wins_table(study)
    assert [r[0].text for r in wins] == ["Expert 1", "Expert 2", "gemini-3.1-pro", "deepseek-v4-pro"]
    for row, w in zip(wins, study.wins):
        assert [c.text for c in row[1:]] == [f"{round(e.value * 10)}/10" for e in (w.gt, w.model, w.tie)]


def test_the_page_without_the_study_file_has_no_expert_tab_and_says_why(tmp_path):
    import gradio as gr

    from rqbench.space.stores import SpaceStores
    from rqbench.space.ui import SpaceConfig, build_app

    missing = tmp_path / "no-study.jsonl"
    demo = build_app(SpaceConfig(stores=SpaceStores.local(tmp_path / "store"), expert_study=missing))
    tabs = [b for b in demo.blocks.values() if isinstance(b, gr.Tab)]
    assert "expert-study" not in {t.id for t in tabs} and tabs[0].id == "leaderboard"
    about = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "about-space")
    assert "no-study.jsonl" in about.value and "not shown" in about.value
    assert str(tmp_path) not in about.value  # no page names a path on the host's disk


def test_a_broken_study_file_is_named_on_its_tab(tmp_path):
    import gradio as gr

    from rqbench.space.stores import SpaceStores
    from rqbench.space.ui import SpaceConfig, build_app

    bad = tmp_path / "study.jsonl"
    bad.write_text('{"sample": 1}\n', encoding="utf-8")
    demo = build_app(SpaceConfig(stores=SpaceStores.local(tmp_path / "store"), expert_study=bad))
    assert "expert-study" in {b.id for b in demo.blocks.values() if isinstance(b, gr.Tab)}
    problem = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "es-problem")
    assert f"{bad}:1:" in problem.value and "background_title" in problem.value  # file, line and field


def _page_load_reply(demo) -> dict:
    """What the page's load event answers, by the output's elem_id."""
    load = next(f for f in demo.fns.values() if f.name == "page_load")
    reply = load.fn(*[c.value for c in load.inputs])
    return {getattr(b, "elem_id", None): v for b, v in zip(load.outputs, reply, strict=True)}


def test_a_page_open_runs_no_python_and_annotate_says_what_to_do_before_any_pair(tmp_path):
    from rqbench.space.stores import SpaceStores
    from rqbench.space.tabs.annotate import NO_PAIRS, PAIR_HINT
    from rqbench.space.ui import SpaceConfig, build_app

    stores = SpaceStores.local(tmp_path / "store")
    demo = build_app(SpaceConfig(stores=stores, n_boot=50, recheck_after_s=0))
    on_load = [f for f in demo.fns.values() if any(event == "load" for _, event in f.targets)]
    # one load event, in the browser only (it hands a link to page_load); the Browse and Annotate renders run when
    # their input changes
    assert [(f.fn, bool(f.js)) for f in on_load] == [(None, True)]
    linked = [f.name for f in demo.fns.values() if any(event == "change" for _, event in f.targets)]
    assert "page_load" in linked
    hint = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "an-hint")
    assert hint.value == PAIR_HINT  # on the page itself: no render has run yet
    empty = _page_load_reply(demo)["an-empty"]  # no results, no pair: the tab says so in place of its boxes
    assert empty["visible"] and NO_PAIRS.split(":")[0] in empty["value"]
    stores.results.put(make_results("model-a"))
    assert _page_load_reply(demo)["an-fields"].choices


def test_the_submit_tab_names_the_dataset_by_its_public_name_never_its_path(tmp_path):
    from rqbench.space.stores import SpaceStores
    from rqbench.space.submit import BenchmarkTarget
    from rqbench.space.ui import SpaceConfig, build_app

    folder = tmp_path / "datasets" / "rq-bench-sample"
    target = BenchmarkTarget(str(folder), "6460bbe8731ce5d6", ("r1", "r2"), "local/rq-bench-sample", "v0.1.0")
    demo = build_app(SpaceConfig(stores=SpaceStores.local(tmp_path / "store"), target=target))
    intro = next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "sub-intro")
    assert "`local/rq-bench-sample@v0.1.0 (6460bbe8731c)` (2 instances)" in intro.value
    assert str(tmp_path) not in intro.value
    # without a public name (a caller that gives none), the repo stands in, as results files do
    assert BenchmarkTarget("org/rq-bench", "abc", ()).label == "org/rq-bench@abc"


# -- the plots at 1, 10, 100 and 1,000 rows ------------------------------------------------------


def _fig(value: float, spread: float = 0.1) -> Figure:
    return Figure(value=value, ci_low=max(0.0, value - spread), ci_high=value + spread, std=0.1, n=10, n_clusters=5)


def synthetic_rows(n: int) -> list[SummaryRow]:
    """``n`` model rows (one judge, so each is the headline row) and the reference, with long model names."""
    prov = Provenance(
        judge_models=["j"],
        judge_labels=["j"],
        prompt_sets=[],
        dataset_repo="d",
        dataset_revision="v",
        instances_covered=10,
        instances_expected=10,
        submission_date=datetime(2026, 1, 1, tzinfo=timezone.utc),
    )
    out = []
    for k in range(n):
        win = (k % 10) / 10
        out.append(
            SummaryRow(
                model=f"organisation-{k}/a-rather-long-model-name-{k:04d}-instruct-v2",
                prompt_variant="original",
                setting="standalone",
                judge="j",
                provenance=prov,
                figures={
                    "best5_non_obviousness": _fig(1 + (k % 20) / 10),
                    "best5_source_bound_score": _fig((k % 30) / 10),
                    "win_non_obviousness": _fig(win),
                    "tie_non_obviousness": _fig((1 - win) / 2),
                    "lose_non_obviousness": _fig((1 - win) / 2),
                },
            )
        )
    out.append(
        SummaryRow(
            row_kind="reference",
            model="author-anchored (GT)",
            prompt_variant="",
            setting="standalone",
            judge="j",
            provenance=prov,
            figures={"best5_non_obviousness": _fig(1.5), "best5_source_bound_score": _fig(0.8)},
        )
    )
    return out


@pytest.mark.parametrize("n", [1, 10, 100, 1000])
def test_both_plots_stay_readable_from_1_to_1000_rows(n, test_output_dir):
    rows = synthetic_rows(n)
    bars = plots.verdict_bars(rows, judge="j")
    (ax,) = bars.axes
    dpi = bars.dpi
    assert bars.get_figwidth() == plots.WIDTH_IN
    shown = min(n, 30)
    assert len(ax.patches) == 3 * shown  # win, tie and lose per model shown, at most 30 models
    bar_px = ax.patches[0].get_height() * ax.get_window_extent().height / shown
    assert bar_px >= 20, f"bars {bar_px:.1f} px thick at {n} rows"
    assert bars.get_figheight() <= 1.8 + plots.BAR_IN * 30 + 0.01  # grows with its bars, up to the cap
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == shown and all(len(t) <= plots.LABEL_CHARS for t in labels)
    assert ax.get_window_extent().width >= 0.5 * bars.get_figwidth() * dpi  # labels never take the width
    if n > 30:
        assert f"the 30 highest win rates of {n} models" in " ".join(t.get_text() for t in bars.texts)
    bars.savefig(test_output_dir / f"bars-{n}.png")

    scatter = plots.novelty_vs_narrowness(rows, judge="j")
    (sax,) = scatter.axes
    assert scatter.get_figwidth() == plots.WIDTH_IN and scatter.get_figheight() == 5.0
    assert len(sax.texts) <= plots.SCATTER_LABELS + 1  # the GT and the highest points are labelled
    assert all(len(t.get_text()) <= 32 for t in sax.texts)
    if n > plots.SCATTER_CI_UP_TO:
        assert "CIs drawn up to" in sax.get_title()
    scatter.savefig(test_output_dir / f"scatter-{n}.png")
    import matplotlib.pyplot as plt

    plt.close(bars)
    plt.close(scatter)


def test_the_combined_plots_use_the_leaderboards_rows(rows):
    chosen = plots.judge_rows(rows, COMBINED, "standalone")
    table = lb.build_table(rows)
    shown = lb.render(table, lb.View(settings=("standalone",)))
    assert sorted((r.model, r.judge) for r in chosen) == sorted(zip(shown["Model"], shown["Judge"]))


# -- the rubric the annotators read ----------------------------------------------------------------


def test_the_rubric_shown_to_annotators_is_the_judges_prompt_text():
    from rqbench.prompts import PromptError, load_prompt_set, rubric_scale
    from rqbench.space.tabs.annotate import rubric_texts

    non_obvious, source_bound = rubric_texts()
    ps = load_prompt_set()
    assert non_obvious in ps["novelty_standalone"].system and non_obvious.startswith("non_obviousness:")
    assert len(non_obvious.splitlines()) == 5  # the question and the four levels
    assert source_bound in ps["narrowness_standalone"].system and len(source_bound.splitlines()) == 5
    with pytest.raises(PromptError, match="no line starts with"):
        rubric_scale("novelty_standalone", "no such line")


# -- the Annotate tab's matrix ---------------------------------------------------------------------


def test_the_annotation_matrix_is_agreement_matrix_over_humans_and_judges():
    from rqbench.evaluate.judge_board.agreement import agreement_matrix, llm_picks, pin_to_shown
    from rqbench.space import annotate as an
    from rqbench.space.agreement_view import annotation_matrices, matrix_cells

    res = [make_results("model-a", judge=j, setting="comparative") for j in ("judge-a", "judge-b")]
    pairs = an.build_pairs(res)
    now = datetime(2026, 5, 1, tzinfo=timezone.utc)
    judgments = [
        an.make_judgment(an.annotator_id(who), p, choice, shown_at=now, now=now)
        for who, choice in (("ann", "left"), ("bob", "right"))
        for p in pairs[:4]
    ]
    found = annotation_matrices(judgments, res, n_boot=100)
    matrix, names = found[("model-a", "comparative")]
    humans = pin_to_shown(an.human_picks(judgments, res[0].submission_hash), res)
    want = agreement_matrix([*humans, *llm_picks(res, humans)], n_boot=100)
    assert matrix == want
    assert sorted(names.values()) == ["annotator 1", "annotator 2"]
    headers, rows = matrix_cells(matrix, names)
    assert [h.label for h in headers][1:3] == ["annotator 1", "annotator 2"] and len(rows) == 4
    assert annotation_matrices([], res) == {}


# -- the page load's cache -------------------------------------------------------------------------


def test_a_look_at_the_store_reads_only_the_files_added_or_changed_since_the_last(tmp_path, monkeypatch):
    import os

    from rqbench.space.stores import SpaceStores
    from rqbench.space.ui import SpaceConfig, SpaceData

    stores = SpaceStores.local(tmp_path / "store")
    path_a = stores.results.put(make_results("model-a"))
    data = SpaceData(SpaceConfig(stores=stores, n_boot=50, recheck_after_s=0))  # a look at the store every load
    reads = []
    real = stores.results.repo.read
    monkeypatch.setattr(stores.results.repo, "read", lambda p: reads.append(p) or real(p))
    data.refresh(recent=True)
    data.refresh()  # the Refresh button looks too; nothing changed, nothing is read again
    assert reads == [path_a] and data.version == 1
    path_b = stores.results.put(make_results("model-b"))
    data.refresh(recent=True)
    assert reads == [path_a, path_b] and {r.submission.model for r in data.results} == {"model-a", "model-b"}
    assert data.version == 2
    # edited in place (same listing, same size even): seen on the next look, and only that file is read
    file_a = tmp_path / "store" / path_a
    text = file_a.read_text().replace('"model-a"', '"model-z"')
    file_a.write_text(text)
    os.utime(file_a, ns=(1, 1))
    data.refresh(recent=True)
    assert reads == [path_a, path_b, path_a] and {r.submission.model for r in data.results} == {"model-z", "model-b"}
    file_b = tmp_path / "store" / path_b
    file_b.unlink()
    data.refresh()
    assert {r.submission.model for r in data.results} == {"model-z"} and len(reads) == 3
