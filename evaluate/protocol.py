"""The paper's evaluation protocol as data, and every way a run departs from it.

RQ-Bench exists to measure how far LLM judges of novelty can be trusted, so its
own numbers follow the paper's protocol (§5, §6.1, A.4) unless a user asks for
something else, and each departure is named with the flag that restores the
paper's setting. ``--protocol paper`` (the default when a paper judge's key is
set) takes the paper's models where none are given; ``--protocol custom`` (the
default offline) takes the embedded model. Either way ``departures`` lists what
differs, ``--dry-run`` prints it, and every results file records it
(``ResultsFile.protocol``).

The settings checked (the paper's value in brackets): judges [gemini-3.1-pro and
deepseek-v4-pro, combined], judge temperature [0] and reasoning [highest],
generation sampling [the vendor's default] and reasoning [highest where the model
has a setting], what the models read [background papers whole up to the
context window], the generation prompt [original, A.4], the prompt text
[the authors' own; the packaged rqbench-v1 says it in the project's words, so
it is a departure, and ``--prompts DIR`` runs a folder with the authors' text],
judging settings [standalone and comparative], criteria judged [novelty,
narrowness, overlap], comparative orderings [1], instances [all], and the
combine rule [pooled: our reading, since the paper's equation is missing from
our copy of it; see docs/fidelity.md], and the failure accounting [every
instance counted, a failed generation a loss].
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from rqbench.evaluate.benchmark.background import BackgroundPolicy, background_block, input_policy
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.metrics.metric import CombineRule, FailureAccounting, describe_combine_rule, describe_failures
from rqbench.llm.catalog import (
    HIGHEST_REASONING,
    context_window,
    is_local,
    parse_model_spec,
    resolve_generator,
    resolve_judge,
    supports_reasoning,
)
from rqbench.llm.client import LLM
from rqbench.llm.config import ModelConfig
from rqbench.prompt_elements import departures_present, load_departures, missing_elements
from rqbench.prompts import DEFAULT_PROMPT_SET, PromptSet
from rqbench.records import Departure, ProtocolRecord, SubmissionMetadata
from rqbench.steps import in_package

Protocol = Literal["paper", "custom"]
PROTOCOLS: tuple[Protocol, ...] = ("paper", "custom")

# §6.1 "Judge Configurations": two judges, maximum reasoning, greedy decoding.
PAPER_JUDGES = ("gemini/gemini-3.1-pro", "deepseek/deepseek-v4-pro")
JUDGE_KEYS = {"gemini/gemini-3.1-pro": "GEMINI_API_KEY", "deepseek/deepseek-v4-pro": "DEEPSEEK_API_KEY"}
JUDGE_TEMPERATURE = 0.0
REASONING = HIGHEST_REASONING
# A.4: the original prompt; §5.1: both settings, one call per comparison; §5: the three criteria.
PROMPT_VARIANT = "original"
SETTINGS = ("standalone", "comparative")
CRITERIA = ("novelty", "narrowness", "overlap")
ORDERINGS = 1
# The paper names a "two-judge combined" figure; its equation is missing from our text, and
# pooling the instance x judge verdicts is our reading of it (docs/fidelity.md, M4).
COMBINE_RULE = CombineRule.pooled
# The paper's rates are over every instance of the release: a failed generation counts against the model.
FAILURES = FailureAccounting.paper
PAPER_JUDGE_FLAGS = " ".join(f"--judge {j}" for j in PAPER_JUDGES)
# §6.1: the models read the cited papers' texts, cut only by the model's own window.
WHOLE_PAPERS = "background papers given whole, cut only where the context window requires it"
# A.4, A.8: the prompts the authors ran. Our packaged set says each of them in our own words, every element kept
# (rqbench/prompts/elements/, docs/fidelity.md J20); their text runs from a folder given as --prompts DIR.
PAPER_PROMPTS = "the authors' own prompt text (A.4, A.8)"
BUILDER_STEPS = frozenset(s.name for s in in_package("rqbench.builder").values())
AUTHORS_PROMPTS_FLAG = "--prompts DIR, a folder holding the authors' prompts (docs/fidelity.md J20)"


def default_protocol(env: Mapping[str, str] = os.environ) -> Protocol:
    """``paper`` when a key of one of the paper's judges is set, else ``custom`` (the offline default)."""
    return "paper" if any(env.get(k) for k in JUDGE_KEYS.values()) else "custom"


