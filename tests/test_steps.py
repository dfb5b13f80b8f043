"""The LLM steps: the registry (builder, generation) and the criteria's own declarations, complete against the
packaged prompt set, and the one source their owners read."""

from __future__ import annotations

import importlib

import pytest
from scripted_replies import REPLIES

from rqbench.builder import build_config
from rqbench.evaluate.criteria import CRITERIA, SETTINGS, criterion_for_step
from rqbench.evaluate.criteria import STEPS as JUDGE_STEPS
from rqbench.evaluate.generate.run import CheckedGenerationReply, generation_step
from rqbench.prompts import DEFAULT_PROMPT_SET
from rqbench.records import Reply, reply_json_schema
from rqbench.steps import STEPS, in_package, owned_by, owned_step, step

ALL_STEPS = {**STEPS, **JUDGE_STEPS}


def test_step_names_are_unique_across_the_registry_and_the_criteria():
    assert not set(STEPS) & set(JUDGE_STEPS)


def test_every_step_has_its_prompt_files_and_every_prompt_file_a_step():
    files = {p.name for p in DEFAULT_PROMPT_SET.iterdir() if p.suffix == ".md"}
    wanted = {f for s in ALL_STEPS.values() for f in s.prompt_files}
    assert sorted(wanted - files) == [], "steps without their prompt files"
    assert sorted(files - wanted) == [], "prompt files that belong to no step"


def test_every_step_names_a_reply_model_and_an_owner_that_exists():
    for s in ALL_STEPS.values():
        assert issubclass(s.reply_model, Reply), s.name
        importlib.import_module(s.owner)


def test_unknown_names_are_errors_that_say_what_exists():
    with pytest.raises(KeyError, match="no LLM step 'novelty'.*influence"):
        step("novelty")
    with pytest.raises(KeyError, match="owns no LLM step"):
        owned_by("rqbench.evaluate.metrics.summary")
    with pytest.raises(ValueError, match="owns 6 LLM steps"):
        owned_step("rqbench.evaluate.generate.run")


def test_the_build_stages_read_their_steps_from_the_registry():
    builder = in_package("rqbench.builder")
    assert build_config.STAGE_STEPS == {stage: s.name for stage, s in builder.items()}
    assert set(build_config.LLM_STAGES) == set(builder)
    assert set(build_config.DEFAULT_MAX_TOKENS) == set(build_config.STAGE_ROLES) == set(builder)
    for s in builder.values():
        module = importlib.import_module(s.owner)
        assert module.STEP is s, s.owner
        # a stage may narrow the registry's reply model for grammar-constrained decoders, never replace it
        stage_reply = getattr(module, "Reply", s.reply_model)
        assert issubclass(stage_reply, s.reply_model) and stage_reply.__name__ == s.reply_model.__name__


def test_each_criterion_declares_its_own_steps():
    assert set(JUDGE_STEPS) == {
        "novelty_standalone",
        "novelty_comparative",
        "narrowness_standalone",
        "narrowness_comparative",
        "overlap",
    }
    for c in CRITERIA.values():
        for key, s in c.steps.items():
            assert criterion_for_step(s.name) is c
            assert s.owner == type(c).__module__ and s.key == key
            assert c.reply_model_for(s.name) is s.reply_model
            for setting in SETTINGS if key == "any" else (key,):
                assert c.step_for(setting) == s.name
    with pytest.raises(KeyError, match="no criterion asks step 'gaps'"):
        criterion_for_step("gaps")


def test_generation_reads_its_steps_from_the_registry():
    used = {generation_step(v, n) for v in ("original", "revised", "strict") for n in (1, 2, 3)}
    assert used == {s.name for s in owned_by("rqbench.evaluate.generate.run").values()}
    for name in used:
        # generation adds the submission rules to the registry's reply, under the same schema title
        assert issubclass(CheckedGenerationReply, STEPS[name].reply_model)
        assert reply_json_schema(CheckedGenerationReply)["title"] == STEPS[name].reply_model.__name__
    with pytest.raises(ValueError, match="no generation step"):
        generation_step("custom", 1)


def test_the_scripted_responder_answers_every_step():
    assert set(REPLIES) == set(ALL_STEPS)
