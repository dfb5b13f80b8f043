"""The paper's protocol by default: which judges run, what --dry-run says, what results files record.

Every CLI run here is a dry run or goes to the scripted server; a guard refuses any connection off
loopback, so "without any network" is checked, not assumed.
"""

from __future__ import annotations

import json
import shutil
import socket

import evaluate_factory as F
import pytest

from rqbench.cli import main
from rqbench.evaluate import protocol as P
from rqbench.evaluate.criteria import STEPS as JUDGE_STEPS
from rqbench.evaluate.judge.run import read_results
from rqbench.evaluate.metrics.metric import describe_combine_rule, describe_failures
from rqbench.llm import LLM
from rqbench.llm.catalog import PROMPT_ALLOWANCE_TOKENS, estimate_tokens
from rqbench.llm.config import OFFLINE_JUDGES
from rqbench.prompts import DEFAULT_PROMPT_SET, load_prompt_set
from rqbench.records import MAX_RQ_CHARS, ResultsFile
from rqbench.steps import STEPS
from rqbench.untrusted import candidate_values

PAPER = ("gemini/gemini-3.1-pro", "deepseek/deepseek-v4-pro")


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Connections go to loopback only (the scripted server); anything else fails the test."""
    real = socket.socket.connect

    def connect(self, address):  # type: ignore[no-untyped-def]
        host = address[0] if isinstance(address, tuple) else address
        if host not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"a network connection was attempted: {address!r}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture
def build(tmp_path):
    bench = F.benchmark(3)
    F.write_build(bench, tmp_path / "build")
    return bench, tmp_path / "build"


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    monkeypatch.setenv("DEEPSEEK_API_KEY", "x")


def dry_evaluate(root, capsys, *extra: str) -> str:
    assert main(["evaluate", "--dry-run", "--dataset", str(root), *extra]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


# --------------------------------------------------------------------------
# the default judges
# --------------------------------------------------------------------------


def test_with_both_keys_the_protocol_is_the_papers_and_so_are_the_judges():
    env = {"GEMINI_API_KEY": "x", "DEEPSEEK_API_KEY": "y"}
    assert P.default_protocol(env) == "paper"
    choice = P.choose_judges("paper", None, ["local"], env)
    assert tuple(choice.judges) == PAPER == P.PAPER_JUDGES and choice.notes == [] and choice.blocking_keys(env) == []


def test_offline_the_protocol_is_custom_and_the_judges_are_the_embedded_model():
    assert P.default_protocol({}) == "custom"
    assert P.choose_judges("custom", None, OFFLINE_JUDGES, {}).judges == ["local"]
    assert P.choose_judges("paper", ["openai/gpt-5.5"], OFFLINE_JUDGES, {}).judges == ["openai/gpt-5.5"]


def test_with_one_key_the_run_says_plainly_it_has_one_judge_and_no_combined_figure():
    env = {"GEMINI_API_KEY": "x"}
    assert P.default_protocol(env) == "paper"
    choice = P.choose_judges("paper", None, ["local"], env)
    assert choice.judges == ["gemini/gemini-3.1-pro"] and choice.missing_keys == ["DEEPSEEK_API_KEY"]
    (note,) = choice.notes
    assert "one judge" in note and "no combined figure" in note and "departs from the paper" in note
    assert "DEEPSEEK_API_KEY" in note and choice.blocking_keys(env) == []


def test_asking_for_the_paper_without_keys_names_them_and_stops_a_real_run(build, capsys):
    choice = P.choose_judges("paper", None, ["local"], {})
    assert tuple(choice.judges) == PAPER and choice.blocking_keys({}) == ["GEMINI_API_KEY", "DEEPSEEK_API_KEY"]
    _, root = build
    sub = root.parent / "sub"
    F.submission(F.benchmark(3), sub)
    assert (
        main(["judge", str(sub), "--protocol", "paper", "--dataset", str(root), "--out", str(root.parent / "r")]) == 2
    )
    err = capsys.readouterr().err
    assert "GEMINI_API_KEY and DEEPSEEK_API_KEY" in err and not (root.parent / "r").exists()


# --------------------------------------------------------------------------
# --dry-run
# --------------------------------------------------------------------------


def only_the_prompt_wording_departs(lines: list[str]) -> bool:
    """The last lines of a run under the paper's settings: the packaged prompts' own wording, then the two
    additions every judge prompt makes (docs/fidelity.md J6), each named with what restores the paper."""
    return (
        lines[-4] == "3 departures from the paper's protocol:"
        and lines[-3].startswith("  - prompt wording: rqbench-v1, the paper's prompts in the project's own words")
        and "every element of the paper's prompts present" in lines[-3]
        and lines[-3].endswith("restore: --prompts DIR, a folder holding the authors' prompts (docs/fidelity.md J20)")
        and lines[-2].startswith("  - prompt addition: the fence around untrusted candidates: ")
        and "docs/fidelity.md J6" in lines[-2]
        and "restore: --prompts DIR with judge prompts that leave the fence paragraph" in lines[-2]
        and lines[-1].startswith("  - prompt addition: topics about LLM evaluation are scored like any other: ")
    )


def test_evaluate_dry_run_with_the_paper_keys_is_faithful_and_says_so(build, keys, capsys):
    _, root = build
    out = dry_evaluate(root, capsys)
    lines = out.splitlines()
    assert lines[0].startswith("dry run: ")  # the estimate still comes first
    assert "protocol: paper" in lines
    judges = [ln for ln in lines if ln.strip().startswith("judge ")]
    assert [j.split()[1].split("@")[0] for j in judges] == list(PAPER)
    assert all("temperature 0, reasoning mode high" in j for j in judges)
    gen = next(ln for ln in lines if ln.strip().startswith("generator "))
    assert "vendor-default sampling, reasoning mode high" in gen and "prompt original" in gen
    inputs = [ln for ln in lines if ln.strip().startswith("input of ")]
    assert len(inputs) == 3 and all("full text up to the context window (the model's" in ln for ln in inputs)
    assert all("0 of 3 instances cut" in ln for ln in inputs)
    assert "1,048,576" in out and "1,000,000" in out  # the catalog knows both windows offline
    labels = sorted(j.split()[1].rstrip(":") for j in judges)
    assert f"combined: {describe_combine_rule('pooled', labels)}" in out
    assert f"  failures: {describe_failures('paper')}" in lines
    assert only_the_prompt_wording_departs(lines)  # the paraphrase is named like any other departure


def test_judge_dry_run_with_the_paper_keys_uses_both_judges(build, keys, capsys, tmp_path):
    bench, root = build
    sub = F.submission(bench, tmp_path / "sub")
    assert main(["judge", str(sub.path), "--dry-run", "--dataset", str(root), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "protocol: paper" in out and out.count("reasoning mode high, reply budget") == 2
    # the submission is ours, but its constructed metadata records no generation settings: said, not counted
    assert "its generation settings are not recorded" in out
    assert only_the_prompt_wording_departs(out.rstrip().splitlines()) and not (tmp_path / "r").exists()


def test_generate_dry_run_names_the_prompt_wording_as_its_one_departure(build, keys, capsys):
    _, root = build
    assert (
        main(
            [
                "generate",
                "--dry-run",
                "--model",
                "gemini/gemini-3.1-pro",
                "--dataset",
                str(root),
                "--out",
                str(root.parent / "sub"),
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.rstrip().splitlines()
    assert lines[-2] == "1 departure from the paper's generation settings:"
    assert lines[-1].startswith("  - prompt wording: rqbench-v1, the paper's prompts in the project's own words")


def test_a_submission_generated_with_the_packaged_prompts_says_so_when_judged(build, keys, capsys, tmp_path):
    bench, root = build
    from rqbench.evaluate.generate.submission_files import write_submission

    sub = F.submission(bench, tmp_path / "sub")
    recorded = {"temperature": None, "prompt_set": load_prompt_set().ref()}  # as rqbench generate records them
    write_submission(
        tmp_path / "ours", sub.metadata.model_copy(update={"parameters": recorded}), list(sub.entries.values())
    )
    assert main(["judge", str(tmp_path / "ours"), "--dry-run", "--dataset", str(root)]) == 0
    deps = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("  - ")]
    (gen,) = [d for d in deps if d.startswith("  - generation prompt wording: ")]
    assert "rqbench-v1, the paper's generation prompt in the project's own words" in gen
    assert "restore: regenerate with rqbench generate --prompts DIR" in gen


def test_offline_dry_run_lists_every_departure_with_the_flag_that_restores_it(build, capsys):
    _, root = build
    out = dry_evaluate(root, capsys)
    assert "protocol: custom" in out and "  judge local/smollm2-135m: temperature 0" in out
    assert "judge temperature" not in out  # the offline default is one judge at the paper's temperature
    out = dry_evaluate(root, capsys, "--judge", "local", "--judge", "local@temperature=0.7")
    deps = [ln.strip()[2:] for ln in out.splitlines() if ln.startswith("  - ")]
    head = next(ln for ln in out.splitlines() if "departures from the paper's protocol" in ln)
    assert head == f"{len(deps)} departures from the paper's protocol:"
    items = [d.split(":")[0] for d in deps]
    assert items[0] == "judges" and "restore: --judge gemini/gemini-3.1-pro --judge deepseek/deepseek-v4-pro" in deps[0]
    assert "judge temperature (local/smollm2-135m@temperature=0.7)" in items
    assert "generation sampling" in items and "input truncation (generator local/smollm2-135m@temperature=0.8)" in items
    assert all("; restore: " in d for d in deps)
    assert "the embedded model's small budget: 2,000 tokens" in out  # it says so


@pytest.mark.parametrize(
    ("flags", "item", "restore"),
    [
        (
            ["--background-tokens", "500"],
            "input truncation (judge gemini/gemini-3.1-pro@reasoning_effort=high)",
            "drop --background-tokens",
        ),
        (["--context-tokens", "50000"], "input truncation (generator", "drop --context-tokens"),
        (["--limit", "2"], "instances", "drop --limit"),
        (["--orderings", "2"], "comparative orderings", "--orderings 1"),
        (["--setting", "standalone"], "judging settings", "--setting both"),
        (["--criteria", "novelty"], "criteria judged", "--criteria novelty,narrowness,overlap"),
        (["--prompt", "strict"], "generation prompt", "--prompt original"),
        (["--prompt", "revised"], "generation prompt", "--prompt original"),
        (["--combine", "mean_scores"], "combine rule", "--combine pooled"),
        (["--failures", "conditional"], "failure accounting", "--failures paper"),
        (
            ["--judge", "gemini/gemini-3.1-pro@temperature=0.5", "--judge", "deepseek/deepseek-v4-pro"],
            "judge temperature (gemini/gemini-3.1-pro@temperature=0.5,reasoning_effort=high)",
            "no @temperature",
        ),
        (
            ["--judge", "gemini/gemini-3.1-pro@reasoning_effort=low", "--judge", "deepseek/deepseek-v4-pro"],
            "judge reasoning (gemini/gemini-3.1-pro@reasoning_effort=low)",
            "no @reasoning_effort",
        ),
        (["--model", "gemini/gemini-3.1-pro@temperature=1"], "generation sampling", "no @temperature"),
        (["--model", "deepseek/deepseek-v4-pro@reasoning_effort=low"], "generation reasoning", "no @reasoning_effort"),
        (["--judge", "gemini/gemini-3.1-pro"], "combined figure", "--judge deepseek/deepseek-v4-pro"),
    ],
)
def test_each_departure_is_named_with_its_flag(build, keys, capsys, flags, item, restore):
    _, root = build
    out = dry_evaluate(root, capsys, *flags)
    deps = [ln.strip()[2:] for ln in out.splitlines() if ln.startswith("  - ")]
    hit = [d for d in deps if d.startswith(item)]
    assert hit and restore in hit[0].split("; restore: ")[1], deps


def test_a_custom_prompt_set_is_a_departure_that_names_what_the_element_check_found(build, keys, capsys, tmp_path):
    mine = tmp_path / "my-prompts"
    shutil.copytree(DEFAULT_PROMPT_SET, mine)
    _, root = build
    out = dry_evaluate(root, capsys, "--prompts", str(mine))
    (line,) = [ln for ln in out.splitlines() if ln.startswith("  - prompt set: my-prompts")]
    assert f"{load_prompt_set(mine).hash}): every element of the paper's prompts present in its 11" in line
    assert "its wording is not compared with the authors'" in line and "restore: --prompts DIR" in line
    assert "drop --prompts" in line and not any(ln.startswith("  - prompt wording") for ln in out.splitlines())
    lost = tmp_path / "lost"  # a second folder: a prompt set is read once per process
    shutil.copytree(DEFAULT_PROMPT_SET, lost)
    system = lost / "novelty_standalone.system.md"
    system.write_text(system.read_text().replace("striking or unexpected angle", "striking angle"))
    out = dry_evaluate(root, capsys, "--prompts", str(lost))
    assert "elements of the paper's prompts missing: novelty_standalone (non_obviousness_3)" in out


# The paper's placeholders (A.4, A.8) and the variables our steps fill in their place.
PAPER_VARIABLES = {
    "{background_block}": "{{background}}",
    "{background}": "{{background}}",
    "{candidates_block}": "{{candidates}}",
    "{candidate_rq}": "{{candidates}}",
    "{ground_truth}": "{{ground_truth}}",
    "{papers_block}": "{{papers}}",
    "{n_papers}": "{{n_papers}}",
}
PAPER_JUDGES_PROMPTS = {
    "Standalone novelty prompt": "novelty_standalone",
    "Comparative novelty prompt": "novelty_comparative",
    "Standalone narrowness prompt": "narrowness_standalone",
    "Comparative narrowness prompt": "narrowness_comparative",
    "Author-anchor overlap prompt": "overlap",
}


def authors_prompt_set(paper: str, folder):  # type: ignore[no-untyped-def]
    """A prompt-set folder as docs/fidelity.md (J20) tells a user to make one: the packaged set with every judge
    and generation step replaced by the paper's own prompt text, only its placeholders renamed (each on a line of
    its own, as the text copy lost the line breaks). Returns each step's system text."""
    shutil.copytree(DEFAULT_PROMPT_SET, folder)
    lines = paper.splitlines()

    def prompt(heading: str) -> str:
        (line,) = [ln for ln in lines if ln.startswith(heading + " System ")]
        return line[len(heading + " System ") :]

    def ours(text: str) -> str:
        for theirs, mine in PAPER_VARIABLES.items():
            text = text.replace(" " + theirs, "\n" + mine)
        return text.strip() + "\n"

    systems = {}

    def write(step: str, system: str, user: str) -> None:
        (folder / f"{step}.system.md").write_text(system.strip() + "\n")
        (folder / f"{step}.user.md").write_text(ours(user))
        systems[step] = system.strip()

    for heading, step in PAPER_JUDGES_PROMPTS.items():
        write(step, *prompt(heading).rsplit(" User ", 1))
    for heading, variant in (("RQ generation prompt", "original"), ("New RQ generation prompt", "revised")):
        system, users = prompt(heading).split(" User prompt: single-paper setting ", 1)
        single, multi = users.split(" User prompt: multi-paper setting ", 1)
        write(f"generation_{variant}", system, single)
        write(f"generation_{variant}_multi", system, multi)
    return systems


