"""Stage 1: papers from local LaTeX folders, id files and arXiv queries (replayed on 127.0.0.1)."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from datetime import date, datetime, timedelta, timezone
from urllib.parse import urlencode

import pytest
from replay_server import ReplayServer, split_feed

from rqbench.builder.arxiv_api import ArxivClient
from rqbench.builder.sourcing import (
    folder_arxiv_id,
    folder_paper_id,
    has_latex_source,
    read_ids_file,
    source_papers,
)


@pytest.fixture
def latex_dir(fixtures_dir):
    return fixtures_dir / "latex"


@pytest.fixture
def arxiv_dir(fixtures_dir):
    return fixtures_dir / "arxiv_api" / "arxiv.py_fixtures"


@pytest.fixture
def server(arxiv_dir):
    with ReplayServer() as srv:
        srv.load_arxiv_records(arxiv_dir)
        yield srv


@pytest.fixture
def client(server):
    with ArxivClient(
        base_url=f"{server.url}/api", eprint_url=f"{server.url}/e-print", min_interval_s=0, page_size=100
    ) as c:
        yield c


def test_local_folder_of_real_sources(latex_dir):
    got = source_papers(papers=latex_dir)
    ids = [p.paper_id for p, _ in got]
    assert ids == sorted(ids) and len(ids) == 15
    assert all(p.arxiv_id is None for p, _ in got)  # a folder name is no arXiv id
    by_id = {p.paper_id: (p, f) for p, f in got}
    p, folder = by_id["neurips2024-beta-dpo"]
    assert p.title == "β-DPO: Direct Preference Optimization with Dynamic β"  # the last \title wins
    assert p.abstract.startswith("Direct Preference Optimization (DPO)")
    assert p.source == "local" and p.primary_category == "unknown" and p.categories == ["unknown"]
    assert folder == latex_dir / "neurips2024-beta-dpo"
    themis, _ = by_id["themis-ml-fairness-mit"]
    assert themis.title.startswith("Themis-ml: A Fairness-aware Machine Learning Interface")
    # no \title at all: the title set by hand at the top of the body; never the folder's name
    assert by_id["hypertools-arxiv-bblonly"][0].title == (
        "HyperTools: A Python toolbox for visualizing and manipulating high-dimensional data"
    )
    # a title macro (\hypertools) is expanded; discretionary hyphens (e\-lect\-ro...) are resolved
    assert by_id["hypertools-jmlr"][0].title == (
        "HyperTools: A Python toolbox for gaining geometric insights into high-dimensional data"
    )
    assert by_id["supereeg-paper"][0].title == "A Gaussian process model of human electrocorticographic data"
    # abstracts are text: no LaTeX command is left, citations read as in section text
    arxiv_abstract = by_id["hypertools-arxiv-bblonly"][0].abstract
    assert "\\" not in arxiv_abstract and "[@Pear01; @TippBish99]" in arxiv_abstract
    assert all("\\" not in p.abstract and "\\" not in p.title for p, _ in got)
    assert all(has_latex_source(f) for _, f in got)
    assert len(source_papers(papers=latex_dir, limit=2)) == 2


def test_local_folder_ids_metadata_and_errors(tmp_path, latex_dir):
    root = tmp_path / "papers"
    shutil.copytree(latex_dir / "llm-stylometry", root / "2502.01113v2")
    (root / "2502.01113v2" / "metadata.json").write_text(
        json.dumps({"primary_category": "cs.CL", "title": "Given title"})
    )
    (root / "Notes and Drafts").mkdir()
    (root / "Notes and Drafts" / "readme.txt").write_text("no LaTeX here")
    (root / ".git").mkdir()
    got = source_papers(papers=root)
    assert [p.paper_id for p, _ in got] == ["2502.01113", "notes-and-drafts"]
    assert [p.arxiv_id for p, _ in got] == ["2502.01113", None]  # named by an arXiv id, or not
    first, f0 = got[0]
    assert first.version == 2 and first.title == "Given title" and first.primary_category == "cs.CL"
    assert first.abstract.startswith("We show that large language models")  # from the LaTeX
    assert has_latex_source(f0) and not has_latex_source(got[1][1]) and not has_latex_source(None)

    (root / "2502.01113v2" / "metadata.json").write_text(json.dumps({"primary_category": "cs.CL", "titel": "typo"}))
    with pytest.raises(ValueError, match=r"metadata.json: unknown SourcePaper field\(s\) \['titel'\]"):
        source_papers(papers=root)
    (root / "2502.01113v2" / "metadata.json").write_text(json.dumps({"primary_category": "cs.CL", "authors": "one"}))
    with pytest.raises(ValueError, match=r"2502.01113v2/metadata.json: paper 2502.01113: field authors"):
        source_papers(papers=root)
    (root / "2502.01113v2" / "metadata.json").unlink()
    (root / "notes-and-drafts").mkdir()
    with pytest.raises(ValueError, match="'Notes and Drafts' and 'notes-and-drafts' both give the id"):
        source_papers(papers=root)


def test_local_folder_named_by_arxiv_id_gets_arxiv_metadata(tmp_path, latex_dir, client, server):
    root = tmp_path / "papers"
    shutil.copytree(latex_dir / "acl-template", root / "2104.12255v1")
    [(p, folder)] = source_papers(papers=root, client=client)
    assert p.title == "0" and p.primary_category == "cs.CR" and p.authors == ["Quan Thoi Minh Nguyen"]
    assert p.source == "local" and p.version == 1 and folder == root / "2104.12255v1"
    assert p.first_version() == (date(2021, 4, 20), "arxiv_api")  # arXiv's <published>, 2021-04-20T16:07:14Z
    assert server.unmatched == []


def test_a_local_folder_says_how_its_date_is_known_and_never_invents_one(tmp_path, latex_dir):
    root = tmp_path / "papers"
    shutil.copytree(latex_dir / "acl-template", root / "dated")
    shutil.copytree(latex_dir / "acl-template", root / "undated")
    shutil.copytree(latex_dir / "acl-template", root / "2104.12255v1")  # an arXiv id, but nothing looked up
    (root / "dated" / "metadata.json").write_text(json.dumps({"published": "2026-03-02T09:00:00Z"}))
    by_id = {p.paper_id: p for p, _ in source_papers(papers=root)}
    assert by_id["dated"].published_source == "metadata_file"
    assert by_id["dated"].first_version() == (date(2026, 3, 2), "metadata_file")
    assert by_id["undated"].first_version() == (None, None) and by_id["undated"].published_source is None
    assert by_id["2104.12255"].first_version() == (None, None)  # the id's YYMM is not a date


def _tar_gz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_ids_file_then_download_and_unpack(tmp_path, client, server, latex_dir, monkeypatch):
    ids = tmp_path / "ids.txt"
    ids.write_text("# curated\n\narXiv:2104.12255v1   # the zero paper\n")
    tex = (latex_dir / "acl-template" / "acl_latex.tex").read_bytes()
    server.add("GET", "/e-print/2104.12255v1", content=_tar_gz({"main.tex": tex}))
    from rqbench.builder import archive

    calls = []
    real_unpack = archive.unpack_eprint

    def unpack_eprint(blob, dest):
        calls.append((blob, dest))
        return real_unpack(blob, dest)

    monkeypatch.setattr(archive, "unpack_eprint", unpack_eprint)
    [(p, folder)] = source_papers(papers=ids, client=client, download_dir=tmp_path / "src", progress=False)
    assert p.arxiv_id == "2104.12255" and folder == tmp_path / "src" / "2104.12255" / "src"
    assert (folder / "main.tex").read_bytes() == tex
    assert calls == [(tmp_path / "src" / "2104.12255" / "eprint", folder)]
    meta = json.loads((tmp_path / "src" / "2104.12255" / "metadata.json").read_text())
    assert meta["title"] == "0"
    n = len(server.requests)
    mtime = (folder / "main.tex").stat().st_mtime_ns
    source_papers(papers=ids, client=client, download_dir=tmp_path / "src", progress=False)
    assert (folder / "main.tex").stat().st_mtime_ns == mtime
    assert len(server.requests) == n + 1  # metadata asked again, the e-print not downloaded twice
    assert [r.path for r in server.requests].count("/e-print/2104.12255v1") == 1
    assert len(calls) == 2 and (folder / "main.tex").read_bytes() == tex  # the finished unpack is found, not redone
    assert server.unmatched == []

    [(q, none)] = source_papers(papers=ids, client=client)
    assert q == p and none is None


def test_read_ids_file(tmp_path):
    f = tmp_path / "ids.txt"
    f.write_text("2502.01113\nhttps://arxiv.org/abs/2502.01113\narXiv:1706.03762v5\nhep-th/9901001\n")
    assert read_ids_file(f) == ["2502.01113", "1706.03762v5", "hep-th/9901001"]
    f.write_text("2502.01113\nnot-an-id\n")
    with pytest.raises(ValueError, match=r"ids.txt:2: 'not-an-id' is not an arXiv id"):
        read_ids_file(f)


def _window_routes(server, arxiv_dir, query, days, per_day, page_size):
    """Serve each day's slice of ``query`` from the recorded entries (``per_day`` of them a day)."""
    xml = (arxiv_dir / "q_testing_s0_m10_bc5a6c384fe9.xml").read_bytes()
    for n, d in enumerate(days):
        clause = f"submittedDate:[{d:%Y%m%d}0000 TO {d:%Y%m%d}2359]"
        for start, body in split_feed(xml, page_size, entries=slice(n * per_day, (n + 1) * per_day)):
            params = {
                "search_query": f"{query} AND {clause}",
                "id_list": "",
                "sortBy": "submittedDate",
                "sortOrder": "ascending",
                "start": start,
                "max_results": page_size,
            }
            server.add("GET", f"/api/query?{urlencode(params)}", content=body)


