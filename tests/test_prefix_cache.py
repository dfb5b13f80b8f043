"""Prefix-stable prompts, instance-grouped scheduling and cache markers: what lets a prefix cache serve a judge run."""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from pathlib import Path

import evaluate_factory as F
import litellm
import pytest
from pydantic import BaseModel

from rqbench.evaluate.benchmark.background import background_block
from rqbench.evaluate.criteria import CRITERIA, SETTINGS, JudgeConfig
from rqbench.evaluate.judge.run import _judge_one
from rqbench.evaluate.judge.schedule import InstanceScheduler, PrioritySlots
from rqbench.llm import LLM, CallStore
from rqbench.llm.cache_markers import needs_cache_markers, with_cache_markers
from rqbench.llm.client import DryRun
from rqbench.llm.config import ModelConfig
from rqbench.prompts import PLACEHOLDER, PromptError, Template, load_prompt_set
from rqbench.untrusted import CANDIDATE_VARIABLES, candidate_block, data_tag

PROMPTS = load_prompt_set()


def _wire(messages) -> str:
    return "".join(f"\x1e{m['role']}\x1f{m['content']}" for m in messages)


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _requests(bench, setting, orderings=3):
    judge = JudgeConfig(model="x", label="x", setting=setting, prompts=PROMPTS, orderings=orderings)
    inst = bench.instances[1]  # two background papers
    cands = {"gt": inst.gt_rq, **{f"m{i}": q for i, q in enumerate(F.five(inst.rq_id))}}
    return inst, cands, [r for m in CRITERIA.values() for r in m.requests(judge, bench, inst, cands)]


@pytest.mark.parametrize("setting", SETTINGS)
def test_every_call_of_an_instance_differs_only_inside_its_candidate_part(setting):
    bench = F.benchmark(3)
    inst, cands, reqs = _requests(bench, setting)
    assert len(inst.background_paper_ids) == 2
    families = defaultdict(list)
    for r in reqs:
        families[(r.step, r.paper_id)].append(r)
    assert sum(len(f) >= 2 for f in families.values()) >= (3 if setting == "standalone" else 1)
    for (step, paper_id), calls in families.items():
        papers = [bench.papers[paper_id]] if paper_id else bench.background(inst)
        background, _ = background_block(papers, JudgeConfig("x", "x", setting, PROMPTS).policy)
        for r in calls:
            system, user = r.messages[0]["content"], r.messages[1]["content"]
            head, tail = user[: r.shared_chars], user[r.shared_chars :]
            # the shared part: the system text and rubric, then the background (or the reference) whole
            assert (background in head) if step != "overlap" else (inst.gt_rq in head), step
            # ... and nothing that comes from a candidate: no candidate text, no fence tag
            tag = data_tag(candidate_block([cands[c] for c in r.candidate_ids]))
            assert tag not in system and tag not in head and tag in tail
            assert not any(cands[c] in head or cands[c] in system for c in r.candidate_ids)
            assert r.shared_prefix == (system, head)
        if len(calls) < 2:
            continue
        wires = [_wire(r.messages) for r in calls]
        shared = len(_wire([calls[0].messages[0], {**calls[0].messages[1], "content": head}]))
        first_diff = min(_common(wires[0], w) for w in wires[1:])
        # the first differing byte lies after the shared part: inside the candidate section
        assert first_diff >= shared, (step, first_diff, shared)
        assert first_diff < len(wires[0])


def test_the_system_text_of_a_step_is_the_same_for_every_instance_and_candidate():
    bench = F.benchmark(4)
    for setting in SETTINGS:
        systems = defaultdict(set)
        for inst in bench.instances:
            judge = JudgeConfig(model="x", label="x", setting=setting, prompts=PROMPTS)
            cands = {"gt": inst.gt_rq, **{f"m{i}": q for i, q in enumerate(F.five(inst.rq_id))}}
            for m in CRITERIA.values():
                for r in m.requests(judge, bench, inst, cands):
                    systems[r.step].add(r.messages[0]["content"])
        assert all(len(s) == 1 for s in systems.values()), setting


def test_packaged_templates_put_every_per_call_variable_last():
    """No template of the set holds a candidate variable in its system text or before a shared variable."""
    for name, t in PROMPTS.templates.items():
        assert not CANDIDATE_VARIABLES & set(PLACEHOLDER.findall(t.system)), name
        found = [(m.start(), m.group(1)) for m in PLACEHOLDER.finditer(t.user)]
        last_shared = max((p for p, v in found if v not in CANDIDATE_VARIABLES), default=-1)
        first_varying = min((p for p, v in found if v in CANDIDATE_VARIABLES), default=len(t.user))
        assert last_shared < first_varying, name