def test_the_authors_own_prompts_run_from_a_folder_given_to_generate_judge_and_evaluate(
    build, shared, scripted_server, monkeypatch, tmp_path, capsys
):
    bench, root = build
    scripted_server.responder = F.judge_reply
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    spec = F.scripted_spec(scripted_server)
    authors = tmp_path / "authors"
    systems = authors_prompt_set((shared / "reference" / "rq-bench-paper.txt").read_text(encoding="utf-8"), authors)
    common = ["--dataset", str(root), "--prompts", str(authors)]

    assert main(["generate", "--model", spec, "--out", str(tmp_path / "sub"), *common]) == 0, capsys.readouterr().err
    asked = [(r.step, r["messages"][0]["content"]) for r in scripted_server.requests]
    assert {step for step, _ in asked} == {"generation_original", "generation_original_multi"}
    assert all(system == systems[step] for step, system in asked)  # the paper's words reached the model

    n = len(scripted_server.requests)
    assert main(["judge", str(tmp_path / "sub"), "--judge", spec, "--out", str(tmp_path / "r"), *common]) == 0
    judged = scripted_server.requests[n:]
    assert {r.step for r in judged} == set(PAPER_JUDGES_PROMPTS.values())
    assert all(r["messages"][0]["content"] == systems[r.step] for r in judged)
    files = [read_results(p) for p in (tmp_path / "r").glob("*.json")]
    assert len(files) == 2 and all(f.judge.prompt_set.name == "authors" for f in files)
    assert all(not i.failures for f in files for i in f.instances)  # every reply parsed
    (dep,) = [d for d in files[0].protocol.departures if d.item == "prompt set"]
    # The text copy prints the comparative narrowness prompt as "the standalone one, except ...", so that file
    # lacks what the standalone one holds; a user writes it out whole (docs/fidelity.md J20). Nothing else lacks.
    assert (
        ": elements of the paper's prompts missing: narrowness_comparative (two_independent_scores, "
        "source_bound_definition, diagnostic_definition, example_both, example_source_bound_only and 28 more); "
        "its wording is not compared with the authors'"
    ) in dep.ours

    assert (
        main(["evaluate", "--model", spec, "--judge", spec, "--out", str(tmp_path / "e"), "--no-report", *common]) == 0
    )
    printed = capsys.readouterr().out
    assert "  - prompt set: authors (" in printed
    assert len([read_results(p) for p in (tmp_path / "e").glob("*.json")]) == 2  # generated, then judged, by them


