"""The arXiv client against arXiv's own recorded replies, replayed on 127.0.0.1."""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from datetime import date, datetime, timezone
from urllib.parse import urlencode

import pytest
from replay_server import FakeTime, ReplayServer, split_feed

from rqbench.builder.arxiv_api import (
    NS,
    ArxivClient,
    ArxivError,
    build_query,
    parse_arxiv_id,
    parse_feed,
    split_window,
)


@pytest.fixture
def arxiv_dir(fixtures_dir):
    return fixtures_dir / "arxiv_api" / "arxiv.py_fixtures"


@pytest.fixture
def server(arxiv_dir):
    with ReplayServer() as srv:
        assert srv.load_arxiv_records(arxiv_dir) == 6
        yield srv


@pytest.fixture
def fake_time():
    return FakeTime()


@pytest.fixture
def client(server, fake_time):
    c = ArxivClient(
        base_url=f"{server.url}/api",
        eprint_url=f"{server.url}/e-print",
        min_interval_s=0,
        page_size=100,
        sleep=fake_time.sleep,
        clock=fake_time.clock,
    )
    yield c
    c.close()


def test_one_id_is_parsed_into_a_source_paper(client, server):
    [p] = client.by_ids(["2104.12255v1"])
    assert p.arxiv_id == "2104.12255" and p.version == 1
    assert p.title == "0"
    assert p.abstract.startswith("What is the funniest number in cryptography? 0.")
    assert p.authors == ["Quan Thoi Minh Nguyen"]
    assert p.published == datetime(2021, 4, 20, 16, 7, 14, tzinfo=timezone.utc) and p.published_source == "arxiv_api"
    assert p.primary_category == "cs.CR" and p.categories == ["cs.CR"]
    assert p.published == datetime(2021, 4, 20, 16, 7, 14, tzinfo=timezone.utc)
    assert p.doi is None and p.journal_ref is None and p.source == "arxiv"
    assert server.unmatched == [] and len(server.requests) == 1


def test_utf8_author_names_survive(client):
    [p] = client.by_ids(["1707.08567"])
    assert "Dirk Wübben" in p.authors
    assert p.title == "Proceedings of Workshop AEW10: Concepts in Information Theory and Communications"
    assert p.primary_category == "cs.IT"


def test_unknown_id_among_known_ones_is_absent_and_logged(client, caplog):
    with caplog.at_level(logging.WARNING):
        papers = client.by_ids(["0808.05394", "1707.08567"])
    assert [p.arxiv_id for p in papers] == ["1707.08567"]
    assert "0808.05394" in caplog.text


def test_empty_result(client):
    assert client.by_ids(["0000.0000"]) == []


def test_http_400_error_entry_raises_with_arxivs_message(client):
    with pytest.raises(ArxivError, match="incorrect id format for abc"):
        client.by_ids(["abc"])


def test_search_page_with_doi_and_journal_ref(client, server):
    feed = client.query_page("testing", max_results=10)
    assert feed.total == 214881 and feed.start == 0 and len(feed.entries) == 10
    first = feed.entries[0]
    assert first.arxiv_id == "2202.12139"
    assert first.doi == "10.1109/ICSTW55395.2022.00035"
    assert first.journal_ref.startswith("Artificial Intelligence in Software Testing @ 2022 IEEE")
    assert first.categories == ["cs.SE", "cs.LG"]
    assert "José Raúl Romero" in [a for p in feed.entries for a in p.authors]
    assert server.unmatched == []


def _paged_feeds(arxiv_dir, per_page):
    """The recorded 10-entry feed cut into pages, as arXiv would page it (same real entries)."""
    xml = (arxiv_dir / "q_testing_s0_m10_bc5a6c384fe9.xml").read_bytes()
    ids = [parse_arxiv_id(e.find("atom:id", NS).text)[0] for e in ET.fromstring(xml).findall("atom:entry", NS)]
    return split_feed(xml, per_page), ids


def _route(server, query, start, n, body, sort=("submittedDate", "ascending")):
    params = {
        "search_query": query,
        "id_list": "",
        "sortBy": sort[0],
        "sortOrder": sort[1],
        "start": start,
        "max_results": n,
    }
    server.add("GET", f"/api/query?{urlencode(params)}", content=body)


def test_search_pages_through_all_results(server, arxiv_dir, fake_time):
    query = build_query("cs.*", date(2025, 1, 1), date(2025, 1, 31))
    pages, ids = _paged_feeds(arxiv_dir, 4)
    for start, body in pages:
        _route(server, query, start, 4, body)
    with ArxivClient(
        base_url=f"{server.url}/api", min_interval_s=3.0, page_size=4, sleep=fake_time.sleep, clock=fake_time.clock
    ) as c:
        got = [p.arxiv_id for p in c.search(query)]
    assert got == ids and len(got) == 10
    assert [dict(r.query)["start"] for r in server.requests] == ["0", "4", "8"]
    assert all(dict(r.query)["max_results"] == "4" for r in server.requests)
    assert fake_time.sleeps == [3.0, 3.0]  # the pause between requests, none before the first
    assert server.unmatched == []


def test_search_limit_asks_only_for_what_it_needs(server, arxiv_dir, client):
    query = "cat:cs.SE"
    pages, ids = _paged_feeds(arxiv_dir, 4)
    _route(server, query, 0, 4, pages[0][1])
    # the second request asks for just one more: serve it the next page's first entry
    one_pages, _ = _paged_feeds(arxiv_dir, 1)
    _route(server, query, 4, 1, one_pages[4][1])
    client.page_size = 4
    got = [p.arxiv_id for p in client.search(query, limit=5)]
    assert got == ids[:5]
    assert server.unmatched == []


