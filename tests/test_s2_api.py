"""The Semantic Scholar client against recorded Graph API replies, replayed on 127.0.0.1."""

from __future__ import annotations

import json
import logging

import pytest
from replay_server import FakeTime, ReplayServer

from rqbench.builder.s2_api import BATCH_LIMIT, S2Client, S2Error, parse_edge, parse_paper

RECORDED_BATCH_IDS = [
    "CorpusId:211530585",
    "CorpusId:470667",
    "10.2139/ssrn.2250500",
    "0f40b1f08821e22e859c6050916cec3667778613",
]
RECORDED_BATCH_FIELDS = (
    "abstract,authors,citationCount,citationStyles,corpusId,externalIds,fieldsOfStudy,influentialCitationCount,"
    "isOpenAccess,journal,openAccessPdf,paperId,publicationDate,publicationTypes,publicationVenue,referenceCount,"
    "s2FieldsOfStudy,title,url,venue,year"
).split(",")


@pytest.fixture
def s2_dir(fixtures_dir):
    return fixtures_dir / "s2_api" / "danielnsilva_semanticscholar"


@pytest.fixture
def server(s2_dir):
    with ReplayServer() as srv:
        for cassette in sorted(s2_dir.glob("*.yaml")):
            srv.load_cassette(cassette)
        yield srv


@pytest.fixture
def fake_time():
    return FakeTime()


@pytest.fixture
def client(server, fake_time):
    c = S2Client(
        base_url=f"{server.url}/graph/v1", api_key="", min_interval_s=0, sleep=fake_time.sleep, clock=fake_time.clock
    )
    yield c
    c.close()


def test_batch_keeps_order_and_gives_none_for_missing_ids(client, server):
    got = client.batch(RECORDED_BATCH_IDS, fields=RECORDED_BATCH_FIELDS)
    assert len(got) == 4 and got[0] is None
    assert [p.paper_id for p in got[1:]] == [
        "c31c87c591a25c64fbaa82e8ac6a81831b6ac7ce",
        "cb1ebd913c3724c599f6b276b14b5c6253da68f3",
        "0f40b1f08821e22e859c6050916cec3667778613",
    ]
    first = got[1]
    assert first.citation_count == 10670 and first.venue == "" and first.publication_venue is None
    assert first.external_ids == {"MAG": "2096684396", "DOI": "10.2139/ssrn.288970", "CorpusId": "470667"}
    assert first.publication_types == ["Review"] and first.journal.name == "Experimental & Empirical Studies eJournal"
    assert got[2].publication_types == []  # null in the reply
    assert got[1].authors == ["Marianne Bertrand", "E. Duflo", "S. Mullainathan"]
    assert server.unmatched == [] and server.requests[0].method == "POST"


def test_batch_splits_into_chunks_of_at_most_500(server, fake_time):
    ids = [f"CorpusId:{i}" for i in range(2 * BATCH_LIMIT + 1)]
    for start in range(0, len(ids), BATCH_LIMIT):
        chunk = ids[start : start + BATCH_LIMIT]
        reply = [None if i % 2 else {"paperId": f"p{start + i}", "citationCount": i} for i in range(len(chunk))]
        server.add(
            "POST",
            "/graph/v1/paper/batch?fields=paperId%2CcitationCount",
            content=json.dumps(reply),
            request_body=json.dumps({"ids": chunk}),
        )
    with S2Client(
        base_url=f"{server.url}/graph/v1", api_key="", min_interval_s=1.0, sleep=fake_time.sleep, clock=fake_time.clock
    ) as c:
        got = c.batch(ids, fields=["paperId", "citationCount"])
    assert len(got) == len(ids)
    assert [len(json.loads(r.body)["ids"]) for r in server.requests] == [500, 500, 1]
    assert got[0].paper_id == "p0" and got[1] is None and got[1000].paper_id == "p1000"
    assert fake_time.sleeps == [1.0, 1.0]
    assert server.unmatched == []


def test_batch_reply_of_the_wrong_length_is_an_error(client, server):
    server.add("POST", "/graph/v1/paper/batch?fields=paperId", content="[null]", request_body='{"ids": ["a", "b"]}')
    with pytest.raises(S2Error, match="1 entries for 2 ids"):
        client.batch(["a", "b"], fields=["paperId"])


def test_batch_arxiv_uses_the_arxiv_id_form(client, server):
    server.add(
        "POST",
        "/graph/v1/paper/batch?fields=paperId",
        content='[{"paperId": "x1"}, null]',
        request_body='{"ids": ["ARXIV:2502.01113", "ARXIV:2502.00002"]}',
    )
    got = client.batch_arxiv(["2502.01113", "2502.00002"], fields=["paperId"])
    assert got["2502.01113"].paper_id == "x1" and got["2502.00002"] is None


def test_paper_by_doi_path_and_404(client, server):
    p = client.paper("10.1093/mind/lix.236.433", fields=["title"])
    assert p.paper_id == "2d5673caa9e6af3a7b82a43f19ee920992db07ad"
    assert p.title == "Computing Machinery and Intelligence"
    assert client.paper("0", fields=list("title")) is None  # the recording asked fields=t,i,t,l,e
    assert server.unmatched == []


