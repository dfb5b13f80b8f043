"""Prompt sets: complete, hashed, swappable, and strict about their variables."""

from __future__ import annotations

import shutil

import pytest

from rqbench.prompts import DEFAULT_PROMPT_SET, PromptError, load_prompt_set
from rqbench.steps import STEPS


def test_packaged_set_has_every_step_of_the_method():
    ps = load_prompt_set()
    assert ps.name == "rqbench-v1" and ps.hash.startswith("b2:")
    missing = set(STEPS) - set(ps.templates)
    assert not missing, f"prompt templates missing for steps {sorted(missing)}"


def test_render_refuses_missing_and_unexpected_variables():
    t = load_prompt_set()["novelty_standalone"]
    msgs = t.render(background="B", candidates="[0] Q?", data_tag="t0")
    assert msgs[0]["role"] == "system" and "[0] Q?" in msgs[1]["content"]
    with pytest.raises(PromptError, match="missing variables"):
        t.render(background="B")
    with pytest.raises(PromptError, match="unexpected"):
        t.render(background="B", candidates="c", data_tag="t0", extra="x")


def test_a_swapped_prompt_set_has_its_own_name_and_hash(tmp_path):
    alt = tmp_path / "my-prompts"
    shutil.copytree(DEFAULT_PROMPT_SET, alt)
    (alt / "novelty_standalone.system.md").write_text("Score it. Reply JSON.\n")
    ps = load_prompt_set(alt)
    assert ps.name == "my-prompts" and ps.hash != load_prompt_set().hash
    assert ps["novelty_standalone"].system.startswith("Score it")


def test_incomplete_step_is_an_error(tmp_path):
    (tmp_path / "x.system.md").write_text("s")
    with pytest.raises(PromptError, match="needs both"):
        load_prompt_set(tmp_path)
    with pytest.raises(PromptError, match="does not exist"):
        load_prompt_set(tmp_path / "nope")
