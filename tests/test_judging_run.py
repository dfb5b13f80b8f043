"""A small end-to-end run on constructed records through the scripted server: CLIs, results files, reruns."""

from __future__ import annotations

import json

import evaluate_factory as F
import pytest

from rqbench.cli import main
from rqbench.evaluate.judge.run import ordering_stats, read_results, reparse_results
from rqbench.llm.config import public_label


@pytest.fixture
def build(tmp_path):
    bench = F.benchmark(3)
    F.write_build(bench, tmp_path / "build")
    return bench, tmp_path / "build"


@pytest.fixture
def judge_env(scripted_server, monkeypatch):
    scripted_server.responder = F.judge_reply
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")  # litellm wants one; the scripted server ignores it
    return F.scripted_spec(scripted_server)


def test_generate_validate_judge_end_to_end(build, judge_env, scripted_server, tmp_path, capsys):
    _, root = build
    spec = judge_env
    sub = tmp_path / "sub"
    assert main(["generate", "--model", spec + ",cutoff=2025-03", "--dataset", str(root), "--out", str(sub)]) == 0
    assert "3/3 instances with five RQs" in capsys.readouterr().out
    meta = json.loads((sub / "metadata.json").read_text())
    assert meta["knowledge_cutoff"] == "2025-03-31" and "cutoff" not in meta["model"]  # stated, not part of the name
    assert main(["validate", str(sub), "--dataset", str(root)]) == 0
    assert "valid: 0 error(s)" in capsys.readouterr().out
    n_gen = len(scripted_server.requests)

    out = tmp_path / "results"
    args = [
        "judge",
        str(sub),
        "--judge",
        spec,
        "--judge",
        spec + ",temperature=0.5",
        "--setting",
        "both",
        "--orderings",
        "2",
        "--seed",
        "5",
        "--dataset",
        str(root),
        "--out",
        str(out),
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    files = sorted(out.glob("*.json"))
    assert len(files) == 4  # (2 judges) x (2 settings)
    assert printed.count("position bias:") == 2 and printed.count("3 of 3 instances scored (dataset ") == 4
    assert "rules applied: none" in printed
    labels = {read_results(f).judge.label for f in files}
    assert len(labels) == 2  # two configurations of one model are two judges
    rf = next(read_results(f) for f in files if "comparative" in f.name and "temperature" not in f.name)
    assert (
        rf.dataset_repo == f"build/{root.name}"
        and str(root) not in rf.model_dump_json()
        and rf.dataset_revision.startswith("build:")
    )
    assert rf.instances_expected == 3 and len(rf.instances) == 3 and rf.submission.model == public_label(spec)
    assert rf.totals.calls > 0 and rf.totals.tokens_in > 0 and rf.judge.orderings == 2
    assert ordering_stats(rf).instances == 3
    n_judged = len(scripted_server.requests)
    assert n_judged > n_gen

    # the rerun pays for nothing, and keeps the first run's totals (adding its cache hits)
    before = read_results(files[0]).totals
    assert main(args) == 0
    assert len(scripted_server.requests) == n_judged
    after = read_results(files[0]).totals
    assert after.calls == before.calls > 0 and after.tokens_in == before.tokens_in and after.cache_hits > 0
    # a reparse neither calls nor needs the server
    assert main(args + ["--reparse"]) == 0
    assert len(scripted_server.requests) == n_judged


def test_judge_dry_run_counts_without_sending(build, judge_env, scripted_server, tmp_path, capsys):
    bench, root = build
    sub = F.submission(bench, tmp_path / "sub")
    out = tmp_path / "results"
    assert (
        main(
            [
                "judge",
                str(sub.path),
                "--judge",
                judge_env,
                "--setting",
                "standalone",
                "--criteria",
                "novelty",
                "--dataset",
                str(root),
                "--out",
                str(out),
                "--dry-run",
            ]
        )
        == 0
    )
    assert "dry run: 18 calls to send" in capsys.readouterr().out  # 3 instances x 6 candidates
    assert scripted_server.requests == [] and not out.exists()


def test_invalid_or_partial_submissions_are_refused(build, judge_env, tmp_path, capsys):
    bench, root = build
    f = tmp_path / "sub.jsonl"
    lines = [json.dumps({"kind": "metadata", "model": "m"})]
    lines += [json.dumps({"rq_id": i.rq_id, "research_questions": F.five(i.rq_id)}) for i in bench.instances[:2]]
    f.write_text("\n".join(lines) + "\n")
    assert main(["validate", str(f), "--dataset", str(root)]) == 1
    assert "no line for this rq_id" in capsys.readouterr().out
    assert (
        main(
            [
                "judge",
                str(f),
                "--judge",
                judge_env,
                "--dataset",
                str(root),
                "--out",
                str(tmp_path / "r"),
                "--criteria",
                "overlap",
                "--setting",
                "standalone",
            ]
        )
        == 1
    )
    assert "needs --allow-partial" in capsys.readouterr().err
    assert (
        main(
            [
                "judge",
                str(f),
                "--judge",
                judge_env,
                "--dataset",
                str(root),
                "--out",
                str(tmp_path / "r"),
                "--criteria",
                "overlap",
                "--setting",
                "standalone",
                "--allow-partial",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "coverage 2/3 (66.7%)" in printed
    # the rq_id the submission lacks is the model's failure: written as one, scored as a loss (paper accounting)
    assert "3 of 3 instances scored" in printed and "1 with no valid generation (the model's failure" in printed
    (rf,) = [read_results(p) for p in (tmp_path / "r").glob("*.json")]
    assert len(rf.instances) == 3 and rf.instances_expected == 3
    assert rf.instances[2].failures == ["generation_failed: not in the submission"]
    assert rf.coverage.generation_failures == 1 and rf.coverage.instances_scored == 3


def test_generation_failures_become_recorded_instance_failures(build, judge_env, tmp_path):
    bench, _ = build
    from rqbench.evaluate.judge.run import judge_submission
    from rqbench.llm import LLM

    sub = F.submission(bench, tmp_path / "sub", failed={bench.rq_ids[1]})
    (path,) = judge_submission(
        bench, sub, [judge_env], ["standalone"], llm=LLM(), out_dir=tmp_path / "r", criteria=["novelty"], progress=False
    )
    inst = read_results(path).instances[1]
    assert inst.failures == ["generation_failed: invalid_reply: scripted"]
    assert [c.candidate_id for c in inst.candidates] == ["gt"] and inst.candidates[0].novelty is None


def test_evaluate_runs_every_stage_with_an_estimate_first(build, judge_env, scripted_server, tmp_path, capsys):
    _, root = build
    out = tmp_path / "results"
    rc = main(
        [
            "evaluate",
            "--model",
            judge_env,
            "--judge",
            judge_env,
            "--dataset",
            str(root),
            "--out",
            str(out),
            "--setting",
            "standalone",
            "--criteria",
            "novelty,overlap",
            "--report-dir",
            str(tmp_path / "report"),
        ]
    )
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert printed.splitlines()[0].startswith("dry run: 24 calls to send")  # 3 generations + 3 x (6 + 1) judge calls
    assert len(list(out.glob("*.json"))) == 1
    assert (tmp_path / "report").is_dir() and any((tmp_path / "report").iterdir())


@pytest.mark.local_model
def test_one_real_local_model_judge_call(tmp_path):
    """The embedded model through the whole judging path: one overlap call, parsed or recorded by name."""
    from rqbench.evaluate.judge.run import judge_submission
    from rqbench.llm import LLM

    bench = F.benchmark(1)
    sub = F.submission(bench, tmp_path / "sub")
    (path,) = judge_submission(
        bench, sub, ["local"], ["standalone"], llm=LLM(), out_dir=tmp_path / "r", criteria=["overlap"], progress=False
    )
    rf = read_results(path)
    inst = rf.instances[0]
    assert rf.judge.model == "local/smollm2-135m" and rf.totals.calls >= 1
    assert len(inst.raw_replies) == 1 and inst.raw_replies[0].candidate_order == [f"m{k}" for k in range(5)]
    if inst.overlap is None:  # a weak model may not manage the schema: then the failure is named, not a 0
        assert inst.failures and inst.failures[0].startswith("overlap[") and inst.raw_replies[0].error
    else:
        assert len(inst.overlap.pairwise_scores) == 5 and inst.failures == []


def test_a_judge_reply_cut_at_the_budget_is_recorded_as_truncated_and_stays_so_on_reparse(
    build, scripted_server, tmp_path
):
    from rqbench.evaluate.judge.run import judge_submission, reparse_results
    from rqbench.llm import LLM
    from rqbench.testing.scripted_server import ScriptedReply

    bench, _ = build
    cut = '{"scores": [{"relevance": 1, "originality": 2, "gap_addressing": 1, "non_obviousness": 3}]}'

    def respond(req):
        reply = F.judge_reply(req)
        if req.step == "novelty_standalone" and "Question 2 about 2501.00000_rq0" in req["messages"][1]["content"]:
            return ScriptedReply(cut, finish_reason="length")  # valid JSON, yet cut: still truncated
        return reply

    scripted_server.responder = respond
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(max_tokens=64))
    sub = F.submission(bench, tmp_path / "sub")
    (path,) = judge_submission(
        bench, sub, [cfg.name], ["standalone"], llm=llm, out_dir=tmp_path / "r", criteria=["novelty"], progress=False
    )
    n_requests = len(scripted_server.requests)
    assert n_requests == 3 * 6  # nothing re-asked
    rf = read_results(path)
    inst = rf.instances[0]
    (raw,) = [r for r in inst.raw_replies if r.truncated]
    assert raw.candidate_order == ["m2"] and raw.text == cut and raw.error.startswith("truncated: ")
    (failure,) = inst.failures
    assert failure.startswith("novelty_standalone[m2]: truncated: the reply reached the reply budget (max_tokens=64)")
    assert next(c for c in inst.candidates if c.candidate_id == "m2").novelty is None  # unscored, never 0
    again = reparse_results(rf).instances[0]
    assert again.failures == inst.failures and [r.truncated for r in again.raw_replies].count(True) == 1


def test_each_instance_records_what_of_each_background_paper_the_judge_read(build, judge_env, tmp_path):
    bench, root = build
    sub = F.submission(bench, tmp_path / "sub")
    out = tmp_path / "r"
    assert (
        main(
            [
                "judge",
                str(sub.path),
                "--judge",
                judge_env,
                "--setting",
                "standalone",
                "--criteria",
                "novelty,narrowness",
                "--background-tokens",
                "120",
                "--dataset",
                str(root),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    (rf,) = [read_results(p) for p in out.glob("*.json")]
    two = rf.instances[1]  # the instance with two background papers
    assert [c.paper_id for c in two.background["novelty"]] == ["p1", "p2"]
    assert [c.paper_id for c in two.background["narrowness"]] == ["p1", "p2"]
    for cuts in two.background.values():
        assert all(c.truncated and c.tokens_cut > 0 for c in cuts)
    # narrowness sees one paper a call, so each paper gets the whole budget: less is cut than for novelty
    assert two.background["narrowness"][0].budget == 120 > two.background["novelty"][0].budget
    assert rf.settings["background"]["basis"] == "fixed"
    assert any(d.item.startswith("input truncation") for d in rf.protocol.departures)


def test_only_new_judges_what_earlier_results_lack_or_judged_on_other_texts(
    build, judge_env, scripted_server, tmp_path, capsys
):
    from rqbench.evaluate.generate.submission_files import write_submission
    from rqbench.records import SubmissionEntry

    bench, root = build
    out = tmp_path / "results"
    common = [
        "--judge",
        judge_env,
        "--setting",
        "standalone",
        "--metrics",
        "novelty",
        "--dataset",
        str(root),
        "--out",
        str(out),
    ]
    first = F.submission(bench, tmp_path / "sub1")
    assert main(["judge", str(first.path), *common]) == 0
    (before,) = [read_results(p) for p in out.glob("*.json")]
    # the second submission changes instance 1's questions: its earlier results no longer stand
    changed = bench.instances[1].rq_id
    entries = [
        SubmissionEntry(
            rq_id=i.rq_id,
            research_questions=F.five(i.rq_id)
            if i.rq_id != changed
            else [q.replace("help?", "help at all?") for q in F.five(i.rq_id)],
        )
        for i in bench.instances
    ]
    second = write_submission(tmp_path / "sub2", F.metadata(), entries)
    n = len(scripted_server.requests)
    assert main(["judge", str(second), *common, "--only-new"]) == 0
    asked = scripted_server.requests[n:]
    assert {c for r in asked for c in F.candidates_of(r)} >= {
        q.replace("help?", "help at all?") for q in F.five(changed)
    }
    assert len(asked) == 5  # the five changed questions: the instance's GT call is the cache's, as before
    (after,) = [read_results(p) for p in out.glob("*.json")]  # the earlier file was replaced
    assert after.settings["carried"]["instances"] == 2 and after.settings["carried"]["judged_now"] == 1
    assert [i.raw_replies for i in after.instances if i.rq_id != changed] == [
        i.raw_replies for i in before.instances if i.rq_id != changed
    ]
    assert "only new: 1 instance(s) judged now, 2 kept from" in capsys.readouterr().out
    # other run settings (here another metric set): nothing to extend, so everything is judged
    n = len(scripted_server.requests)
    assert (
        main(
            [
                "judge",
                str(second),
                *common[:-6],
                "--metrics",
                "overlap",
                "--dataset",
                str(root),
                "--out",
                str(out),
                "--only-new",
            ]
        )
        == 0
    )
    assert len(scripted_server.requests) - n == len(bench.instances)
    assert main(["judge", str(second), *common, "--only-new", "--reparse"]) == 2


def test_a_judge_that_cannot_be_reached_at_all_stops_the_run_with_one_message(build, tmp_path, capsys, monkeypatch):
    from rqbench.testing.scripted_server import ScriptedServer

    bench, root = build
    sub = F.submission(bench, tmp_path / "sub")
    with ScriptedServer() as gone:
        spec = F.scripted_spec(gone).replace("max_retries=0", "max_retries=1")
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    out = tmp_path / "results"
    # 3 instances x (6 novelty + 6 narrowness + 1 overlap) calls: the run stops after the first call's retries
    rc = main(
        ["judge", str(sub.path), "--judge", spec, "--setting", "standalone", "--dataset", str(root), "--out", str(out)]
    )
    err = capsys.readouterr().err
    assert rc == 2 and err.count("cannot connect to") == 1 and "Traceback" not in err, err
    assert not out.exists() or not list(out.glob("*.json"))


def test_a_run_whose_judge_calls_failed_keeps_its_results_says_so_and_exits_1(
    build, scripted_server, tmp_path, capsys, monkeypatch
):
    bench, root = build
    sub = F.submission(bench, tmp_path / "sub", failed={bench.rq_ids[0]})
    state = {"broken": True}

    def refuse_one(req):  # the narrowness call on the second instance's m3 answers nonsense, twice
        if state["broken"] and "Question 3 about 2501.00001" in F.candidates_of(req)[0]:
            return "not JSON"
        return None

    scripted_server.responder = F.responder_with({"narrowness_standalone": refuse_one})
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    spec = F.scripted_spec(scripted_server)
    out = tmp_path / "results"
    args = [
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
        "--allow-partial",
    ]
    assert main(args) == 1
    printed, err = capsys.readouterr()
    assert "2 of 3 instances scored" in printed and "1 with no valid generation" in printed
    assert "1 unjudged (the judge's calls failed after their re-ask: narrowness 1" in printed
    assert "failed calls: invalid_reply 2" in printed  # m3 against each of the two background papers
    assert "--retry-failed" in err and "results are kept" in err
    (rf,) = [read_results(p) for p in out.glob("*.json")]  # written, with its counts
    assert (rf.coverage.instances_scored, rf.coverage.unjudged, rf.coverage.generation_failures) == (2, 1, 1)
    # a reparse of the stored replies says what is wrong in the live run's words (one validate_reply, not two)
    live = [r.error for i in rf.instances for r in i.raw_replies if r.error]
    again = [r.error for i in reparse_results(rf).instances for r in i.raw_replies if r.error]
    assert live and again == live, (live, again)
    assert all(e.startswith("invalid_reply: reply is not JSON") and "at position" in e for e in live), live
    # the report marks the row incomplete and counts the failed generation as a loss
    assert main(["report", str(out), "--out", str(tmp_path / "rep"), "--n-boot", "20"]) == 0
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "**incomplete**: 2 of 3 instances scored" in report
    assert "† Incomplete: a judge's calls failed" in report
    assert "Instances with no valid generation count against the model: a loss" in report
    # the way on: --retry-failed asks the failed call again, and the run completes
    state["broken"] = False
    assert main(args + ["--retry-failed"]) == 0
    assert "3 of 3 instances scored" in capsys.readouterr().out


def test_a_judge_resolved_at_the_command_line_is_called_as_resolved_and_not_resolved_again(
    build, scripted_server, tmp_path, monkeypatch
):
    """Issue 34: ``rqbench judge`` resolves each ``--judge`` once (the run plan it prints) and hands the resolved
    judge down; the run calls it as it is, in another client too, and resolves nothing again."""
    from rqbench.evaluate.judge import run as judge_run
    from rqbench.evaluate.judge.run import judge_submission
    from rqbench.evaluate.protocol import judge_use
    from rqbench.llm import LLM

    bench, _ = build
    scripted_server.responder = F.judge_reply
    planner = LLM()  # the client the plan was made with (evaluate's dry run uses its own)
    cfg = planner.register(scripted_server.model_config(max_tokens=256))
    use = judge_use(cfg.name, planner)

    def resolve_again(*args, **kwargs):
        raise AssertionError("a resolved judge was resolved again")

    monkeypatch.setattr(judge_run, "judge_use", resolve_again)
    sub = F.submission(bench, tmp_path / "sub")
    (path,) = judge_submission(
        bench, sub, [use], ["standalone"], llm=LLM(), out_dir=tmp_path / "r", criteria=["overlap"], progress=False
    )
    rf = read_results(path)
    assert rf.judge.label == use.label and scripted_server.requests
