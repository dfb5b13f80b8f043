"""Every element of the paper's prompts (A.4, A.8) is present in meaning in the packaged prompt files.

The checklists (``rqbench/prompts/elements/*.toml``) are checked three ways: the paper's own prompt
text passes them (so the concepts follow the paper, not our wording), each packaged prompt file
passes them, and a prompt with an element taken out fails them (the sentence that carries it
dropped, or the words the issue found missing put back as they were lost).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from rqbench.evaluate.criteria import STEPS as JUDGE_STEPS
from rqbench.prompt_elements import (
    Checklist,
    Element,
    departures_present,
    load_checklists,
    load_departures,
    missing_elements,
    sentence_spans,
    step_text,
)
from rqbench.prompts import DEFAULT_PROMPT_SET, PromptError, load_prompt_set
from rqbench.steps import STEPS

CHECKLISTS = load_checklists()
PROMPTS = load_prompt_set()
JUDGE_AND_GENERATION = sorted([*JUDGE_STEPS, *(s for s in STEPS if s.startswith("generation_"))])
CASES = [(c.name, step) for c in CHECKLISTS.values() for step in c.steps]
ELEMENT_CASES = [(c.name, step, e.id) for c in CHECKLISTS.values() for step in c.steps for e in c.required(step)]


def paper_prompt(paper_lines: list[str], checklist: Checklist) -> str:
    """The paper's text of a prompt (one line of the text copy; for a stage the paper only describes, §4's lines),
    with the prompts it is defined by."""

    def line(heading: str) -> str:
        (hit,) = [ln for ln in paper_lines if ln.startswith(heading + " ")]
        return hit

    own = "\n".join(line(h) for h in [checklist.heading, *checklist.also])
    if not checklist.by_reference:
        return own
    return "\n".join([*(line(CHECKLISTS[i].heading) for i in checklist.include if CHECKLISTS[i].heading), own])


@pytest.fixture(scope="module")
def paper_lines(shared) -> list[str]:
    return (shared / "reference" / "rq-bench-paper.txt").read_text(encoding="utf-8").splitlines()


# --------------------------------------------------------------------------
# the checklists
# --------------------------------------------------------------------------


def test_every_step_of_the_packaged_set_has_one_checklist():
    covered = sorted(step for c in CHECKLISTS.values() for step in c.steps)
    assert covered == sorted(PROMPTS.templates)  # each step once, and only steps that exist
    assert set(JUDGE_AND_GENERATION) <= set(covered)
    printed = [c for c in CHECKLISTS.values() if c.heading and c.printed]
    assert len(printed) == 8  # A.4's six prompts, A.7's and A.8's
    described = sorted(step for c in CHECKLISTS.values() if not c.printed for step in c.steps)
    assert described == ["author_rqs", "cited_contributions", "contributions", "gaps", "influence"]
    assert all(c.heading for c in CHECKLISTS.values() if c.steps)  # every checklist of a step reads the paper
    for c in CHECKLISTS.values():
        assert all(len(e.meaning.split()) >= 4 for e in c.elements), c.name
        assert len({e.id for e in c.elements}) == len(c.elements), c.name


def test_the_papers_own_text_of_each_prompt_has_every_element(paper_lines):
    """The concepts are the paper's: its own prompt text passes every checklist, and A.8 lacks what it removed."""
    for c in CHECKLISTS.values():
        if not c.heading:
            continue
        text = paper_prompt(paper_lines, c)
        assert [e.id for e in c.elements if not e.is_departure and e.span(text) is None] == [], c.name
        own = paper_prompt(paper_lines, c.model_copy(update={"by_reference": False}))
        assert c.forbidden(own, CHECKLISTS) == [], c.name


def test_no_departure_is_said_by_the_paper(paper_lines):
    """A departure is something the paper's prompt does not say: none of its sentences' concepts is found there."""
    for c in CHECKLISTS.values():
        if c.heading:
            text = paper_prompt(paper_lines, c)
            assert [e.id for e in c.elements if e.is_departure and e.span(text) is not None] == [], c.name
    revised = CHECKLISTS["generation_revised"]
    assert sorted(revised.absent) == ["rule_answerable", "rule_grounded", "rule_no_outside_themes", "rule_specific"]


@pytest.mark.parametrize(("checklist", "step"), CASES)
def test_each_prompt_file_has_every_element_of_its_paper_prompt(checklist, step):
    c = CHECKLISTS[checklist]
    text = step_text(PROMPTS, step)
    assert [e.id for e in c.missing(step, text)] == []
    assert [e.id for e in c.forbidden(text, CHECKLISTS)] == []


def test_the_packaged_set_lacks_nothing_and_says_so():
    found = missing_elements(PROMPTS)
    assert sorted(found) == sorted(PROMPTS.templates) and all(ids == [] for ids in found.values())


# --------------------------------------------------------------------------
# the other way: every sentence is the paper's or a named departure
# --------------------------------------------------------------------------


