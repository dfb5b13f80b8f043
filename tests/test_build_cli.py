"""``rqbench build`` end to end: argument checks, a dry run, and a real run on the scripted server."""

from __future__ import annotations

import json

import pytest
from builder_script import make_cited_sources, make_papers, reply_for

from rqbench.cli import main

PAPERS = ["attention-sink-gpt2", "inlg2024-ngram-gec"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--papers", "x", "--arxiv-query", "cat:cs.CL"], "not both"),
        (["--arxiv-query", "cat:cs.CL"], "needs --from and --to"),
        (["--papers", "/no/such/folder"], "does not exist"),
        (["--arxiv-query", "cat:cs.CL", "--since-release", "v0.1.0"], "--since-release and --dataset go together"),
        (["--arxiv-query", "cat:cs.CL", "--window", "2025-03", "--from", "2025-03-01"], "drop --from"),
        (["--arxiv-query", "cat:cs.CL", "--window", "2025-13"], "month '2025-13' is not YYYY-MM"),
        (
            ["--arxiv-query", "cat:cs.CL", "--since-release", "latest", "--dataset", "/no/such/repo"],
            "no such folder, and not a Hub id",
        ),
    ],
)
def test_bad_arguments_exit_2_with_a_reason(tmp_path, capsys, args, message):
    assert main(["build", *args, "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
    assert message in capsys.readouterr().err


def test_bad_date_is_refused_by_the_parser(tmp_path):
    with pytest.raises(SystemExit):
        main(["build", "--arxiv-query", "q", "--from", "2025-13-01", "--to", "2026-01-01", "--out", str(tmp_path)])


def test_dry_run_prints_the_calls_and_sends_nothing(tmp_path, fixtures_dir, capsys):
    papers = make_papers(tmp_path / "papers", fixtures_dir, PAPERS[:1])
    rc = main(
        [
            "build",
            "--papers",
            str(papers),
            "--out",
            str(tmp_path / "out"),
            "--dry-run",
            "--no-progress",
            "--max-cited-per-paper",
            "3",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0
    assert "dry run: 4 calls to send" in text  # 3 labels + 1 contributions; the rest are bounds
    assert "gaps: at most 3 calls" in text and "verify: at most 6 calls" in text
    assert not (tmp_path / "out" / "records").exists()


def test_offline_build_through_the_cli_then_a_rerun_makes_no_request(
    tmp_path, fixtures_dir, scripted_server, capsys, monkeypatch
):
    scripted_server.responder = lambda req: reply_for(req, prefer_key="gu2025when")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    model = f"openai/scripted@api_base={scripted_server.api_base},json_mode=json_object_schema,max_retries=1"
    papers = make_papers(tmp_path / "papers", fixtures_dir, PAPERS)
    args = [
        "build",
        "--papers",
        str(papers),
        "--out",
        str(tmp_path / "out"),
        "--allow-abstract-only",
        "--cited-sources",
        str(make_cited_sources(tmp_path / "cited")),
        "--max-cited-per-paper",
        "3",
        "--no-progress",
        "--model-strong",
        model,
        "--model-light",
        model,
        "--model-labeller",
        model,
        "--max-tokens-gaps",
        "300",
    ]
    assert main(args) == 0
    line = capsys.readouterr().out
    assert "RQs from 2 papers" in line
    sent = len(scripted_server.requests)
    assert sent > 0
    caps = {r.step: r["max_tokens"] for r in scripted_server.requests}
    assert caps == {
        "influence": 160,
        "contributions": 900,
        "gaps": 300,
        "author_rqs": 600,
        "cited_contributions": 500,
        "verification": 400,
    }
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["settings"]["max_tokens"]["gaps"] == 300
    assert manifest["counts"]["rqs"] == len((tmp_path / "out" / "records" / "rqs.jsonl").read_text().splitlines())
    assert main(args) == 0
    assert len(scripted_server.requests) == sent


def test_cpu_stage_functions_travel_to_worker_processes(tmp_path):
    """--workers N sends the parse and cited_text functions (with their settings) to spawned processes."""
    import pickle

    from rqbench.builder.build_config import BuildConfig
    from rqbench.builder.pipeline import build_stages

    stages = build_stages(BuildConfig(out=tmp_path, papers=tmp_path, cited_sources=tmp_path, workers=2))
    for name in ("parse", "cited_text"):
        fn = pickle.loads(pickle.dumps(stages[name].fn))
        assert callable(fn)


def _crafted_papers_inputs(tmp_path):
    """(argument, what the error must say) for --papers inputs that once raised tracebacks or hung."""
    import os

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / ".hidden").mkdir()  # a dot-folder is not a paper
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"2502.01113\n\x00\x01\x02\xff")
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("2502.01113\ncaf\u00e9\n".encode("latin-1"))
    malformed = tmp_path / "ids.txt"
    malformed.write_text("2502.01113\nnot-an-id\n# a comment\n2502.1\n" + "\n".join(f"x{i}" for i in range(20)) + "\n")
    blank = tmp_path / "blank.txt"
    blank.write_text("# only a comment\n\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    zero = tmp_path / "zero"
    zero.symlink_to("/dev/zero")
    return [
        (empty, f"papers folder {empty} has no subfolders"),
        (binary, f"{binary}:2: a NUL byte"),
        (latin, f"{latin}:2: not UTF-8 text"),
        (malformed, f"{malformed}:2: 'not-an-id' is not an arXiv id\n{malformed}:4: '2502.1' is not an arXiv id"),
        (blank, f"{blank}: holds no arXiv id"),
        (fifo, f"{fifo}: is a FIFO (named pipe), not a regular file; nothing was read"),
        (zero, f"{zero}: is a character device (a symbolic link to /dev/zero), not a regular file"),
    ]


def test_crafted_papers_inputs_exit_2_with_a_named_error(tmp_path, capsys):
    for arg, message in _crafted_papers_inputs(tmp_path):
        assert main(["build", "--papers", str(arg), "--out", str(tmp_path / "out"), "--no-progress"]) == 2, arg
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
        assert not (tmp_path / "out").exists()  # refused before the build made anything


def test_malformed_ids_are_listed_up_to_a_cap(tmp_path, capsys):
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(f"bad-{i}" for i in range(25)) + "\n")
    assert main(["build", "--papers", str(ids), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{ids}:10: 'bad-9'" in err and f"{ids}:11:" not in err and "... and 15 more" in err
