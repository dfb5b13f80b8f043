"""RQ-Bench Live end to end: v0.1.0 from one month, v0.2.0 from the papers after it, then ``judge --only-new``.

Two fixture papers' LaTeX sit in folders named by arXiv ids; arXiv's answer to
the id lookup is real: the two entries of the recorded ``testing`` feed in
``../shared/fixtures/arxiv_api`` (2502.07719, first posted 2025-02-11, and
2503.05378, 2025-03-07), re-served as one ``id_list`` reply. Everything runs as
a user runs it, through ``rqbench.cli.main``; the LLM steps answer from the
scripted server.
"""

from __future__ import annotations

import json
from datetime import date
from urllib.parse import urlencode

import evaluate_factory as F
import pyarrow.parquet as pq
import pytest
from builder_script import make_cited_sources, reply_for
from replay_server import ReplayServer, pick_entries

from rqbench.cli import main
from rqbench.evaluate.judge.run import read_results

FEB, MAR = "2502.07719", "2503.05378"
FOLDERS = {FEB: "attention-sink-gpt2", MAR: "inlg2024-ngram-gec"}
FAVOURITE = "gu2025when"


@pytest.fixture
def arxiv(fixtures_dir, monkeypatch):
    """arXiv on 127.0.0.1, answering the lookup of the two folders' ids with the recorded entries."""
    feed = fixtures_dir / "arxiv_api" / "arxiv.py_fixtures" / "q_testing_s0_m10_bc5a6c384fe9.xml"
    ids = sorted(FOLDERS)
    params = {
        "search_query": "",
        "id_list": ",".join(ids),
        "sortBy": "relevance",
        "sortOrder": "descending",
        "start": 0,
        "max_results": 500,
    }
    with ReplayServer() as srv:
        srv.add(
            "GET",
            f"/api/query?{urlencode(params)}",
            content=pick_entries(feed.read_bytes(), ids),
            headers={"Content-Type": "application/atom+xml; charset=UTF-8"},
            source=feed.name,
        )
        monkeypatch.setenv("RQB_ARXIV_API_URL", f"{srv.url}/api")
        monkeypatch.setenv("RQB_ARXIV_INTERVAL_S", "0")
        yield srv


def _rows(repo, tag, config):
    from rqbench.dataset_card.repo import materialize

    folder, _ = materialize(repo, tag)
    return [r for f in sorted((folder / "data" / config).glob("test-*.parquet")) for r in pq.read_table(f).to_pylist()]


def _judge_requests(requests):
    return [r for r in requests if r.step.split("_")[0] in ("novelty", "narrowness", "overlap")]