def test_references_follow_next_across_pages(client, server):
    refs = client.references("10.2139/ssrn.2250500", fields=["title"], page_size=50)
    assert len(refs) == 67
    assert refs[0].paper.title.startswith("Group lending or individual lending")
    assert refs[50].paper.paper_id is None  # S2 could not resolve this one (first of the second page)
    assert refs[51].paper.title == "On the Macroeconomics of Microfinance"
    assert [dict(r.query)["offset"] for r in server.requests] == ["0", "50"]
    assert server.unmatched == []


def test_search_with_venue(client, server):
    found = client.search("turing", fields=["venue"], venue="ArXiv", limit=100)
    assert len(found) == 100 and all(p.venue == "arXiv.org" for p in found)
    assert len(server.requests) == 1 and server.unmatched == []


def test_recorded_json_bodies_parse(s2_dir):
    paper = parse_paper(json.loads((s2_dir / "Paper.json").read_text()), "Paper.json")
    assert paper.citation_count == 10059 and paper.publication_venue is None
    assert paper.publication_types == ["JournalArticle", "Review"] and paper.journal.name == "Mind"
    assert paper.external_ids["DOI"] == "10.1093/MIND/LIX.236.433"
    raw = json.loads((s2_dir / "Paper.json").read_text())
    nested = [parse_paper(p, f"Paper.json citations[{i}]") for i, p in enumerate(raw["citations"] + raw["references"])]
    assert len(nested) == 1014 and all(p is not None for p in nested)
    nulls = parse_paper(json.loads((s2_dir / "PaperWithNullValues.json").read_text()), "nulls")
    assert nulls.authors == [] and nulls.title is None
    ref = parse_edge(json.loads((s2_dir / "Reference.json").read_text()), "citedPaper", "Reference.json")
    assert ref.paper.arxiv_id == "1402.0030" and ref.paper.publication_venue.type == "conference"
    assert ref.intents == ["background"] and ref.is_influential is False
    cit = parse_edge(json.loads((s2_dir / "Citation.json").read_text()), "citingPaper", "Citation.json")
    assert cit.is_influential is True and len(cit.contexts) == 4
    assert cit.contexts_with_intent[0].intents == ["methodology"]
    assert cit.paper.publication_venue.name == "IEEE Robotics and Automation Letters"


def test_malformed_paper_names_where():
    with pytest.raises(S2Error, match=r"batch entry 3.*citationCount"):
        parse_paper({"paperId": "x", "citationCount": "many"}, "batch entry 3")


def test_api_key_is_sent_but_never_logged_or_shown(server, fake_time, monkeypatch, caplog):
    monkeypatch.setenv("S2_API_KEY", "sekrit-key-123")
    server.inject("/graph/v1/paper/", 500, count=10)
    with caplog.at_level(logging.DEBUG):
        with S2Client(
            base_url=f"{server.url}/graph/v1",
            min_interval_s=0,
            max_retries=1,
            sleep=fake_time.sleep,
            clock=fake_time.clock,
        ) as c:
            assert "sekrit" not in repr(c)
            with pytest.raises(S2Error) as err:
                c.paper("10.1093/mind/lix.236.433", fields=["title"])
    assert all(r.headers.get("x-api-key") == "sekrit-key-123" for r in server.requests)
    assert "sekrit" not in str(err.value) and "sekrit" not in caplog.text
    assert "HTTP 500" in str(err.value)


def test_no_key_means_no_header(client, server):
    client.paper("10.1093/mind/lix.236.433", fields=["title"])
    assert "x-api-key" not in server.requests[0].headers


def test_rate_limit_is_honoured(client, server, fake_time):
    server.inject("/graph/v1/paper/batch", 429, retry_after="4")
    got = client.batch(RECORDED_BATCH_IDS, fields=RECORDED_BATCH_FIELDS)
    assert got[0] is None and len(got) == 4
    assert fake_time.sleeps == [4.0]
    assert [r.answered for r in server.requests] == [429, 200]


def test_cache_dir_lets_a_rerun_skip_answered_requests(server, fake_time, tmp_path):
    kw = dict(base_url=f"{server.url}/graph/v1", api_key="", min_interval_s=0, cache_dir=tmp_path / "s2cache")
    with S2Client(**kw) as c:
        first = c.batch(RECORDED_BATCH_IDS, fields=RECORDED_BATCH_FIELDS)
    with S2Client(**kw) as c:
        second = c.batch(RECORDED_BATCH_IDS, fields=RECORDED_BATCH_FIELDS)
        assert c.http.cache_hits == 1
    assert first == second and len(server.requests) == 1


def test_batch_size_is_bounded():
    with pytest.raises(ValueError, match="between 1 and 500"):
        S2Client(base_url="http://127.0.0.1:9", batch_size=501)


def test_retry_after_forms_and_a_wait_too_long(server, fake_time):
    from datetime import datetime, timezone

    from rqbench.builder.http import retry_after_seconds

    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("12") == 12.0 and retry_after_seconds("-3") == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None
    server.inject("/graph/v1/paper/", 429, retry_after="86400")
    with S2Client(
        base_url=f"{server.url}/graph/v1", api_key="", min_interval_s=0, sleep=fake_time.sleep, clock=fake_time.clock
    ) as c:
        with pytest.raises(S2Error, match=r"HTTP 429.*wait 86400 s \(Retry-After\), over the limit"):
            c.paper("10.1093/mind/lix.236.433", fields=["title"])
    assert fake_time.sleeps == []
