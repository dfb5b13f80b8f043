"""The records enforce the dataset's rules and the rubrics' rules themselves."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rqbench import records as r
from rqbench.steps import STEPS


def test_rq_id_rule_round_trips():
    assert r.rq_id_for("2502.01113", 2) == "2502.01113_rq2"
    assert r.parse_rq_id("2502.01113_rq2") == ("2502.01113", 2)
    with pytest.raises(ValueError, match="<paper_id>_rq<index>"):
        r.parse_rq_id("2502.01113-2")


def rq_record(**kw):
    base = dict(
        rq_id="2502.01113_rq0",
        rq="Does sparse routing hold on long inputs?",
        arxiv_id="2502.01113",
        subfield="cs.CL",
        novelty_type="new_method",
        problem_statement="p",
        main_idea_headline="h",
        contributions=["c"],
        gaps=[{"text": "g", "cited_key": "k"}],
        cited_paper_ids=["1706.03762"],
    )
    base.update(kw)
    return r.RQRecord(**base)


def test_rq_record_checks_its_id_against_its_paper():
    assert rq_record().rq_id == "2502.01113_rq0"
    with pytest.raises(ValidationError, match="does not belong"):
        rq_record(rq_id="2502.09999_rq0")


def test_validation_errors_name_the_field():
    with pytest.raises(ValidationError) as err:
        rq_record(novelty_type="sparkly")
    assert err.value.errors()[0]["loc"] == ("novelty_type",)
    with pytest.raises(ValidationError) as err:
        rq_record(unknown_field=1)
    assert err.value.errors()[0]["loc"] == ("unknown_field",)


FIVE = [f"Does sparse routing variant {x} hold on long inputs?" for x in "ABCDE"]


def test_submission_entry_needs_five_distinct_questions():
    assert len(r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE).research_questions) == 5
    with pytest.raises(ValidationError, match="at least 5"):
        r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE[:4])
    with pytest.raises(ValidationError, match="end with"):
        r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE[:4] + ["A statement."])
    with pytest.raises(ValidationError, match="repeated"):
        r.SubmissionEntry(
            rq_id="x_rq0", research_questions=FIVE[:4] + ["DOES  sparse routing variant A hold on long inputs ?"]
        )
    with pytest.raises(ValidationError, match="empty|at least 1"):
        r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE[:4] + ["   "])
    with pytest.raises(ValidationError):
        r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE[:4] + ["Why" * 300 + "?"])


def test_generation_reply_shape():
    ok = r.GenerationReply.model_validate({"gaps": ["g"], "research_questions": FIVE})
    assert ok.research_questions[0] == FIVE[0]
    with pytest.raises(ValidationError):
        r.GenerationReply.model_validate({"gaps": [], "research_questions": FIVE})


def test_novelty_relevance_zero_forces_zero_and_is_recorded_as_one_application():
    s = r.NoveltyScore.model_validate({"relevance": 0, "originality": 3, "gap_addressing": 0, "non_obviousness": 2})
    assert (s.originality, s.gap_addressing, s.non_obviousness) == (0, 0, 0)
    assert s.rule_corrections == ["relevance_zero: relevance=0 with originality=3, non_obviousness=2; set to 0"]
    assert r.rule_counts(s) == {"relevance_zero": 1}


def test_a_novelty_score_outside_its_scale_is_invalid_and_types_are_not_guessed():
    for bad in (
        {"originality": 7},
        {"gap_addressing": -1},
        {"relevance": 2},
        {"originality": "high"},
        {"originality": 1.5},
    ):
        with pytest.raises(ValidationError):
            r.NoveltyScore.model_validate(
                {"relevance": 1, "originality": 1, "gap_addressing": 1, "non_obviousness": 1} | bad
            )


def scores(*triples):
    return [{"relevance": 1, "originality": o, "gap_addressing": g, "non_obviousness": n} for o, g, n in triples]


def test_comparative_ranking_must_be_a_permutation():
    ok = r.ComparativeNoveltyReply.model_validate(
        {"scores": scores((1, 1, 1), (3, 3, 3)), "ranking": [1, 0]}, context={"n_candidates": 2}
    )
    assert ok.ranking == [1, 0] and not ok.rule_corrections
    for ranking in ([0, 0], [1, 2], [0]):  # a repeat, an index of no candidate, one missing
        with pytest.raises(ValidationError, match="not a permutation"):
            r.ComparativeNoveltyReply.model_validate({"scores": scores((1, 1, 1), (3, 3, 3)), "ranking": ranking})
    with pytest.raises(ValidationError, match="expected 3"):
        r.ComparativeNoveltyReply.model_validate(
            {"scores": scores((1, 1, 1), (3, 3, 3)), "ranking": [1, 0]}, context={"n_candidates": 3}
        )


def test_ranking_rule_breaks_ties_by_non_obviousness_then_originality():
    ss = [r.NoveltyScore.model_validate(x) for x in scores((3, 1, 1), (1, 1, 3), (2, 2, 1), (1, 3, 1))]
    # all total 5: non_obviousness 3 first, then originality 3, then originality 2, then gap 3
    assert r.ranking_from_scores(ss) == [1, 0, 2, 3]


def narrow(**kw):
    base = dict(
        mentions_source_specific_name=1,
        main_object_in_source=1,
        introduces_new_mechanism=0,
        source_bound_score=2,
        diagnostic_test_score=0,
        source_bound_scope="source_bound",
        diagnostic_scope="not_diagnostic",
        short_reason_source_bound="a",
        short_reason_diagnostic="b",
    )
    base.update(kw)
    return r.NarrownessScore.model_validate(base)


def test_a_narrowness_scope_that_is_not_its_scores_is_invalid():
    assert not narrow().rule_corrections
    with pytest.raises(ValidationError, match="source_bound_scope='source_bound' contradicts source_bound_score=3"):
        narrow(source_bound_score=3)
    assert narrow(main_object_in_source=True).main_object_in_source == 1  # JSON true for 1 says the same
    for bad in (
        {"mentions_source_specific_name": 9078},
        {"introduces_new_mechanism": -1},
        {"diagnostic_test_score": 4, "diagnostic_scope": "strongly_diagnostic"},
    ):
        with pytest.raises(ValidationError):
            narrow(**bad)
    with pytest.raises(ValidationError):
        narrow(source_bound_scope="very_bound", source_bound_score="x")


def overlap(scores, subset, covered, n=None):
    return r.OverlapReply.model_validate(
        {"pairwise_scores": scores, "covering_subset_indices": subset, "covered": covered},
        context={"n_candidates": n or len(scores)},
    )


def test_overlap_the_covering_subset_follows_the_scores_as_the_paper_says():
    none = overlap([1, 2, 0], [], False)
    assert not none.rule_corrections and not none.covered
    combo = overlap([2, 2, 0], [1, 0], True)
    assert combo.covering_subset_indices == [0, 1] and not combo.rule_corrections
    # a candidate scoring 3 or 4 is the subset on its own, the smallest index on ties: one application
    strong = overlap([4, 3, 0], [0, 1], True)
    assert strong.covering_subset_indices == [0] and r.rule_counts(strong) == {"covering_subset": 1}
    missed = overlap([0, 1, 2, 3, 4], [], False)  # consistent fields, but the rule says [3]
    assert (missed.covering_subset_indices, missed.covered) == ([3], True)
    assert missed.rule_corrections == ["covering_subset: candidate 3 scores 3, so the subset is [3] (reply had [])"]
    assert not overlap([0, 3, 0], [1], True).rule_corrections


def test_an_overlap_reply_that_breaks_its_meaning_is_invalid():
    cases = {
        "outside its scale 0-4": ([9, 0, 0], [], False),
        "no candidate with that index": ([0, 1, 2, 3, 4], [5, 6, 7, 8, 9], False),  # the reply
        "names a candidate twice": ([2, 2, 0], [0, 0, 1], True),
        "covered=false contradicts": ([2, 2, 0], [0, 1], False),
        "covered=true contradicts": ([0, 1, 2], [], True),
        "one candidate scoring 2": ([0, 2, 1], [1], True),
    }
    for message, (scores, subset, covered) in cases.items():
        with pytest.raises(ValidationError, match=message):
            overlap(scores, subset, covered)
    with pytest.raises(ValidationError, match="expected 3"):
        overlap([1], [], False, n=3)


def test_influence_labels_mark_the_influential_two():
    assert {lab.value for lab in r.InfluenceLabel if lab.influential} == {"inspiration", "competitor_baseline"}


def test_every_reply_model_has_a_schema_without_bookkeeping():
    for step in STEPS.values():
        schema = r.reply_json_schema(step.reply_model)
        assert "rule_corrections" not in str(schema), step.name


def test_a_first_version_date_comes_with_how_it_is_known():
    from datetime import date

    from rqbench.records import EvaluationInstance

    base = dict(
        rq_id="2501.00001_rq0", gt_rq="Why?", arxiv_id="2501.00001", subfield="cs.CL", background_paper_ids=["p"]
    )
    assert EvaluationInstance(**base).paper_published is None  # unknown is allowed, and is the default
    dated = EvaluationInstance(**base, paper_published="2025-01-10", paper_published_source="arxiv_api")
    assert dated.paper_published == date(2025, 1, 10)
    for half in ({"paper_published": "2025-01-10"}, {"paper_published_source": "metadata_file"}):
        with pytest.raises(ValidationError, match="set together or not at all"):
            EvaluationInstance(**base, **half)