@dataclass(frozen=True)
class JudgeChoice:
    """The judges a run uses, what to tell the user about them, and the paper judges' missing keys."""

    judges: list[str]
    notes: list[str] = field(default_factory=list)
    missing_keys: list[str] = field(default_factory=list)

    def blocking_keys(self, env: Mapping[str, str] = os.environ) -> list[str]:
        """The keys that chosen paper judges need and do not have: a real run stops on them."""
        return [JUDGE_KEYS[j] for j in self.judges if j in JUDGE_KEYS and not env.get(JUDGE_KEYS[j])]


def choose_judges(
    protocol: Protocol, given: Sequence[str] | None, offline: Sequence[str], env: Mapping[str, str] = os.environ
) -> JudgeChoice:
    """``--judge`` as given; else the paper's judges whose keys are set (``paper``) or ``offline`` (``custom``).

    With one paper judge's key only, that judge runs alone, and the note says plainly that there
    is then no combined figure. With neither key, both are chosen and ``missing_keys`` names the
    keys, so a real run can stop before any call.
    """
    if given:
        return JudgeChoice(list(given))
    if protocol == "custom":
        return JudgeChoice(list(offline))
    keyed = [j for j in PAPER_JUDGES if env.get(JUDGE_KEYS[j])]
    missing = [JUDGE_KEYS[j] for j in PAPER_JUDGES if not env.get(JUDGE_KEYS[j])]
    if not keyed:
        return JudgeChoice(list(PAPER_JUDGES), [f"the paper's judges need {' and '.join(missing)}"], missing)
    notes = []
    if len(keyed) == 1:
        (other,) = [j for j in PAPER_JUDGES if j not in keyed]
        notes.append(
            f"this run has one judge, {keyed[0]}: {JUDGE_KEYS[other]} is not set, so {other} cannot judge. "
            "With one judge there is no combined figure, which departs from the paper's two-judge protocol."
        )
    return JudgeChoice(keyed, notes, missing)


# --------------------------------------------------------------------------
# what a run does
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelUse:
    """A model as the run calls it: the spec given, the name asked, its settings and its input policy."""

    spec: str
    name: str
    config: ModelConfig
    can_reason: bool
    policy: BackgroundPolicy

    @property
    def label(self) -> str:
        return self.config.name

    def settings_line(self) -> str:
        """``label: sampling, reasoning, reply budget``."""
        c = self.config
        sampling = "vendor-default sampling" if c.temperature is None else f"temperature {c.temperature:g}"
        reasoning = (
            f"reasoning mode {c.reasoning_effort}"
            if c.reasoning_effort
            else "no reasoning setting"
            if not self.can_reason
            else "reasoning off"
        )
        budget = f"reply budget {c.max_tokens:,} tokens" if c.max_tokens else "no reply budget"
        return f"{self.label}: {sampling}, {reasoning}, {budget}"


def judge_use(
    spec: str, llm: LLM, *, context_tokens: int | None = None, fixed: BackgroundPolicy | None = None
) -> ModelUse:
    """A judge by the paper's settings (``resolve_judge``) and the background budget of its window."""
    return _model_use(spec, *resolve_judge(spec, llm), context_tokens, fixed)


def generator_use(
    spec: str, llm: LLM, *, context_tokens: int | None = None, fixed: BackgroundPolicy | None = None
) -> ModelUse:
    """A generator by the paper's settings (``resolve_generator``) and the background budget of its window."""
    return _model_use(spec, *resolve_generator(spec, llm), context_tokens, fixed)


def _model_use(
    spec: str, name: str, cfg: ModelConfig, context_tokens: int | None, fixed: BackgroundPolicy | None
) -> ModelUse:
    policy = fixed or input_policy(spec, cfg.max_tokens, context_tokens=context_tokens)
    return ModelUse(spec, name, cfg, not cfg.local and supports_reasoning(cfg.litellm_model), policy)


@dataclass(frozen=True)
class RecordedGeneration:
    """A submission's generation settings as its metadata records them (a submission we did not generate here)."""

    metadata: SubmissionMetadata

    @property
    def recorded(self) -> bool:
        return "temperature" in self.metadata.parameters


