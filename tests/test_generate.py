"""Generation: prompts per paper count, the truncation policy, re-ask then recorded failure, and loading a benchmark."""

from __future__ import annotations

import json

import evaluate_factory as F
import pytest

from rqbench.evaluate.benchmark.background import (
    BackgroundPolicy,
    background_block,
    paper_block,
    token_counter,
)
from rqbench.evaluate.benchmark.source import DatasetError, load_benchmark
from rqbench.evaluate.generate.run import LOG_FILE, generate_submission
from rqbench.evaluate.generate.submission_files import validate_submission
from rqbench.llm import LLM
from rqbench.records import CitedPaper, SectionText


def long_paper() -> CitedPaper:
    return CitedPaper(
        paper_id="p",
        title="T",
        abstract="An abstract of twenty words. " * 4,
        text_level="full",
        sections=[SectionText(section=f"S{i}", text="word " * 200) for i in range(5)],
    )


def test_truncation_policy_keeps_title_abstract_then_whole_sections():
    count = token_counter()
    text, cut = paper_block(long_paper(), 700, count)
    assert text.startswith("Title: T\nAbstract: An abstract")
    assert cut.sections_kept == ["S0", "S1"] and cut.section_cut == "S2" and cut.sections_dropped == 2
    assert "## S2\nword" in text and text.rstrip().endswith("[2 further section(s) omitted for length]")
    assert cut.tokens <= cut.budget == 700
    assert paper_block(long_paper(), 700, count) == (text, cut)  # deterministic
    tiny, tcut = paper_block(long_paper(), 20, count)
    assert tcut.abstract_cut and tcut.sections_dropped == 5 and tiny.startswith("Title: T\nAbstract:")


def test_budget_is_shared_and_unused_share_passes_on():
    small = CitedPaper(paper_id="a", title="Small", abstract="Short.", text_level="abstract")
    text, cuts = background_block([small, long_paper()], BackgroundPolicy(budget_tokens=1000))
    assert [c.paper_id for c in cuts] == ["a", "p"] and "=== PAPER 2 ===" in text
    assert cuts[0].budget == 500 and cuts[1].budget > 980  # the small paper's unused share went to the next
    assert all(c.tokens <= c.budget for c in cuts)
    assert sum(c.tokens for c in cuts) <= 1000 + 20


def test_generate_writes_a_valid_submission_with_its_log(scripted_server, tmp_path):
    scripted_server.responder = F.judge_reply
    bench = F.benchmark(3)
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(name="gen/test"))
    folder = generate_submission(bench, cfg.name, "original", llm=llm, out=tmp_path / "sub", progress=False)
    report = validate_submission(folder, bench.rq_ids)
    assert report.ok and report.covered == 3, [str(p) for p in report.problems]
    assert report.metadata.model == "gen/test" and report.metadata.prompt_variant == "original"
    assert report.metadata.parameters["background"]["name"] == "title-abstract-sections/v1"
    systems = [r["messages"][0]["content"] for r in scripted_server.requests]
    users = [r["messages"][1]["content"] for r in scripted_server.requests]
    assert sum("Here are 2 background papers" in u for u in users) == 1  # instance 1 has two papers
    assert sum("Here is the background paper" in u for u in users) == 2
    assert all("specific" in s for s in systems)  # the original variant's rules
    log = [json.loads(line) for line in (folder / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in log] == ["generation_original", "generation_original_multi", "generation_original"]
    assert len(log[1]["background"]) == 2 and log[1]["background"][0]["sections_kept"]
    n = len(scripted_server.requests)
    generate_submission(bench, cfg.name, "original", llm=llm, out=tmp_path / "sub", progress=False)
    assert len(scripted_server.requests) == n  # a rerun pays for nothing


def test_revised_variant_drops_the_constraining_rules(scripted_server, tmp_path):
    scripted_server.responder = F.judge_reply
    bench = F.benchmark(1)
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(name="gen/test"))
    generate_submission(bench, cfg.name, "revised", llm=llm, out=tmp_path / "sub", progress=False)
    system = scripted_server.requests[0]["messages"][0]["content"]
    assert "exactly 5" in system and "specific" not in system and "answerable" not in system


def test_a_bad_reply_is_reasked_once_then_recorded_as_failure(scripted_server, tmp_path):
    bad = json.dumps({"gaps": ["g"], "research_questions": ["Only one question?"]})
    dup = json.dumps({"gaps": ["g"], "research_questions": ["Does sparse routing keep accuracy on long inputs?"] * 5})

    def respond(req):
        user = req["messages"][1]["content"]
        if "p0 on sparse" in user:  # instance 0: always broken
            return bad
        if "Here is the" in user and "p2 on sparse" in user and len(req["messages"]) == 2:  # instance 2: once
            return dup
        return F.judge_reply(req)

    scripted_server.responder = respond
    bench = F.benchmark(3)
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(name="gen/test"))
    folder = generate_submission(bench, cfg.name, "original", llm=llm, out=tmp_path / "sub", progress=False)
    assert len(scripted_server.requests) == 5  # 3 asks + 2 re-asks
    lines = [json.loads(x) for x in (folder / "submission.jsonl").read_text().splitlines()]
    assert [x["rq_id"] for x in lines] == bench.rq_ids  # no instance dropped
    assert lines[0]["failure"].startswith("invalid_reply") and lines[0]["research_questions"] == []
    assert lines[2]["failure"] is None and len(lines[2]["research_questions"]) == 5
    log = [json.loads(x) for x in (folder / LOG_FILE).read_text().splitlines()]
    assert log[2]["reasked"] is True and log[0]["last_text"] == bad
    strict = validate_submission(folder, bench.rq_ids)
    assert not strict.ok and validate_submission(folder, bench.rq_ids, allow_partial=True).covered == 2