def test_two_monthly_releases_and_judging_only_the_new_instances(
    tmp_path, fixtures_dir, scripted_server, arxiv, monkeypatch, capsys
):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # litellm wants one; the scripted server ignores it
    spec = F.scripted_spec(scripted_server)
    papers = tmp_path / "papers"
    papers.mkdir()
    for arxiv_id, name in FOLDERS.items():
        (papers / arxiv_id).symlink_to(fixtures_dir / "latex" / name, target_is_directory=True)
    repo, results = tmp_path / "rq-bench", tmp_path / "results"
    build_args = [
        "--papers",
        str(papers),
        "--cited-sources",
        str(make_cited_sources(tmp_path / "cited")),
        "--max-cited-per-paper",
        "4",
        "--allow-abstract-only",
        "--concurrency",
        "1",
        "--no-progress",
        *(a for role in ("strong", "light", "labeller") for a in (f"--model-{role}", spec)),
    ]

    # -- v0.1.0: the papers first posted in February 2025 ------------------------------------------------
    scripted_server.responder = lambda req: reply_for(req, prefer_key=FAVOURITE)
    assert main(["build", "--window", "2025-02", "--out", str(tmp_path / "b1"), *build_args]) == 0
    assert main(["publish", str(tmp_path / "b1"), "--version", "0.1.0", "--to", str(repo)]) == 0
    v1_instances = _rows(repo, "v0.1.0", "instances")
    assert {r["arxiv_id"] for r in v1_instances} == {FEB} and v1_instances
    assert {(r["paper_published"], r["paper_published_source"]) for r in v1_instances} == {("2025-02-11", "arxiv_api")}

    scripted_server.responder = F.judge_reply
    sub1 = tmp_path / "sub1"
    assert main(["generate", "--model", spec, "--dataset", str(repo), "--revision", "v0.1.0", "--out", str(sub1)]) == 0
    assert (
        main(
            [
                "judge",
                str(sub1),
                "--judge",
                spec,
                "--dataset",
                str(repo),
                "--revision",
                "v0.1.0",
                "--out",
                str(results),
                "--setting",
                "both",
            ]
        )
        == 0
    )
    v1_results = {read_results(p).judge.setting: read_results(p) for p in results.glob("*.json")}
    assert set(v1_results) == {"standalone", "comparative"}

    # -- v0.2.0: the papers newer than v0.1.0's newest, published as the union -------------------------
    scripted_server.responder = lambda req: reply_for(req, prefer_key=FAVOURITE)
    capsys.readouterr()
    assert (
        main(["build", "--since-release", "latest", "--dataset", str(repo), "--out", str(tmp_path / "b2"), *build_args])
        == 0
    )
    assert "papers newer than 2025-02-11T17:23:52+00:00 (the newest paper of v0.1.0" in capsys.readouterr().err
    new_instances = [json.loads(line) for line in (tmp_path / "b2" / "records" / "instances.jsonl").open()]
    assert {r["arxiv_id"] for r in new_instances} == {MAR}  # only the new paper was built
    assert main(["publish", str(tmp_path / "b2"), "--to", str(repo)]) == 0  # the version: the next minor
    assert json.loads(capsys.readouterr().out)["version"] == "0.2.0"

    v2_instances = _rows(repo, "v0.2.0", "instances")
    assert len(v2_instances) == len(v1_instances) + len(new_instances)
    assert all(r in v2_instances for r in v1_instances)  # v0.1.0's rows, unchanged
    assert {r["arxiv_id"]: r["paper_published"] for r in v2_instances} == {FEB: "2025-02-11", MAR: "2025-03-07"}
    assert {r["paper"]["arxiv_id"] for r in _rows(repo, "v0.2.0", "papers")} == {FEB, MAR}
    assert len(_rows(repo, "v0.2.0", "rqs")) == len(v2_instances)
    release = json.loads((repo / "release.json").read_text())
    assert release["added"]["extends"] == "v0.1.0"
    assert release["added"]["months"] == {"2025-03": {"papers": 1, "rqs": len(new_instances)}}
    card = (repo / "README.md").read_text()
    (entry2,) = [line for line in card.splitlines() if line.startswith("- **v0.2.0**")]
    (entry1,) = [line for line in card.splitlines() if line.startswith("- **v0.1.0**")]
    assert "Extends v0.1.0 with its rows unchanged." in entry2
    assert f"Added 2025-03: 1 paper, {len(new_instances)} RQs." in entry2
    assert "Papers removed by keep rule: latex 0" in entry2
    assert f"Built whole; papers by first-version month: 2025-02: 1 paper, {len(v1_instances)} RQs." in entry1
    assert "`paper_published`" in card  # the card documents the date column

    # -- re-judging: generation is answered by the cache for the old instances; --only-new judges the new --
    scripted_server.responder = F.judge_reply
    sub2, n = tmp_path / "sub2", len(scripted_server.requests)
    assert main(["generate", "--model", spec, "--dataset", str(repo), "--revision", "v0.2.0", "--out", str(sub2)]) == 0
    assert len(scripted_server.requests) - n == len(new_instances)  # one generation per new instance
    monkeypatch.setenv("RQB_CALLS_DB", str(tmp_path / "another-machine.db"))  # not the cache that saves the rest
    judge = [
        "judge",
        str(sub2),
        "--judge",
        spec,
        "--dataset",
        str(repo),
        "--revision",
        "v0.2.0",
        "--out",
        str(results),
        "--setting",
        "both",
        "--only-new",
    ]
    capsys.readouterr()
    assert main([*judge, "--dry-run"]) == 0
    dry = int(capsys.readouterr().out.split("dry run: ", 1)[1].split(" calls", 1)[0])
    n = len(scripted_server.requests)
    assert main(judge) == 0
    sent = _judge_requests(scripted_server.requests[n:])
    assert len(sent) == len(scripted_server.requests) - n > 0
    assert "only new: 2 instance(s) judged now, 2 kept from" in capsys.readouterr().out

    # every request is about a new instance: novelty and narrowness prompts carry its background papers, never
    # one only an old instance has (the scripted RQs repeat across papers, so the backgrounds tell them apart);
    # overlap prompts carry no background: at most one per new instance
    cited = {r["paper_id"]: r["title"] for r in _rows(repo, "v0.2.0", "cited_papers")}
    old_bg = {p for r in v1_instances for p in r["background_paper_ids"]}
    new_bg = {p for r in new_instances for p in r["background_paper_ids"]}
    new_titles, old_titles = {cited[p] for p in new_bg}, {cited[p] for p in old_bg - new_bg}
    assert old_titles, "the two papers must have backgrounds of their own for this test to tell them apart"
    with_background = [r for r in sent if r.step != "overlap"]
    for req in with_background:
        text = "\n".join(m["content"] for m in req["messages"])
        assert any(t in text for t in new_titles) and not any(t in text for t in old_titles), req.step
    assert 0 < len(sent) - len(with_background) <= len(new_instances)
    merged = {read_results(p).judge.setting: read_results(p) for p in results.glob("*.json")}
    assert set(merged) == {"standalone", "comparative"} and len(list(results.glob("*.json"))) == 2  # replaced
    # the dry run's count: the calls sent, plus the repeats within the run that the cache answered
    assert dry == len(sent) + sum(rf.totals.cache_hits for rf in merged.values())
    for setting, rf in merged.items():
        old = v1_results[setting]
        assert rf.dataset_revision == "v0.2.0"
        assert sorted(i.rq_id for i in rf.instances) == sorted(r["rq_id"] for r in v2_instances)
        kept = {i.rq_id: i for i in rf.instances if i.arxiv_id == FEB}
        assert [kept[i.rq_id].raw_replies for i in old.instances] == [i.raw_replies for i in old.instances]
        assert {i.paper_published for i in rf.instances} == {date(2025, 2, 11), date(2025, 3, 7)}
        assert rf.settings["carried"] == {
            "instances": len(old.instances),
            "from_revision": "v0.1.0",
            "from_file": rf.settings["carried"]["from_file"],
            "judged_now": len(new_instances),
        }
        assert rf.totals.calls == old.totals.calls + sum(
            1 for r in sent if r.step.endswith(setting) or (r.step == "overlap" and setting == "standalone")
        )
    assert arxiv.unmatched == []


