"""summarize(): per-judge and combined rows, the two combine rules, sub-field splits, provenance."""

from __future__ import annotations

import json
from datetime import date

import pytest
from results_factory import cand, instance, results, simple_instance

from rqbench.evaluate.metrics.summary import load_results, summarize

ZERO = (0, 0, 0)


def _disagreeing_judges():
    """One instance: judge A says the model wins, judge B says it loses; their mean ties."""
    a = instance(
        "2501.00001_rq0",
        cand("gt", (1, 1, 1), sb=0),
        [cand("m0", (2, 2, 2), sb=2)] + [cand(f"m{i}", ZERO, sb=3) for i in range(1, 5)],
    )
    b = instance(
        "2501.00001_rq0",
        cand("gt", (2, 2, 2), sb=1),
        [cand("m0", (1, 1, 1), sb=1)] + [cand(f"m{i}", ZERO, sb=3) for i in range(1, 5)],
    )
    return [
        results([a], label="judge-a"),
        results([b], label="judge-b", judge_model="deepseek/deepseek-v4-pro"),
    ]


def _rows(rows, **want):
    return [r for r in rows if all(getattr(r, k) == v for k, v in want.items())]


def test_pooled_and_mean_scores_differ_as_computed_by_hand():
    files = _disagreeing_judges()
    pooled = _rows(summarize(files, combine="pooled", n_boot=50), judge="combined", row_kind="model")[0]
    assert pooled.figure("win_originality").value == 0.5
    assert pooled.figure("lose_originality").value == 0.5
    assert pooled.figure("tie_originality").value == 0.0
    assert pooled.figure("best5_originality").value == 1.5
    assert pooled.figure("win_originality").n == 2
    # source-boundedness: A: best 2 vs GT 0 (lose); B: best 1 vs GT 1 (tie)
    assert pooled.figure("lose_source_bound_score").value == 0.5
    assert pooled.figure("tie_source_bound_score").value == 0.5

    mean = _rows(summarize(files, combine="mean_scores", n_boot=50), judge="combined", row_kind="model")[0]
    assert mean.combine == "mean_scores"
    assert mean.figure("tie_originality").value == 1.0
    assert mean.figure("win_originality").n == 1
    # means: GT 0.5, model m0 1.5 -> best 1.5 -> lose
    assert mean.figure("best5_source_bound_score").value == 1.5
    assert mean.figure("lose_source_bound_score").value == 1.0

    per_judge = {r.judge: r for r in _rows(summarize(files, n_boot=50), row_kind="model") if r.judge != "combined"}
    assert per_judge["judge-a"].figure("win_originality").value == 1.0
    assert per_judge["judge-b"].figure("lose_originality").value == 1.0
    assert per_judge["judge-b"].provenance.judge_models == ["deepseek/deepseek-v4-pro"]


def test_reference_row_is_the_gts_own_standalone_mean():
    rows = summarize(_disagreeing_judges(), n_boot=50)
    refs = {r.judge: r for r in rows if r.row_kind == "reference"}
    assert set(refs) == {"judge-a", "judge-b", "combined"}
    assert refs["judge-a"].figure("best5_originality").value == 1.0
    assert refs["combined"].figure("best5_originality").value == 1.5
    assert refs["combined"].figure("best5_source_bound_score").value == 0.5
    assert refs["judge-a"].figure("win_originality") is None


def test_comparative_rows_report_rates_but_no_mean_scores():
    inst = simple_instance("2501.00001_rq0", (1, 1, 1), [(2, 2, 2)] + [ZERO] * 4, overlap=[1, 3, 0, 0, 0])
    rows = summarize([results([inst], setting="comparative")], n_boot=20)
    assert all(r.row_kind == "model" for r in rows)  # no comparative reference row
    row = rows[0]
    assert row.figure("best5_originality") is None
    assert row.figure("win_originality").value == 1.0
    assert row.figure("overlap5").value == 3.0


def test_by_subfield_rows_and_coverage():
    insts = [
        simple_instance("2501.00001_rq0", (1, 1, 1), [(2, 2, 2)] * 5, subfield="cs.CL"),
        simple_instance("2501.00001_rq1", (1, 1, 1), [(1, 1, 1)] * 5, subfield="cs.CL"),
        simple_instance("2504.00002_rq0", (3, 3, 3), [(1, 1, 1)] * 5, subfield="cs.LG"),
    ]
    rows = summarize([results(insts, expected=10)], by_subfield=True, n_boot=20)
    model_rows = _rows(rows, row_kind="model", judge="gemini-3.1-pro")
    by = {r.subfield: r for r in model_rows}
    assert set(by) == {None, "cs.CL", "cs.LG"}
    assert by[None].provenance.instances_covered == 3
    assert by[None].provenance.instances_expected == 10
    assert by["cs.CL"].provenance.instances_expected is None
    assert by["cs.CL"].figure("win_originality").value == 0.5
    assert by["cs.CL"].figure("win_originality").n_clusters == 1
    assert by["cs.LG"].figure("lose_originality").value == 1.0