def test_a_template_with_a_per_call_variable_in_its_system_text_is_refused():
    t = Template("s", "Score against {{data_tag}}.", "BACKGROUND: {{background}}\n{{candidates}}")
    with pytest.raises(PromptError, match="system text holds per-call variables"):
        t.shared_user_chars(set(CANDIDATE_VARIABLES), background="B", candidates="[0] Q?", data_tag="t")
    ok = Template("s", "Score.", "BACKGROUND: {{background}}\nNUMBER {{n_candidates}}\n{{candidates}}")
    n = ok.shared_user_chars(set(CANDIDATE_VARIABLES), background="B", candidates="[0] Q?", n_candidates="1")
    assert ok.render(background="B", candidates="[0] Q?", n_candidates="1")[1]["content"][:n] == "BACKGROUND: B\n"


# --------------------------------------------------------------------------
# scheduling
# --------------------------------------------------------------------------


def _trace(groups, concurrency, family=lambda x: x[1]):
    """Run items (instance, family, pos) through the scheduler; return start/end events and the peak in flight."""
    events, state = [], {"now": 0, "peak": 0}

    async def call(item):
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        events.append(("start", item))
        await asyncio.sleep(0.001 * (1 + item[2] % 3))
        events.append(("end", item))
        state["now"] -= 1
        return item

    async def main():
        sched = InstanceScheduler(concurrency)
        return await asyncio.gather(*(sched.run(i, items, family, call) for i, items in enumerate(groups)))

    results = asyncio.run(main())
    return events, state["peak"], results


def _groups(n_inst=3):
    # per instance: family a (4 calls), family b (3 calls), family c (1 call), interleaved as the judges build them
    return [[(i, f, k) for k, f in enumerate("aabbacab")] for i in range(n_inst)]


def test_one_slot_runs_instance_by_instance_and_family_by_family():
    groups = _groups()
    events, peak, results = _trace(groups, 1)
    assert peak == 1 and results == groups  # results in the order asked
    starts = [item for kind, item in events if kind == "start"]
    want = []
    for items in groups:  # family by family in order of first appearance, each leader straight before its followers
        for fam in dict.fromkeys(it[1] for it in items):
            want += [it for it in items if it[1] == fam]
    assert starts == want


def test_several_slots_stay_bounded_and_followers_wait_for_their_leader():
    groups = _groups(4)
    events, peak, _ = _trace(groups, 3)
    assert peak == 3
    pos = {(kind, item): n for n, (kind, item) in enumerate(events)}
    for items in groups:
        leaders = {}
        for it in items:
            leaders.setdefault(it[1], it)
        for it in items:
            lead = leaders[it[1]]
            if it != lead:
                assert pos[("start", it)] > pos[("end", lead)], it
    # a later instance starts only while every slot-free call of the earlier ones is waiting on a leader:
    # the first call of instance i+1 never starts before the leaders of instance i
    starts = [item for kind, item in events if kind == "start"]
    for i in range(1, len(groups)):
        first_next = starts.index(next(s for s in starts if s[0] == i))
        assert {it[1] for it in starts[:first_next] if it[0] == i - 1} == {"a", "b", "c"}


def test_a_cancelled_waiter_gives_its_slot_on():
    async def main():
        slots = PrioritySlots(1)
        await slots.acquire((0,))
        waiter = asyncio.ensure_future(slots.acquire((1,)))
        other = asyncio.ensure_future(slots.acquire((2,)))
        await asyncio.sleep(0)
        waiter.cancel()
        slots.release()
        await asyncio.wait_for(other, 1)
        return waiter.cancelled()

    assert asyncio.run(main())


class _RecordingLLM:
    """Stands in for the LLM layer: records the order calls reach it, answers nothing (a dry run)."""

    def __init__(self, slots: int = 8):
        self.calls: list[tuple[str, str]] = []
        self.slots = slots

    def model(self, spec):
        return ModelConfig(name=spec, litellm_model="openai/x", max_concurrency=self.slots)

    async def ask(self, model, step, messages, reply_model, **kw):
        self.calls.append((step, messages[-1]["content"][kw["shared_chars"] :]))
        await asyncio.sleep(0)
        raise DryRun("k")


