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
        rq_id="2502.01113_rq0", rq="Does sparse routing hold on long inputs?", arxiv_id="2502.01113", subfield="cs.CL",
        novelty_type="new_method", problem_statement="p", main_idea_headline="h", contributions=["c"],
        gaps=[{"text": "g", "cited_key": "k"}], cited_paper_ids=["1706.03762"],
    )  # fmt: skip
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
        r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE[:4] + ["DOES  sparse routing variant A hold on long inputs ?"])
    with pytest.raises(ValidationError, match="empty|at least 1"):
        r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE[:4] + ["   "])
    with pytest.raises(ValidationError):
        r.SubmissionEntry(rq_id="x_rq0", research_questions=FIVE[:4] + ["Why" * 300 + "?"])


def test_generation_reply_shape():
    ok = r.GenerationReply.model_validate({"gaps": ["g"], "research_questions": FIVE})
    assert ok.research_questions[0] == FIVE[0]
    with pytest.raises(ValidationError):
        r.GenerationReply.model_validate({"gaps": [], "research_questions": FIVE})


def test_novelty_relevance_zero_forces_zero_and_is_recorded():
    s = r.NoveltyScore.model_validate({"relevance": 0, "originality": 3, "gap_addressing": 0, "non_obviousness": 2})
    assert (s.originality, s.gap_addressing, s.non_obviousness) == (0, 0, 0)
    assert len(s.rule_corrections) == 2


def test_novelty_ranges_are_clamped_and_recorded_but_types_are_not_guessed():
    s = r.NoveltyScore.model_validate({"relevance": 1, "originality": 7, "gap_addressing": -1, "non_obviousness": 2})
    assert (s.originality, s.gap_addressing) == (3, 0) and len(s.rule_corrections) == 2
    with pytest.raises(ValidationError):
        r.NoveltyScore.model_validate({"relevance": 1, "originality": "high", "gap_addressing": 1, "non_obviousness": 1})
    with pytest.raises(ValidationError):
        r.NoveltyScore.model_validate({"relevance": 1, "originality": 1.5, "gap_addressing": 1, "non_obviousness": 1})


def scores(*triples):
    return [{"relevance": 1, "originality": o, "gap_addressing": g, "non_obviousness": n} for o, g, n in triples]


def test_comparative_ranking_must_be_a_permutation():
    ok = r.ComparativeNoveltyReply.model_validate(
        {"scores": scores((1, 1, 1), (3, 3, 3)), "ranking": [1, 0]}, context={"n_candidates": 2}
    )
    assert ok.ranking == [1, 0] and not ok.rule_corrections
    fixed = r.ComparativeNoveltyReply.model_validate({"scores": scores((1, 1, 1), (3, 3, 3)), "ranking": [0, 0]})
    assert fixed.ranking == [1, 0] and fixed.rule_corrections
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
        mentions_source_specific_name=1, main_object_in_source=1, introduces_new_mechanism=0,
        source_bound_score=2, diagnostic_test_score=0, source_bound_scope="source_bound",
        diagnostic_scope="not_diagnostic", short_reason_source_bound="a", short_reason_diagnostic="b",
    )  # fmt: skip
    base.update(kw)
    return r.NarrownessScore.model_validate(base)


def test_narrowness_scope_follows_the_score():
    assert not narrow().rule_corrections
    fixed = narrow(source_bound_score=3)
    assert fixed.source_bound_scope == "strongly_source_bound" and fixed.rule_corrections
    assert narrow(main_object_in_source=True).main_object_in_source == 1
    with pytest.raises(ValidationError):
        narrow(source_bound_scope="very_bound", source_bound_score="x")


def test_overlap_subset_rules():
    ctx = {"n_candidates": 3}
    none = r.OverlapReply.model_validate({"pairwise_scores": [1, 2, 0], "covering_subset_indices": [], "covered": False}, context=ctx)
    assert not none.rule_corrections and not none.covered
    strong = r.OverlapReply.model_validate({"pairwise_scores": [4, 3, 0], "covering_subset_indices": [0, 1], "covered": True}, context=ctx)
    assert strong.covering_subset_indices == [0]
    combo = r.OverlapReply.model_validate({"pairwise_scores": [2, 2, 0], "covering_subset_indices": [1, 0], "covered": True}, context=ctx)
    assert combo.covering_subset_indices == [0, 1] and not combo.rule_corrections
    clamp = r.OverlapReply.model_validate({"pairwise_scores": [9, 0, 0], "covering_subset_indices": [7], "covered": False}, context=ctx)
    assert clamp.pairwise_scores[0] == 4 and clamp.covering_subset_indices == [0] and clamp.covered
    with pytest.raises(ValidationError, match="expected 3"):
        r.OverlapReply.model_validate({"pairwise_scores": [1], "covering_subset_indices": [], "covered": False}, context=ctx)


def test_influence_labels_mark_the_influential_two():
    assert {lab.value for lab in r.InfluenceLabel if lab.influential} == {"inspiration", "competitor_baseline"}


def test_every_reply_model_has_a_schema_without_bookkeeping():
    for step in STEPS.values():
        schema = r.reply_json_schema(step.reply_model)
        assert "rule_corrections" not in str(schema), step.name
