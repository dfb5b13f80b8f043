"""A leaderboard row's reproduction bundle: made from the call log, re-scored from the zip alone with no call,
byte for byte; a changed member, a missing call, a corrupt zip and a row that does not exist are named errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import evaluate_factory as F
import pytest

from rqbench import paths
from rqbench.cli import main
from rqbench.evaluate.bundle.rescore import rescore
from rqbench.llm import CallStore
from rqbench.llm.config import public_label


@pytest.fixture
def judged(tmp_path, scripted_server, monkeypatch):
    """A build of 3 instances, a submission whose first instance failed generation, judged standalone by the
    scripted judge; one narrowness reply is not JSON the first time, so its call was re-asked."""
    bench = F.benchmark(3)
    root = tmp_path / "build"
    F.write_build(bench, root)
    sub = F.submission(bench, tmp_path / "sub", failed={bench.rq_ids[0]})
    asked = {"once": False}

    def refuse_once(req):
        if not asked["once"] and "Question 3 about 2501.00001" in F.candidates_of(req)[0]:
            asked["once"] = True
            return "not JSON"
        return None

    scripted_server.responder = F.responder_with({"narrowness_standalone": refuse_once})
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    spec = F.scripted_spec(scripted_server)
    assert main(["judge", str(sub.path), "--judge", spec, "--setting", "standalone", "--dataset", str(root),
                 "--allow-partial"]) in (0, 1)  # fmt: skip
    assert asked["once"]
    return root, sub, public_label(spec)


def _bundle(root, judge, out, *extra) -> int:
    args = ["bundle", "--model", "test-model", "--setting", "standalone", "--judge", judge, "--dataset", str(root)]
    return main([*args, "--n-boot", "200", "--out", str(out), *extra])


def _rescore_in_subprocess(bundle, env_home):
    env = {k: v for k, v in os.environ.items() if not k.endswith("API_KEY")}
    env["RQB_HOME"] = str(env_home)  # a home with no call log: the bundle's calls are all it has
    code = "import sys; from rqbench.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, "rescore", str(bundle)], capture_output=True, env=env)


def test_a_row_rescored_from_its_bundle_with_no_server_is_byte_identical(judged, scripted_server, tmp_path):
    root, sub, judge = judged
    bundle = tmp_path / "row.zip"
    assert _bundle(root, judge, bundle, "--submission", str(sub.path)) == 0
    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
        stored_row = zf.read("row.json")
        manifest = json.loads(zf.read("manifest.json"))
        calls = [json.loads(line) for line in zf.read("calls.jsonl").splitlines()]
        everything = b"".join(zf.read(n) for n in names)
    assert {"row.json", "calls.jsonl", "submission.jsonl", "README.txt", "dataset/instances.jsonl"} <= names
    # instance 0 failed generation: no calls. Per judged instance, 6 candidates (gt + 5): novelty 6 calls,
    # narrowness 6 per background paper, overlap 1. Instance 1 has 2 papers: 6 + 12 + 1 = 19; instance 2 has
    # 1: 6 + 6 + 1 = 13; 19 + 13 = 32 first asks, + 1 re-ask of the reply that was not JSON = 33 calls
    assert len(calls) == manifest["calls"] == len({c["key"] for c in calls}) == 33
    assert [c["step"] for c in calls if c["step"].endswith(":reask")] == ["narrowness_standalone:reask"]
    assert all(m["name"] != "manifest.json" for m in manifest["members"])
    assert manifest["judges"][0]["provider_models"] == ["scripted"]  # the model the scripted server's replies named
    assert b"api_base" not in everything and b"127.0.0.1" not in everything  # public labels only
    requests_before = len(scripted_server.requests)
    scripted_server.__exit__(None, None, None)  # no server anywhere now
    got = _rescore_in_subprocess(bundle, tmp_path / "empty-home")
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == stored_row
    assert b"byte-identical" in got.stderr
    assert len(scripted_server.requests) == requests_before


def test_rescore_sends_no_request_and_reads_only_the_bundles_calls(judged, scripted_server, tmp_path):
    root, _, judge = judged
    bundle = tmp_path / "row.zip"
    log_rows = _log_rows()
    before = len(scripted_server.requests)
    assert _bundle(root, judge, bundle) == 0  # the submission's RQs taken from the results file
    got = rescore(bundle)
    assert got.identical, got.diff()
    assert len(scripted_server.requests) == before  # the server is up, and hears nothing
    assert _log_rows() == log_rows  # neither bundling nor re-scoring adds a line to the user's call log


def _log_rows() -> int:
    """Every line of the user's call log: requests sent and cache hits."""
    return sum(r["requests"] + r["cache_hits"] for r in CallStore(paths.calls_db()).summary())


def _rewrite(src, dst, change):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, change(info.filename, zin.read(info.filename)))