@dataclass
class RunPlan:
    """Everything about a run that the paper's protocol fixes, resolved before any call."""

    protocol: Protocol
    judges: list[ModelUse]
    generation: ModelUse | RecordedGeneration | None
    prompt_variant: str
    prompts: PromptSet
    settings: Sequence[str]
    criteria: Sequence[str]
    orderings: int
    combine: CombineRule | None = None  # None: the run writes no combined figure (``rqbench judge``)
    failures: FailureAccounting | None = None  # None: the run writes no figures (``rqbench judge``)
    instances: int | None = None  # instances the run covers
    instances_total: int | None = None  # in the dataset (differs under --limit)
    missing_keys: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def record(self) -> ProtocolRecord:
        return ProtocolRecord(name=self.protocol, departures=departures(self))


# --------------------------------------------------------------------------
# departures
# --------------------------------------------------------------------------


def _base(spec: str) -> str:
    name, _ = parse_model_spec(spec)
    return "local" if is_local(name) else name


def _input_departure(who: str, use: ModelUse, flag_prefix: str) -> Departure | None:
    """How a model's background budget departs from "whole papers, up to the context window"."""
    p = use.policy
    paper = WHOLE_PAPERS
    if p.basis == "fixed":
        return Departure(
            item=f"input truncation ({who})", ours=p.describe(), paper=paper, restore="drop --background-tokens"
        )
    if p.basis == "embedded":
        return Departure(
            item=f"input truncation ({who})",
            ours=p.describe(),
            paper=paper,
            restore=f"a hosted model with a large context window ({flag_prefix} NAME)",
        )
    if p.window_source == "assumed":
        return Departure(
            item=f"input truncation ({who})",
            ours=f"the context window of {use.label} is unknown; {p.window_tokens:,} tokens assumed",
            paper=paper,
            restore="--context-tokens N (the model's window)",
        )
    known = context_window(use.spec)
    if p.window_source == "--context-tokens" and known is not None and (p.window_tokens or 0) < known:
        return Departure(
            item=f"input truncation ({who})",
            ours=f"--context-tokens {p.window_tokens:,}, below {use.label}'s window of {known:,}",
            paper=paper,
            restore="drop --context-tokens",
        )
    return None


def _judge_departures(plan: RunPlan) -> list[Departure]:
    out: list[Departure] = []
    labels = [j.label for j in plan.judges]
    paper_judges = " and ".join(PAPER_JUDGES)
    keys = f" (with {' and '.join(plan.missing_keys)} set)" if plan.missing_keys else ""
    if sorted({_base(j.spec) for j in plan.judges}) != sorted(PAPER_JUDGES) or len(plan.judges) != len(PAPER_JUDGES):
        out.append(
            Departure(item="judges", ours=", ".join(labels), paper=paper_judges, restore=PAPER_JUDGE_FLAGS + keys)
        )
    if len({j.label for j in plan.judges}) < 2:
        others = [j for j in PAPER_JUDGES if j not in {_base(u.spec) for u in plan.judges}]
        out.append(
            Departure(
                item="combined figure",
                ours="one judge, so no combined figure",
                paper="per-judge figures and the two-judge combined figure",
                restore=" ".join(f"--judge {j}" for j in others[:1] or PAPER_JUDGES) + keys,
            )
        )
    for j in plan.judges:
        t = j.config.temperature
        if t != JUDGE_TEMPERATURE:
            out.append(
                Departure(
                    item=f"judge temperature ({j.label})",
                    ours="the vendor's default" if t is None else f"temperature {t:g}",
                    paper="greedy decoding, temperature 0",
                    restore=f"--judge {_base(j.spec)} (no @temperature)",
                )
            )
        if j.config.reasoning_effort != REASONING:
            ours = (
                f"reasoning_effort={j.config.reasoning_effort}"
                if j.config.reasoning_effort
                else "no reasoning setting"
                if not j.can_reason
                else "reasoning off"
            )
            restore = (
                f"--judge {_base(j.spec)} (no @reasoning_effort)"
                if j.can_reason
                else f"a reasoning judge: {PAPER_JUDGE_FLAGS}"
            )
            out.append(
                Departure(
                    item=f"judge reasoning ({j.label})",
                    ours=ours,
                    paper="maximum reasoning (thinking_level high)",
                    restore=restore,
                )
            )
        d = _input_departure(f"judge {j.label}", j, "--judge")
        if d is not None:
            out.append(d)
    return out