def test_query_window_is_sliced_paged_and_resumed(tmp_path, server, arxiv_dir):
    days = [date(2025, 1, 1), date(2025, 1, 2)]
    _window_routes(server, arxiv_dir, "cat:cs.SE", days, per_day=5, page_size=3)
    kw = dict(arxiv_query="cat:cs.SE", date_from=days[0], date_to=days[-1], work_dir=tmp_path / "work", progress=False)
    with ArxivClient(base_url=f"{server.url}/api", min_interval_s=0, page_size=3) as c:
        got = source_papers(client=c, **kw)
    assert len(got) == 10 and all(folder is None for _, folder in got)
    assert len(server.requests) == 4 and server.unmatched == []  # two slices, two pages each
    with ArxivClient(base_url=f"{server.url}/api", min_interval_s=0, page_size=3) as c:
        again = source_papers(client=c, **kw)
    assert again == got and len(server.requests) == 4  # finished slices read back, no request


def test_query_limit_stops_early_and_does_not_keep_a_cut_slice(tmp_path, server, arxiv_dir):
    days = [date(2025, 1, 1), date(2025, 1, 2)]
    _window_routes(server, arxiv_dir, "cat:cs.SE", days, per_day=5, page_size=2)  # the limit asks for 2
    with ArxivClient(base_url=f"{server.url}/api", min_interval_s=0, page_size=3) as c:
        first = source_papers(
            client=c,
            arxiv_query="cat:cs.SE",
            date_from=days[0],
            date_to=days[1],
            limit=2,
            work_dir=tmp_path,
            progress=False,
        )
    assert len(first) == 2 and len(server.requests) == 1
    assert not list(tmp_path.rglob("*.jsonl"))