def test_dry_run_counts_calls_and_writes_nothing(tmp_path):
    bench = F.benchmark(3)
    llm = LLM(dry_run=True)
    assert generate_submission(bench, "local", "original", llm=llm, out=tmp_path / "sub", progress=False) is None
    assert llm.estimate.calls == 3 and llm.estimate.by_step == {
        "generation_original": 2,
        "generation_original_multi": 1,
    }
    assert not (tmp_path / "sub").exists()


def test_load_benchmark_from_a_build_folder_and_bad_rows(tmp_path):
    bench = F.benchmark(3)
    F.write_build(bench, tmp_path / "build")
    loaded = load_benchmark(tmp_path / "build")
    assert loaded.rq_ids == bench.rq_ids and loaded.subfields == ["cs.CL", "cs.LG"]
    assert loaded.revision.startswith("build:") and set(loaded.papers) == set(bench.papers)
    rows = (tmp_path / "build" / "records" / "instances.jsonl").read_text().splitlines()
    broken = json.loads(rows[1])
    broken["background_paper_ids"] = []
    rows[1] = json.dumps(broken)
    (tmp_path / "build" / "records" / "instances.jsonl").write_text("\n".join(rows) + "\n")
    with pytest.raises(
        DatasetError, match=r"instances.jsonl: row 2 \(rq_id='2501.00001_rq0'\): field background_paper_ids"
    ):
        load_benchmark(tmp_path / "build")
    with pytest.raises(DatasetError, match="setup-sample"):
        load_benchmark()
    with pytest.raises(DatasetError, match="neither a build folder"):
        load_benchmark(tmp_path)


def test_load_benchmark_from_parquet_configs(tmp_path):
    import pandas as pd

    bench = F.benchmark(2)
    for config, rows in (
        ("instances", [i.model_dump(mode="json") for i in bench.instances]),
        ("cited_papers", [p.model_dump(mode="json") for p in bench.papers.values()]),
    ):
        d = tmp_path / "repo" / "data" / config
        d.mkdir(parents=True)
        pd.DataFrame(rows).to_parquet(d / "test-00000.parquet")
    loaded = load_benchmark(tmp_path / "repo")
    assert loaded.rq_ids == bench.rq_ids and loaded.revision == "folder"
    assert loaded.papers["p1"].sections[0].section == "Section 0"


# --------------------------------------------------------------------------
# the paper's generation settings, truncated replies, the strict variant
# --------------------------------------------------------------------------


def test_a_generation_cut_at_the_reply_budget_is_a_named_truncated_failure(scripted_server, tmp_path):
    from rqbench.testing.scripted_server import ScriptedReply

    def respond(req):
        if "p0 on sparse" in req["messages"][1]["content"]:
            return ScriptedReply('{"gaps": ["a gap"], "research_questions": ["Does', finish_reason="length")
        return F.judge_reply(req)

    scripted_server.responder = respond
    bench = F.benchmark(3)
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(name="gen/test", max_tokens=50))
    folder = generate_submission(bench, cfg.name, "original", llm=llm, out=tmp_path / "sub", progress=False)
    assert len(scripted_server.requests) == 3  # no re-ask of the cut reply
    lines = [json.loads(x) for x in (folder / "submission.jsonl").read_text().splitlines()]
    assert lines[0]["failure"].startswith("truncated: the reply reached the reply budget (max_tokens=50)")
    assert lines[1]["failure"] is None and lines[2]["failure"] is None
    log = [json.loads(x) for x in (folder / LOG_FILE).read_text().splitlines()]
    assert log[0]["truncated"] is True and log[0]["failure"].startswith("truncated") and '"Does' in log[0]["last_text"]
    assert "truncated" not in log[1]
    report = validate_submission(folder, bench.rq_ids, allow_partial=True)
    assert report.covered == 2 and report.failed == 1


