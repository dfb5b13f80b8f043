"""The well-formedness gate wired in: the junk of the published sample through every path.

Each junk text below was stored or accepted before the gate (see docs/wellformed.md):
RQs that were a cut-off JSON object or a statement, gaps that were a template slot or a
piece of the prompt's material, generated questions glued into one string. Through the
builder's replies it is re-asked once (quoting the rules), then dropped on its own and
counted by rule; through generation it is re-asked, then recorded as a failed entry;
through a submission line it is an error with its line, field and rule code.
"""

from __future__ import annotations

import json
from pathlib import Path

import evaluate_factory as F
import pytest
from builder_script import make_cited_sources, make_papers, reply_for
from pydantic import ValidationError

from rqbench import grammar_patterns
from rqbench import records as r
from rqbench import wellformed as wf
from rqbench.builder.build_config import BuildConfig
from rqbench.builder.pipeline import run_build
from rqbench.builder.records_out import assemble
from rqbench.evaluate.generate.run import LOG_FILE, generate_submission
from rqbench.evaluate.generate.submission_files import validate_submission
from rqbench.llm import LLM, CallStore

JUNK_RQS = [
    "<key>}, {cited_keys: []}}, ...} } } } }",  # a cut-off JSON object, stored as an RQ of the sample
    "The HyperTools toolbox provides a set of functions ...",  # a statement, stored as an RQ
    "<question 1?>, <question 2?",  # the reply's template, accepted as a generated RQ
    "? ? ?",
]
JUNK_GAPS = ["<gap>", "1] (section: Introduction)"]
JUNK_CONTRIBUTIONS = ["<contribution>", "]}\n{"]
GOOD_RQ = "What makes attention concentrate on semantically empty tokens?"
PAPERS = ["attention-sink-gpt2", "inlg2024-ngram-gec"]
FAVOURITE = "gu2025when"


def rules_of(text: str, kind: str) -> set[str]:
    return {f.rule.value for f in wf.check(text, kind)}


def every_text_passes(rows) -> None:
    bad = [(getattr(row, "rq_id", None), field, f.rule.value) for row in rows for field, f in row.wellformed_failures()]
    assert bad == []


# --------------------------------------------------------------------------
# the reply models: the gate's rules in the error a re-ask quotes
# --------------------------------------------------------------------------


@pytest.mark.parametrize("text", JUNK_RQS)
def test_author_rq_and_generation_replies_refuse_junk_questions_by_rule(text):
    with pytest.raises(ValidationError) as err:
        r.AuthorRQsReply.model_validate({"research_questions": [{"question": text, "cited_keys": ["k"]}]})
    msg = str(err.value)
    assert "not a well-formed research question (rules: " in msg
    assert all(rule in msg for rule in rules_of(text, "research_question"))
    five = [GOOD_RQ.replace("semantically", w) for w in ("semantically", "nearly", "mostly", "often")] + [text]
    with pytest.raises(ValidationError) as err:
        r.GenerationReply.model_validate(
            {"gaps": ["A gap that the papers leave open here."], "research_questions": five}
        )
    assert err.value.errors()[0]["loc"] == ("research_questions", 4) and "rules: " in err.value.errors()[0]["msg"]
    with pytest.raises(ValidationError, match="rules: "):
        r.SubmissionEntry(rq_id="x_rq0", research_questions=five)


@pytest.mark.parametrize("text", JUNK_GAPS + JUNK_RQS)
def test_gap_and_contributions_replies_refuse_junk_by_rule(text):
    with pytest.raises(ValidationError) as err:
        r.GapReply.model_validate({"gaps": ["The cited work leaves open why sinks form.", text]})
    assert "item 1: not a well-formed gap (rules: " in str(err.value)
    good = {
        "problem_statement": "Models attend to a few tokens regardless of content, which wastes capacity.",
        "main_idea_headline": "Attention sinks explained and removed.",
        "novelty_type": "new_method",
        "ideas": ["Measure sink strength across layers."],
        "contributions": ["A fix that removes them."],
    }
    for field, value in (
        ("contributions", [text]),
        ("ideas", ["Measure sink strength.", text]),
        ("problem_statement", text),
        ("main_idea_headline", text),
    ):
        with pytest.raises(ValidationError) as err:
            r.ContributionsReply.model_validate({**good, field: value})
        assert err.value.errors()[0]["loc"] == (field,) and "rules: " in str(err.value)