def test_a_slice_ending_today_is_asked_again(tmp_path, server, arxiv_dir):
    today = datetime.now(timezone.utc).date()
    days = [today - timedelta(days=1), today]
    _window_routes(server, arxiv_dir, "cat:cs.SE", days, per_day=2, page_size=5)
    kw = dict(arxiv_query="cat:cs.SE", date_from=days[0], date_to=days[1], work_dir=tmp_path, progress=False)
    for _ in range(2):
        with ArxivClient(base_url=f"{server.url}/api", min_interval_s=0, page_size=5) as c:
            assert len(source_papers(client=c, **kw)) == 4
    asked = [dict(r.query)["search_query"] for r in server.requests]
    assert sum(q.endswith(f"[{today:%Y%m%d}0000 TO {today:%Y%m%d}2359]") for q in asked) == 2
    assert len(asked) == 3


def test_argument_errors(tmp_path, latex_dir):
    with pytest.raises(ValueError, match="exactly one of"):
        source_papers()
    with pytest.raises(ValueError, match="exactly one of"):
        source_papers(papers=latex_dir, arxiv_query="cat:cs.*")
    with pytest.raises(ValueError, match="arxiv_query only"):
        source_papers(papers=latex_dir, date_from=date(2025, 1, 1))
    with pytest.raises(ValueError, match="limit must be at least 1"):
        source_papers(papers=latex_dir, limit=0)
    with pytest.raises(ValueError, match="neither a folder"):
        source_papers(papers=tmp_path / "missing", client=ArxivClient(base_url="http://127.0.0.1:9"))


def test_names_and_ids():
    assert folder_arxiv_id("2502.01113v2") == ("2502.01113", 2)
    assert folder_arxiv_id("arXiv-2502.01113") == ("2502.01113", None)
    assert folder_arxiv_id("hep-th_9901001") == ("hep-th/9901001", None)
    assert folder_arxiv_id("acl-template") is None
    assert folder_paper_id("Notes and Drafts!") == "notes-and-drafts" and folder_paper_id("***").startswith("paper-")
