"""``rqbench judge-board`` end to end on the scripted server: a small pool, two judges, figures by hand.

The pool is four pairs in the paper's expert-study format (the A.6 file's
shape), with the picks worked out in tests/test_judge_board_metrics.py. The
scripted judge scores each candidate from its text, so the figures below follow
from this file alone; a second configuration of the same model (temperature
0.5) always prefers the author-anchored RQ. Then: annotated pairs from the
Space's stores join the pool, a rerun pays for nothing, a grown pool pays for
its new pairs only, a dry run counts, a prompt set is a new row, and bad input
is named.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import evaluate_factory as F
import pytest
from scripted_replies import candidates_of

from rqbench import paths
from rqbench.cli import main
from rqbench.evaluate.judge_board.board import make_board
from rqbench.evaluate.judge_board.expert_pool import read_pool
from rqbench.evaluate.judge_board.run import load_board_files
from rqbench.llm import CallStore

# text marker -> non-obviousness of the author-anchored RQ and of the model RQ
NON_OBVIOUS = {"one": (3, 1), "two": (2, 2), "four": (1, 3), "five": (3, 0)}
EXPERTS = {
    1: {"expert_1": "gt", "expert_2": "gt"},
    2: {"expert_1": "model", "expert_2": "gt"},
    3: {"expert_1": "model", "expert_2": "model"},
    4: {"expert_1": "model", "expert_2": "model"},
}
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def sample(n: int, experts: dict[str, str] | None = None) -> dict:
    w = WORDS[n]
    return {
        "sample": n,
        "background_title": f"Background paper {w}",
        "background_abstract_summary": f"About {w}.",
        "gt_rq": f"What does the author ask in case {w}?",
        "model": "gen-x",
        "model_rq": f"What does the model ask in case {w}?",
        "verdicts": experts or EXPERTS[n],
    }


def write_study(path: Path, samples: list[dict]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return path


def responder(req):
    """Scores from the candidate texts; case three favours whichever RQ is shown first; the temperature-0.5
    judge always prefers the author-anchored RQ; case four's first reply in the model-first order is invalid."""
    texts = candidates_of(req)
    word = texts[0].split("case ")[1].rstrip("?") if "case " in texts[0] else None
    is_gt = ["author" in t for t in texts]
    if req.get("temperature") == 0.5:
        values = [3 if g else 0 for g in is_gt]
    elif word == "three":
        values = [3, 1]
    elif word is None:  # a pair from the Space's annotations
        values = [2, 1]
    else:
        gt, model = NON_OBVIOUS[word]
        values = [gt if g else model for g in is_gt]
        if word == "four" and not is_gt[0] and not req.step_tag.endswith(":reask"):
            return '{"scores": [{"relevance": 1}]}'
    scores = [{"relevance": 1, "originality": 1, "gap_addressing": 1, "non_obviousness": v} for v in values]
    if word == "one" and is_gt[0]:  # the model RQ judged irrelevant but scored: the paper's rule zeroes it (a repair)
        scores[1]["relevance"] = 0
    ranking = sorted(range(2), key=lambda i: -values[i])
    return json.dumps({"scores": scores, "ranking": ranking})


@pytest.fixture
def judges(scripted_server, monkeypatch):
    scripted_server.responder = responder
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    base = f"openai/gpt-4o-mini@api_base={scripted_server.api_base},max_retries=0,timeout_s=10"
    return base, base + ",temperature=0.5"


def board_args(study: Path, spec_a: str, spec_b: str, *more: str) -> list[str]:
    return [
        "judge-board",
        "--judge",
        spec_a,
        "--judge",
        spec_b,
        "--examples",
        str(study),
        "--no-annotations",
        "--n-boot",
        "200",
        *more,
    ]


