"""The offline sample, built from the fixture papers that cite each other and read back with ``load_dataset``.

One build on the scripted server (``rqbench setup-sample``'s configuration with a scripted model in place of the
embedded one), published locally, then checked as a user sees it: cited papers carry their sections, every RQ's
cited papers resolve and one of them has body text, the HyperTools versions are one paper, and a cited work
without a source is kept at its level with its reason.
"""

from __future__ import annotations

import json

import pytest
from builder_script import reply_for
from datasets import load_dataset

from rqbench.builder.cited_text import CitedTextSettings, text_for
from rqbench.records import BibEntry, SkipRecord

HYPERTOOLS_AUTHORS = ["A. C. Heusser", "K. Ziman", "L. L. W. Owen", "J. R. Manning"]


@pytest.fixture(scope="module")
def sample(tmp_path_factory, fixtures_dir):
    from rqbench.builder.pipeline import run_build
    from rqbench.builder.sample import sample_config
    from rqbench.dataset_card.sample_release import publish_sample
    from rqbench.llm import LLM, CallStore
    from rqbench.testing.scripted_server import ScriptedServer

    tmp = tmp_path_factory.mktemp("sample")
    with ScriptedServer() as srv:
        srv.responder = reply_for
        llm = LLM(CallStore(tmp / "calls.db"))
        model = llm.register(srv.model_config()).name
        config, where = sample_config(
            fixtures_dir / "latex", tmp / "build", links_dir=tmp / "links", model=model, progress=False
        )
        manifest = run_build(config, llm)
        published = publish_sample(tmp / "build", tmp / "dataset", notes=where)
    assert published is not None
    rows = {
        c: list(load_dataset(str(tmp / "dataset"), c, split="test"))
        for c in ("rqs", "papers", "cited_papers", "instances")
    }
    return {"tmp": tmp, "config": config, "manifest": manifest, "rows": rows, "where": where}


def test_the_sample_is_built_from_the_papers_that_cite_other_fixture_papers(sample):
    assert sample["where"].endswith("efficient-learning-khan, pca-paper, sherlock-topic-model, supereeg-paper")
    papers = sample["rows"]["papers"]
    assert papers and all(p["paper"]["arxiv_id"] is None for p in papers)  # local papers: no arXiv id
    for p in papers:
        assert p["paper"]["title"] and p["paper"]["title"] != p["paper"]["paper_id"]  # never a folder name
        assert "\\" not in p["paper"]["abstract"]  # rendered, no \cite{...} left
    assert all(r["arxiv_id"] is None and r["rq_id"].startswith(r["paper_id"]) for r in sample["rows"]["rqs"])


def test_cited_papers_carry_their_sections(sample):
    full = [c for c in sample["rows"]["cited_papers"] if c["text_level"] == "full"]
    assert len(full) >= 3
    for c in full:
        names = [s["section"] for s in c["sections"]]
        assert "Introduction" in names and "Front matter" not in names and "Abstract" not in names, names
        assert sum(len(s["text"]) for s in c["sections"]) > 10_000 and c["no_full_text"] is None
        assert c["contributions_source"] == "extracted" and c["contributions"]  # from the body text
    titles = {c["title"] for c in full}
    assert (
        "Geometric models reveal behavioral and neural signatures of transforming experiences into memories" in titles
    )
    # what the extraction read of each: its sections within the text budget, in order, the last one cut
    from rqbench.builder.cited_contributions import CitedContributionsResult
    from rqbench.builder.stages import StageStore

    read = {
        p.paper_id: p.sections_read
        for r in StageStore(sample["tmp"] / "build", "cited_contributions").records(CitedContributionsResult)
        for p in r.papers
        if p.source == "extracted"
    }
    assert set(read) == {c["paper_id"] for c in full}
    for c in full:
        names = [s["section"] for s in c["sections"]]
        assert read[c["paper_id"]] and names[: len(read[c["paper_id"]]) - 1] == read[c["paper_id"]][:-1]