def test_a_hosted_generator_gets_the_vendor_default_and_reasoning_and_records_them(
    scripted_server, tmp_path, monkeypatch
):
    from rqbench.llm import catalog

    monkeypatch.setattr(catalog, "supports_reasoning", lambda model: True)  # as for the paper's generators
    scripted_server.responder = F.judge_reply
    bench = F.benchmark(1)
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(name="gen/thinker"))
    folder = generate_submission(bench, cfg.name, "original", llm=llm, out=tmp_path / "sub", progress=False)
    (req,) = scripted_server.requests
    assert "temperature" not in req and req["reasoning_effort"] == "high"
    meta = validate_submission(folder, bench.rq_ids).metadata
    assert meta.model == "gen/thinker"  # the name the user gave; the settings are in the parameters
    assert meta.parameters["temperature"] is None and meta.parameters["sampling"] == "vendor default"
    assert meta.parameters["reasoning_effort"] == "high"
    bg = meta.parameters["background"]
    assert bg["basis"] == "window" and bg["window_source"] == "assumed"
    log = [json.loads(x) for x in (folder / LOG_FILE).read_text().splitlines()]
    assert log[0]["background"][0]["tokens_cut"] == 0 and log[0]["background"][0]["tokens"] > 0


def test_a_set_temperature_is_sent_as_given(scripted_server, tmp_path):
    scripted_server.responder = F.judge_reply
    llm = LLM()
    llm.register(scripted_server.model_config(name="gen/test@temperature=0.4", temperature=0.4))
    generate_submission(
        F.benchmark(1), "gen/test@temperature=0.4", "original", llm=llm, out=tmp_path / "sub", progress=False
    )
    assert scripted_server.requests[0]["temperature"] == 0.4  # the spec's own temperature is kept


def test_the_strict_variant_is_the_original_plus_one_named_rule(scripted_server, tmp_path):
    scripted_server.responder = F.judge_reply
    bench = F.benchmark(2)
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(name="gen/test"))
    generate_submission(bench, cfg.name, "original", llm=llm, out=tmp_path / "o", progress=False)
    folder = generate_submission(bench, cfg.name, "strict", llm=llm, out=tmp_path / "s", progress=False)
    systems = [r["messages"][0]["content"] for r in scripted_server.requests]  # two calls per run, in any order
    original, strict = sorted(systems[:2]), sorted(systems[2:])  # single-paper first ("one" < "several")
    rule = "- Ask the question only: commit to no method and no answer."
    assert not any(rule in s for s in original) and all(rule in s for s in strict)
    for o, s in zip(original, strict):
        assert s.replace(rule + "\n", "") == o
    assert validate_submission(folder, bench.rq_ids).metadata.prompt_variant == "strict"
    log = [json.loads(x) for x in (folder / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in log] == ["generation_strict", "generation_strict_multi"]


def test_papers_go_whole_under_a_large_window_and_are_cut_only_past_a_small_one():
    from rqbench.evaluate.benchmark.background import input_policy

    papers = [long_paper(), long_paper().model_copy(update={"paper_id": "q"})]
    big = input_policy("gemini/gemini-3.1-pro", 32_768)
    assert big.basis == "window" and big.window_tokens == 1_048_576 and big.budget_tokens > 800_000
    text, cuts = background_block(papers, big)
    assert not any(c.truncated for c in cuts) and all(c.tokens_cut == 0 for c in cuts)
    assert text.count("## S4") == 2  # every section of both papers
    small = input_policy("prov/unknown", 100, context_tokens=4096 + 100 + 700)
    assert small.window_source == "--context-tokens" and small.budget_tokens == int(700 * 0.8)
    _, cut = background_block(papers, small)
    assert all(c.truncated and c.tokens_cut > 0 for c in cut)
    assert sum(c.tokens + c.tokens_cut for c in cut) >= sum(c.tokens for c in cuts)  # kept + cut covers the whole
    local = input_policy("local", 1024)
    assert (local.basis, local.budget_tokens) == ("embedded", 2000) and "small budget" in local.describe()
    assert input_policy("gemini/gemini-3.1-pro", 1, fixed_tokens=900).basis == "fixed"


def test_a_grammar_constrained_generator_gets_the_stricter_question_pattern_and_a_hosted_one_the_plain_schema():
    import json

    from rqbench import grammar_patterns, wellformed
    from rqbench.evaluate.generate.run import CheckedGenerationReply, GrammarGenerationReply, generation_reply_for

    strict = json.dumps(grammar_patterns.grammar_pattern(wellformed.Kind.research_question))[1:-1]
    for spec in ("local", "local/smollm2-135m@temperature=0.8", "hosted_vllm/Qwen/Qwen3-8B"):
        assert generation_reply_for(spec) is GrammarGenerationReply
        assert strict in json.dumps(GrammarGenerationReply.model_json_schema())
    for spec in ("openai/gpt-5.5", "gemini/gemini-3.1-pro"):
        assert generation_reply_for(spec) is CheckedGenerationReply
        assert strict not in json.dumps(CheckedGenerationReply.model_json_schema())
    # The same gate and submission rules apply under either schema.
    five = [f"How does factor {c} change attention sinks in small GPT-2 models?" for c in "ABCDE"]
    assert GrammarGenerationReply.model_validate({"gaps": ["g"], "research_questions": five}).research_questions == five
    with pytest.raises(ValueError):
        GrammarGenerationReply.model_validate({"gaps": ["g"], "research_questions": [five[0]] * 5})