# --------------------------------------------------------------------------
# the window of a rolling build
# --------------------------------------------------------------------------


def test_a_window_admits_only_dated_papers_strictly_newer_than_the_release_and_in_its_month():
    from datetime import datetime, timezone

    from rqbench.records import SourcePaper, SourceWindow

    def paper(when):
        return SourcePaper(arxiv_id="2503.00001", title="T", primary_category="cs.CL", published=when)

    newest = datetime(2025, 2, 11, 17, 23, 52, tzinfo=timezone.utc)
    since = SourceWindow(since_release="v0.1.0", dataset="d", after=newest)
    assert not since.admits(paper(newest))
    assert since.admits(paper(datetime(2025, 2, 11, 17, 23, 53, tzinfo=timezone.utc)))
    assert not since.admits(paper(datetime(2025, 2, 11, 12, 0)))  # a naive time is UTC
    assert not since.admits(paper(None))  # undated: no window can hold it
    march = SourceWindow(after=newest, month="2025-03")
    assert march.admits(paper(datetime(2025, 3, 31, 23, 59, tzinfo=timezone.utc)))
    assert not march.admits(paper(datetime(2025, 4, 1, 0, 30, tzinfo=timezone.utc)))
    # the arXiv days to ask: from the newest paper's day, to yesterday, or to the month's end, or to --to
    assert since.query_dates(date(2025, 3, 20)) == (date(2025, 2, 11), date(2025, 3, 19))
    assert march.query_dates(date(2025, 6, 1)) == (date(2025, 3, 1), date(2025, 3, 31))
    assert since.query_dates(date(2025, 6, 1), date(2025, 2, 28)) == (date(2025, 2, 11), date(2025, 2, 28))
    with pytest.raises(ValueError, match="no finished day to query yet"):
        SourceWindow(month="2025-03").query_dates(date(2025, 3, 1))