def test_the_per_item_context_lets_a_reply_through_for_the_caller_to_gate():
    reply = r.GapReply.model_validate({"gaps": JUNK_GAPS}, context=r.WELLFORMED_PER_ITEM)
    assert reply.gaps == JUNK_GAPS
    with pytest.raises(ValidationError):
        r.GapReply.model_validate({"gaps": JUNK_GAPS})


def test_grammar_constrained_decoders_get_the_gate_patterns_in_the_builder_schemas():
    from rqbench.builder import author_rqs, contributions, gaps
    from rqbench.builder.llm_stage import grammar_constrained

    assert [
        grammar_constrained(m)
        for m in (
            "local",
            "local/smollm2-135m@temperature=0.8",
            "hosted_vllm/Qwen/Qwen3-8B",
            "gemini/gemini-3.1-pro",
            "openai/gpt-5.5",
        )
    ] == [True, True, True, False, False]
    rq_schema = json.dumps(r.reply_json_schema(author_rqs.reply_model_for(["k"], local=True)))
    assert json.dumps(grammar_patterns.grammar_pattern(wf.Kind.research_question))[1:-1] in rq_schema
    for local, hosted in ((contributions.LocalReply, contributions.Reply), (gaps.LocalReply, gaps.Reply)):
        assert '"pattern"' in json.dumps(r.reply_json_schema(local))
        assert '"pattern"' not in json.dumps(r.reply_json_schema(hosted))
    # a constrained decoder's headline stays under the gate's 40 words; a hosted model's keeps the 400 characters
    local_headline = r.reply_json_schema(contributions.LocalReply)["properties"]["main_idea_headline"]
    assert local_headline["maxLength"] == contributions.GRAMMAR_HEADLINE_CHARS == 200
    assert r.reply_json_schema(contributions.Reply)["properties"]["main_idea_headline"]["maxLength"] == 400


def test_the_verifier_reasoning_is_free_text():
    reply = r.VerificationReply.model_validate({"addressed": True, "confidence": "low", "reasoning": "yes"})
    assert reply.reasoning == "yes"


# --------------------------------------------------------------------------
# the builder: re-asked once, then each bad item dropped and counted by rule
# --------------------------------------------------------------------------


def junk_builder_replies(req) -> str:
    """The scripted builder, with junk mixed into every reply (first ask and re-ask alike)."""
    good = json.loads(reply_for(req, prefer_key=FAVOURITE))
    if req.step == "contributions":
        good["contributions"] = [JUNK_CONTRIBUTIONS[0], *good["contributions"]]
        good["ideas"] = [*good["ideas"], JUNK_CONTRIBUTIONS[1]]
    elif req.step == "gaps":
        good["gaps"] = [JUNK_GAPS[0], *good["gaps"], JUNK_GAPS[1], good["gaps"][0].upper()]  # the last: a duplicate
    elif req.step == "cited_contributions":
        good["contributions"] = [JUNK_CONTRIBUTIONS[0], *good["contributions"]]
    elif req.step == "author_rqs":
        keys = good["research_questions"][0]["cited_keys"]
        good["research_questions"] = [{"question": q, "cited_keys": keys} for q in JUNK_RQS[:2]] + good[
            "research_questions"
        ]
    return json.dumps(good)


@pytest.fixture
def junk_build(tmp_path, fixtures_dir, scripted_server):
    scripted_server.responder = junk_builder_replies
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(scripted_server.model_config())
    config = BuildConfig(
        out=tmp_path / "out",
        papers=make_papers(tmp_path / "papers", fixtures_dir, PAPERS),
        cited_sources=make_cited_sources(tmp_path / "cited"),
        max_cited_per_paper=4,
        allow_abstract_only=True,
        models={x: cfg.name for x in ("strong", "light", "labeller")},
        progress=False,
        concurrency=1,
    )
    manifest = run_build(config, llm)
    return manifest, scripted_server, tmp_path / "out", llm