def _builder_step(step: str) -> bool:
    """A step the builder runs (its prompts are checked too, but a judging or generation run sends none)."""
    return step in BUILDER_STEPS


def prompt_departure(prompts: PromptSet) -> Departure:
    """How a run's prompt text stands to the authors'. The packaged set is a paraphrase; any set is checked element
    by element against the paper's prompts (``rqbench.prompt_elements``) and the line says what the check found.
    Whether a folder's wording is the authors' own a run cannot tell, so a ``--prompts`` set is named with its hash."""
    found = {step: ids for step, ids in missing_elements(prompts).items() if not _builder_step(step)}
    lacking = [
        f"{step} ({', '.join(ids[:5])}{f' and {len(ids) - 5} more' if len(ids) > 5 else ''})"
        for step, ids in found.items()
        if ids
    ]
    if not found:
        checked = "none of the paper's judge or generation prompts in it"
    elif lacking:
        checked = "elements of the paper's prompts missing: " + "; ".join(lacking)
    else:
        checked = f"every element of the paper's prompts present in its {len(found)} judge and generation steps"
    if prompts.path.resolve() == DEFAULT_PROMPT_SET.resolve():
        return Departure(
            item="prompt wording",
            ours=f"{prompts.name}, the paper's prompts in the project's own words ({checked}); what they add "
            "is named below",
            paper=PAPER_PROMPTS,
            restore=AUTHORS_PROMPTS_FLAG,
        )
    return Departure(
        item="prompt set",
        ours=f"{prompts.name} ({prompts.path}, {prompts.hash}): {checked}; its wording is not compared "
        "with the authors'",
        paper=PAPER_PROMPTS,
        restore=f"{AUTHORS_PROMPTS_FLAG}, or drop --prompts for the packaged paraphrase",
    )


def run_steps(plan: RunPlan) -> list[str]:
    """The prompt steps a run sends: each criterion's step in each judging setting, and the generation steps
    (one paper and several) when the run generates."""
    from rqbench.evaluate.criteria import CRITERIA as CRITERION_OF

    steps = {CRITERION_OF[c].step_for(s) for c in plan.criteria for s in plan.settings if c in CRITERION_OF}
    if isinstance(plan.generation, ModelUse):
        steps |= {generation_step_of(plan.prompt_variant, n) for n in (1, 2)}
    return sorted(steps)


def generation_step_of(variant: str, n_papers: int) -> str:
    """The generation step a variant sends for ``n_papers`` (imported late: generate imports this module's users)."""
    from rqbench.evaluate.generate.run import generation_step

    return generation_step(variant, n_papers)


def named_prompt_departures(prompts: PromptSet, steps: Sequence[str]) -> list[Departure]:
    """What the packaged prompts a run sends say beyond the paper's: one line per named departure
    (``rqbench/prompts/elements/departures.toml``), with the steps that say it and what restores the paper.
    A ``--prompts`` set is another text, covered by ``prompt_departure``'s line."""
    if prompts.path.resolve() != DEFAULT_PROMPT_SET.resolve():
        return []
    named = load_departures()
    return [
        Departure(
            item=f"prompt addition: {named[d].title}",
            ours=f"{named[d].adds.rstrip('.')} ({', '.join(where)}; docs/fidelity.md {named[d].fidelity_row})",
            paper=PAPER_PROMPTS,
            restore=named[d].restore,
        )
        for d, where in sorted(departures_present(prompts, steps).items())
        if named[d].own_line
    ]


def _recorded_prompt_departure(params: dict[str, object]) -> Departure | None:
    """The generation prompt set a submission's metadata records, against the authors' text."""
    ref = params.get("prompt_set")
    if not isinstance(ref, dict) or not ref.get("name"):
        return None
    packaged = ref["name"] == DEFAULT_PROMPT_SET.name
    ours = (
        f"{ref['name']}, the paper's generation prompt in the project's own words"
        if packaged
        else f"prompt set {ref['name']} ({ref.get('hash', 'no hash recorded')}), not compared with the authors'"
    )
    return Departure(
        item="generation prompt wording",
        ours=ours,
        paper=PAPER_PROMPTS,
        restore=f"regenerate with rqbench generate {AUTHORS_PROMPTS_FLAG}",
    )