def test_two_judges_on_a_small_pool_figures_by_hand(tmp_path, judges, scripted_server, capsys):
    study = write_study(tmp_path / "study.jsonl", [sample(n) for n in range(1, 5)])
    assert main(board_args(study, *judges)) == 0
    out = capsys.readouterr().out
    # 4 pairs x 2 orders x 2 judges, and one re-ask (case four, model first, the first judge)
    assert len(scripted_server.requests) == 17
    shown = [candidates_of(r) for r in scripted_server.requests if r.step == "novelty_comparative"]
    assert {tuple("author" in t for t in c) for c in shown} == {(True, False), (False, True)}  # both orders
    folder = paths.judge_board_dir()
    files = load_board_files(folder)
    assert len(files) == 2 and read_pool(folder).version in out
    first = next(f for f in files if "temperature" not in f.judge.label)
    assert first.judge.setting == "comparative" and first.judge.orderings == 2 and first.step == "novelty_comparative"
    assert first.judge.prompt_set.name == "rqbench-v1" and first.pool_pairs == 4
    assert first.settings["orders"] == ["gt_first", "model_first"]
    board = make_board(read_pool(folder), files, n_boot=200)
    a, b = (next(r for r in board.rows if r.judge == f.judge.label) for f in (first, files[1 - files.index(first)]))
    # the first judge: picks gt, tie, tie, model (as in tests/test_judge_board_metrics.py): 2 of the 3 majority
    # pairs (1 gt, 3 model, 4 model); the second picks gt on every pair: 1 of 3
    assert a.vs_majority.value == pytest.approx(2 / 3) and b.vs_majority.value == pytest.approx(1 / 3)
    assert board.rows.index(a) < board.rows.index(b)  # ranked by agreement with the majority
    assert a.kappa_majority.value == pytest.approx(0.5)
    assert a.vs_expert["expert_1"].value == pytest.approx(0.5)  # gt, model, model, model against gt, tie, tie, model
    assert a.position_consistency.value == pytest.approx(3 / 4) and b.position_consistency.value == 1.0
    assert a.tie_rate.value == pytest.approx(1 / 2) and b.tie_rate.value == 0.0
    assert (a.calls, a.invalid_replies, a.no_verdict, a.rule_repairs) == (8, 1, 0, 1)
    assert (b.invalid_replies, b.rule_repairs) == (0, 1)  # case one, shown author first: relevance 0, for both
    # cost and time per pair: the call log's requests behind each judge's answers, summed, over its 4 pairs
    db = CallStore(paths.calls_db())
    for row, f in ((a, first), (b, files[1 - files.index(first)])):
        rows = [
            r
            for r in db._db.execute(
                "SELECT cost_usd, latency_s FROM calls WHERE cache='miss' AND model=?", (f.judge.label,)
            )
        ]
        assert len(rows) == (9 if row is a else 8)
        assert row.cost_per_pair == pytest.approx(sum(c for c, _ in rows) / 4) and row.cost_per_pair > 0
        assert row.latency_per_pair == pytest.approx(sum(s for _, s in rows) / 4)
    # the printed board: the ceiling row (2 experts agree on 3 of 4 pairs) and the two rows in rank order
    assert "Experts with each other (the ceiling) | 75.0%" in out
    assert out.index(f"| 1 | {a.judge} |") < out.index(f"| 2 | {b.judge} |")

    # a rerun pays for nothing; a grown pool pays for its new pair only (2 orders x 2 judges)
    n = len(scripted_server.requests)
    assert main(board_args(study, *judges)) == 0
    assert len(scripted_server.requests) == n
    write_study(study, [sample(k) for k in range(1, 5)] + [sample(5, {"expert_1": "gt", "expert_2": "gt"})])
    assert main(board_args(study, *judges)) == 0
    assert len(scripted_server.requests) == n + 4
    files = load_board_files(folder)
    assert all(len(f.pairs) == 5 and f.pool_version == read_pool(folder).version for f in files)
    again = next(r for r in make_board(read_pool(folder), files, n_boot=100).rows if r.judge == a.judge)
    assert again.vs_majority.value == pytest.approx(3 / 4)  # pair five: gt, as the majority
    assert again.cost_per_pair == pytest.approx(
        sum(v.cost_usd for pv in next(f for f in files if f.judge.label == a.judge).pairs for v in pv.verdicts) / 5
    )


