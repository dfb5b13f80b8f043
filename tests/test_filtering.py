"""The four keep rules and the funnel report."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rqbench.builder.filtering import (
    FunnelReport,
    apply_filters,
    is_indexed,
    top_cited,
    venue_kind,
    write_funnel_report,
)
from rqbench.builder.s2_api import S2Paper, parse_edge, parse_paper
from rqbench.records import SourcePaper


def paper(i: int, cat: str = "cs.CL") -> SourcePaper:
    return SourcePaper(arxiv_id=f"2501.{i:05d}", title=f"Paper {i}", primary_category=cat, categories=[cat])


def s2(pid: str, cites: int | None, *, venue_type: str | None = "conference", venue: str = "ACL") -> S2Paper:
    obj = {"paperId": pid, "citationCount": cites, "venue": venue, "externalIds": {"ArXiv": pid, "CorpusId": 7}}
    if venue_type:
        obj["publicationVenue"] = {"id": "v", "name": venue, "type": venue_type}
    return S2Paper.model_validate(obj)


@pytest.fixture
def s2_dir(fixtures_dir):
    return fixtures_dir / "s2_api" / "danielnsilva_semanticscholar"


def test_venue_kind_on_recorded_papers(s2_dir):
    turing = parse_paper(json.loads((s2_dir / "Paper.json").read_text()), "Paper.json")
    assert venue_kind(turing) == "journal"  # no venue object, but a journal article in Mind
    ref = parse_edge(json.loads((s2_dir / "Reference.json").read_text()), "citedPaper", "ref")
    assert venue_kind(ref.paper) == "conference"  # ICML, typed conference
    cit = parse_edge(json.loads((s2_dir / "Citation.json").read_text()), "citingPaper", "cit")
    assert venue_kind(cit.paper) == "journal"  # venue object without a type; JournalArticle in RA-L
    assert venue_kind(parse_paper(json.loads((s2_dir / "PaperWithNullValues.json").read_text()), "nulls")) is None
    assert venue_kind(None) is None


def test_preprint_listings_are_not_venues():
    arx = S2Paper.model_validate(
        {"paperId": "a", "venue": "arXiv.org", "publicationTypes": ["JournalArticle"], "journal": {"name": "ArXiv"}}
    )
    assert venue_kind(arx) is None
    typed = S2Paper.model_validate({"paperId": "b", "publicationVenue": {"name": "arXiv.org", "type": "journal"}})
    assert venue_kind(typed) is None
    review = S2Paper.model_validate({"paperId": "c", "venue": "", "publicationTypes": ["Review"]})
    assert venue_kind(review) is None
    assert (
        venue_kind(S2Paper.model_validate({"paperId": "d", "venue": "CoRR", "publicationTypes": ["Conference"]}))
        is None
    )


def test_is_indexed():
    assert is_indexed(s2("x", 1))
    assert not is_indexed(None)
    assert not is_indexed(S2Paper.model_validate({"paperId": None, "title": "unresolved"}))


def test_top_cited_per_category_with_ties_and_minimum():
    cl = [paper(i) for i in range(25)]
    lg = [paper(100 + i, "cs.LG") for i in range(3)]
    cites = {p.arxiv_id: 5 for p in cl} | {cl[20].arxiv_id: 50} | {p.arxiv_id: i for i, p in enumerate(lg)}
    keep = top_cited(cl + lg, cites, 0.10)
    # cs.CL: floor(2.5) = 2 -> the 50-cite paper, then the tie of 5s broken by the smallest id
    assert keep & {p.arxiv_id for p in cl} == {cl[20].arxiv_id, cl[0].arxiv_id}
    # cs.LG: floor(0.3) = 0 -> at least one, the most cited
    assert keep & {p.arxiv_id for p in lg} == {lg[2].arxiv_id}
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        top_cited(cl, cites, 0.0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["cs.CL", "cs.LG", "cs.CV"]), st.integers(0, 40)), min_size=1, max_size=60),
    st.sampled_from([0.1, 0.25, 0.5, 1.0]),
)
def test_top_cited_properties(rows, fraction):
    papers = [paper(i, cat) for i, (cat, _) in enumerate(rows)]
    cites = {p.arxiv_id: c for p, (_, c) in zip(papers, rows)}
    keep = top_cited(papers, cites, fraction)
    for cat in {p.primary_category for p in papers}:
        group = [p for p in papers if p.primary_category == cat]
        kept = [p for p in group if p.arxiv_id in keep]
        assert len(kept) == max(1, math.floor(fraction * len(group) + 1e-9))
        dropped = [p for p in group if p.arxiv_id not in keep]
        if kept and dropped:
            assert min(cites[p.arxiv_id] for p in kept) >= max(cites[p.arxiv_id] for p in dropped)


def _world():
    """20 cs.CL and 10 cs.LG papers with a mix of every reason to drop."""
    papers = [paper(i) for i in range(20)] + [paper(100 + i, "cs.LG") for i in range(10)]
    has_latex = {p.arxiv_id: True for p in papers}
    has_latex[papers[0].arxiv_id] = False  # the most cited cs.CL paper has no LaTeX
    has_latex[papers[20].arxiv_id] = False
    data: dict[str, S2Paper | None] = {}
    for i, p in enumerate(papers):
        data[p.arxiv_id] = s2(p.arxiv_id, 1000 - i)
    data[papers[1].arxiv_id] = None  # not indexed
    data[papers[2].arxiv_id] = s2(papers[2].arxiv_id, 999, venue_type=None, venue="arXiv.org")  # preprint only
    return papers, has_latex, data


def test_apply_filters_funnel_counts_each_rule_per_subfield(tmp_path):
    papers, has_latex, data = _world()
    kept, report = apply_filters(papers, data, has_latex=has_latex, top_fraction=0.2)
    assert [r.rule for r in report.rules] == ["latex", "s2_indexed", "top_cited", "venue"]
    assert report.rule("latex").removed == {"cs.CL": 1, "cs.LG": 1}
    assert report.rule("s2_indexed").removed == {"cs.CL": 1}
    # cs.CL: 18 left -> floor(3.6) = 3 kept (papers 2, 3, 4); cs.LG: 9 left -> 1 kept (paper 101)
    assert report.rule("top_cited").removed == {"cs.CL": 15, "cs.LG": 8}
    assert report.rule("venue").removed_ids == [papers[2].arxiv_id]
    assert [p.arxiv_id for p in kept] == [papers[3].arxiv_id, papers[4].arxiv_id, papers[21].arxiv_id]
    assert report.kept_by_subfield == {"cs.CL": 2, "cs.LG": 1} and report.kept_total == 3
    assert report.input_by_subfield == {"cs.CL": 20, "cs.LG": 10}
    first = kept[0]
    assert first.citation_count == 997 and first.venue == "ACL" and first.publication_venue_type == "conference"
    assert first.s2_paper_id == papers[3].arxiv_id and first.external_ids["CorpusId"] == "7"
    total_removed = sum(r.removed_total for r in report.rules)
    assert total_removed + report.kept_total == report.input_total

    js, md = write_funnel_report(report, tmp_path)
    again = FunnelReport.model_validate(json.loads(js.read_text()))
    assert again == report
    text = md.read_text()
    assert "| cs.CL | 20 | -1 | -1 | -15 | -1 | 2 |" in text
    assert "| **all** | 30 | -2 | -1 | -23 | -1 | 3 |" in text


def test_offline_skips_the_semantic_scholar_rules(tmp_path):
    papers, has_latex, _ = _world()
    kept, report = apply_filters(papers, {}, has_latex=has_latex, offline=True)
    assert len(kept) == 28 and report.offline
    for name in ("s2_indexed", "top_cited", "venue"):
        r = report.rule(name)
        assert not r.applied and r.note == "not applied (offline)" and r.remaining == 28
    _, md = write_funnel_report(report, tmp_path, stem="offline")
    assert "not applied (offline)" in md.read_text() and "n/a" in md.read_text()


def test_missing_citation_counts_rank_as_zero_and_are_noted():
    papers = [paper(i) for i in range(3)]
    data = {p.arxiv_id: s2(p.arxiv_id, None if i == 0 else i) for i, p in enumerate(papers)}
    kept, report = apply_filters(papers, data, has_latex={p.arxiv_id: True for p in papers}, top_fraction=0.5)
    assert [p.arxiv_id for p in kept] == [papers[2].arxiv_id]
    assert "1 paper(s) without a citation count" in report.rule("top_cited").note


def test_bad_inputs_are_named():
    papers, has_latex, data = _world()
    with pytest.raises(ValueError, match=r"has_latex has no entry for 1 paper\(s\): 2501.00005"):
        apply_filters(papers, data, has_latex={k: v for k, v in has_latex.items() if k != "2501.00005"})
    with pytest.raises(ValueError, match=r"Semantic Scholar data has no entry for 1 paper\(s\): 2501.00007"):
        apply_filters(papers, {k: v for k, v in data.items() if k != "2501.00007"}, has_latex=has_latex)
    with pytest.raises(ValueError, match="repeat arXiv ids: 2501.00000"):
        apply_filters(papers + [papers[0]], data, has_latex=has_latex)
    with pytest.raises(ValueError, match="top_fraction"):
        apply_filters(papers, data, has_latex=has_latex, top_fraction=1.5)
