"""Table-1 statistics, worked out by hand on the fake build (see tests/fake_build.py)."""

from __future__ import annotations

from fake_build import make_manifest, make_records

from rqbench.dataset_card.stats import by_subfield, compute_stats, distinct_gaps, size_category, spread
from rqbench.wellformed import words


def _stats(**kw):
    r = make_records(**kw)
    return compute_stats(
        r["rqs"], r["papers"], r["cited_papers"], r["instances"], make_manifest(r), ["2501.00000_rq0"], {"seed": 42}
    )


def test_table_one_counts():
    s = _stats()
    # 3 papers x 2 RQs; RQ j cites one paper (j even) or two (j odd): 3*(1+2) links over 6 cited papers.
    assert (s.rqs, s.papers, s.subfields, s.instances) == (6, 3, 2, 6)
    assert (s.rq_citation_links, s.unique_cited_papers) == (9, 6)
    # each paper: one shared gap + one per RQ -> 3 distinct per paper; 2 entries per RQ.
    assert (s.gap_statements, s.gap_mentions) == (9, 12)
    assert s.rqs_dropped == {"no_cited_text": 2, "verification_failed": 1}
    assert s.papers_without_rqs == 0


def test_breakdown_by_subfield_largest_first():
    s = _stats(n_papers=4)
    assert [(r.subfield, r.papers, r.rqs, r.rq_citation_links, r.unique_cited_papers) for r in s.by_subfield] == [
        ("cs.CL", 2, 4, 6, 4),
        ("cs.CV", 1, 2, 3, 2),
        ("cs.LG", 1, 2, 3, 2),
    ]


def test_text_levels_verification_and_lengths():
    s = _stats()
    assert s.text_levels == {"full": 2, "abstract": 2, "title": 2}
    v = s.verification
    # RQ 2501.00000_rq0 is unverified; 2501.00001_rq0 is rejected.
    assert (v.verified, v.approved, v.unverified, v.approval_rate) == (5, 4, 1, 0.8)
    assert v.by_confidence == {"high": 2, "medium": 3}
    assert v.models == ["local/smollm2-135m"]
    assert v.manual_sample_ids == ["2501.00000_rq0"] and v.manual_sample_protocol == {"seed": "42"}
    assert s.lengths["background_papers_per_rq"].mean == 1.5
    assert s.lengths["cited_full_text_words"].mean == 6.0  # "one two three four" + "five six"
    assert s.novelty_types == {"empirical_finding": 2, "new_method": 4}


def test_statistics_follow_the_data():
    assert _stats(n_papers=5, rqs_per_paper=3).rqs == 15
    assert _stats(n_papers=5, rqs_per_paper=3).rq_citation_links == 5 * (1 + 2 + 1)


def test_distinct_gaps_ignore_case_and_spacing():
    r = make_records(1, 1)["rqs"][0]
    twin = r.model_copy(update={"gaps": [g.model_copy(update={"text": "  " + g.text.upper() + " "}) for g in r.gaps]})
    assert len(distinct_gaps([r, twin])) == 2
    assert by_subfield([]) == []


def test_spread_and_size_categories():
    assert spread([]).mean is None
    assert spread([1, 2, 3, 10]).model_dump() == {"count": 4, "mean": 4.0, "median": 2.5, "min": 1.0, "max": 10.0}
    assert [size_category(n) for n in (0, 999, 1000, 1434, 10_000, 2_000_000)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "1K<n<10K",
        "10K<n<100K",
        "1M<n<10M",
    ]


def test_card_lengths_count_words_by_spaces_the_gate_by_letters():
    """One ``words`` (rqbench.wellformed) where there were two: the card's statistics keep counting runs of
    non-space characters (``split="spaces"``), the gate's bounds runs of letters and digits; this is where they
    differ."""
    text = "Does [MATH] help — a/b tests, (e.g. LLM-based ones)?"
    assert len(words(text, split="spaces")) == 9
    assert words(text) == ["Does", "help", "a", "b", "tests", "e", "g", "LLM-based", "ones"]
    r = make_records()
    r["rqs"] = [q.model_copy(update={"rq": text}) for q in r["rqs"]]
    s = compute_stats(r["rqs"], r["papers"], r["cited_papers"], r["instances"], make_manifest(r))
    assert s.lengths["rq_words"].mean == 9.0