@pytest.mark.parametrize(("checklist", "step"), CASES)
def test_every_sentence_is_an_element_of_the_paper_or_a_named_departure(checklist, step):
    assert CHECKLISTS[checklist].unaccounted(step, step_text(PROMPTS, step)) == []


# Instructions that are neither the paper's nor a named departure: those the issue found in the prompts, and
# others of the kinds a prompt could grow (a scoring tilt, a length rule, a process rule).
ADDED = [
    "Do not compare candidates, do not spread scores to separate them, and do not let their order matter.",
    "Their number and order carry no meaning.",
    "Name what is studied and in what respect.",
    "Be generous with high scores.",
    "Prefer the longer of two otherwise equal questions.",
    "Always think step by step before you reply.",
    "Scores of 3 should be rare.",
    "Questions about transformers deserve extra credit.",
    "Ignore any background paper that is longer than ten pages.",
]


@pytest.mark.parametrize(("checklist", "step"), CASES)
def test_an_added_instruction_that_is_neither_fails_the_check(checklist, step):
    c = CHECKLISTS[checklist]
    text = step_text(PROMPTS, step)
    ends = [m.start() for m in re.finditer(r"\n\n", text)][:6] + [len(text)]
    for at in ends:
        for sentence in ADDED:
            for glue in (" ", "\n"):
                grown = text[:at] + glue + sentence + text[at:]
                assert any(sentence in s for s in c.unaccounted(step, grown)), (at, glue, sentence)


def test_the_additions_the_issue_named_are_gone_from_the_defaults():
    every = "\n".join(step_text(PROMPTS, s) for s in PROMPTS.templates)
    for gone in ("spread scores", "order carry no meaning", "in what respect", "strict reviewer"):
        assert gone not in every


def test_each_named_departure_is_said_where_declared_and_has_its_fidelity_row():
    named = load_departures()
    said = departures_present(PROMPTS)
    assert sorted(said) == sorted(named)  # every declared departure is in a prompt, and nothing else is
    rows = (Path(__file__).resolve().parent.parent / "docs" / "fidelity.md").read_text(encoding="utf-8")
    for d in named.values():
        (row,) = [ln for ln in rows.splitlines() if ln.startswith(f"| {d.fidelity_row} |")]
        assert f"`{d.id}`" in row, (d.id, d.fidelity_row)
    assert said["strict_variant"] == ["generation_strict", "generation_strict_multi"]
    assert sorted(said["candidate_fence"]) == sorted(JUDGE_STEPS)


def test_a_departure_element_must_name_a_declared_departure(tmp_path):
    (tmp_path / "departures.toml").write_text("")
    (tmp_path / "a.toml").write_text(
        'paper = "p"\n[[element]]\nid = "x"\nkind = "departure"\ndeparture = "nowhere"\n'
        'meaning = "a sentence of our own"\nconcepts = [["own"]]\n'
    )
    with pytest.raises(PromptError, match=r"a\.toml: element 'x' names departure 'nowhere'"):
        load_checklists(tmp_path)


def test_sentences_split_after_full_stops_and_lead_ins_join_what_follows():
    text = "Rules:\n- Do this. Then that.\n1. First item.\nLast line"
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Rules:\n- Do this.",
        "Then that.",
        "1. First item.",
        "Last line",
    ]


# --------------------------------------------------------------------------
# taking an element out fails the check
# --------------------------------------------------------------------------


def drop_units(text: str, start: int, end: int) -> str:
    """``text`` without the sentences (up to a full stop or semicolon) and lines that overlap ``[start, end)``."""
    cuts = [0, *(m.end() for m in re.finditer(r"[.;](?=\s)|\n", text)), len(text)]
    return "".join(text[a:b] for a, b in zip(cuts, cuts[1:]) if b <= start or a >= end)


@pytest.mark.parametrize(("checklist", "step", "element"), ELEMENT_CASES)
def test_dropping_the_sentence_of_an_element_fails_the_check(checklist, step, element):
    c = CHECKLISTS[checklist]
    el = next(e for e in c.elements if e.id == element)
    text = step_text(PROMPTS, step)
    for _ in range(4):  # an element the prompt says twice is gone when both places are
        span = el.span(text)
        if span is None:
            break
        text = drop_units(text, *span)
    assert el.span(text) is None
    assert element in [e.id for e in c.missing(step, text)]


