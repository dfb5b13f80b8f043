"""Stage "cited_contributions": one call per linked cited paper with body text, labelled fallbacks for the rest."""

from __future__ import annotations

import asyncio

import pytest
from scripted_replies import responder_with

from rqbench.builder.author_rqs import AuthorRQsResult, LinkedRQ
from rqbench.builder.cited_contributions import extract
from rqbench.builder.cited_text import CitedText, CitedTextResult
from rqbench.builder.llm_stage import LLMStageSettings
from rqbench.llm import LLM, CallStore, LLMCallFailed
from rqbench.records import CitedPaper, SectionText, TextLevel
from rqbench.testing.scripted_server import Fault

BODY = [SectionText(section="Method", text="We replace the softmax in attention with a sigmoid. " * 8)]


def _paper(pid: str, level: TextLevel, *, abstract: str = "", sections=()) -> CitedPaper:
    return CitedPaper(paper_id=pid, title=f"Paper {pid}", abstract=abstract, text_level=level, sections=list(sections))


def _item():
    papers = {
        "full": _paper("2401.00001", TextLevel.full, abstract="A sigmoid attention.", sections=BODY),
        "short": _paper(
            "2401.00002",
            TextLevel.full,
            abstract="Short body.",
            sections=[SectionText(section="Intro", text="Too little.")],
        ),
        "abs": _paper("2401.00003", TextLevel.abstract, abstract="Only an abstract here."),
        "title": _paper("bib:0000", TextLevel.title),
        "unlinked": _paper("2401.00009", TextLevel.full, abstract="Never linked.", sections=BODY),
    }
    cited = CitedTextResult(
        arxiv_id="2501.00001",
        cited=[CitedText(key=k, paper=p) for k, p in papers.items()]
        + [CitedText(key="again", paper=papers["full"]), CitedText(key="nobib", no_paper="x")],
    )
    rqs = AuthorRQsResult(
        arxiv_id="2501.00001",
        rqs=[
            LinkedRQ(question="Why do sinks form?", cited_keys=["full", "short", "nobib"]),
            LinkedRQ(question="Can sinks be avoided?", cited_keys=["again", "abs", "title"]),
        ],
    )
    return {"cited_text": cited, "author_rqs": rqs}


@pytest.fixture
def run(tmp_path, scripted_server):
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(scripted_server.model_config())
    settings = LLMStageSettings(
        step="cited_contributions", model=cfg.name, max_tokens=500, text_budget_chars=24000, context_budget_chars=4000
    )

    def go():
        (result,) = asyncio.run(extract(_item(), llm, settings=settings))
        return {p.paper_id: p for p in result.papers}, [r for r in scripted_server.requests]

    return scripted_server, go


def test_only_linked_papers_with_body_text_are_read_each_once(run):
    srv, go = run
    srv.responder = responder_with({})
    got, requests = go()
    assert list(got) == ["2401.00001", "2401.00002", "2401.00003", "bib:0000"]  # first-linked order, unlinked out
    assert [r.step for r in requests] == ["cited_contributions"]  # one paper read, once for its two keys
    assert "We replace the softmax" in requests[0]["messages"][1]["content"]
    full = got["2401.00001"]
    assert full.source == "extracted" and full.note is None and full.model
    assert full.sections_read == ["Method"]  # the sections the prompt held within the text budget
    assert full.contributions[0].startswith("Shows when attention sinks emerge")
    assert (got["2401.00002"].source, got["2401.00002"].contributions, got["2401.00002"].note) == (
        "abstract",
        ["Short body."],
        "too_little_text",
    )
    assert (got["2401.00003"].source, got["2401.00003"].note) == ("abstract", "no_body_text:abstract")
    title = got["bib:0000"]
    assert title.source is None and title.contributions == [] and title.note == "no_body_text:title; no abstract"


def test_sections_read_name_the_section_cut_at_the_budget():
    from rqbench.builder.prompt_text import sections_read, sections_text

    sections = [("Intro", "a" * 50), ("Methods", "b" * 100), ("Results", "c" * 100)]
    assert sections_read(sections, None) == ["Intro", "Methods", "Results"]
    assert sections_read(sections, 150) == ["Intro", "Methods (cut)"]
    text = sections_text(sections, 150)
    assert "## Methods" in text and "## Results" not in text and "[... cut:" in text
    assert sections_read(sections, 59) == ["Intro"] and "## Methods" not in sections_text(sections, 59)


def test_an_unusable_reply_falls_back_to_the_abstract_by_name(run):
    srv, go = run
    srv.responder = responder_with({"cited_contributions": lambda req: '{"contributions": []}'})
    got, requests = go()
    full = got["2401.00001"]
    assert (full.source, full.contributions, full.note) == ("abstract", ["A sigmoid attention."], "llm_invalid_reply")
    assert len(requests) == 2  # the first reply and the one re-ask


def test_a_dead_endpoint_is_no_fallback_the_item_is_retried(run):
    srv, go = run
    srv.fault_plan = lambda n: Fault("status", status=401)
    with pytest.raises(LLMCallFailed):
        go()
