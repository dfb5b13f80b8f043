"""Which PyPI GGUF model should be the embedded default? Measured, not guessed.

For each candidate local model, the same standalone-novelty judge prompts: an
on-topic research question and an off-topic one per background. Printed per
model: schema-valid replies (of all asked), seconds per call, and how often the
on-topic question got relevance 1 while the off-topic one got 0 (the least a
judge must tell apart), with SmolLM2 as the baseline for the time ratio.

    .venv/bin/python benchmarks/local_model_choice.py
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from rqbench.llm import LLM, CallStore, LLMCallFailed
from rqbench.llm.local_model import LOCAL_MODELS, LocalModelServer
from rqbench.prompts import load_prompt_set
from rqbench.records import StandaloneNoveltyReply
from rqbench.untrusted import candidate_values

CASES = [
    (
        "[Paper 1] Title: Attention Is All You Need\nAbstract: The Transformer relies only on attention for "
        "sequence transduction and trains faster than recurrent models on translation.",
        "Can attention-only models keep translation quality on inputs far longer than those seen in training?",
        "What is the best recipe for a chocolate cake?",
    ),
    (
        "[Paper 1] Title: Deep Residual Learning for Image Recognition\nAbstract: Residual connections let very "
        "deep convolutional networks train well and win ImageNet classification.",
        "Do residual connections help deep networks trained on noisy image labels more than shallow ones?",
        "How did medieval trade routes shape the spread of spices in Europe?",
    ),
    (
        "[Paper 1] Title: BERT\nAbstract: Masked language model pre-training of bidirectional Transformers gives "
        "strong results on many language understanding tasks after fine-tuning.",
        "Does masked-token pre-training transfer to languages with little unlabelled text?",
        "Which fertiliser gives the highest tomato yield in clay soil?",
    ),
]


async def measure(model_id: str, cases: list[tuple[str, str, str]] = CASES) -> tuple[int, int, float, int]:
    prompts = load_prompt_set()
    with LocalModelServer(model_id) as srv:
        cfg = srv.model_config()
        llm = LLM(CallStore(Path(tempfile.mkdtemp()) / "calls.db"))
        llm.register(cfg)
        valid = asked = separated = 0
        t0 = time.perf_counter()
        for background, on_topic, off_topic in cases:
            rel = {}
            for tag, q in (("on", on_topic), ("off", off_topic)):
                asked += 1
                values = candidate_values([q])
                msgs = prompts["novelty_standalone"].render(
                    background=background, candidates=values["candidates"], data_tag=values["data_tag"]
                )
                try:
                    ans = await llm.ask(
                        cfg.name, "novelty_standalone", msgs, StandaloneNoveltyReply, prompt_hash=prompts.hash
                    )
                except LLMCallFailed:
                    continue
                valid += 1
                rel[tag] = ans.reply.scores[0].relevance
            separated += int(rel.get("on") == 1 and rel.get("off") == 0)
        return valid, asked, (time.perf_counter() - t0) / asked, separated


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    cases = CASES[:1] if args.smoke else CASES
    models = ["smollm2-135m"] if args.smoke else list(LOCAL_MODELS)
    results = {m: asyncio.run(measure(m, cases)) for m in models}
    base = results["smollm2-135m"][2]
    for m, (valid, asked, sec, sep) in results.items():
        print(
            f"{m:14s} valid JSON {valid}/{asked}  {sec:5.1f} s/call (x{sec / base:.2f} of smollm2)  "
            f"on/off-topic told apart {sep}/{len(cases)}"
        )


if __name__ == "__main__":
    main()