def test_builder_reasks_quoting_the_rules_then_drops_each_bad_item(junk_build):
    manifest, srv, out, _ = junk_build
    reasks = {req.step: req for req in srv.requests if (req.step_tag or "").endswith(":reask")}
    assert set(reasks) == {"contributions", "gaps", "author_rqs", "cited_contributions"}
    for req in reasks.values():
        quoted = req["messages"][-1]["content"]
        assert "not a well-formed" in quoted and "rules: " in quoted and "placeholder" in quoted
    rqs = F_read(out / "records" / "rqs.jsonl", r.RQRecord)
    papers = F_read(out / "records" / "papers.jsonl", r.PaperRecord)
    instances = F_read(out / "records" / "instances.jsonl", r.EvaluationInstance)
    assert rqs and {p.paper.paper_id for p in papers} == set(PAPERS)  # no paper lost for one bad item
    cited = F_read(out / "records" / "cited_papers.jsonl", r.CitedPaper)
    assert any(c.contributions_source == "extracted" and c.contributions for c in cited)
    every_text_passes(rqs + papers + instances + cited)
    # the two junk RQs held reply positions 0 and 1: the good ones keep 2 and 3
    assert {rq.rq_id.rsplit("_rq", 1)[1] for rq in rqs} == {"2", "3"}
    assert all(len(p.contributions) == 2 and len(p.ideas) == 1 for p in papers)
    # the verifier was never asked about a junk RQ
    verified = [req["messages"][1]["content"] for req in srv.requests if req.step == "verification"]
    assert verified and not any(junk in text for text in verified for junk in JUNK_RQS[:2])


def F_read(path: Path, model):
    return [model.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]


def test_drops_are_counted_by_rule_in_funnel_manifest_and_card(junk_build, tmp_path):
    manifest, srv, out, _ = junk_build
    n_gap_calls = sum(1 for req in srv.requests if req.step == "gaps" and not (req.step_tag or "").endswith(":reask"))
    n_cited_calls = sum(
        1 for req in srv.requests if req.step == "cited_contributions" and not (req.step_tag or "").endswith(":reask")
    )
    assert n_cited_calls >= 1
    m = manifest.malformed
    assert list(m) == ["research_question", "gap", "contribution"]  # the gate's order of kinds
    assert m["research_question"].items == 2 * len(PAPERS)
    assert m["gap"].items == 3 * n_gap_calls and m["gap"].rules["duplicate"] == n_gap_calls
    assert m["contribution"].items == 2 * len(PAPERS) + n_cited_calls  # a cited paper's junk statement too
    for kind, texts in (("research_question", JUNK_RQS[:2]), ("gap", JUNK_GAPS), ("contribution", JUNK_CONTRIBUTIONS)):
        for rule in set().union(*(rules_of(t, kind) for t in texts)):
            assert m[kind].rules[rule] >= len(PAPERS) if kind != "gap" else m[kind].rules[rule] >= n_gap_calls
    saved = r.BuildManifest.model_validate_json((out / "manifest.json").read_text())
    assert saved.malformed == m
    funnel = json.loads((out / "funnel.json").read_text())
    assert funnel["malformed"] == {k: v.model_dump() for k, v in m.items()}
    md = (out / "funnel.md").read_text()
    assert "# Well-formedness gate" in md
    assert f"| research question | {m['research_question'].items} | " in md and "placeholder: " in md

    from rqbench.dataset_card.card_base import CardSettings
    from rqbench.dataset_card.publish import publish
    from rqbench.dataset_card.repo import LocalGitTarget

    dataset = tmp_path / "dataset"
    publish(out, "0.1.0", LocalGitTarget(dataset), CardSettings(target="local", repo="test/rq-bench"))
    card = (dataset / "README.md").read_text(encoding="utf-8")
    rules = ", ".join(f"{k}: {v}" for k, v in m["gap"].rules.items())
    assert f"| gap | {m['gap'].items} | {rules} |" in card