def test_contamination_flag_from_instance_dates_or_a_date_mapping():
    insts = [
        simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5, published=date(2025, 1, 14)),
        simple_instance("2504.00002_rq0", (1, 1, 1), [(1, 1, 1)] * 5, published=date(2025, 4, 2)),
    ]
    f = results(insts, knowledge_cutoff=date(2025, 3, 1))
    judge = f.judge.label  # one judge: its own row, no combined one
    prov = _rows(summarize([f], n_boot=10), judge=judge)[0].provenance
    assert prov.contaminated is True and prov.contaminated_share == 0.5
    assert prov.earliest_source_date == date(2025, 1, 14)
    # a mapping dates only the papers whose instances carry no date: the instance's own date stands
    prov = _rows(summarize([f], source_dates={"2501.00001": date(2025, 6, 1)}, n_boot=10), judge=judge)[0].provenance
    assert prov.contaminated is True and prov.earliest_source_date == date(2025, 1, 14)
    undated = [i.model_copy(update={"paper_published": None}) for i in insts]
    g = results(undated, knowledge_cutoff=date(2025, 3, 1))
    prov = _rows(summarize([g], n_boot=10), judge=judge)[0].provenance
    assert (prov.contaminated, prov.contaminated_share, prov.earliest_source_date) == (None, None, None)  # no YYMM
    later = {"2501.00001": date(2025, 6, 1), "2504.00002": date(2025, 4, 2)}
    prov = _rows(summarize([g], source_dates=later, n_boot=10), judge=judge)[0].provenance
    assert prov.contaminated is False and prov.contaminated_share == 0.0
    prov = _rows(summarize([results(insts)], n_boot=10), judge=judge)[0].provenance
    assert prov.contaminated is None  # no cutoff


def test_the_cutoff_is_the_submissions_else_the_catalogs_with_its_source():
    insts = [
        simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5, published=date(2025, 1, 9)),
        simple_instance("2504.00002_rq0", (1, 1, 1), [(1, 1, 1)] * 5, published=date(2025, 4, 2)),
    ]
    gemini = results(insts, model="gemini/gemini-3.1-pro")  # no cutoff stated; the catalog has January 2025
    prov = _rows(summarize([gemini], n_boot=10), judge=gemini.judge.label)[0].provenance
    assert prov.knowledge_cutoff == date(2025, 1, 31) and "ai.google.dev" in prov.knowledge_cutoff_source
    assert prov.contaminated is True and prov.contaminated_share == 0.5  # 2025-01 is before the cutoff, 2025-04 not
    stated = results(insts, model="gemini/gemini-3.1-pro", knowledge_cutoff=date(2024, 12, 31))
    prov = _rows(summarize([stated], n_boot=10), judge=stated.judge.label)[0].provenance
    assert (prov.knowledge_cutoff, prov.knowledge_cutoff_source) == (date(2024, 12, 31), "submission")
    assert prov.contaminated is False
    unknown = results(insts)  # openai/gpt-5.5: neither states one
    prov = _rows(summarize([unknown], n_boot=10), judge=unknown.judge.label)[0].provenance
    assert (prov.knowledge_cutoff, prov.knowledge_cutoff_source, prov.contaminated) == (None, None, None)


def test_duplicate_judge_files_and_unknown_rule_are_errors():
    inst = simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5)
    with pytest.raises(ValueError, match="two results files for submission 'openai/gpt-5.5'.*judge 'gemini-3.1-pro'"):
        summarize([results([inst]), results([inst])])
    with pytest.raises(ValueError, match="unknown combine rule 'vote'"):
        summarize([results([inst])], combine="vote")


def test_load_results_reads_files_and_folders_and_names_bad_fields(tmp_path):
    inst = simple_instance("2501.00001_rq0", (1, 1, 1), [(1, 1, 1)] * 5)
    good = tmp_path / "res" / "a.json"
    good.parent.mkdir()
    good.write_text(results([inst]).model_dump_json())
    assert len(load_results([good.parent])) == 1
    data = json.loads(good.read_text())
    data["instances"][0]["candidates"][1]["novelty"]["originality"] = "high"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(
        ValueError, match=r"bad.json: not a valid results file: field instances\.0\.candidates\.1\.novelty"
    ):
        load_results([bad])
    with pytest.raises(FileNotFoundError, match="no such results file"):
        load_results([tmp_path / "missing.json"])


def test_one_judge_gives_no_combined_row_and_two_judges_give_one_with_its_rule():
    one = summarize(_disagreeing_judges()[:1], n_boot=20)
    assert {r.judge for r in one} == {"judge-a"} and all(r.combine is None for r in one)
    two = summarize(_disagreeing_judges(), n_boot=20)
    combined = [r for r in two if r.judge == "combined"]
    assert combined and {r.combine for r in combined} == {"pooled"}


def test_the_combine_rule_is_described_once_with_its_judges():
    from rqbench.evaluate.metrics.metric import CombineRule, describe_combine_rule

    text = describe_combine_rule("pooled", ["gemini/gemini-3.1-pro", "deepseek/deepseek-v4-pro"])
    assert "gemini/gemini-3.1-pro, deepseek/deepseek-v4-pro" in text and "(rule: pooled)" in text
    assert describe_combine_rule(CombineRule.mean_scores) != describe_combine_rule(CombineRule.pooled)
    with pytest.raises(ValueError):
        describe_combine_rule("majority")