def generation_departures(gen: ModelUse | RecordedGeneration | None, prompt_variant: str) -> list[Departure]:
    """How the RQs were (or will be) generated differently from the paper's §6.1 settings and A.4 prompt.

    The wording of a prompt set this run uses is ``prompt_departure``'s; a recorded submission's is named here."""
    out: list[Departure] = []
    if prompt_variant != PROMPT_VARIANT:
        out.append(
            Departure(
                item="generation prompt",
                ours=f"the {prompt_variant} prompt",
                paper="the original prompt (A.4)",
                restore="--prompt original",
            )
        )
    sampling_paper = "the vendor's default sampling"
    reasoning_paper = "the highest reasoning setting (thinking mode on)"
    if isinstance(gen, ModelUse):
        c = gen.config
        if c.temperature is not None:
            local = " (the embedded model's documented offline setting)" if c.local else ""
            out.append(
                Departure(
                    item="generation sampling",
                    ours=f"temperature {c.temperature:g}{local}",
                    paper=sampling_paper,
                    restore="a hosted generator (--model NAME)"
                    if c.local
                    else f"--model {_base(gen.spec)} (no @temperature)",
                )
            )
        if gen.can_reason and c.reasoning_effort != REASONING:
            out.append(
                Departure(
                    item="generation reasoning",
                    ours=f"reasoning_effort={c.reasoning_effort}",
                    paper=reasoning_paper,
                    restore=f"--model {_base(gen.spec)} (no @reasoning_effort)",
                )
            )
        d = _input_departure(f"generator {gen.label}", gen, "--model")
        if d is not None:
            out.append(d)
    elif isinstance(gen, RecordedGeneration) and gen.recorded:
        params = gen.metadata.parameters
        restore = "regenerate with rqbench generate (the paper's generation settings are its defaults)"
        if params.get("temperature") is not None:
            out.append(
                Departure(
                    item="generation sampling",
                    ours=f"temperature {params['temperature']}",
                    paper=sampling_paper,
                    restore=restore,
                )
            )
        model = gen.metadata.model
        if not is_local(model) and supports_reasoning(model) and params.get("reasoning_effort") != REASONING:
            out.append(
                Departure(
                    item="generation reasoning",
                    ours=f"reasoning_effort={params.get('reasoning_effort')}",
                    paper=reasoning_paper,
                    restore=restore,
                )
            )
        wording = _recorded_prompt_departure(params)
        if wording is not None:
            out.append(wording)
        bg = params.get("background")
        if isinstance(bg, dict):
            policy = BackgroundPolicy.model_validate(bg)
            if policy.basis != "window":
                out.append(
                    Departure(
                        item="input truncation (generator)", ours=policy.describe(), paper=WHOLE_PAPERS, restore=restore
                    )
                )
    return out


def departures(plan: RunPlan) -> list[Departure]:
    """Every setting of ``plan`` that differs from the paper's protocol, each with its restoring flag."""
    out = _judge_departures(plan) + generation_departures(plan.generation, plan.prompt_variant)
    out.append(prompt_departure(plan.prompts))
    out += named_prompt_departures(plan.prompts, run_steps(plan))
    if tuple(s for s in SETTINGS if s in plan.settings) != SETTINGS:
        out.append(
            Departure(
                item="judging settings",
                ours=" and ".join(plan.settings) + " only",
                paper="standalone and comparative",
                restore="--setting both",
            )
        )
    if tuple(c for c in CRITERIA if c in plan.criteria) != CRITERIA:
        out.append(
            Departure(
                item="criteria judged",
                ours=", ".join(plan.criteria) + " only",
                paper=", ".join(CRITERIA),
                restore=f"--criteria {','.join(CRITERIA)}",
            )
        )
    added = [c for c in plan.criteria if c not in CRITERIA]
    if added:
        out.append(
            Departure(
                item="criteria added",
                ours=", ".join(added) + " (declared as data, RQB_CRITERIA), judged beside the paper's",
                paper=", ".join(CRITERIA),
                restore=f"--criteria {','.join(c for c in CRITERIA if c in plan.criteria) or ','.join(CRITERIA)}",
            )
        )
    if plan.orderings != ORDERINGS:
        out.append(
            Departure(
                item="comparative orderings",
                ours=f"{plan.orderings} shuffled orderings per instance",
                paper="one call per comparison",
                restore="--orderings 1",
            )
        )
    if plan.combine is not None and plan.combine != COMBINE_RULE and len({j.label for j in plan.judges}) >= 2:
        out.append(
            Departure(
                item="combine rule",
                ours=describe_combine_rule(plan.combine),
                paper=f"{COMBINE_RULE.value} (our reading; the equation is missing from our text)",
                restore=f"--combine {COMBINE_RULE.value}",
            )
        )
    if plan.failures is not None and plan.failures != FAILURES:
        out.append(
            Departure(
                item="failure accounting",
                ours=describe_failures(plan.failures),
                paper="rates over every instance: a failed generation is a loss",
                restore="--failures paper",
            )
        )
    if plan.instances is not None and plan.instances_total is not None and plan.instances < plan.instances_total:
        out.append(
            Departure(
                item="instances",
                ours=f"a trial: the first {plan.instances} of {plan.instances_total}",
                paper="every instance",
                restore="drop --limit (the worker's --instances)",
            )
        )
    return out


