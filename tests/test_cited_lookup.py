"""Finding a cited work's arXiv id, and its folder in a local cited-sources tree."""

from __future__ import annotations

import json
import shutil

import bibtexparser
import pytest

from rqbench.builder.cited_lookup import (
    TitleIndex,
    best_title_match,
    find_local_source,
    normalise_title,
    resolve_arxiv_id,
)
from rqbench.builder.s2_api import parse_edge
from rqbench.records import BibEntry


def bib(key="k", **kw) -> BibEntry:
    return BibEntry(key=key, **kw)


def entries_of(path) -> dict[str, BibEntry]:
    """The fixture .bib read with bibtexparser, mapped to BibEntry the plain way (fields as written)."""
    lib = bibtexparser.parse_string(path.read_text(encoding="utf-8"))
    out = {}
    for e in lib.entries:
        f = {k.lower(): v.value for k, v in e.fields_dict.items()}
        out[e.key] = BibEntry(
            key=e.key,
            title=f.get("title"),
            venue=f.get("journal") or f.get("booktitle"),
            arxiv_id=f.get("eprint"),
            doi=f.get("doi"),
            url=f.get("url"),
        )
    return out


def test_real_bib_entries_resolve_by_eprint_url_and_venue(fixtures_dir):
    sink = entries_of(fixtures_dir / "latex" / "attention-sink-gpt2" / "custom.bib")
    with_eprint = [b for b in sink.values() if b.arxiv_id]
    assert len(with_eprint) >= 5
    for b in with_eprint:
        got, how = resolve_arxiv_id(b)
        assert how == "bib_eprint" and got == b.arxiv_id.strip()
    stylo = entries_of(fixtures_dir / "latex" / "llm-stylometry" / "custom.bib")
    by_url = [b for b in stylo.values() if b.url and "arxiv.org/abs/" in b.url and not b.arxiv_id]
    assert by_url
    for b in by_url:
        got, how = resolve_arxiv_id(b)
        assert how == "bib_url" and b.url.rstrip("/ ").endswith(got)
    venue_only = [b for b in stylo.values() if b.venue and "arXiv:2408.05192" in b.venue]
    assert venue_only and resolve_arxiv_id(venue_only[0]) == ("2408.05192", "bib_venue")


def test_the_order_of_evidence():
    assert resolve_arxiv_id(bib(arxiv_id="arXiv:2301.00001v3", url="https://arxiv.org/abs/1111.1111")) == (
        "2301.00001",
        "bib_eprint",
    )
    # an eprint field that is no arXiv id falls through to the URL
    assert resolve_arxiv_id(bib(arxiv_id="N/A", url="https://arxiv.org/pdf/1706.03762v5.pdf")) == (
        "1706.03762",
        "bib_url",
    )
    assert resolve_arxiv_id(bib(doi="10.48550/arXiv.2205.01068")) == ("2205.01068", "bib_doi")
    assert resolve_arxiv_id(bib(doi="10.18653/v1/N19-1423", url="https://aclanthology.org/N19-1423")) == (None, None)
    assert resolve_arxiv_id(bib(title="x"), {"DBLP": "y", "ArXiv": "1810.04805"}) == ("1810.04805", "s2_external_ids")


def test_s2_external_ids_from_a_recorded_reference(fixtures_dir):
    ref = json.loads((fixtures_dir / "s2_api" / "danielnsilva_semanticscholar" / "Reference.json").read_text())
    edge = parse_edge(ref, "citedPaper", "Reference.json")
    b = bib(title=edge.paper.title, venue="ICML")
    assert resolve_arxiv_id(b, edge.paper.external_ids) == ("1402.0030", "s2_external_ids")


CANDIDATES = {
    "Attention Is All You Need": "1706.03762v7",
    "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding": "1810.04805",
    "Language Models are Few-Shot Learners": "2005.14165",
    "Direct Preference Optimization: Your Language Model is Secretly a Reward Model": "2305.18290",
}


def test_title_matching_exact_similar_and_below_threshold():
    assert resolve_arxiv_id(bib(title="{A}ttention is {A}ll you Need"), None, CANDIDATES) == (
        "1706.03762",
        "title_exact",
    )
    typo = "BERT: Pre-training of Deep Bidirectional Transformer for Language Understandings"
    assert resolve_arxiv_id(bib(title=typo), None, CANDIDATES) == ("1810.04805", "title_similar")
    assert resolve_arxiv_id(bib(title="BERT"), None, CANDIDATES) == (None, None)
    assert resolve_arxiv_id(bib(title="Language Models are Zero-Shot Reasoners"), None, CANDIDATES) == (None, None)
    got = best_title_match(typo, CANDIDATES)
    assert got[0] == "1810.04805" and 0.92 <= got[1] < 1.0
    assert best_title_match(typo, CANDIDATES, threshold=0.999) is None


