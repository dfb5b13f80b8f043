"""The one rule that picks the model RQ shown beside the GT, and the hash that pins its text."""

from __future__ import annotations

from results_factory import cand, instance, results

from rqbench.evaluate.metrics.shown_pair import shown_candidate, shown_rqs, text_hash

RQ = "2501.00001_rq0"


def _inst(*novelty):
    """Model RQs m0.. with (originality, gap addressing, non-obviousness); None is unscored."""
    return instance(RQ, cand("gt"), [cand(f"m{i}", n) for i, n in enumerate(novelty)])


def test_order_is_non_obviousness_then_originality_then_gap_addressing():
    # the highest total (m0) loses to the highest non-obviousness (m1)
    assert shown_candidate([_inst((3, 3, 1), (0, 0, 2), (1, 1, 1))]) == "m1"
    # equal non-obviousness: originality decides, even against a better gap score
    assert shown_candidate([_inst((1, 3, 2), (2, 0, 2))]) == "m1"
    # equal on both: gap addressing decides
    assert shown_candidate([_inst((2, 1, 2), (2, 3, 2))]) == "m1"
    # equal on all three: the lowest index
    assert shown_candidate([_inst((0, 0, 0), (2, 2, 2), (2, 2, 2))]) == "m1"
    # unscored RQs are never shown; nothing scored, nothing shown
    assert shown_candidate([_inst(None, (0, 0, 0))]) == "m1"
    assert shown_candidate([_inst(None, None)]) is None


def test_several_judges_are_averaged_dimension_by_dimension():
    a = _inst((0, 0, 3), (3, 3, 2))
    b = _inst((0, 0, 1), (3, 3, 3))
    # judge a alone shows m0; the mean non-obviousness is 2 for m0 and 2.5 for m1
    assert shown_candidate([a]) == "m0"
    assert shown_candidate([a, b]) == "m1"


def test_comparative_results_decide_and_standalone_stand_in():
    standalone = results([_inst((0, 0, 3), (0, 0, 1))], setting="standalone")
    comparative = results([_inst((0, 0, 1), (0, 0, 3))], setting="comparative", label="gem-c")
    both = shown_rqs([standalone, comparative])
    (key,) = both
    assert key == (standalone.submission_hash, RQ) and both[key].candidate_id == "m1"
    only_standalone = shown_rqs([standalone])[key]
    assert only_standalone.candidate_id == "m0"
    assert only_standalone.text == standalone.instances[0].candidates[1].text
    assert only_standalone.text_hash == text_hash(only_standalone.text)


def test_text_hash_ignores_spacing_only():
    assert text_hash("What makes  sinks\nform?") == text_hash(" What makes sinks form? ")
    assert text_hash("What makes sinks form?") != text_hash("What makes sinks vanish?")
    assert text_hash("x").startswith("b2:") and len(text_hash("x")) == 19
