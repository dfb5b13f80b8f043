"""Generate five RQs per instance with any model, as a submission folder.

The model is run as the paper ran its generators (§6.1; ``catalog.resolve_generator``):
the vendor's default sampling unless the spec sets a temperature, the highest
reasoning setting where the model has one, and a reply budget with room for the
reasoning. For each instance it reads its background papers whole, up to its
context window (``background.input_policy``; cut by ``background.POLICY_NAME``
only where the window requires it) through the variant's prompt: steps
``generation_<variant>`` for one paper and ``generation_<variant>_multi`` for
several (the two user prompts differ; see docs/evaluate.md). A reply must fit
``GenerationReply`` plus two rules a submission also enforces (no RQ repeated
within the five, nothing that acts on the judge prompt: the blocking findings of
``injection.screen``); one that does not is re-asked once by
the LLM layer, quoting the error, and then recorded as a failed entry, so no
instance is dropped silently. A reply cut at the reply budget is recorded as a
failed entry too, named ``truncated`` and never re-asked. Every call goes
through ``LLM.ask``: a rerun after a crash pays only for what was not answered.

Beside the submission, ``generation_log.jsonl`` records per instance the step,
the cache key (and the re-ask's), whether it was re-asked or truncated, and how each paper was cut
(tokens kept and cut).
"""

from __future__ import annotations

import asyncio
import json
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, field_validator
from tqdm import tqdm

from rqbench import grammar_patterns, wellformed
from rqbench.evaluate.benchmark.background import BackgroundPolicy, background_block, input_policy
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.generate.injection import blocking_reasons
from rqbench.evaluate.generate.submission_files import write_submission
from rqbench.io import write_atomic
from rqbench.llm.catalog import grammar_constrained, is_local, parse_model_spec, resolve_generator
from rqbench.llm.client import LLM, TRUNCATED, Deferred, DryRun, LLMCallFailed
from rqbench.llm.config import public_label
from rqbench.progress import progress_bar
from rqbench.prompts import PromptSet, load_prompt_set
from rqbench.records import (
    EvaluationInstance,
    SubmissionEntry,
    SubmissionMetadata,
    check_distinct,
    dataset_label,
)
from rqbench.records.common import MAX_RQ_CHARS, gate_type
from rqbench.steps import owned_by

Variant = Literal["original", "revised", "strict"]
LOG_FILE = "generation_log.jsonl"
# The generation steps by the registry's key (variant, "_multi" for several papers), and the reply they share.
GENERATION_STEPS = owned_by(__name__)
(_REPLY,) = {s.reply_model for s in GENERATION_STEPS.values()}
# The prompt variants, by the registry (--prompt): original is the paper's A.4 prompt.
VARIANTS: tuple[str, ...] = tuple(k for k in GENERATION_STEPS if not k.endswith("_multi"))


# The docstring is the reply schema's description, and so part of the cache key: keep it as it is.
class CheckedGenerationReply(_REPLY):  # type: ignore[misc, valid-type]
    """GenerationReply plus the submission rules a model can fix when re-asked (same JSON schema)."""

    model_config = ConfigDict(title=_REPLY.__name__)

    @field_validator("research_questions")
    @classmethod
    def _submission_rules(cls, v: list[str]) -> list[str]:
        for q in check_distinct(v):
            reasons = blocking_reasons(q)  # flags that do not block are the submission report's, not a re-ask
            if reasons:
                raise ValueError(f"research question {q!r} is not a plain question: {reasons[0]}")
        return v


# The docstring is the reply schema's description, and so part of the cache key: keep it as it is.
class GrammarGenerationReply(CheckedGenerationReply):
    """GenerationReply for a grammar-constrained decoder: each question opens as a question and stays short."""

    # A weak model under a grammar writes the question from scratch and otherwise rambles to the length
    # limit or appends "?" to a statement: it gets the builder's stricter pattern (grammar_patterns.grammar_pattern).
    research_questions: list[
        Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_RQ_CHARS,
                json_schema_extra={"pattern": grammar_patterns.grammar_pattern(wellformed.Kind.research_question)},
            ),
            gate_type(wellformed.Kind.research_question, wellformed.Standard.submitted),
        ]
    ] = Field(min_length=5, max_length=5)


def generation_reply_for(model: str) -> type[CheckedGenerationReply]:
    """The reply model a generator is asked for: the stricter schema under a grammar, else the plain one."""
    return GrammarGenerationReply if grammar_constrained(model) else CheckedGenerationReply


def generation_step(variant: str, n_papers: int) -> str:
    """The step of ``variant``'s prompt over ``n_papers`` background papers."""
    key = variant + ("_multi" if n_papers > 1 else "")
    if key not in GENERATION_STEPS:
        raise ValueError(f"prompt variant {variant!r} has no generation step; variants: {sorted(GENERATION_STEPS)}")
    return GENERATION_STEPS[key].name