def test_a_published_build_loaded_with_load_dataset_passes_the_gate_everywhere(junk_build, tmp_path):
    """Every text field of every row the `datasets` library reads back from a release passes the gate."""
    import datasets

    from rqbench.dataset_card.card_base import CardSettings
    from rqbench.dataset_card.features import from_row
    from rqbench.dataset_card.publish import publish
    from rqbench.dataset_card.repo import LocalGitTarget

    _, _, out, _ = junk_build
    dataset = tmp_path / "dataset"
    publish(out, "0.1.0", LocalGitTarget(dataset), CardSettings(target="local", repo="test/rq-bench"))
    counts = check_release_with_load_dataset(dataset, datasets, from_row)
    assert counts["rqs"] == counts["instances"] >= 1 and counts["papers"] == len(PAPERS)


def check_release_with_load_dataset(dataset: Path, datasets, from_row) -> dict[str, int]:
    """load_dataset each config of a release; every row's LLM-written text passes the gate. Rows per config."""
    counts = {}
    for config, model in (
        ("rqs", r.RQRecord),
        ("papers", r.PaperRecord),
        ("instances", r.EvaluationInstance),
        ("cited_papers", r.CitedPaper),
    ):
        rows = datasets.load_dataset(str(dataset), config, split="test")
        records = [from_row(model, row, f"{config} row {n}") for n, row in enumerate(rows)]
        assert all(isinstance(x, model) for x in records)
        every_text_passes(records)  # a cited paper's extracted contributions are gated; its abstract is its own
        counts[config] = len(records)
    return counts


def test_a_malformed_problem_statement_is_a_named_skip_with_its_rules(tmp_path, fixtures_dir, scripted_server):
    def respond(req):
        text = reply_for(req, prefer_key=FAVOURITE)
        if req.step == "contributions":
            return json.dumps({**json.loads(text), "problem_statement": JUNK_GAPS[1]})
        return text

    scripted_server.responder = respond
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(scripted_server.model_config())
    config = BuildConfig(
        out=tmp_path / "out",
        papers=make_papers(tmp_path / "papers", fixtures_dir, PAPERS[:1]),
        max_cited_per_paper=2,
        allow_abstract_only=True,
        progress=False,
        models={x: cfg.name for x in ("strong", "light", "labeller")},
    )
    manifest = run_build(config, llm)
    skips = F_read(tmp_path / "out" / "skips.jsonl", r.SkipRecord)
    (skip,) = [s for s in skips if s.stage == "contributions"]
    assert skip.reason == "malformed_problem_statement" and skip.dropped[0].field == "problem_statement"
    assert set(skip.dropped[0].rules) == rules_of(JUNK_GAPS[1], "problem_statement")
    assert manifest.malformed["problem_statement"].items == 1 and manifest.counts["rqs"] == 0
    assert "malformed_problem_statement: 1" in (tmp_path / "out" / "funnel.md").read_text()


