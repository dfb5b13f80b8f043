"""Trial runs (issue 23, item 1): ``--limit N`` takes the first N instances of any submission.

A trial is counted against the whole dataset revision ("1 of 4 instances scored"), written to its
own results files marked ``trial``, kept apart from the full run in the summary, the report and the
leaderboard, and the instances outside it are nobody's failure. Judging runs on the scripted server.
"""

from __future__ import annotations

import json

import evaluate_factory as F
import pytest

from rqbench.cli import main
from rqbench.evaluate.judge.run import read_results


@pytest.fixture
def build(tmp_path):
    bench = F.benchmark(4)
    F.write_build(bench, tmp_path / "build")
    return bench, tmp_path / "build"


@pytest.fixture
def spec(scripted_server, monkeypatch):
    scripted_server.responder = F.judge_reply
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # litellm wants one; the scripted server ignores it
    return F.scripted_spec(scripted_server)


def _no_traceback(got) -> None:
    assert "Traceback" not in got.out + got.err, got


def test_limit_judges_the_first_instances_of_a_full_submission_counted_against_the_revision(
    build, spec, tmp_path, capsys
):
    bench, root = build
    sub = F.submission(bench, tmp_path / "sub")  # all four instances
    out = tmp_path / "results"
    judge = [
        "judge",
        str(sub.path),
        "--judge",
        spec,
        "--setting",
        "standalone",
        "--dataset",
        str(root),
        "--out",
        str(out),
    ]
    assert main([*judge, "--limit", "1"]) == 0
    got = capsys.readouterr()
    _no_traceback(got)
    assert "not an rq_id" not in got.out + got.err  # the issue: the other three were refused as unknown
    assert "TRIAL, the first 1 of 4 instances only (--limit 1): dataset build/build@build:" in got.out
    assert "the other 3 are not in this run and are nobody's failure" in got.out
    assert "1 of 4 instances scored (dataset build/build@" in got.out
    assert "instances: a trial: the first 1 of 4 (paper: every instance)" in got.out  # the departure

    (trial_file,) = out.glob("*.json")
    assert "-trial1__" in trial_file.name
    rf = read_results(trial_file)
    assert (rf.trial, rf.instances_expected, [i.rq_id for i in rf.instances]) == (1, 4, bench.rq_ids[:1])
    assert rf.coverage.trial == 1 and rf.coverage.instances_scored == 1 and rf.coverage.generation_failures == 0
    assert not rf.coverage.incomplete  # the three outside the trial are not missing from it
    assert rf.settings["coverage"] == "1/4"

    # the full run writes its own file beside the trial's; neither overwrites the other
    assert main(judge) == 0
    assert "4 of 4 instances scored" in capsys.readouterr().out
    files = sorted(out.glob("*.json"))
    assert len(files) == 2 and trial_file in files
    full = read_results(next(f for f in files if f != trial_file))
    assert full.trial is None and len(full.instances) == 4 and full.coverage.trial is None
    # a reparse under --limit rescores the trial's file and leaves the full run's alone
    mtime = full.created_at
    assert main([*judge, "--limit", "1", "--reparse"]) == 0
    assert "1 of 4 instances scored" in capsys.readouterr().out
    assert read_results(next(f for f in files if f != trial_file)).created_at == mtime

    # the report keeps them apart: two rows, the trial's named and marked, never pooled with the full run
    report = tmp_path / "report"
    assert main(["report", str(out), "--out", str(report), "--n-boot", "20"]) == 0
    rows = [r for r in json.loads((report / "summary.json").read_text()) if r["row_kind"] == "model"]
    counts = {
        (p["trial"], p["instances_scored"], p["instances_expected"], p["generation_failures"])
        for p in (r["provenance"] for r in rows)
    }
    assert counts == {(1, 1, 4, 0), (None, 4, 4, 0)}
    md = (report / "report.md").read_text()
    assert "standalone **TRIAL**: 1 of 4 instances scored" in md
    assert "A **TRIAL** judged only the first N instances of the dataset revision" in md
    assert f"{rf.submission.model} [trial 1/4]" in md  # the trial's row in the tables
    csv = (report / "novelty_standalone_scores.csv").read_text()
    assert "TRIAL, the first 1 of 4 instances only (--limit 1)" in csv.split("\nrow,", 1)[0]  # its provenance header
    tex = (report / "novelty_standalone_scores.tex").read_text()
    assert "TRIAL, the first 1 of 4 instances only" in tex and "[trial 1/4]" in tex
    assert f"TRIAL rows ({rf.submission.model} [trial 1/4]): judged only the first N" in tex  # the caption says so