def test_an_empty_page_before_the_end_is_retried_then_fails(server, arxiv_dir, client):
    pages, _ = _paged_feeds(arxiv_dir, 4)
    root = ET.fromstring(pages[1][1])
    for e in root.findall("atom:entry", NS):
        root.remove(e)
    _route(server, "cat:cs.SE", 0, 4, pages[0][1])
    _route(server, "cat:cs.SE", 4, 4, ET.tostring(root))
    client.page_size = 4
    with pytest.raises(ArxivError, match="empty page at start=4"):
        list(client.search("cat:cs.SE"))
    assert [dict(r.query)["start"] for r in server.requests] == ["0", "4", "4", "4"]


def test_retries_5xx_and_honours_retry_after(client, server, fake_time):
    server.inject("/api/query", 503, count=1)
    server.inject("/api/query", 429, count=1, retry_after="7")
    [p] = client.by_ids(["2104.12255v1"])
    assert p.arxiv_id == "2104.12255"
    assert [r.answered for r in server.requests] == [503, 429, 200]
    assert fake_time.sleeps[0] == 3.0  # backoff_s for the first retry
    assert fake_time.sleeps[1] == 7.0  # what Retry-After asked for


def test_gives_up_after_the_retries_with_a_clear_error(server, fake_time):
    server.inject("/api/query", 500, count=10)
    with ArxivClient(
        base_url=f"{server.url}/api", min_interval_s=0, max_retries=2, sleep=fake_time.sleep, clock=fake_time.clock
    ) as c:
        with pytest.raises(ArxivError, match=r"HTTP 500.*after 3 tries"):
            c.by_ids(["2104.12255v1"])
    assert len(server.requests) == 3


def test_a_stalled_request_times_out_and_is_retried(server, fake_time):
    server.inject("/api/query", None, delay_s=0.6)
    with ArxivClient(
        base_url=f"{server.url}/api",
        min_interval_s=0,
        page_size=100,
        timeout_s=0.2,
        sleep=fake_time.sleep,
        clock=fake_time.clock,
    ) as c:
        [p] = c.by_ids(["2104.12255v1"])
    assert p.arxiv_id == "2104.12255" and len(server.requests) == 2


def test_download_eprint_writes_the_blob_once(client, server, tmp_path):
    blob = b"\x1f\x8b\x08\x00fake-gzip-bytes"
    server.add("GET", "/e-print/2502.01113v2", content=blob, headers={"Content-Type": "application/x-eprint-tar"})
    dest = tmp_path / "eprints" / "2502.01113.tar.gz"
    assert client.download_eprint("arXiv:2502.01113v2", dest) == dest
    assert dest.read_bytes() == blob
    n = len(server.requests)
    client.download_eprint("2502.01113v2", dest)
    assert len(server.requests) == n  # kept, not fetched again
    assert not list(dest.parent.glob("*.part"))


def test_download_eprint_missing_raises_and_leaves_no_file(client, tmp_path):
    dest = tmp_path / "x.tar.gz"
    with pytest.raises(ArxivError, match=r"e-print download for 2502.99999 failed.*HTTP 404"):
        client.download_eprint("2502.99999", dest)
    assert not dest.exists() and not list(tmp_path.glob("*.part"))


def test_malformed_entry_names_the_entry_and_field():
    xml = f'<feed xmlns="{NS["atom"]}"><entry><id>http://arxiv.org/abs/2501.00001v1</id><title>T</title></entry></feed>'
    with pytest.raises(ArxivError, match=r"entry 0 \(2501.00001\): entry has no primary category"):
        parse_feed(xml, where="test feed")
    with pytest.raises(ArxivError, match="not well-formed"):
        parse_feed("<feed", where="test feed")


def test_query_building():
    assert build_query("cs.*", date(2025, 1, 1), date(2026, 4, 10)) == (
        "cat:cs.* AND submittedDate:[202501010000 TO 202604102359]"
    )
    assert build_query(["cs.CL", "cs.LG"]) == "(cat:cs.CL OR cat:cs.LG)"
    with pytest.raises(ValueError, match="both date_from and date_to"):
        build_query("cs.*", date(2025, 1, 1), None)
    with pytest.raises(ValueError, match="before it starts"):
        build_query("cs.*", date(2025, 2, 1), date(2025, 1, 1))
    slices = split_window(date(2025, 1, 1), date(2025, 1, 10), 4)
    assert slices == [
        (date(2025, 1, 1), date(2025, 1, 4)),
        (date(2025, 1, 5), date(2025, 1, 8)),
        (date(2025, 1, 9), date(2025, 1, 10)),
    ]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("2502.01113", ("2502.01113", None)),
        ("arXiv:2502.01113v2", ("2502.01113", 2)),
        ("https://arxiv.org/abs/hep-th/9901001v3", ("hep-th/9901001", 3)),
        ("http://arxiv.org/pdf/1706.03762.pdf", ("1706.03762", None)),
        ("https://doi.org/10.48550/arXiv.2301.00001", ("2301.00001", None)),
        ("arXiv preprint arXiv:1810.04805", ("1810.04805", None)),
        ("math.GT/0309136", ("math.GT/0309136", None)),
        ("0808.05394", None),  # five-digit numbers began in 2015
        ("2301.000012", None),
        ("abc", None),
        ("", None),
    ],
)
def test_parse_arxiv_id(text, expected):
    assert parse_arxiv_id(text) == expected