def test_records_stage_gates_hand_made_stage_outputs_and_keeps_rq_indices():
    from rqbench.builder.author_rqs import AuthorRQsResult, LinkedRQ
    from rqbench.builder.cited_text import CitedText, CitedTextResult
    from rqbench.builder.contributions import ContributionsResult
    from rqbench.builder.gaps import CitationGaps, GapsResult

    paper = r.SourcePaper(arxiv_id="2501.00001", title="P", primary_category="cs.CL")
    cited = r.CitedPaper(paper_id="2401.00001", title="Shared", text_level=r.TextLevel.title)
    contrib = ContributionsResult(
        arxiv_id=paper.arxiv_id,
        main_idea_headline="Attention sinks explained and removed.",
        problem_statement="Models attend to a few tokens regardless of content, which wastes it.",
        novelty_type="new_method",
        ideas=["Measure sink strength across layers.", "<idea>"],
        contributions=["A fix that removes them.", JUNK_CONTRIBUTIONS[1]],
        model="m",
    )
    rqs = AuthorRQsResult(
        arxiv_id=paper.arxiv_id,
        rqs=[LinkedRQ(question=JUNK_RQS[0], cited_keys=["s"]), LinkedRQ(question=GOOD_RQ, cited_keys=["s"])],
    )
    gaps = GapsResult(
        arxiv_id=paper.arxiv_id,
        per_citation=[CitationGaps(key="s", gaps=[JUNK_GAPS[0], "The cited work leaves open why sinks form."])],
    )
    tables = assemble(
        [paper],
        [contrib],
        [],
        [gaps],
        [rqs],
        [CitedTextResult(arxiv_id=paper.arxiv_id, cited=[CitedText(key="s", paper=cited)])],
        [],
        allow_abstract_only=True,
    )
    assert [x.rq_id for x in tables.rqs] == ["2501.00001_rq1"] and tables.dropped == {"malformed_rq": 1}
    (row,) = tables.rqs
    assert row.ideas == ["Measure sink strength across layers."] and row.contributions == ["A fix that removes them."]
    assert [g.text for g in row.gaps] == ["The cited work leaves open why sinks form."]
    every_text_passes(tables.rqs + tables.papers + tables.instances)
    (skip,) = [s for s in tables.skips if s.reason == "malformed_rq"]
    assert skip.item_id == "2501.00001_rq0" and "json_debris" in skip.dropped[0].rules
    assert sorted(d.field for d in tables.gate_drops) == ["contributions[1]", "ideas[1]", "s.gaps[0]"]


def test_publishing_refuses_a_malformed_record_but_reading_an_old_build_does_not(tmp_path):
    from fake_build import make_records, write_build

    from rqbench.dataset_card.build_folder import check_build, load_build

    records = make_records()
    records["rqs"][0] = records["rqs"][0].model_copy(update={"rq": JUNK_RQS[0]})
    records["instances"][0] = records["instances"][0].model_copy(update={"gt_rq": JUNK_RQS[0]})
    build = load_build(write_build(tmp_path / "build", records))  # an old build still reads
    problems = check_build(build)
    assert any("rqs.jsonl: RQRecord 2501.00000_rq0: rq: json_debris: " in p for p in problems)
    assert any("instances.jsonl: EvaluationInstance 2501.00000_rq0: gt_rq: placeholder: " in p for p in problems)


# --------------------------------------------------------------------------
# generation and submissions
# --------------------------------------------------------------------------


def test_generation_reasks_a_junk_reply_then_records_a_failure_naming_the_rules(scripted_server, tmp_path):
    def respond(req):
        if req.step.startswith("generation_"):
            return json.dumps({"gaps": ["<gap>"], "research_questions": [*JUNK_RQS, GOOD_RQ]})
        return F.judge_reply(req)

    scripted_server.responder = respond
    bench = F.benchmark(1)
    llm = LLM()
    cfg = llm.register(scripted_server.model_config(name="gen/test"))
    folder = generate_submission(bench, cfg.name, "original", llm=llm, out=tmp_path / "sub", progress=False)
    assert len(scripted_server.requests) == 2  # the ask and one re-ask
    quoted = scripted_server.requests[1]["messages"][-1]["content"]
    assert "research_questions.2: " in quoted and "several_questions" in quoted and "few_letters" in quoted
    # only what refuses a submitted question is a re-ask's reason; an echoed slot goes to review, not back to the model
    assert "placeholder" not in quoted
    (line,) = [json.loads(x) for x in (folder / "submission.jsonl").read_text().splitlines()]
    assert line["research_questions"] == [] and line["failure"].startswith("invalid_reply")
    assert "rules: " in line["failure"] and "not_a_question" in line["failure"]
    (log,) = [json.loads(x) for x in (folder / LOG_FILE).read_text().splitlines()]
    assert "<question 1?>" in log["last_text"]