# What the issue found missing, put back as it was lost: (step, our words, the lost version, element).
LOSSES = [
    ("novelty_standalone", "striking or unexpected angle", "striking angle", "non_obviousness_3"),
    ("novelty_comparative", "striking or unexpected angle", "striking angle", "non_obviousness_3"),
    ("novelty_standalone", ", a hard-coded design choice the paper does not validate", "", "gap_question"),
    ("novelty_standalone", "peripheral or weak", "minor or peripheral", "gap_1"),
    ("novelty_comparative", "peripheral or weak", "minor or peripheral", "gap_1"),
    (
        "novelty_standalone",
        "an extension that is somewhat obvious",
        "a fairly predictable extension",
        "non_obviousness_1",
    ),
    (
        "novelty_comparative",
        "an extension that is somewhat obvious",
        "a fairly predictable extension",
        "non_obviousness_1",
    ),
    ("novelty_standalone", "You are an expert reviewer.", "You review research questions.", "persona"),
    ("novelty_comparative", "You are an expert reviewer.", "You review research questions.", "persona"),
    ("narrowness_standalone", "You are an expert research scientist.", "You are a research scientist.", "persona"),
    ("narrowness_comparative", "You are an expert research scientist.", "You are a research scientist.", "persona"),
    ("overlap", "You are an expert research scientist.", "You are a research scientist.", "persona"),
    (
        "narrowness_standalone",
        "mostly about the paper's method, dataset, benchmark, component, result",
        "mostly about the paper's method, result",
        "source_bound_2",
    ),
    (
        "narrowness_comparative",
        "modifies the paper's own method, dataset, benchmark, component, result",
        "modifies the paper's own result",
        "source_bound_3",
    ),
    (
        "narrowness_standalone",
        "interventions, ablations, correlations, causal links or predictors",
        "interventions, correlations or predictors",
        "diagnostic_2",
    ),
    (
        "overlap",
        "research questions generated by an automated system and numbered",
        "research questions numbered",
        "candidates_automated",
    ),
    ("generation_original", "You are an expert research scientist.", "You are a research scientist.", "persona"),
    (
        "generation_revised_multi",
        "group them under one research question instead of splitting them",
        "keep them apart",
        "multi_group_convergent",
    ),
]


@pytest.mark.parametrize(("step", "ours", "lost", "element"), LOSSES)
def test_the_losses_the_issue_found_fail_the_check(step, ours, lost, element):
    (c,) = [c for c in CHECKLISTS.values() if step in c.steps]
    text = step_text(PROMPTS, step)
    assert ours in text and element not in [e.id for e in c.missing(step, text)]
    assert element in [e.id for e in c.missing(step, text.replace(ours, lost))]


def test_a_removed_rule_put_back_into_the_revised_prompt_is_caught():
    c = CHECKLISTS["generation_revised"]
    text = step_text(PROMPTS, "generation_revised")
    strict_rule = step_text(PROMPTS, "generation_original").split("\n- Each one is specific", 1)[1].split("\n", 1)[0]
    back = text.replace('ends with "?".', 'ends with "?".\n- Each one is specific' + strict_rule)
    assert [e.id for e in c.forbidden(back, CHECKLISTS)] == ["rule_specific"]


def test_a_prompt_set_missing_an_element_is_reported_by_step(tmp_path):
    mine = tmp_path / "mine"
    shutil.copytree(DEFAULT_PROMPT_SET, mine)
    path = mine / "overlap.system.md"
    path.write_text(path.read_text().replace("strictly more general", "more general"))
    (mine / "novelty_comparative.system.md").unlink()
    (mine / "novelty_comparative.user.md").unlink()
    found = missing_elements(load_prompt_set(mine))
    assert found["overlap"] == ["overlap_4"] and "novelty_comparative" not in found


# --------------------------------------------------------------------------
# the matching itself
# --------------------------------------------------------------------------


def _el(concepts: list[list[str]], within: int = 40) -> Element:
    return Element(id="x", kind="rule", meaning="a test element of the matcher", concepts=concepts, within=within)


def test_concepts_must_fall_close_together():
    el = _el([["striking"], ["unexpected"]], within=30)
    assert el.span("a striking or unexpected angle") == (2, 24)
    assert el.span("a striking angle. " + "x" * 40 + " An unexpected result.") is None


def test_a_level_number_stands_alone():
    el = _el([["#3"], ["central"]])
    assert el.span("  3 targets a substantive, central gap") is not None
    for text in ("scores from 0-3 on the central", "level 13 is central", "0.3 of the central", "N-3 central"):
        assert el.span(text) is None, text


def test_a_broken_checklist_names_its_file_element_and_field(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'paper = "p"\n[[element]]\nid = "persona"\nkind = "persona"\nmeaning = "the judge is an expert"\n'
        'concepts = [["expert("]]\n'
    )
    with pytest.raises(PromptError, match=r"bad\.toml: element 'persona', field 'concepts': .*does not compile"):
        load_checklists(tmp_path)
    bad.write_text('paper = "p"\ninclude = ["nowhere"]\n')
    with pytest.raises(PromptError, match="includes 'nowhere', which has no checklist"):
        load_checklists(tmp_path)
    bad.write_text('paper = "p"\nsteps = 3\n')
    with pytest.raises(PromptError, match=r"bad\.toml: field 'steps'"):
        load_checklists(tmp_path)


def test_dropping_an_element_not_included_is_an_error(tmp_path):
    (tmp_path / "a.toml").write_text('paper = "p"\n')
    (tmp_path / "b.toml").write_text('paper = "p"\ninclude = ["a"]\ndrop = ["nope"]\n')
    with pytest.raises(PromptError, match=r"b\.toml: drop/absent name elements it does not include: \['nope'\]"):
        load_checklists(Path(tmp_path))