# --------------------------------------------------------------------------
# what --dry-run prints
# --------------------------------------------------------------------------


def generation_lines(
    gen: ModelUse, prompt_variant: str, bench: Benchmark | None = None, prompts: PromptSet | None = None
) -> list[str]:
    """What ``rqbench generate`` prints: the generator's settings and inputs, and its departures from the paper's."""
    deps = generation_departures(gen, prompt_variant)
    if prompts is not None:
        deps.append(prompt_departure(prompts))
        deps += named_prompt_departures(prompts, [generation_step_of(prompt_variant, n) for n in (1, 2)])
    cut = f"; {instances_cut(bench, gen.policy)} of {len(bench.instances)} instances cut" if bench else ""
    lines = [f"generator {gen.settings_line()}; prompt {prompt_variant}", f"  input: {gen.policy.describe()}{cut}"]
    lines.append(
        f"{len(deps)} departure{'' if len(deps) == 1 else 's'} from the paper's generation settings"
        + (":" if deps else "")
    )
    return lines + [f"  - {d.line()}" for d in deps]


def instances_cut(bench: Benchmark, policy: BackgroundPolicy) -> int:
    """Instances whose background block (all papers, as the novelty judge and the generator read it) is cut."""
    return sum(any(c.truncated for c in background_block(bench.background(i), policy)[1]) for i in bench.instances)


def plan_lines(plan: RunPlan, bench: Benchmark | None = None) -> list[str]:
    """The protocol block a run prints: the settings that matter, then every departure with its flag."""
    deps = departures(plan)
    lines = [f"protocol: {plan.protocol}"]
    uses: list[tuple[str, ModelUse]] = []
    if isinstance(plan.generation, ModelUse):
        lines.append(f"  generator {plan.generation.settings_line()}; prompt {plan.prompt_variant}")
        uses.append(("generator", plan.generation))
    elif isinstance(plan.generation, RecordedGeneration):
        m = plan.generation.metadata
        rec = "" if plan.generation.recorded else "; its generation settings are not recorded"
        lines.append(f"  submission {m.model}: prompt {m.prompt_variant}{rec}")
    for j in plan.judges:
        lines.append(f"  judge {j.settings_line()}")
        uses.append(("judge", j))
    for role, u in uses:
        cut = f"; {instances_cut(bench, u.policy)} of {len(bench.instances)} instances cut" if bench else ""
        lines.append(f"  input of {role} {u.label}: {u.policy.describe()}{cut}")
    order = "ordering" if plan.orderings == 1 else "orderings"
    lines.append(
        f"  judging: {' and '.join(plan.settings)}; {', '.join(plan.criteria)}; {plan.orderings} comparative {order}"
    )
    labels = sorted({j.label for j in plan.judges})
    if plan.combine is not None and len(labels) >= 2:
        lines.append(f"  combined: {describe_combine_rule(plan.combine, labels)}")
    elif plan.combine is not None:
        lines.append("  combined: none (one judge)")
    if plan.failures is not None:
        lines.append(f"  failures: {describe_failures(plan.failures)}")
    lines += [f"  note: {n}" for n in plan.notes]
    lines.append(
        f"{len(deps)} departure{'' if len(deps) == 1 else 's'} from the paper's protocol" + (":" if deps else "")
    )
    lines += [f"  - {d.line()}" for d in deps]
    return lines