def test_a_submission_line_of_junk_is_refused_with_line_field_and_rule_codes(tmp_path):
    f = tmp_path / "sub.jsonl"
    good = [GOOD_RQ.replace("semantically", w) for w in ("semantically", "nearly", "mostly", "often", "rarely")]
    spaced = ["WHAT makes attention concentrate on semantically  empty tokens ?!"]  # a duplicate of good[0]
    lines = [
        json.dumps({"kind": "metadata", "model": "m"}),
        json.dumps({"rq_id": "a_rq0", "research_questions": JUNK_RQS + good[:1]}),
        json.dumps({"rq_id": "a_rq1", "research_questions": good[:4] + spaced, "gaps": JUNK_GAPS}),
    ]
    f.write_text("\n".join(lines) + "\n")
    rep = validate_submission(f, ["a_rq0", "a_rq1"])
    got = {(p.code, p.line, p.field, p.severity) for p in rep.problems}
    for i, text in enumerate(JUNK_RQS):
        for failure in wf.check(text, "research_question", "submitted"):  # the standard a submitted RQ is held to
            rule = failure.rule.value
            code = "rq_not_question" if rule == "not_a_question" else f"rq_{rule}"
            severity = "error" if failure.refuses else "warning"
            assert (code, 2, f"research_questions[{i}]", severity) in got
    assert ("rq_repeated", 3, "research_questions[4]", "error") in got
    gap_warnings = {(p.code, p.field) for p in rep.warnings}
    assert ("gap_placeholder", "gaps[0]") in gap_warnings and ("gap_prompt_echo", "gaps[1]") in gap_warnings
    assert not rep.ok and [e.rq_id for e in rep.entries] == []
    shown = "\n".join(str(p) for p in rep.problems)
    assert f"{f}:2 [research_questions[3]] (rq_id a_rq0): not a well-formed research question (rule " in shown


def test_gate_problems_are_capped_per_rule(tmp_path):
    f = tmp_path / "sub.jsonl"
    ids = [f"2501.{i:05d}_rq0" for i in range(30)]
    lines = [json.dumps({"kind": "metadata", "model": "m"})]
    lines += [
        json.dumps({"rq_id": i, "research_questions": [f"<question {k}?> about {i} here?" for k in range(5)]})
        for i in ids
    ]
    f.write_text("\n".join(lines) + "\n")
    rep = validate_submission(f, ids, max_problems_per_rule=3)
    assert len([p for p in rep.problems if p.code == "rq_placeholder"]) == 4  # 3 listed + the "... and N more" line
    assert rep.suppressed["rq_placeholder"] == 150 - 3


@pytest.mark.local_model
def test_the_published_sample_passes_the_gate_when_read_with_load_dataset():
    """The offline sample the README's first command publishes (under ./data, the default RQB_HOME; skipped until built)."""
    import datasets

    from rqbench import paths
    from rqbench.dataset_card.features import from_row

    dataset = Path(__file__).resolve().parent.parent / "data" / "datasets" / paths.SAMPLE_NAME
    if not (dataset / ".git").exists():
        pytest.skip(f"no published sample at {dataset}; run rqbench setup-sample")
    counts = check_release_with_load_dataset(dataset, datasets, from_row)
    assert counts["rqs"] == counts["instances"]


def test_the_builder_holds_extracted_text_to_every_rule_while_a_submitted_question_is_its_subject(tmp_path):
    """A question naming a chat-template marker: dropped from a build (parser or reply debris there), accepted and
    not even flagged when submitted or generated (it reaches judges neutralised, readers escaped)."""
    from rqbench.evaluate.generate.run import CheckedGenerationReply

    named = "How do chat-template markers such as <|im_start|> shape what a model treats as a system turn?"
    with pytest.raises(ValidationError, match="markup_debris"):
        r.AuthorRQsReply.model_validate({"research_questions": [{"question": named, "cited_keys": ["k"]}]})
    five = [GOOD_RQ.replace("semantically", w) for w in ("semantically", "nearly", "mostly", "often")] + [named]
    assert r.SubmissionEntry(rq_id="x_rq0", research_questions=five).research_questions[4] == named
    assert CheckedGenerationReply(gaps=["A gap."], research_questions=five).research_questions[4] == named
    f = tmp_path / "sub.jsonl"
    f.write_text(
        json.dumps({"kind": "metadata", "model": "m"})
        + "\n"
        + json.dumps({"rq_id": "a_rq0", "research_questions": five})
        + "\n"
    )
    rep = validate_submission(f, ["a_rq0"])
    assert rep.ok and rep.problems == [] and rep.flagged_count == 0
