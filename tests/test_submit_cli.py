"""``rqbench submit``: to the local store and to a launched Space, and the documented path end to end.

Issue 23, items 2 and 3. The Space is the real app (``build_app`` + ``launch_options``) on a free
loopback port; ``rqbench submit --space URL`` reaches it through ``gradio_client`` as it would reach
a Space anywhere. The end-to-end test walks docs/evaluate.md's path offline on the scripted server:
generate -> validate -> submit to the Space -> a --limit 1 trial (judge, worker --instances 1) that shows 1 of 4
-> worker -> the leaderboard row (issue 23, item 1's "Done when").
"""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import evaluate_factory as F
import pytest

from rqbench.cli import main


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def build(tmp_path):
    bench = F.benchmark(3)
    F.write_build(bench, tmp_path / "build")
    return bench, tmp_path / "build"


def write_folder(folder: Path, rq_ids, model: str = "team/model-x", *, kind: bool = False) -> Path:
    """A submission folder as written by hand following docs/evaluate.md's worked example."""
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "model": model,
        "provider": "team",
        "model_type": "open",
        "knowledge_cutoff": "2024-06-30",
        "parameters": {"temperature": 0.7},
        "prompt_variant": "original",
        "contact": "team@example.org",
    }
    if kind:
        meta = {"kind": "metadata", **meta}
    (folder / "metadata.json").write_text(json.dumps(meta, indent=2))
    lines = [{"rq_id": r, "research_questions": F.five(r)} for r in rq_ids]
    (folder / "submission.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def test_the_worked_example_in_the_docs_is_a_complete_valid_submission(tmp_path, capsys):
    """docs/evaluate.md's example, as printed: valid against a dataset with its two rq_ids, without a warning."""
    from rqbench.evaluate.benchmark.source import Benchmark
    from rqbench.evaluate.generate.submission_files import validate_submission
    from rqbench.records import EvaluationInstance

    doc = (Path(__file__).resolve().parent.parent / "docs" / "evaluate.md").read_text(encoding="utf-8")
    section = doc.split("### 2. A complete small submission", 1)[1].split("### 3.", 1)[0]
    meta, entries = re.findall(r"```json\n(.*?)```", section, re.S)
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "metadata.json").write_text(meta)
    (folder / "submission.jsonl").write_text(entries)
    ids = ["2501.00001_rq0", "2501.00002_rq0"]
    insts = [
        EvaluationInstance(
            rq_id=r,
            gt_rq="How far does the method carry?",
            arxiv_id=r.split("_")[0],
            subfield="cs.CL",
            background_paper_ids=["p0"],
        )
        for r in ids
    ]
    F.write_build(Benchmark(insts, {"p0": F.paper("p0")}, "doc", "v"), tmp_path / "build")
    report = validate_submission(folder, ids)
    assert report.ok and report.problems == [] and report.flagged == [], [str(p) for p in report.problems]
    assert report.metadata.knowledge_cutoff.isoformat() == "2024-06-30" and report.metadata.model_type == "open"
    # and the commands the section lists, from validate to the request id
    assert (
        main(
            [
                "submit",
                str(folder),
                "--dataset",
                str(tmp_path / "build"),
                "--name",
                "acme",
                "--store",
                str(tmp_path / "store"),
                "--out",
                str(tmp_path / "sub.jsonl"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "request " in out and "acme/rq-writer-7b, 2 instance(s) with five RQs, status pending" in out
    assert validate_submission(tmp_path / "sub.jsonl", ids).submission_hash == report.submission_hash


# -- the local store --------------------------------------------------------------------------------------------


def test_submit_a_folder_to_the_local_store_prints_the_request_and_how_to_follow_it(build, tmp_path, capsys):
    bench, root = build
    folder = write_folder(tmp_path / "sub", bench.rq_ids)
    store = tmp_path / "store"
    packed = tmp_path / "packed.jsonl"
    rc = main(
        ["submit", str(folder), "--dataset", str(root), "--name", "alice", "--store", str(store), "--out", str(packed)]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    from rqbench.space.stores import SpaceStores

    (req,) = SpaceStores.local(store).requests.all()
    assert req.user == "alice" and req.metadata.model == "team/model-x" and req.instances == 3
    assert f"request {req.request_id} queued in the local store" in out and "status pending" in out
    assert f"rqbench worker --list --store {store}" in out and "rqbench worker --dry-run" in out
    assert json.loads(packed.read_text().splitlines()[0])["kind"] == "metadata"
    assert main(["worker", "--list", "--store", str(store)]) == 0
    assert f"1. {req.request_id}  team/model-x  from alice" in capsys.readouterr().out


@pytest.mark.parametrize("case", ["no-kind", "partial", "dead-space", "no-dataset-local", "unknown-revision"])
def test_submit_errors_are_named_for_the_command_line_without_a_traceback(build, tmp_path, capsys, case):
    bench, root = build
    store = ["--store", str(tmp_path / "store")]
    if case == "no-kind":
        f = tmp_path / "sub.jsonl"
        f.write_text(
            json.dumps({"model": "m", "model_type": "open"})
            + "\n"
            + "".join(json.dumps({"rq_id": r, "research_questions": F.five(r)}) + "\n" for r in bench.rq_ids)
        )
        args, rc, needle = (
            [str(f), "--dataset", str(root)],
            1,
            'line 1 looks like the metadata record but has no "kind"',
        )
    elif case == "partial":
        folder = write_folder(tmp_path / "sub", bench.rq_ids[:2])
        args, rc, needle = [str(folder), "--dataset", str(root)], 1, "(a partial submission needs --allow-partial)"
    elif case == "dead-space":
        folder = write_folder(tmp_path / "sub", bench.rq_ids)
        url = f"http://127.0.0.1:{_free_port()}/"
        args, rc, needle = [str(folder), "--no-dataset", "--space", url], 2, f"cannot reach the Space at {url}"
    elif case == "no-dataset-local":
        folder = write_folder(tmp_path / "sub", bench.rq_ids)
        args, rc, needle = [str(folder), "--no-dataset"], 2, "--no-dataset needs --space"
    else:
        folder = write_folder(tmp_path / "sub", bench.rq_ids)
        args, rc, needle = [str(folder), "--dataset", str(root), "--revision", "v9.9.9"], 2, "has no revisions"
    assert main(["submit", *args, *store, "--name", "alice"]) == rc
    got = capsys.readouterr()
    assert needle in got.out + got.err and "Traceback" not in got.out + got.err, got
    assert not (tmp_path / "store" / "requests").exists() or not list((tmp_path / "store" / "requests").iterdir())
    if case == "partial":
        assert "nothing was sent" in got.err and "box" not in got.out + got.err


# -- a launched Space -------------------------------------------------------------------------------------------


class LaunchedSpace:
    """The real app on a loopback port, checking submissions against ``bench`` and storing them under ``root``."""

    def __init__(self, root: Path, bench):
        from rqbench.space.stores import SpaceStores
        from rqbench.space.submit import BenchmarkTarget
        from rqbench.space.ui import SpaceConfig, build_app, launch_options

        self.store_dir = root / "store"
        self.stores = SpaceStores.local(self.store_dir)
        self.config = SpaceConfig(
            stores=self.stores, target=BenchmarkTarget(bench.repo, bench.revision, tuple(bench.rq_ids)), n_boot=50
        )
        self.demo = build_app(self.config)
        port = _free_port()
        self.demo.queue().launch(
            server_name="127.0.0.1",
            server_port=port,
            prevent_thread_lock=True,
            quiet=True,
            **launch_options(self.config, self.demo),
        )
        self.url = f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module")
def space(tmp_path_factory):
    from rqbench.evaluate.benchmark.source import load_benchmark

    root = tmp_path_factory.mktemp("space")
    F.write_build(F.benchmark(4), root / "build")
    before = os.environ.get("GRADIO_TEMP_DIR")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-uploads")
    try:
        launched = LaunchedSpace(root, load_benchmark(root / "build"))
        launched.build = root / "build"
        yield launched
        launched.demo.close()
    finally:
        if before is None:
            os.environ.pop("GRADIO_TEMP_DIR", None)
        else:
            os.environ["GRADIO_TEMP_DIR"] = before


def test_submit_to_a_launched_space_queues_a_request_there(space, tmp_path, capsys):
    bench = F.benchmark(4)
    folder = write_folder(tmp_path / "sub", bench.rq_ids, model="team/space-model")
    rc = main(["submit", str(folder), "--space", space.url, "--dataset", str(space.build), "--name", "carol"])
    out = capsys.readouterr().out
    assert rc == 0, out
    (req,) = [r for r in space.stores.requests.all() if r.user == "carol"]
    assert f"request {req.request_id} queued in the Space at {space.url}" in out
    assert f"{space.url}?tab=submit" in out and req.instances == 4 and req.metadata.model == "team/space-model"
    assert req.metadata.contact == "team@example.org"  # private request keeps it; results never will


def test_the_spaces_refusal_is_reworded_for_the_command_line(space, tmp_path, capsys):
    """Checked only by the Space (--no-dataset): its problems name the page's box; the command line names its flag."""
    folder = write_folder(tmp_path / "sub", F.benchmark(4).rq_ids[:1], model="team/partial-model")
    rc = main(["submit", str(folder), "--space", space.url, "--no-dataset", "--name", "dave"])
    got = capsys.readouterr()
    assert rc == 1
    assert f"the Space at {space.url} refused it (3 problem(s)); nothing was queued" in got.err
    assert got.err.count("(a partial submission needs --allow-partial)") == 3 and "box" not in got.err
    assert main(["submit", str(folder), "--space", space.url, "--no-dataset", "--name", "dave", "--allow-partial"]) == 0
    (req,) = [r for r in space.stores.requests.all() if r.user == "dave"]
    assert req.partial and req.instances == 1


def test_the_documented_path_from_generation_to_a_leaderboard_row(space, tmp_path, capsys, monkeypatch):
    """docs/evaluate.md, "From generation to a leaderboard row", offline: every command as a team runs it, with
    a --limit 1 trial first (judge and worker) that shows 1 of 4 and is never ranked beside the full run."""
    from rqbench.space import leaderboard as lb
    from rqbench.space.ui import SpaceData
    from rqbench.testing.scripted_server import ScriptedServer

    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # litellm wants one; the scripted server ignores it
    sub = tmp_path / "sub"
    with ScriptedServer(F.judge_reply) as srv:
        spec = F.scripted_spec(srv)
        assert (
            main(
                [
                    "generate",
                    "--model",
                    spec,
                    "--dataset",
                    str(space.build),
                    "--out",
                    str(sub),
                    "--contact",
                    "team@example.org",
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "4/4 instances with five RQs" in out and re.search(r"run id \w+ \(rqbench calls --run", out)
        assert main(["validate", str(sub), "--dataset", str(space.build)]) == 0
        assert "valid: 0 error(s)" in capsys.readouterr().out
        assert main(["submit", str(sub), "--space", space.url, "--dataset", str(space.build), "--name", "erin"]) == 0
        rid = re.search(r"request (\w+) queued in the Space", capsys.readouterr().out).group(1)
        assert main(["worker", "--list", "--store", str(space.store_dir)]) == 0
        assert rid in capsys.readouterr().out
        # a trial first, on the command line: the first instance of the four the submission holds, 1 of 4
        assert (
            main(
                [
                    "judge",
                    str(sub),
                    "--judge",
                    spec,
                    "--setting",
                    "standalone",
                    "--dataset",
                    str(space.build),
                    "--limit",
                    "1",
                    "--out",
                    str(tmp_path / "trial"),
                ]
            )
            == 0
        )
        out = capsys.readouterr().out
        assert "not an rq_id" not in out and "TRIAL, the first 1 of 4 instances only (--limit 1)" in out
        assert "1 of 4 instances scored" in out
        # and by the worker: published as a trial, the request left waiting for its full run
        worker = ["worker", "--once", "--store", str(space.store_dir), "--dataset", str(space.build)]
        assert main([*worker, "--instances", "1", "--judge", spec, "--setting", "standalone"]) == 0
        out = capsys.readouterr().out
        assert f"request {rid}: pending: trial: the first 1 of 4 instances judged" in out, out
        assert space.stores.requests.get(rid).status == "pending"
        model = space.stores.requests.get(rid).metadata.model
        table = SpaceData(space.config).refresh().table
        assert model not in set(lb.render(table, lb.View())["Model"])  # never ranked beside full runs
        trials = lb.render(table, lb.View(trials=True))
        assert list(trials[trials["Model"] == model]["Scored"]) == ["1/4 trial"]
        # two configurations of one judge at one address: labels alike for their first 80 characters
        assert main([*worker, "--judge", spec, "--judge", spec + ",temperature=0.5", "--setting", "standalone"]) == 0
        out = capsys.readouterr().out
    assert f"request {rid}: finished" in out
    assert space.stores.requests.get(rid).status == "finished"
    data = SpaceData(space.config).refresh()
    assert any(r.model == model for r in data.rows), [r.model for r in data.rows]
    ranked = lb.render(data.table, lb.View())
    assert set(ranked[ranked["Model"] == model]["Scored"]) == {"4/4"}  # the full run's row, ranked
    trials = lb.render(data.table, lb.View(trials=True))
    assert list(trials[trials["Model"] == model]["Scored"]) == ["1/4 trial"]  # the trial's, still apart
    results, problems = space.stores.results.load()
    assert problems == [] and all(r.submission.contact == "" for r in results)
    mine = [r for r in results if r.submission.model == model]
    full = [r for r in mine if r.trial is None]
    assert len(full) == 2 and len({r.judge.label for r in full}) == 2  # each judge's file reached the store
    assert [(r.trial, r.instances_expected, len(r.instances)) for r in mine if r.trial] == [(1, 4, 1)]