def test_a_changed_reply_fails_the_manifest_check_naming_the_member(judged, tmp_path, capsys):
    root, _, judge = judged
    bundle, bad = tmp_path / "row.zip", tmp_path / "tampered.zip"
    assert _bundle(root, judge, bundle) == 0

    def tamper(name, data):
        if name != "calls.jsonl":
            return data
        lines = data.decode().splitlines()
        call = json.loads(lines[0])
        call["text"] = (
            call["text"].replace('"relevance": 2', '"relevance": 3').replace('"relevance":2', '"relevance":3')
        )
        call["text"] += " "  # changed for certain, whatever the reply held
        lines[0] = json.dumps(call)
        return ("\n".join(lines) + "\n").encode()

    _rewrite(bundle, bad, tamper)
    assert main(["rescore", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "tampered.zip: member calls.jsonl does not match the manifest" in err


def test_a_call_missing_from_the_bundle_is_named_and_never_sent(judged, scripted_server, tmp_path, capsys):
    root, _, judge = judged
    bundle, short = tmp_path / "row.zip", tmp_path / "short.zip"
    assert _bundle(root, judge, bundle) == 0
    with zipfile.ZipFile(bundle) as zf:
        manifest = json.loads(zf.read("manifest.json"))
        lines = zf.read("calls.jsonl").decode().splitlines()
    dropped = json.loads(lines[-1])
    calls = ("\n".join(lines[:-1]) + "\n").encode()
    # a consistent bundle short of one call: its manifest resealed, so only the missing call can stop it
    for m in manifest["members"]:
        if m["name"] == "calls.jsonl":
            import hashlib

            m["sha256"], m["bytes"] = hashlib.sha256(calls).hexdigest(), len(calls)
    _rewrite(
        bundle,
        short,
        lambda n, d: calls if n == "calls.jsonl" else (json.dumps(manifest).encode() if n == "manifest.json" else d),
    )
    before = len(scripted_server.requests)
    assert main(["rescore", str(short)]) == 2
    err = capsys.readouterr().err
    assert f"call not in the cache: model {dropped['model']}, step {dropped['step']}, key {dropped['key']}" in err
    assert len(scripted_server.requests) == before


def test_bad_input_is_named(judged, tmp_path, capsys):
    root, _, judge = judged
    assert _bundle(root, "no-such-judge", tmp_path / "x.zip") == 2
    err = capsys.readouterr().err
    assert (
        "no leaderboard row for model 'test-model', variant 'original', setting 'standalone', judge 'no-such-judge'"
        in err
    )
    assert f"--judge {judge}" in err  # the rows there are, listed
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"PK\x03\x04 not really a zip")
    assert main(["rescore", str(corrupt)]) == 2
    assert "corrupt.zip: not a readable zip archive" in capsys.readouterr().err
    bundle, bad = tmp_path / "row.zip", tmp_path / "bad-manifest.zip"
    assert _bundle(root, judge, bundle) == 0
    _rewrite(bundle, bad, lambda n, d: d.replace(b'"n_boot": 200', b'"n_boot": "many"') if n == "manifest.json" else d)
    assert main(["rescore", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad-manifest.zip:manifest.json" in err and "summary.n_boot" in err


def test_the_space_serves_each_rows_bundle_as_a_file_made_once_per_data_version(judged, tmp_path):
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from rqbench.evaluate.benchmark.source import load_benchmark
    from rqbench.space import bundles
    from rqbench.space import leaderboard as lb
    from rqbench.space.stores import SpaceStores
    from rqbench.space.submit import BenchmarkTarget
    from rqbench.space.ui import SpaceConfig, SpaceData

    root, _, judge = judged
    bench = load_benchmark(str(root))
    target = BenchmarkTarget(bench.repo, bench.revision, tuple(bench.rq_ids), bench.name, bench.version)
    data = SpaceData(SpaceConfig(stores=SpaceStores.local(), target=target, n_boot=100)).refresh()
    (rid,) = [r for r in data.table[lb.BUNDLE_ID] if r]  # one model row (one judge: no combined row); GT row has none
    assert f'href="bundle/{rid}.zip"' in bundles.links_html(data.table, lb.BUNDLE_ID)
    shelf = bundles.BundleShelf(data, tmp_path / "shelf", paths.calls_db())
    client = TestClient(Starlette(routes=[bundles.bundle_route(shelf)]))
    first = client.get(f"/bundle/{rid}.zip")
    assert first.status_code == 200 and first.headers["content-type"] == "application/zip"
    made = (tmp_path / "shelf" / f"v{data.version}" / f"{rid}.zip").stat().st_mtime_ns
    assert client.get(f"/bundle/{rid}.zip").content == first.content  # served again, not made again
    assert (tmp_path / "shelf" / f"v{data.version}" / f"{rid}.zip").stat().st_mtime_ns == made
    saved = tmp_path / "download.zip"
    saved.write_bytes(first.content)
    assert rescore(saved).identical
    assert json.loads(zipfile.ZipFile(saved).read("manifest.json"))["summary"]["n_boot"] == 100  # the Space's setting
    gone = client.get("/bundle/0000.zip")
    assert gone.status_code == 404 and "no leaderboard row 0000" in gone.text
