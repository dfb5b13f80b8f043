"""A LaTeX source's own account of itself: titles with their macros, abstracts as text, authors, references."""

from __future__ import annotations

import pytest

from rqbench.builder.front_matter import author_surnames, cited_entries, read_front_matter


@pytest.fixture(scope="module")
def latex(fixtures_dir):
    return fixtures_dir / "latex"


def test_title_macros_and_discretionary_hyphens_are_expanded(latex):
    jmlr = read_front_matter(latex / "hypertools-jmlr")  # \title{\hypertools: ...}, \hypertools a \newcommand
    assert jmlr.title == "HyperTools: A Python toolbox for gaining geometric insights into high-dimensional data"
    assert jmlr.title_from == "\\title"
    supereeg = read_front_matter(latex / "supereeg-paper", references=False)  # e\-lect\-ro\-cort\-i\-co...
    assert supereeg.title == "A Gaussian process model of human electrocorticographic data"
    beta = read_front_matter(latex / "neurips2024-beta-dpo", references=False)  # $\beta$ in the title is a symbol
    assert beta.title == "β-DPO: Direct Preference Optimization with Dynamic β"


def test_a_title_set_by_hand_is_the_front_matters_first_paragraph(latex):
    arxiv = read_front_matter(latex / "hypertools-arxiv-bblonly")  # no \title: a flushleft block at the top
    assert arxiv.title == "HyperTools: A Python toolbox for visualizing and manipulating high-dimensional data"
    assert arxiv.title_from == "front matter"
    assert arxiv.author_surnames == ["Heusser", "Ziman", "Owen", "Manning"]


def test_abstracts_are_text(latex):
    for name in ("hypertools-arxiv-bblonly", "pca-paper", "sherlock-topic-model", "timecorr-paper"):
        abstract = read_front_matter(latex / name, references=False).abstract
        assert abstract and "\\" not in abstract and "{" not in abstract, name
    arxiv = read_front_matter(latex / "hypertools-arxiv-bblonly", references=False).abstract
    assert "[@Pear01; @TippBish99]" in arxiv and "Here we present HyperTools, a Python toolbox" in arxiv


def test_authors_year_and_venue_styles(latex):
    jmlr = read_front_matter(latex / "hypertools-jmlr", references=False)
    assert jmlr.author_surnames == ["Heusser", "Ziman", "Owen", "Manning"]
    assert jmlr.year == 2017  # \jmlrheading{1}{2017}{...}
    assert "jmlr" in jmlr.venue_styles  # \usepackage{jmlr2e}
    timecorr = read_front_matter(latex / "timecorr-paper", references=False)
    assert timecorr.author_surnames == ["Owen", "Chang", "Manning"]  # affiliations after the names are no names
    assert author_surnames("Ada Lovelace, and Charles Babbage 1 1Department of Engines, London") == [
        "Lovelace",
        "Babbage",
    ]


def test_references_are_the_cited_entries_not_the_whole_lab_bibliography(latex):
    entries = cited_entries(latex / "efficient-learning-khan")  # cdl.bib holds 6,144 entries
    assert len(entries) == 74 and entries[0].key and all(e.title for e in entries[:10])
    front = read_front_matter(latex / "hypertools-jmlr")  # memlab.bib: 5,840 entries, 17 cited
    assert len(front.reference_titles) == 17 and front.latest_reference_year == 2017
    inline = cited_entries(latex / "sherlock-topic-model")  # an inline thebibliography
    assert len(inline) == 69 and not any(e.title == "et al" for e in inline)