def test_a_one_judge_dry_run_prints_no_combined_rule(build, capsys, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    _, root = build
    out = dry_evaluate(root, capsys)
    assert "note: this run has one judge, gemini/gemini-3.1-pro" in out and "combined: none (one judge)" in out
    assert "(rule: pooled)" not in out
    assert any(ln.startswith("  - combined figure: one judge, so no combined figure") for ln in out.splitlines())


# --------------------------------------------------------------------------
# what results files record
# --------------------------------------------------------------------------


def test_results_files_record_the_protocol_and_its_departures(build, scripted_server, monkeypatch, tmp_path, capsys):
    bench, root = build
    scripted_server.responder = F.judge_reply
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    spec = F.scripted_spec(scripted_server)
    sub = F.submission(bench, tmp_path / "sub")
    out = tmp_path / "r"
    assert (
        main(
            [
                "judge",
                str(sub.path),
                "--judge",
                spec,
                "--setting",
                "standalone",
                "--criteria",
                "novelty",
                "--dataset",
                str(root),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    (rf,) = [read_results(p) for p in out.glob("*.json")]
    assert rf.protocol is not None and rf.protocol.name == "custom" and not rf.protocol.faithful
    items = [d.item for d in rf.protocol.departures]
    assert items[:2] == ["judges", "combined figure"] and "judging settings" in items and "criteria judged" in items
    assert all(d.restore for d in rf.protocol.departures)
    assert f"{len(items)} departures from the paper's protocol:" in printed  # what was recorded was shown
    # the judge's background: whole papers under its (assumed) window, recorded per instance and metric
    inst = rf.instances[0]
    assert set(inst.background) == {"novelty"} and inst.background["novelty"][0].tokens_cut == 0
    assert rf.settings["background"]["basis"] == "window" and rf.settings["background"]["window_source"] == "assumed"


def test_results_files_written_before_the_protocol_field_still_read(tmp_path):
    from results_factory import cand, instance, results

    rf = results([instance("2501.00001_rq0", cand("gt"), [cand(f"m{i}") for i in range(5)])])
    data = json.loads(rf.model_dump_json())
    data.pop("protocol")
    data.pop("coverage")
    data["judge"].pop("order_key")
    for inst in data["instances"]:
        inst.pop("background")
        inst.pop("rule_applications")
        for raw in inst["raw_replies"]:
            raw.pop("truncated", None)
    old = ResultsFile.model_validate(data)
    assert old.protocol is None and old.instances[0].background == {} and old.coverage is None
    assert old.judge.order_key is None and old.instances[0].rule_applications == {}


# --------------------------------------------------------------------------
# the room kept for the prompt's fixed text
# --------------------------------------------------------------------------


def test_the_prompt_allowance_holds_every_generation_and_judge_prompt_with_the_longest_candidates():
    """background.input_policy keeps PROMPT_ALLOWANCE_TOKENS free for a prompt's fixed text: measure the largest."""
    prompts = load_prompt_set()
    longest = "w" * (MAX_RQ_CHARS - 1) + "?"
    values = {
        "papers": "",
        "background": "",
        "n_papers": "3",
        "ground_truth": longest,
        **candidate_values([longest] * 6),
    }  # the fenced block judges get: candidates, data_tag, n_candidates
    sizes = {}
    for name in [*STEPS, *JUDGE_STEPS]:
        if not (name.startswith(("generation_", "novelty_", "narrowness_")) or name == "overlap"):
            continue
        t = prompts[name]
        msgs = t.render(**{k: v for k, v in values.items() if k in t.variables()})
        sizes[name] = estimate_tokens("".join(m["content"] for m in msgs))
    assert len(sizes) == 11
    assert max(sizes.values()) <= PROMPT_ALLOWANCE_TOKENS * 0.6, sizes  # well inside, with room for edits


def test_the_plan_of_a_library_call_is_worked_out_even_when_no_cli_gave_one(build, scripted_server, tmp_path):
    """judge_submission without a protocol still records one: named custom, departures computed."""
    from rqbench.evaluate.judge.run import judge_submission

    bench, _ = build
    scripted_server.responder = F.judge_reply
    llm = LLM()
    cfg = llm.register(scripted_server.model_config())
    sub = F.submission(bench, tmp_path / "sub")
    (path,) = judge_submission(
        bench, sub, [cfg.name], ["comparative"], llm=llm, out_dir=tmp_path / "r", criteria=["overlap"], progress=False
    )
    rec = read_results(path).protocol
    assert rec is not None and rec.name == "custom" and rec.departures[0].item == "judges"