def test_a_rolling_arxiv_build_queries_the_windows_days(tmp_path):
    from datetime import datetime, timezone

    from rqbench.builder.build_config import BuildConfig
    from rqbench.records import SourceWindow

    window = SourceWindow(
        since_release="v0.1.0", dataset="d", after=datetime(2025, 2, 11, 17, 0, tzinfo=timezone.utc), month="2025-02"
    )
    config = BuildConfig(out=tmp_path, arxiv_query="cat:cs.*", window=window)
    assert (config.date_from, config.date_to) == (date(2025, 2, 11), date(2025, 2, 28))
    assert config.inputs_record()["window"]["since_release"] == "v0.1.0"
    assert "window" not in BuildConfig(out=tmp_path, papers=tmp_path).inputs_record()  # unchanged without one


def test_a_window_build_refuses_undated_folders_by_name(tmp_path, fixtures_dir, capsys):
    papers = tmp_path / "papers"
    papers.mkdir()
    (papers / "my-draft").symlink_to(fixtures_dir / "latex" / "attention-sink-gpt2", target_is_directory=True)
    assert (
        main(
            [
                "build",
                "--papers",
                str(papers),
                "--window",
                "2025-02",
                "--out",
                str(tmp_path / "b"),
                "--no-progress",
                "--dry-run",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "papers first posted in 2025-02: 1 sourced paper(s) have no first-version date (my-draft)" in err
    assert "metadata.json with 'published'" in err


# --------------------------------------------------------------------------
# publishing the union, and what is refused
# --------------------------------------------------------------------------


def test_publish_makes_the_union_the_next_minor_version_and_refuses_a_wrong_base(tmp_path):
    from datetime import datetime, timezone

    from fake_build import make_manifest, make_records, write_build

    from rqbench.dataset_card.card_base import CardSettings
    from rqbench.dataset_card.publish import PublishRefused, publish
    from rqbench.dataset_card.repo import LocalGitTarget
    from rqbench.records import SourceWindow

    repo = tmp_path / "repo"
    target, settings = LocalGitTarget(repo), CardSettings(target="local", repo=str(repo))
    jan = datetime(2025, 1, 2, tzinfo=timezone.utc)
    publish(write_build(tmp_path / "b1", make_records(2, 1, published=jan)), "0.1.0", target, settings)
    base_fp = json.loads((repo / "release.json").read_text())["data_fingerprint"]

    def rolling(name, records, fingerprint):
        window = SourceWindow(since_release="v0.1.0", dataset=str(repo), after=jan, base_data_fingerprint=fingerprint)
        manifest = make_manifest(records, name).model_copy(
            update={"inputs": {"window": window.model_dump(mode="json")}}
        )
        return write_build(tmp_path / name, records, manifest=manifest)

    with pytest.raises(PublishRefused, match="give --version X.Y.Z"):
        publish(write_build(tmp_path / "whole", make_records(1, 1, first=5)), None, target, settings)
    new = make_records(2, 2, first=2, published=datetime(2025, 2, 3, tzinfo=timezone.utc))
    with pytest.raises(PublishRefused, match="is not the release the build was made from"):
        publish(rolling("b-other", new, "b2:elsewhere"), None, target, settings)
    twice = r"(?s)does not hold together.*<v0.1.0 \+ .*b-again>/records/papers.jsonl: duplicate paper.paper_id"
    with pytest.raises(PublishRefused, match=twice):
        publish(rolling("b-again", make_records(2, 1, published=jan), base_fp), None, target, settings)

    done = publish(rolling("b2", new, base_fp), None, target, settings)
    assert str(done.version) == "0.2.0" and done.release.splits["papers"]["test"] == 4
    assert done.release.added.extends == "v0.1.0"
    assert done.release.added.months == {"2025-02": {"papers": 2, "rqs": 4}}
    manifest = json.loads((repo / "build" / "manifest.json").read_text())
    assert manifest["counts"]["rqs"] == 6 and manifest["inputs"]["base_release"]["tag"] == "v0.1.0"
    assert manifest["dropped"] == {"no_cited_text": 4, "verification_failed": 2}  # both builds' drops
    sample = json.loads((repo / "build" / "manual_validation_sample.json").read_text())
    assert len(sample["rq_ids"]) == 4 and "v0.1.0's sample (2 ids)" in sample["joined"]
    with pytest.raises(PublishRefused, match="the build extends v0.1.0, but the newest release .* is v0.2.0"):
        publish(rolling("b3", make_records(1, 1, first=9), base_fp), None, target, settings)


def test_a_rolling_arxiv_query_asks_the_windows_days_and_keeps_papers_newer_than_the_release(
    tmp_path, fixtures_dir, monkeypatch
):
    """The query path of a monthly refresh, on arXiv's recorded entries: one request per day of the window."""
    from datetime import datetime, timedelta, timezone

    from rqbench.builder.build_config import BuildConfig
    from rqbench.builder.input_stages import source_stage
    from rqbench.records import SourceWindow

    recorded = fixtures_dir / "arxiv_api" / "arxiv.py_fixtures"
    feed = (recorded / "q_testing_s0_m10_bc5a6c384fe9.xml").read_bytes()
    empty = (recorded / "id_0000.0000_s0_m100_8b51d9633a68.xml").read_bytes()  # a real reply with no entry
    posted = {date(2025, 2, 11): FEB, date(2025, 3, 7): MAR}  # the entries' first-version days
    window = SourceWindow(
        since_release="v0.1.0", dataset="d", after=datetime(2025, 2, 11, 17, 23, 52, tzinfo=timezone.utc)
    )
    config = BuildConfig(out=tmp_path, arxiv_query="cat:cs.SE", window=window, date_to=date(2025, 3, 10))
    days = [config.date_from + timedelta(days=n) for n in range((config.date_to - config.date_from).days + 1)]
    assert (days[0], len(days)) == (date(2025, 2, 11), 28)
    with ReplayServer() as srv:
        for d in days:
            params = {
                "search_query": f"cat:cs.SE AND submittedDate:[{d:%Y%m%d}0000 TO {d:%Y%m%d}2359]",
                "id_list": "",
                "sortBy": "submittedDate",
                "sortOrder": "ascending",
                "start": 0,
                "max_results": 500,
            }
            srv.add(
                "GET",
                f"/api/query?{urlencode(params)}",
                content=pick_entries(feed, [posted[d]]) if d in posted else empty,
            )
        monkeypatch.setenv("RQB_ARXIV_API_URL", f"{srv.url}/api")
        monkeypatch.setenv("RQB_ARXIV_INTERVAL_S", "0")
        got = source_stage({}, inputs=config.inputs_record(), work_dir=str(tmp_path / "slices"), progress=False)
        assert len(srv.requests) == len(days) and srv.unmatched == []
    # 2502.07719 is the release's newest paper itself (not newer): only the March paper is sourced
    assert [(s.arxiv_id, s.paper.first_version()) for s in got] == [(MAR, (date(2025, 3, 7), "arxiv_api"))]
