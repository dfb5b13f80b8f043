"""bibliography: .bib via bibtexparser, biber and BibTeX .bbl files, arXiv ids and DOIs."""

from __future__ import annotations

import pytest

from rqbench.builder.bibliography import (
    BibliographyError,
    clean_arxiv_id,
    find_arxiv_id,
    parse_bbl_text,
    parse_bib_text,
    read_bbl,
    read_bib,
    split_authors,
)


def test_acl_custom_bib(fixtures_dir):
    entries, warnings = read_bib(fixtures_dir / "latex" / "acl-template" / "custom.bib")
    assert warnings == []
    by = {e.key: e for e in entries}
    assert len(by) == 7
    assert by["rasooli-tetrault-2015"].arxiv_id == "1503.06733"
    assert by["rasooli-tetrault-2015"].title == "Yara Parser: A Fast and Accurate Dependency Parser"
    assert by["Chandra:81"].doi == "10.1145/322234.322243"
    assert by["Chandra:81"].venue == "Journal of the Association for Computing Machinery"
    assert by["Ando2005"].authors == ["Rie Kubota Ando", "Tong Zhang"]
    assert by["APA:83"].authors == ["American Psychological Association"]
    assert by["andrew2007scalable"].title == "Scalable training of L1-regularized log-linear models"
    assert all(e.origin == "bib" for e in entries)


@pytest.mark.parametrize(
    "fields, expected",
    [
        ("eprint = {2301.00001}, archivePrefix = {arXiv}", "2301.00001"),
        ("eprint = {2301.00001v3}, eprinttype = {arxiv}", "2301.00001"),
        ("journal = {arXiv preprint arXiv:2106.09685}", "2106.09685"),
        ("journal = {CoRR}, volume = {abs/1810.04805}", "1810.04805"),
        ("url = {https://arxiv.org/pdf/1706.03762v7.pdf}", "1706.03762"),
        ("doi = {10.48550/arXiv.2303.08774}", "2303.08774"),
        ("eprint = {hep-th/9901001}, archiveprefix = {arXiv}", "hep-th/9901001"),
        ("journal = {Nature}, volume = {521}", None),
    ],
)
def test_arxiv_id_sources(fields, expected):
    entries, _ = parse_bib_text("@article{k, title={T}, year={2020}, %s}" % fields)
    assert entries[0].arxiv_id == expected


def test_doi_forms_and_crossref():
    text = """
    @inproceedings{child, title={Child}, author={Doe, Jane}, crossref={parent}, url={https://doi.org/10.1000/xyz123}}
    @proceedings{parent, title={Proceedings of Things}, year={2019}}
    @article{d2, title={D}, doi={https://doi.org/10.1145/1234.5678}}
    """
    by = {e.key: e for e in parse_bib_text(text)[0]}
    assert by["child"].doi == "10.1000/xyz123"
    assert by["child"].year == 2019 and by["child"].venue == "Proceedings of Things"
    assert by["child"].authors == ["Jane Doe"]
    assert by["d2"].doi == "10.1145/1234.5678"


def test_duplicate_keys_and_bad_blocks_are_warnings():
    entries, warnings = parse_bib_text("@article{a, title={One}}\n@article{a, title={Two}}\n@article{broken, title={x}")
    assert [e.title for e in entries if e.key == "a"] == ["One"]
    assert any(w.startswith("duplicate_bib_key: a") for w in warnings)


def test_author_names():
    assert split_authors("von Neumann, John and Smith, Jr, Bob and {The Team} and others") == [
        "John von Neumann",
        "Bob Smith Jr",
        "The Team",
    ]
    assert split_authors('G{\\"o}del, Kurt') == ["Kurt Gödel"]


def test_biber_bbl(fixtures_dir):
    entries = read_bbl(fixtures_dir / "latex" / "neurips2026-llm-judge-biblatex" / "main.bbl")
    by = {e.key: e for e in entries}
    assert len(entries) == 41
    sun = by["sunChatGPTGoodSearch2023"]
    assert sun.title == "Is ChatGPT Good at Search? Investigating Large Language Models as Re-Ranking Agents"
    assert sun.authors[:2] == ["Weiwei Sun", "Lingyong Yan"] and len(sun.authors) == 8
    assert sun.year == 2023 and sun.doi == "10.18653/v1/2023.emnlp-main.923"
    assert by["zhengJudgingLLMasaJudgeMTBench2023"].arxiv_id == "2306.05685"
    assert all(e.origin == "bbl" for e in entries)


def test_bibtex_bbl_abbrv(fixtures_dir):
    entries = read_bbl(fixtures_dir / "latex" / "hypertools-arxiv-bblonly" / "arXiv" / "main.bbl")
    by = {e.key: e for e in entries}
    assert len(entries) == 23
    assert by["Ansc73"].title == "Graphs in statistical analysis"
    assert by["Ansc73"].authors == ["F. J. Anscombe"] and by["Ansc73"].year == 1973
    assert by["BleiEtal03"].venue == "Journal of Machine Learning Research"
    assert by["ChenEtal15"].venue == "Advances in Neural Information Processing Systems 28"


def test_bibtex_bbl_ieeetr_and_apacite(fixtures_dir):
    themis = fixtures_dir / "latex" / "themis-ml-fairness-mit"
    by = {e.key: e for e in read_bbl(themis / "main.bbl")}
    assert by["yoshimura2006decision"].title.startswith("Decision-making support system")
    assert by["yoshimura2006decision"].authors[0] == "M. Yoshimura" and by["yoshimura2006decision"].year == 2006
    assert by["o2017weapons"].title.startswith("Weapons of math destruction")
    assert by["kusner2017counterfactual"].arxiv_id == "1703.06856"
    apa = {e.key: e for e in read_bbl(themis / "journal_tech_human_services" / "main.bbl")}
    assert len(apa) == 21
    assert apa["barnett1987dxplain"].title == "DXplain: an evolving diagnostic decision-support system"
    assert apa["barnett1987dxplain"].authors == ["G. O. Barnett", "J. J. Cimino", "J. A. Hupp", "E. P. Hoffer"]
    assert apa["barnett1987dxplain"].year == 1987 and apa["barnett1987dxplain"].venue == "Jama"


def test_natbib_bibitem_label_year():
    text = (
        "\\begin{thebibliography}{1}\n\\bibitem[{Devlin et~al.(2019)Devlin, Chang}]{devlin}\n"
        "Jacob Devlin and Ming-Wei Chang. 2019.\n\\newblock {BERT}: Pre-training.\n\\newblock In \\emph{Proc. NAACL}.\n"
        "\\end{thebibliography}"
    )
    (e,) = parse_bbl_text(text)
    assert (e.key, e.year, e.title, e.venue) == ("devlin", 2019, "BERT: Pre-training", "Proc. NAACL")
    assert e.authors == ["Jacob Devlin", "Ming-Wei Chang"]


def test_binary_bib_is_a_named_error(tmp_path):
    p = tmp_path / "refs.bib"
    p.write_bytes(b"\x00\x01\x02\x03" * 100)
    with pytest.raises(BibliographyError, match="refs.bib"):
        read_bib(p)


def test_empty_bib_has_no_entries():
    assert parse_bib_text("") == ([], [])
    assert parse_bbl_text("\\begin{thebibliography}{0}\\end{thebibliography}") == []


def test_id_cleaners():
    assert clean_arxiv_id("arXiv:2401.12345v2") == "2401.12345"
    assert clean_arxiv_id("not an id") is None
    assert find_arxiv_id("see https://arxiv.org/abs/cs/0112017") == "cs/0112017"