def test_every_rq_links_a_cited_paper_with_section_text(sample):
    cited = {c["paper_id"]: c for c in sample["rows"]["cited_papers"]}
    instances = {i["rq_id"]: i for i in sample["rows"]["instances"]}
    assert sample["rows"]["rqs"]
    for rq in sample["rows"]["rqs"]:
        assert set(rq["cited_paper_ids"]) <= set(cited)  # every cited paper resolves
        background = instances[rq["rq_id"]]["background_paper_ids"]
        assert background and all(cited[b]["text_level"] == "full" and cited[b]["sections"] for b in background)


def test_the_jmlr_and_arxiv_titles_of_hypertools_are_one_paper(sample, fixtures_dir):
    latex = fixtures_dir / "latex"
    settings = CitedTextSettings(cited_sources=str(latex))
    jmlr = BibEntry(
        key="j",
        title="HyperTools: a Python toolbox for gaining geometric insights into high-dimensional data",
        authors=HYPERTOOLS_AUTHORS,
        year=2018,
        venue="Journal of Machine Learning Research",
    )
    arxiv = BibEntry(
        key="a",
        title="HyperTools: A Python toolbox for visualizing and manipulating high-dimensional data",
        authors=HYPERTOOLS_AUTHORS,
        year=2017,
        venue="arXiv",
    )
    a, b = (text_for(e.key, e, "citing", settings, citations=60) for e in (jmlr, arxiv))
    assert a.paper.paper_id == b.paper.paper_id and a.paper.sections == b.paper.sections
    assert (a.source, b.source) == ("hypertools-jmlr", "hypertools-arxiv-bblonly")  # each matched by its own title
    assert "versions of one paper" in a.lookup
    hyper = [c for c in sample["rows"]["cited_papers"] if c["title"].startswith("HyperTools")]
    assert [c["paper_id"] for c in hyper] == [a.paper.paper_id]  # sherlock cites the JMLR version: one row


def test_a_cited_work_without_a_source_keeps_its_level_and_says_why(sample):
    build = sample["tmp"] / "build"
    skips = [SkipRecord.model_validate_json(line) for line in (build / "skips.jsonl").read_text().splitlines()]
    missing = [s for s in skips if s.stage == "cited_text"]
    assert missing and all(s.reason == "no_local_source" and s.detail.startswith("kept at level ") for s in missing)
    published = (sample["tmp"] / "dataset" / "build" / "skips.jsonl").read_text()
    assert all(json.dumps(s.item_id) in published for s in missing)
    funnel = (build / "funnel.md").read_text()
    assert "# Cited papers' text" in funnel and f"no_local_source: {len(missing)}" in funnel
    for c in sample["rows"]["cited_papers"]:
        assert (c["text_level"] == "full") == (c["no_full_text"] is None)


def test_the_card_counts_the_cited_text_and_tells_how_influence_was_decided(sample):
    card = (sample["tmp"] / "dataset" / "README.md").read_text()
    manifest = sample["manifest"]
    full = sum(1 for c in sample["rows"]["cited_papers"] if c["text_level"] == "full")
    assert f"{full} of the {len(sample['rows']['cited_papers'])} cited papers carry their body text" in card
    promoted = manifest.counts["influence_promoted"]
    if promoted:
        assert f"Influence: {promoted} of the {manifest.counts['influential_works']} citations" in card
    else:
        assert "none was promoted" in card


def test_docs_state_the_samples_settings_as_the_manifest_records_them(sample):
    from pathlib import Path

    text = " ".join((Path(__file__).parents[1] / "docs" / "dataset.md").read_text(encoding="utf-8").split())
    m = sample["manifest"]
    assert f"at most {m.inputs['limit']} papers" in text
    assert f"{m.settings['max_cited_per_paper']} cited works labelled per paper" in text
    assert f"at least {m.settings['min_influential']} influential works per paper" in text
    assert m.settings["allow_abstract_only"] is False and "no `--allow-abstract-only`" in text