def generation_messages(
    prompts: PromptSet, variant: str, papers_text: str, n_papers: int
) -> tuple[str, list[dict[str, str]]]:
    step = generation_step(variant, n_papers)
    template = prompts[step]
    values = {"papers": papers_text, "n_papers": str(n_papers)}
    return step, template.render(**{k: v for k, v in values.items() if k in template.variables()})


def _provider(model: str) -> str:
    name, _ = parse_model_spec(model)
    return "local" if is_local(name) else name.split("/", 1)[0]


async def agenerate(
    bench: Benchmark,
    model: str,
    variant: Variant,
    *,
    llm: LLM,
    out: str | Path,
    prompts: PromptSet | None = None,
    policy: BackgroundPolicy | None = None,
    context_tokens: int | None = None,
    concurrency: int = 8,
    contact: str = "",
    notes: str = "",
    knowledge_cutoff: date | None = None,
    progress: bool = True,
) -> Path | None:
    """Generate and write the submission folder; None in a dry run (nothing written).

    ``knowledge_cutoff`` (``--model NAME@cutoff=YYYY-MM``) goes into the metadata as stated; without it
    the metadata has none and the summary uses the model catalog's, where it has one.

    ``policy`` fixes the background budget; by default it is ``input_policy`` of the model (its
    context window, or ``context_tokens``, minus the reply budget and the prompt allowance).
    """
    if variant not in VARIANTS:
        raise ValueError(f"prompt variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    prompts = prompts or load_prompt_set()
    base = llm.model(model)
    ask_as, cfg = resolve_generator(model, llm)
    policy = policy or input_policy(model, cfg.max_tokens, context_tokens=context_tokens)
    reply_model = generation_reply_for(base.name)
    sem = asyncio.Semaphore(concurrency)
    bar = progress_bar(total=len(bench.instances), desc=f"generate {base.name}", unit="rq", enabled=progress)

    async def one(inst: EvaluationInstance, bar: tqdm) -> tuple[SubmissionEntry | None, dict]:
        papers = bench.background(inst)
        text, cuts = background_block(papers, policy)
        step, messages = generation_messages(prompts, variant, text, len(papers))
        log = {"rq_id": inst.rq_id, "step": step, "background": [c.model_dump() for c in cuts]}
        try:
            async with sem:
                ans = await llm.ask(ask_as, step, messages, reply_model, prompt_hash=prompts.hash)
        except (DryRun, Deferred):  # counted, or queued for a batch
            return None, log
        except LLMCallFailed as exc:
            log.update(
                cache_key=exc.key,
                **({"reask_key": exc.reask_key} if exc.reask_key else {}),
                failure=f"{exc.reason}: {exc.detail}",
                last_text=exc.last_text,
                truncated=exc.reason == TRUNCATED,
            )
            return SubmissionEntry(rq_id=inst.rq_id, failure=f"{exc.reason}: {exc.detail}"[:1000]), log
        finally:
            bar.update(1)
        log.update(cache_key=ans.key, cached=ans.cached, reasked=ans.reasked)
        if ans.reask_key:  # the re-ask is a request of its own: what generating the RQs cost counts it
            log["reask_key"] = ans.reask_key
        entry = SubmissionEntry(rq_id=inst.rq_id, research_questions=ans.reply.research_questions, gaps=ans.reply.gaps)
        return entry, log

    if llm.batch and not llm.dry_run:
        quiet = tqdm(disable=True)
        await llm.fill_by_batches(lambda: asyncio.gather(*(one(i, quiet) for i in bench.instances)))
    try:
        done = await asyncio.gather(*(one(i, bar) for i in bench.instances))
    finally:
        bar.close()
    if llm.dry_run:
        return None
    entries = [e for e, _ in done if e is not None]
    metadata = SubmissionMetadata(
        model=public_label(base.name),  # the row's public name: a spec's private options (api_base, ...) stay out
        provider=_provider(model),
        model_type="open" if cfg.local else "unknown",
        parameters={
            "temperature": cfg.temperature,
            "sampling": "vendor default" if cfg.temperature is None else f"temperature {cfg.temperature}",
            "max_tokens": cfg.max_tokens,
            "reasoning_effort": cfg.reasoning_effort,
            "background": policy.model_dump(),
            "prompt_set": prompts.ref(),
            "dataset": dataset_label(bench.name, bench.revision, bench.version),
        },
        knowledge_cutoff=knowledge_cutoff,
        prompt_variant=variant,
        date=datetime.now(timezone.utc),
        contact=contact,
        notes=notes,
    )
    folder = write_submission(out, metadata, entries)
    write_atomic(folder / LOG_FILE, "".join(json.dumps(log, ensure_ascii=False) + "\n" for _, log in done))
    return folder


def generate_submission(bench: Benchmark, model: str, variant: Variant, **kwargs) -> Path | None:  # type: ignore[no-untyped-def]
    """Synchronous ``agenerate``."""
    return asyncio.run(agenerate(bench, model, variant, **kwargs))
