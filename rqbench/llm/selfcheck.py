"""One real judge prompt through the whole layer: the proof that a model answers valid JSON."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from rqbench.llm.client import LLM
from rqbench.llm.config import ModelConfig
from rqbench.llm.store import CallStore
from rqbench.prompts import load_prompt_set
from rqbench.records import StandaloneNoveltyReply
from rqbench.untrusted import candidate_values

BACKGROUND = (
    "[Paper 1] Title: Attention Is All You Need\n"
    "Abstract: We propose the Transformer, a sequence transduction architecture based solely on attention, "
    "dispensing with recurrence. It reaches state-of-the-art translation quality with less training time."
)
CANDIDATE = "Can attention-only architectures keep their quality when the input length grows far beyond training?"


async def judge_once(cfg: ModelConfig, store: CallStore | None = None) -> tuple[StandaloneNoveltyReply, float]:
    prompts = load_prompt_set()
    values = candidate_values([CANDIDATE])
    messages = prompts["novelty_standalone"].render(
        background=BACKGROUND, candidates=values["candidates"], data_tag=values["data_tag"]
    )
    if store is None:
        store = CallStore(Path(tempfile.mkdtemp(prefix="rqbench-check-")) / "calls.db")
    llm = LLM(store)
    llm.register(cfg)
    t0 = time.monotonic()
    answer = await llm.ask(cfg.name, "novelty_standalone", messages, StandaloneNoveltyReply, prompt_hash=prompts.hash)
    return answer.reply, time.monotonic() - t0
