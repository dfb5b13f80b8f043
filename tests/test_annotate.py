"""Annotation: pairs from results, assignment rules, side shuffling, and the store round trip."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest

from rqbench.space import annotate as an
from rqbench.space.stores import SpaceStores
from rqbench.testing.synthetic import make_results

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def pairs():
    res = [
        make_results("model-a", judge="judge-a", setting="comparative", n_instances=8),
        make_results("model-a", judge="judge-a", setting="standalone", n_instances=8),
        make_results("model-b", judge="judge-a", setting="standalone", n_instances=8, seed=3),
    ]
    return an.build_pairs(res)


def _judge_all(annotator: str, pairs, fields, judgments, skips=()):
    """Let one annotator judge until nothing is left; returns the pair ids in the order shown."""
    order = []
    while p := an.next_pair(pairs, annotator=annotator, fields=fields, judgments=judgments, skips=skips):
        order.append(p.pair_id)
        judgments.append(an.make_judgment(annotator, p, "tie", shown_at=T0, now=T0 + timedelta(seconds=3)))
    return order


def test_pairs_show_the_rq_the_shown_pair_rule_picks(pairs):
    from rqbench.evaluate.metrics.shown_pair import shown_candidate, text_hash

    res = make_results("model-a", judge="judge-a", setting="comparative", n_instances=8)
    assert len(pairs) == 16  # one pair per (submission, instance); a submission's two settings make one
    for inst in res.instances:
        p = next(p for p in pairs if p.rq_id == inst.rq_id and p.model == "model-a")
        cid = shown_candidate([inst])  # the comparative results, not the standalone ones
        shown = next(c for c in inst.candidates if c.candidate_id == cid)
        assert (p.model_candidate, p.model_text, p.model_text_hash) == (cid, shown.text, text_hash(shown.text))
        assert p.gt_text == inst.candidates[0].text
        j = an.make_judgment("ann-1", p, "left", shown_at=T0)
        assert (j.model_candidate, j.model_text_hash) == (cid, text_hash(shown.text))


def test_a_judged_pair_keeps_its_rq_when_another_judge_arrives():
    from rqbench.evaluate.metrics.shown_pair import shown_rqs

    first = [make_results("model-a", judge="judge-a", setting="comparative", n_instances=8)]
    pairs = an.build_pairs(first)
    judgments = [an.make_judgment("h1", p, "tie", shown_at=T0) for p in pairs]
    # a second judge that scores the RQs differently moves the rule's pick on some instances
    both = first + [make_results("model-a", judge="judge-b", setting="comparative", n_instances=8)]
    moved = {
        rq
        for (_, rq), s in shown_rqs(both).items()
        if s.candidate_id != next(p.model_candidate for p in pairs if p.rq_id == rq)
    }
    assert moved  # the data exercises the pinning
    again = {p.rq_id: p.model_candidate for p in an.build_pairs(both, judgments)}
    assert again == {p.rq_id: p.model_candidate for p in pairs}
    fresh = {p.rq_id: p.model_candidate for p in an.build_pairs(both)}
    assert {rq for rq in fresh if fresh[rq] != again[rq]} == moved
    # a judgment whose shown text the results no longer hold is an error naming it
    bad = judgments[0].model_copy(update={"model_text_hash": "b2:0000000000000000"})
    with pytest.raises(ValueError, match=f"judgment {bad.judgment_id} of {bad.rq_id}: the results no longer hold"):
        an.build_pairs(both, [bad])


def test_no_repeats_and_field_filter(pairs):
    judgments: list = []
    order = _judge_all("ann-1", pairs, ["cs.CL"], judgments)
    assert len(order) == len(set(order))  # never the same pair twice
    assert set(order) == {p.pair_id for p in pairs if p.subfield == "cs.CL"}
    assert an.next_pair(pairs, annotator="ann-1", fields=["cs.CL"], judgments=judgments) is None
    assert an.next_pair(pairs, annotator="ann-1", fields=["cs.CL", "cs.LG"], judgments=judgments).subfield == "cs.LG"


def test_balance_each_pair_gets_two_annotators_before_a_third(pairs):
    judgments: list = []
    fields = an.subfields(pairs)
    n = len(pairs)
    # four annotators take turns; after 2n judgments every pair has exactly two
    active = ["a", "b", "c", "d"]
    for step in range(2 * n):
        who = active[step % 4]
        p = an.next_pair(pairs, annotator=who, fields=fields, judgments=judgments)
        assert p is not None
        judgments.append(an.make_judgment(who, p, "left", shown_at=T0))
    counts = an.judged_counts(judgments)
    assert set(counts.values()) == {2} and len(counts) == n


def test_skip_is_never_shown_again_and_counts_no_judgment(pairs):
    first = an.next_pair(pairs, annotator="x", fields=["cs.CL"], judgments=[])
    skips = [an.make_skip("x", first, T0)]
    again = an.next_pair(pairs, annotator="x", fields=["cs.CL"], judgments=[], skips=skips)
    assert again is not None and again.pair_id != first.pair_id
    assert an.judged_counts([])[first.pair_id] == 0


def test_sides_are_shuffled_stable_and_mapped_back(pairs):
    sides = Counter(an.left_side("ann-1", p) for p in pairs)
    assert sides["gt"] > 0 and sides["model"] > 0  # both orders occur
    p = pairs[0]
    assert {an.left_side("ann-1", p) for _ in range(5)} == {an.left_side("ann-1", p)}
    left_text, _ = an.shown_texts("ann-1", p)
    j = an.make_judgment("ann-1", p, "left", shown_at=T0, now=T0 + timedelta(seconds=12))
    expected = "gt" if left_text == p.gt_text else "model"
    assert j.winner == expected and j.left == expected and j.seconds == 12.0
    assert an.make_judgment("ann-1", p, "tie", shown_at=T0).winner == "tie"
    with pytest.raises(ValueError, match="left, right or tie"):
        an.make_judgment("ann-1", p, "both", shown_at=T0)


def test_annotator_id_is_hashed_and_stable():
    a = an.annotator_id("Alice")
    assert a == an.annotator_id(" alice ") and a.startswith("ann-") and "alice" not in a
    assert a != an.annotator_id("alice", salt="other-space")


def test_store_round_trip_export_and_delete(tmp_path, pairs):
    stores = SpaceStores.local(tmp_path)
    me, other = an.annotator_id("me"), an.annotator_id("other")
    for who in (me, other):
        p = an.next_pair(pairs, annotator=who, fields=["cs.CL"], judgments=stores.annotations.judgments())
        stores.annotations.append(
            an.make_judgment(
                who, p, "right", shown_at=T0, comment="  broader  ", source_bound_left=2, source_bound_right=1
            )
        )
    mine = stores.annotations.judgments(me)
    assert len(mine) == 1 and mine[0].comment == "broader" and mine[0].dataset_revision == "v0.1.0"
    assert mine[0].source_bound_left == 2
    exported = stores.annotations.export(me).decode()
    assert exported.count("\n") == 1 and me in exported and other not in exported
    assert stores.annotations.delete_annotator(me) == 1
    assert [j.annotator for j in stores.annotations.judgments()] == [other]


def test_agreement_cells_match_the_judges_picks():
    from rqbench.evaluate.judge_board.agreement import llm_picks
    from rqbench.space import leaderboard as lb

    res = [make_results("model-a", judge=j, setting="comparative", n_instances=6) for j in ("judge-a", "judge-b")]
    pairs = an.build_pairs(res)
    judgments = []
    for k, p in enumerate(pairs[:4]):
        for who in ("h1", "h2"):
            choice = ("left", "right", "tie")[(k + len(who)) % 3]
            judgments.append(an.make_judgment(who, p, choice, shown_at=T0))
    # a judgment stored before the shown RQ was recorded is judged on the rule's pair
    judgments[0] = judgments[0].model_copy(update={"model_candidate": None, "model_text_hash": None})
    cells = an.agreement_cells(judgments, res, n_boot=50)
    judge_picks = llm_picks(res, an.human_picks(judgments[1:], res[0].submission_hash))
    shown = {p.rq_id: p.model_candidate for p in pairs}
    assert judge_picks and all(a.candidate_id == shown[a.rq_id] for a in judge_picks)  # the pairs the humans saw
    picks = {(a.evaluator, a.rq_id): a.winner for a in judge_picks}
    for judge in ("judge-a", "judge-b"):
        matches = [j.winner == picks[(judge, j.rq_id)] for j in judgments if (judge, j.rq_id) in picks]
        cell = cells[("model-a", "comparative", judge)]
        assert cell.n == len(matches) and cell.value == pytest.approx(sum(matches) / len(matches))
        assert cell.ci_low <= cell.value <= cell.ci_high
    combined = cells[("model-a", "comparative", "combined")]
    assert combined.n == cells[("model-a", "comparative", "judge-a")].n + cells[("model-a", "comparative", "judge-b")].n
    # the same cells feed the leaderboard's human-agreement column
    from rqbench.evaluate.metrics.summary import summarize

    table = lb.build_table(summarize(res, n_boot=50), cells)
    row = table[(table["Judge"] == "combined") & (table["Setting"] == "comparative")]
    assert row["Human agreement % (non-obviousness)"].item() == round(100 * combined.value, 1)
    assert an.agreement_cells([], res) == {}
