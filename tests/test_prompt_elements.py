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
    load_checklists,
    missing_elements,
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
    """The paper's text of a prompt (one line of the text copy), with the prompts it is defined by."""

    def line(heading: str) -> str:
        (hit,) = [ln for ln in paper_lines if ln.startswith(heading + " ")]
        return hit

    own = line(checklist.heading)
    if not checklist.by_reference:
        return own
    return "\n".join([*(line(CHECKLISTS[i].heading) for i in checklist.include), own])


@pytest.fixture(scope="module")
def paper_lines(shared) -> list[str]:
    return (shared / "reference" / "rq-bench-paper.txt").read_text(encoding="utf-8").splitlines()


# --------------------------------------------------------------------------
# the checklists
# --------------------------------------------------------------------------


def test_every_judge_and_generation_step_has_the_checklist_of_its_paper_prompt():
    covered = sorted(step for c in CHECKLISTS.values() for step in c.steps)
    assert covered == JUDGE_AND_GENERATION  # each step once, and only steps that exist
    prompts = [c for c in CHECKLISTS.values() if c.heading]
    assert len(prompts) == 7  # A.4's six prompts and A.8's
    for c in CHECKLISTS.values():
        assert all(len(e.meaning.split()) >= 4 for e in c.elements), c.name
        assert len({e.id for e in c.elements}) == len(c.elements), c.name


def test_the_papers_own_text_of_each_prompt_has_every_element(paper_lines):
    """The concepts are the paper's: its own prompt text passes every checklist, and A.8 lacks what it removed."""
    for c in CHECKLISTS.values():
        if not c.heading:
            continue
        text = paper_prompt(paper_lines, c)
        assert [e.id for e in c.elements if e.span(text) is None] == [], c.name
        own = paper_prompt(paper_lines, c.model_copy(update={"by_reference": False}))
        assert c.forbidden(own, CHECKLISTS) == [], c.name
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
    assert sorted(found) == JUDGE_AND_GENERATION and all(ids == [] for ids in found.values())


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