def test_a_judging_run_sends_calls_instance_by_instance(tmp_path: Path):
    bench = F.benchmark(3)
    sub = F.submission(bench, tmp_path / "sub")
    llm = _RecordingLLM(slots=1)  # a one-slot model (llama.cpp) under the default run concurrency
    judge = JudgeConfig(model="x", label="x", setting="standalone", prompts=PROMPTS)
    asyncio.run(_judge_one(bench, sub, judge, list(CRITERIA), llm, 8, progress=False, retry_failed=False))
    by_instance = []
    for inst in bench.instances:
        cands = {"gt": inst.gt_rq, **{f"m{i}": q for i, q in enumerate(sub.entries[inst.rq_id].research_questions)}}
        reqs = [r for m in CRITERIA.values() for r in m.requests(judge, bench, inst, cands)]
        by_instance.append(sorted(r.messages[-1]["content"][r.shared_chars :] for r in reqs))
    sent = [tail for _, tail in llm.calls]
    assert len(sent) == sum(len(s) for s in by_instance)
    at = 0
    for tails in by_instance:  # each instance's calls are one contiguous run
        assert sorted(sent[at : at + len(tails)]) == tails
        at += len(tails)
    steps = [step for step, _ in llm.calls]  # and within it, step by step: the one slot's prefix is reused
    assert sum(a != b for a, b in zip(steps, steps[1:])) <= 3 * len(bench.instances)


# --------------------------------------------------------------------------
# cache markers
# --------------------------------------------------------------------------


def _cfg(litellm_model: str, **kw) -> ModelConfig:
    return ModelConfig(name=litellm_model, litellm_model=litellm_model, **kw)


def test_only_providers_that_need_markers_get_them():
    assert needs_cache_markers(_cfg("anthropic/claude-sonnet-4-5"))
    assert needs_cache_markers(_cfg("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"))
    for name in (
        "gemini/gemini-3.1-pro",
        "deepseek/deepseek-v4-pro",
        "openai/gpt-5",
        "hosted_vllm/m",
        "bedrock/meta.llama3-70b-instruct-v1:0",
    ):
        assert not needs_cache_markers(_cfg(name)), name
    assert not needs_cache_markers(_cfg("openai/local", local=True))


def test_markers_go_after_the_system_text_and_the_shared_background():
    msgs = [
        {"role": "system", "content": "RUBRIC"},
        {"role": "user", "content": "BACKGROUND: B\n\n<<<CANDIDATES t\n[0] Q?"},
    ]
    out = with_cache_markers(msgs, len("BACKGROUND: B\n\n"))
    assert out == [
        {"role": "system", "content": [{"type": "text", "text": "RUBRIC", "cache_control": {"type": "ephemeral"}}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "BACKGROUND: B\n\n", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "<<<CANDIDATES t\n[0] Q?"},
            ],
        },
    ]
    assert msgs[1]["content"].startswith("BACKGROUND")  # the caller's messages are left as they were
    reask = msgs + [{"role": "assistant", "content": "x"}, {"role": "user", "content": "again"}]
    out = with_cache_markers(reask, 5)
    assert out[2] == reask[2] and out[3] == reask[3]  # only the first user message is split
    assert sum("cache_control" in b for m in out if isinstance(m["content"], list) for b in m["content"]) == 2
    assert with_cache_markers(msgs, 0)[1]["content"] == [{"type": "text", "text": msgs[1]["content"]}]


class _Reply(BaseModel):
    ok: int


@pytest.mark.parametrize(("model", "marked"), [("anthropic/claude-sonnet-4-5", True), ("gemini/gemini-3.1-pro", False)])
def test_the_wire_carries_markers_for_anthropic_only_and_the_cache_key_ignores_them(
    tmp_path: Path, monkeypatch, model, marked
):
    sent = []

    async def fake_acompletion(**kwargs):
        sent.append(kwargs["messages"])
        return litellm.ModelResponse(
            choices=[{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": '{"ok": 1}'}}]
        )

    monkeypatch.setattr(litellm, "acompletion", fake_acompletion)
    monkeypatch.setitem(os.environ, "ANTHROPIC_API_KEY", "test-not-used")
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(_cfg(model, api_key="test-not-used", json_mode="none", max_retries=0))
    msgs = [{"role": "system", "content": "RUBRIC " * 10}, {"role": "user", "content": "BACKGROUND: B\n\nCAND"}]
    ans = asyncio.run(llm.ask(cfg.name, "s", msgs, _Reply, prompt_hash="h", shared_chars=14))
    assert ans.reply.ok == 1 and len(sent) == 1
    if marked:
        assert sent[0][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
        assert [b["text"] for b in sent[0][1]["content"]] == ["BACKGROUND: B\n", "\nCAND"]
    else:
        assert sent[0] == msgs
    # the key is that of the plain messages, whatever the markers
    assert ans.key == llm.keys_for(cfg.name, "s", msgs, _Reply, "h")