def test_short_titles_are_never_matched_loosely():
    idx = TitleIndex({"Deep Sets": "1703.06114", "Deep Nets": "1111.11111"})
    assert idx.match("Deep Sets") == ("1703.06114", 1.0, "title_exact")
    assert idx.match("Deep Setz") is None


def test_ambiguous_titles_give_no_match():
    two = {
        "Scaling Laws for Neural Language Models": "2001.08361",
        "Scaling laws for neural language models.": "2203.15556",
    }
    assert resolve_arxiv_id(bib(title="Scaling Laws for Neural Language Models"), None, two) == (None, None)
    near = {
        "Improving Language Understanding by Generative Pre-Training A": "1000.00001",
        "Improving Language Understanding by Generative Pre-Training B": "1000.00002",
    }
    assert best_title_match("Improving Language Understanding by Generative Pre-Training", near) is None


def test_normalise_title():
    assert normalise_title(r"{$\beta$}-{DPO}: \emph{Direct} Préférence") == "beta dpo direct preference"
    assert normalise_title(None) == "" and normalise_title("  ") == ""


@pytest.fixture
def cited_root(tmp_path, fixtures_dir):
    """A cited-sources tree made of real LaTeX sources under arXiv-id folder names."""
    root = tmp_path / "cited"
    latex = fixtures_dir / "latex"
    shutil.copytree(latex / "attention-sink-gpt2", root / "2501.00001v2")
    shutil.copytree(latex / "neurips2024-beta-dpo", root / "2407.08639" / "src")
    meta = {"arxiv_id": "2407.08639", "primary_category": "cs.LG"}
    meta["title"] = "beta-DPO: Direct Preference Optimization with Dynamic beta"
    (root / "2407.08639" / "metadata.json").write_text(json.dumps(meta))
    shutil.copytree(latex / "value-profiles-emnlp", root / "hep-th_9901001")
    shutil.copytree(latex / "llm-stylometry", root / "stylometry-paper")
    return root


def found(match):
    return (match.folder, match.arxiv_id, match.how) if match is not None else None


def test_local_source_by_id_version_and_old_style_names(cited_root):
    got = find_local_source(cited_root, bib(arxiv_id="2501.00001"))
    assert found(got) == (cited_root / "2501.00001v2", "2501.00001", "bib_eprint")
    assert found(find_local_source(cited_root, None, "hep-th/9901001")) == (
        cited_root / "hep-th_9901001",
        "hep-th/9901001",
        "given",
    )
    folder, aid, how = found(find_local_source(cited_root, bib(url="https://arxiv.org/abs/2407.08639")))
    assert folder == cited_root / "2407.08639" / "src" and aid == "2407.08639" and how == "bib_url"


def test_local_source_by_title(cited_root):
    # the title comes from the folder's LaTeX \title
    b = bib(title="No universal mechanism for attention sink in transformers: evidence from {GPT-2}")
    assert found(find_local_source(cited_root, b)) == (cited_root / "2501.00001v2", "2501.00001", "local_title_exact")
    # from metadata.json, with a small difference
    b = bib(title="beta-DPO: Direct Preference Optimisation with Dynamic beta")
    folder, aid, how = found(find_local_source(cited_root, b))
    assert folder == cited_root / "2407.08639" / "src" and aid == "2407.08639" and how == "local_title_similar"
    # a folder not named by an arXiv id is found by its exact title, without an id
    b = bib(title="A Stylometric Application of Large Language Models")
    assert found(find_local_source(cited_root, b)) == (cited_root / "stylometry-paper", None, "local_title_exact")
    assert find_local_source(cited_root, bib(title="Something else entirely, not here")) is None
    # a known id that is not in the folder is not overridden by a title pointing elsewhere
    b = bib(arxiv_id="2999.00001", title="Value Profiles for Encoding Human Variation")
    assert find_local_source(cited_root, b) is None
    # the citing paper's own folder is never its background paper
    b = bib(title="A Stylometric Application of Large Language Models")
    assert find_local_source(cited_root, b, exclude=cited_root / "stylometry-paper") is None


def test_local_source_errors_are_named(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        find_local_source(tmp_path / "nope", bib(title="x"))
    root = tmp_path / "dup"
    (root / "2501.00001").mkdir(parents=True)
    (root / "2501.00001v2").mkdir()
    with pytest.raises(ValueError, match="both arXiv 2501.00001"):
        find_local_source(root, bib(title="x"))