def test_a_trial_needs_only_its_own_instances(build, tmp_path, capsys):
    """A submission of the first instance only is whole for a trial of one, and partial for anything more."""
    from rqbench.evaluate.generate.submission_files import validate_submission

    bench, root = build
    ids = bench.rq_ids
    first = F.Benchmark(bench.instances[:1], bench.papers, bench.repo, bench.revision)
    sub = F.submission(first, tmp_path / "one")
    report = validate_submission(sub.path, ids, judged_rq_ids=ids[:1])
    assert report.ok and report.problems == [] and (report.trial, report.trial_covered) == (1, 1)
    assert "coverage 1/4 (25.0%), trial of the first 1: 1/1 with five RQs" in report.summary()
    assert main(["validate", str(sub.path), "--dataset", str(root), "--limit", "1"]) == 0
    assert main(["validate", str(sub.path), "--dataset", str(root), "--limit", "2"]) == 1
    got = capsys.readouterr()
    assert got.out.count("no line for this rq_id (a partial submission needs --allow-partial)") == 1
    assert ids[1] in got.out and ids[2] not in got.out  # only the trial's instances are asked for

    # a line for an rq_id the revision lacks is refused as always, trial or not
    (sub.path / "submission.jsonl").write_text(
        (sub.path / "submission.jsonl").read_text()
        + json.dumps({"rq_id": "9999.99999_rq0", "research_questions": F.five("x")})
        + "\n"
    )
    bad = validate_submission(sub.path, ids, judged_rq_ids=ids[:1])
    assert [p.code for p in bad.errors] == ["unknown_rq_id"]


def test_a_failure_outside_the_trial_is_not_the_trials(build, spec, tmp_path, capsys):
    bench, root = build
    sub = F.submission(bench, tmp_path / "sub", failed={bench.rq_ids[3]})
    args = [
        "judge",
        str(sub.path),
        "--judge",
        spec,
        "--setting",
        "standalone",
        "--criteria",
        "overlap",
        "--dataset",
        str(root),
        "--out",
        str(tmp_path / "r"),
    ]
    assert main([*args, "--limit", "2"]) == 0  # no --allow-partial needed: its two instances are whole
    assert "2 of 4 instances scored" in capsys.readouterr().out
    assert main(args) == 1  # the full run is partial
    assert "a partial submission needs --allow-partial" in capsys.readouterr().err


@pytest.mark.parametrize("job", ["judge", "evaluate", "validate", "generate"])
def test_a_limit_below_one_is_refused_by_name(tmp_path, capsys, job):
    args = {
        "judge": ["judge", str(tmp_path)],
        "evaluate": ["evaluate"],
        "validate": ["validate", str(tmp_path)],
        "generate": ["generate", "--out", str(tmp_path / "g")],
    }[job]
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--limit", "0"])
    assert exit_.value.code == 2
    got = capsys.readouterr()
    _no_traceback(got)
    assert f"rqbench {job}: error: argument --limit: must be at least 1, not 0" in got.err


def _results(model: str, n: int = 4, trial: int | None = None, label: str | None = None):
    """A standalone results file of ``n`` instances; a trial's holds its first ``trial`` of them."""
    from results_factory import results, simple_instance

    insts = [simple_instance(f"2501.0000{i}_rq0", (2, 2, 1), [(3, 2, 2)] * 5, overlap=[1] * 5) for i in range(n)]
    return results(insts[:trial] if trial else insts, model=model, expected=n, label=label).model_copy(
        update={"trial": trial}
    )