def test_a_dry_run_counts_the_calls_and_writes_nothing(tmp_path, judges, scripted_server, capsys):
    study = write_study(tmp_path / "study.jsonl", [sample(n) for n in range(1, 5)])
    assert main(board_args(study, *judges, "--dry-run")) == 0
    out = capsys.readouterr().out
    assert out.count("dry run: 8 calls to send") == 2 and "per 1,000 pairs: $" in out
    assert scripted_server.requests == [] and not paths.judge_board_dir().exists()
    # a trial on the first pairs: the row says how much of the pool it covers
    assert main(board_args(study, *judges, "--dry-run", "--limit", "2")) == 0
    assert capsys.readouterr().out.count("dry run: 4 calls to send") == 2
    assert main(board_args(study, *judges, "--limit", "1", "--concurrency", "1")) == 0
    assert len(scripted_server.requests) == 4 and "| 1/4 |" in capsys.readouterr().out


def test_a_paper_judge_dry_run_prints_its_calls_and_cost(fixtures_dir, capsys):
    """The done-criterion: gemini/gemini-3.1-pro on the A.6 pool, offline, with its (preview) price."""
    study = fixtures_dir / "paper_examples" / "expert_vs_llm.jsonl"
    assert (
        main(
            [
                "judge-board",
                "--judge",
                "gemini/gemini-3.1-pro",
                "--examples",
                str(study),
                "--no-annotations",
                "--dry-run",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "10 pair(s) (10 from the paper's appendix A.6)" in out
    assert "gemini/gemini-3.1-pro@reasoning_effort=high: temperature 0, reasoning mode high" in out
    line = next(x for x in out.splitlines() if "dry run:" in x)
    assert "20 calls to send" in line and "unknown price" not in line
    cost = float(line.split("cost $")[1].split()[0].replace(",", ""))
    assert cost > 0
    # without the key a real run stops before any call
    assert main(["judge-board", "--judge", "gemini/gemini-3.1-pro", "--examples", str(study), "--no-annotations"]) == 2
    assert "GEMINI_API_KEY" in capsys.readouterr().err


def test_a_prompt_set_is_a_row_of_its_own(tmp_path, judges, scripted_server, capsys):
    from rqbench.prompts import load_prompt_set

    study = write_study(tmp_path / "study.jsonl", [sample(n) for n in range(1, 3)])
    assert main(board_args(study, *judges)) == 0
    prompts = tmp_path / "my-prompts"
    shutil.copytree(Path(load_prompt_set().path), prompts)
    system = prompts / "novelty_comparative.system.md"
    system.write_text(system.read_text(encoding="utf-8") + "\nBe brief.\n", encoding="utf-8")
    n = len(scripted_server.requests)
    assert main(board_args(study, *judges, "--prompts", str(prompts))) == 0
    assert len(scripted_server.requests) == n + 8  # new prompts, new calls
    assert "Be brief." in scripted_server.requests[-1]["messages"][0]["content"]
    files = load_board_files(paths.judge_board_dir())
    assert len(files) == 4 and {f.judge.prompt_set.name for f in files} == {"rqbench-v1", "my-prompts"}
    out = capsys.readouterr().out
    assert "[my-prompts (b2:" in out  # the row names its prompt set


def test_annotated_pairs_join_the_pool_with_their_background_and_provenance(tmp_path, judges, scripted_server, capsys):
    from rqbench.space import annotate as an
    from rqbench.space.expert_pool import load_pool
    from rqbench.space.stores import SpaceStores
    from rqbench.testing.synthetic import make_results

    bench = F.benchmark(2)
    F.write_build(bench, tmp_path / "build")
    gt = {i.rq_id: i.gt_rq for i in bench.instances}
    ids = {i.rq_id: (i.arxiv_id, i.subfield, i.background_paper_ids) for i in bench.instances}
    results = make_results(
        "gen-y",
        setting="comparative",
        n_instances=2,
        dataset_repo=bench.repo,
        dataset_revision=bench.revision,
        gt_texts=gt,
    )
    for inst, rq_id in zip(results.instances, bench.rq_ids, strict=True):  # the benchmark's own instances
        inst.rq_id, (inst.arxiv_id, inst.subfield, inst.background_paper_ids) = rq_id, ids[rq_id]
        inst.candidates[0].text = gt[rq_id]
    stores = SpaceStores.local(tmp_path / "store", tmp_path / "results")
    stores.results.put(results)
    pairs = an.build_pairs([results])
    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    for who, choice in (("ann-a", "left"), ("ann-b", "right")):
        stores.annotations.append(an.make_judgment(who, pairs[1], choice, shown_at=now, now=now))
    judgments = stores.annotations.judgments()
    pool = load_pool(None, judgments, [results], bench.papers)
    (pair,) = pool.pairs
    assert (
        pair.source == "annotate" and pair.pair_id == pairs[1].pair_id and set(pair.expert_picks) == {"ann-a", "ann-b"}
    )
    assert pair.background == [bench.papers[p] for p in pairs[1].background_paper_ids]  # whole, as the tab shows
    assert pair.gt_rq == pairs[1].gt_text and pair.model_rq == pairs[1].model_text
    assert pairs[1].model_text_hash in pair.provenance and "Annotate tab" in pair.provenance
    # a new pick makes a new pool version; a paper missing from the benchmark leaves the pair out, saying why
    stores.annotations.append(an.make_judgment("ann-c", pairs[1], "tie", shown_at=now, now=now))
    assert load_pool(None, stores.annotations.judgments(), [results], bench.papers).version != pool.version
    missing = load_pool(None, judgments, [results], {})
    assert missing.pairs == [] and "not in this Space's benchmark" in missing.left_out[0]

    # the command reads them from the Space's stores, beside the study file's pairs
    study = write_study(tmp_path / "study.jsonl", [sample(1)])
    assert (
        main(
            [
                "judge-board",
                "--judge",
                judges[0],
                "--examples",
                str(study),
                "--store",
                str(tmp_path / "store"),
                "--results",
                str(tmp_path / "results"),
                "--dataset",
                str(tmp_path / "build"),
                "--n-boot",
                "50",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "2 pair(s) (1 from the paper's appendix A.6, 1 annotated in the Space)" in out
    assert "annotator 1" in out and "annotator 3" in out and "vs Expert 1" in out
    assert len(scripted_server.requests) == 4  # two pairs, both orders
    asked = [r["messages"][1]["content"] for r in scripted_server.requests]
    for pid in pairs[1].background_paper_ids:  # the annotated pair's calls carry its background papers
        assert (
            sum(bench.papers[pid].title in text and bench.papers[pid].sections[0].text in text for text in asked) == 2
        )


def test_bad_input_is_named(tmp_path, judges, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**sample(1), "verdicts": {"expert_1": "maybe"}}) + "\n", encoding="utf-8")
    assert main(["judge-board", "--judge", judges[0], "--examples", str(bad), "--no-annotations"]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and ":1" in err and "verdicts" in err and "Traceback" not in err
    standalone = write_study(tmp_path / "s.jsonl", [{**sample(1), "setting": "standalone"}])
    assert main(["judge-board", "--judge", judges[0], "--examples", str(standalone), "--no-annotations"]) == 2
    assert "sample 1" in capsys.readouterr().err
    assert (
        main(["judge-board", "--judge", judges[0], "--examples", str(tmp_path / "none.jsonl"), "--no-annotations"]) == 2
    )
    assert "no such expert-study file" in capsys.readouterr().err
    # two options naming one configuration
    study = write_study(tmp_path / "study.jsonl", [sample(1)])
    assert (
        main(["judge-board", "--judge", judges[0], "--judge", judges[0], "--examples", str(study), "--no-annotations"])
        == 2
    )
    assert "one judge configuration" in capsys.readouterr().err
    # a damaged results file is named, not a traceback
    assert main(["judge-board", "--judge", judges[0], "--examples", str(study), "--no-annotations"]) == 0
    (victim,) = paths.judge_board_dir().glob("*__*.json")
    victim.write_text('{"kind": "rqbench.judge_board"}', encoding="utf-8")
    capsys.readouterr()
    assert main(["judge-board", "--judge", judges[0], "--examples", str(study), "--no-annotations"]) == 2
    err = capsys.readouterr().err
    assert victim.name in err and "Traceback" not in err


def test_report_md_ends_with_the_board_its_plot_and_the_demo_note(
    tmp_path, judges, monkeypatch, capsys, test_output_dir
):
    from rqbench.testing.synthetic import make_results

    study = write_study(tmp_path / "study.jsonl", [sample(n) for n in range(1, 5)])
    assert main(board_args(study, *judges)) == 0
    results = tmp_path / "results"
    results.mkdir()
    (results / "r.json").write_text(make_results("gen-x").model_dump_json(), encoding="utf-8")
    monkeypatch.setenv("RQB_DEMO_MODELS", "openai/gpt-4o-mini")  # flag the scripted judge as a demo model
    capsys.readouterr()
    assert main(["report", str(results), "--out", str(tmp_path / "rep"), "--n-boot", "50"]) == 0
    assert "with the judge board" in capsys.readouterr().out
    report = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    section = report.split("## Judge board: agreement with experts", 1)[1]
    assert "Experts with each other (the ceiling) | 75.0%" in section and "(50 resamples)" in section
    assert "> **Demo output, not results.** Rows of this board come from openai/gpt-4o-mini" in section
    assert "last run on pool b2:" in section and "prompt set rqbench-v1 (b2:" in section
    assert "![Agreement with the experts' majority against cost per 1,000 pairs](judge_board.png)" in section
    png = tmp_path / "rep" / "judge_board.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.copy(png, test_output_dir / "judge_board.png")  # to look at
    board = json.loads((tmp_path / "rep" / "judge_board.json").read_text(encoding="utf-8"))
    assert board["pool_pairs"] == 4 and len(board["rows"]) == 2
    # a folder named outright must hold a board
    assert main(["report", str(results), "--out", str(tmp_path / "rep2"), "--judge-board", str(tmp_path)]) == 2
    assert "no pool.json" in capsys.readouterr().err


def test_batch_mode_writes_what_a_direct_run_writes(tmp_path, judges, scripted_server, monkeypatch):
    """--batch: every call through the provider's batch endpoint (the re-ask in a second round), the same picks."""
    monkeypatch.setenv("RQB_BATCH_POLL_S", "0.02")
    study = write_study(tmp_path / "study.jsonl", [sample(n) for n in range(1, 5)])
    assert main(board_args(study, *judges, "--out", str(tmp_path / "direct"))) == 0
    direct = len(scripted_server.requests)
    monkeypatch.setenv("RQB_HOME", str(tmp_path / "home-batch"))  # a fresh cache and call log
    assert main(board_args(study, *judges, "--out", str(tmp_path / "batched"), "--batch")) == 0
    batches = scripted_server.batches
    assert len(scripted_server.requests) == direct  # not one direct call
    assert len(batches.created) == 2 and sum(batches.executed.values()) == direct  # the asks, then the re-ask

    def picks(folder):
        return {
            (f.judge.label, pv.pair_id, v.order): (v.pick, v.reasked)
            for f in load_board_files(folder)
            for pv in f.pairs
            for v in pv.verdicts
        }

    assert picks(tmp_path / "batched") == picks(tmp_path / "direct")
    costs = [v.cost_usd for f in load_board_files(tmp_path / "batched") for pv in f.pairs for v in pv.verdicts]
    assert all(c is not None and c > 0 for c in costs)  # priced at the batch rate from the call log
