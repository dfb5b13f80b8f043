"""The builder's and generation's LLM steps: each step's reply model, prompt files and owner.

A step is one prompt of the method, asked of a model for one kind of reply. Its
name picks the template pair ``<step>.system.md`` / ``<step>.user.md`` in a
prompt set, goes into the cache key and the call log, and tags the request on
the wire (``X-RQBench-Step``). The module that runs a step (its owner) looks the
step up here by its own name for it, a build stage or a generation variant,
instead of spelling the step name or the reply model itself. The judges' steps
are declared by their criteria (``rqbench.evaluate.criteria``), each in its own
module, with the same ``Step`` type.

The reply model held here is the base one; an owner may narrow it (a build
stage bounds long texts for grammar-constrained decoders, generation adds the
submission rules) but keeps its class name, so the schema title stays.
"""

from __future__ import annotations

from dataclasses import dataclass

from rqbench.records import (
    AuthorRQsReply,
    CitedContributionsReply,
    ContributionsReply,
    GapReply,
    GenerationReply,
    InfluenceReply,
    Reply,
    VerificationReply,
)


@dataclass(frozen=True)
class Step:
    """One LLM step: what it is called, what it replies, and who runs it."""

    name: str
    reply_model: type[Reply]
    owner: str  # the module that runs the step
    key: str  # the owner's name for the step: a build stage, a generation variant, a judge setting ("any": both)

    @property
    def prompt_files(self) -> tuple[str, str]:
        """The step's two template files in a prompt set."""
        return f"{self.name}.system.md", f"{self.name}.user.md"


_GENERATE = "rqbench.evaluate.generate.run"

STEPS: dict[str, Step] = {
    s.name: s
    for s in (
        # the builder, in stage order
        Step("influence", InfluenceReply, "rqbench.builder.influence", "influence"),
        Step("contributions", ContributionsReply, "rqbench.builder.contributions", "contributions"),
        Step("gaps", GapReply, "rqbench.builder.gaps", "gaps"),
        Step("author_rqs", AuthorRQsReply, "rqbench.builder.author_rqs", "author_rqs"),
        Step(
            "cited_contributions", CitedContributionsReply, "rqbench.builder.cited_contributions", "cited_contributions"
        ),
        Step("verification", VerificationReply, "rqbench.builder.verification", "verify"),
        # generation: one background paper, or several (the user prompts differ). original: the paper's A.4
        # rules; revised: A.8's, without the constraining rules; strict: original plus a rule of our own
        Step("generation_original", GenerationReply, _GENERATE, "original"),
        Step("generation_original_multi", GenerationReply, _GENERATE, "original_multi"),
        Step("generation_revised", GenerationReply, _GENERATE, "revised"),
        Step("generation_revised_multi", GenerationReply, _GENERATE, "revised_multi"),
        Step("generation_strict", GenerationReply, _GENERATE, "strict"),
        Step("generation_strict_multi", GenerationReply, _GENERATE, "strict_multi"),
    )
}


def step(name: str) -> Step:
    """The registered step ``name``; KeyError naming the known steps otherwise."""
    try:
        return STEPS[name]
    except KeyError:
        raise KeyError(f"no LLM step {name!r}; the steps are {', '.join(STEPS)}") from None


def owned_by(owner: str) -> dict[str, Step]:
    """The steps module ``owner`` runs, by its own name for each, in registry order."""
    found = {s.key: s for s in STEPS.values() if s.owner == owner}
    if not found:
        raise KeyError(f"module {owner!r} owns no LLM step")
    return found


def owned_step(owner: str) -> Step:
    """The one step of a module that runs exactly one (a build stage)."""
    found = list(owned_by(owner).values())
    if len(found) != 1:
        raise ValueError(f"module {owner!r} owns {len(found)} LLM steps, not one: {[s.name for s in found]}")
    return found[0]


def in_package(package: str) -> dict[str, Step]:
    """The steps run by the modules of ``package``, by their owners' names for them (unique there)."""
    found: dict[str, Step] = {}
    for s in STEPS.values():
        if s.owner.startswith(package + "."):
            if s.key in found:
                raise ValueError(f"steps {found[s.key].name!r} and {s.name!r} share the name {s.key!r} in {package}")
            found[s.key] = s
    return found