def test_one_run_each_prefers_the_full_run_then_the_largest_trial():
    from rqbench.evaluate.benchmark.trial import one_run_each

    full, t1, t2 = _results("m"), _results("m", trial=1), _results("m", trial=2)
    assert one_run_each([t1, full, t2]) == [full]
    assert one_run_each([t1, t2]) == [t2]
    other = _results("other", trial=1)
    assert one_run_each([t1, other]) == [t1, other]
    judge_b = _results("m", trial=1, label="judge-b")
    assert one_run_each([full, judge_b]) == [full, judge_b]  # per judge


def test_the_leaderboard_shows_trials_apart_and_never_ranks_them_with_full_runs():
    from rqbench.evaluate.metrics.summary import summarize
    from rqbench.space import leaderboard as lb
    from rqbench.space import leaderboard_cells as lb_cells

    rows = summarize([_results("team/full-model"), _results("team/tried-model", trial=2)], n_boot=20)
    assert {r.name for r in rows if r.row_kind == "model"} == {"team/full-model", "team/tried-model [trial 2/4]"}
    df = lb.build_table(rows)
    ranked = lb.render(df, lb.View())
    assert "team/tried-model" not in set(ranked["Model"]) and "team/full-model" in set(ranked["Model"])
    tried = lb.render(df, lb.View(trials=True))
    assert list(ranked[ranked["Model"] == "team/full-model"]["Scored"]) == ["4/4"]
    model_rows = tried[tried["Type"] != "reference"]
    assert list(model_rows["Model"]) == ["team/tried-model"] and list(model_rows["Scored"]) == ["2/4 trial"]
    _, _, caption = lb_cells.display(df, lb.View())
    assert "1 trial run row(s) not shown" in caption and 'choose "trial runs" under Runs' in caption
    _, cells, caption = lb_cells.display(df, lb.View(trials=True))
    model_cell = next(row[0] for row in cells if row[0].text == "team/tried-model")
    assert "trial: first 2" in model_cell.note and "judged only the first 2 instance(s)" in model_cell.title
    assert "Trial runs: each judged only the first N instances" in caption
    # the CSV link of the trial view downloads the trial rows (the view travels in its query)
    from urllib.parse import parse_qs

    from rqbench.space import downloads

    assert downloads.view_from_query(parse_qs(downloads.view_query(lb.View(trials=True)))).trials
    assert not downloads.view_from_query(parse_qs(downloads.view_query(lb.View()))).trials
    # a trial and a full run of one model each keep their own headline row
    both = summarize([_results("team/full-model"), _results("team/full-model", trial=1)], n_boot=20)
    assert lb.headline_flags([r for r in both if r.row_kind == "model"]) == [True, True]


def test_evaluate_limit_generates_and_judges_a_trial_counted_against_the_revision(build, spec, tmp_path, capsys):
    """``rqbench evaluate --limit 1``: one instance generated and judged, the run, its results and its report
    all saying 1 of 4 and trial; then ``--submission`` with a complete submission takes its first instance."""
    bench, root = build
    out, report = tmp_path / "results", tmp_path / "report"
    common = [
        "--judge",
        spec,
        "--dataset",
        str(root),
        "--setting",
        "standalone",
        "--criteria",
        "novelty,overlap",
        "--limit",
        "1",
        "--out",
        str(out),
    ]
    assert main(["evaluate", "--model", spec, *common, "--report-dir", str(report)]) == 0
    got = capsys.readouterr()
    _no_traceback(got)
    assert got.out.splitlines()[0].startswith("dry run: 8 calls to send")  # 1 generation + (6 + 1) judge calls
    assert "TRIAL, the first 1 of 4 instances only (--limit 1)" in got.out and "1 of 4 instances scored" in got.out
    (path,) = out.glob("*.json")
    assert (read_results(path).trial, read_results(path).instances_expected) == (1, 4)
    (row,) = [r for r in json.loads((report / "summary.json").read_text()) if r["row_kind"] == "model"]
    assert (
        row["provenance"]["trial"],
        row["provenance"]["instances_scored"],
        row["provenance"]["instances_expected"],
    ) == (1, 1, 4)

    sub = F.submission(bench, tmp_path / "sub")  # all four instances: the trial takes the first, refuses none
    assert main(["evaluate", "--submission", str(sub.path), *common, "--no-report"]) == 0
    got = capsys.readouterr()
    assert "not an rq_id" not in got.out + got.err and "1 of 4 instances scored" in got.out
