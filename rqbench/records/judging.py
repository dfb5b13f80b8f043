"""The judges' replies: what makes one valid, and the paper's two rules they are brought in line with.

A reply that breaks its schema's meaning is invalid, never repaired into a
score: a score outside its scale, an index of a candidate that does not exist, a
ranking that is not a permutation, fields that contradict each other (a scope
label that is not its score's, ``covered`` against the reply's own subset, one
candidate as the whole subset below 3). The LLM layer re-asks an invalid reply
once, quoting the error, and a second one is the named failure ``invalid_reply``.

Only the paper's own rules (A.4) are applied to a valid reply, each application
recorded in ``rule_corrections`` as ``"<rule>: <what changed>"`` and counted per
judge (``Rule``, ``rule_counts``): relevance 0 sets the three other novelty
scores to 0, and a candidate scoring 3 or 4 is the covering subset on its own.
"""

from __future__ import annotations

import enum
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from rqbench.records.common import MAX_SHORT_TEXT, Reply


class Rule(str, enum.Enum):
    """The paper's own rules (A.4) that a valid reply is brought in line with; each application is counted.

    relevance_zero: "If relevance = 0: SET originality = 0, gap_addressing = 0, non_obviousness = 0."
    covering_subset: "If any single candidate scores 3 or 4, the subset is just [that one index], prefer the
        smallest index when there are ties", and "covered = true iff the subset is non-empty".
    """

    relevance_zero = "relevance_zero"
    covering_subset = "covering_subset"

    def note(self, what: str) -> str:
        """The ``rule_corrections`` entry of one application."""
        return f"{self.value}: {what}"


# The scale of each score a judge gives (A.1-A.3); a value outside it makes the reply invalid.
OVERLAP_SCALE = (0, 4)
# A single candidate covers the author-anchored RQ only at 3 (a paraphrase) or 4 (it subsumes it).
COVERS_ALONE = 3


def scale_of(model: type[BaseModel], field: str) -> tuple[int, int]:
    """A score's scale, as its reply model's field declares it (its ``ge`` and ``le``)."""
    lo = hi = None
    for m in model.model_fields[field].metadata:
        lo = getattr(m, "ge", lo)
        hi = getattr(m, "le", hi)
    if lo is None or hi is None:
        raise ValueError(f"{model.__name__}.{field} declares no scale")
    return int(lo), int(hi)


def _in_scale(name: str, value: int, lo: int, hi: int) -> int:
    if not lo <= value <= hi:
        raise ValueError(f"{name}={value} is outside its scale {lo}-{hi}")
    return value


NOVELTY_DIMENSIONS = ("originality", "gap_addressing", "non_obviousness")
NARROWNESS_DIMENSIONS = ("source_bound_score", "diagnostic_test_score")


class NoveltyScore(Reply):
    """Hierarchical novelty rubric: relevance 0 forces the three others to 0."""

    # The docstring above is the schema's description, so part of every cache key: keep it as it is.

    relevance: int = Field(ge=0, le=1)
    originality: int = Field(ge=0, le=3)
    gap_addressing: int = Field(ge=0, le=3)
    non_obviousness: int = Field(ge=0, le=3)
    rule_corrections: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _relevance_rule(self) -> "NoveltyScore":
        raised = {d: getattr(self, d) for d in NOVELTY_DIMENSIONS if getattr(self, d) != 0}
        if self.relevance == 0 and raised:
            said = ", ".join(f"{d}={v}" for d, v in raised.items())
            self.rule_corrections.append(Rule.relevance_zero.note(f"relevance=0 with {said}; set to 0"))
            for d in raised:
                setattr(self, d, 0)
        return self

    @property
    def total(self) -> int:
        return self.originality + self.gap_addressing + self.non_obviousness

    def sort_key(self) -> tuple[int, int, int, int]:
        """The ranking rule: total, then non-obviousness, originality, gap addressing."""
        return (self.total, self.non_obviousness, self.originality, self.gap_addressing)


def _expected_count(info: ValidationInfo) -> int | None:
    ctx = info.context or {}
    return ctx.get("n_candidates")


class StandaloneNoveltyReply(Reply):
    scores: list[NoveltyScore] = Field(min_length=1, max_length=1)


def ranking_from_scores(scores: list[NoveltyScore]) -> list[int]:
    """The rubric's own ranking: most novel first, stable on full ties."""
    return sorted(range(len(scores)), key=lambda i: tuple(-x for x in scores[i].sort_key()))


class ComparativeNoveltyReply(Reply):
    scores: list[NoveltyScore] = Field(min_length=1)
    ranking: list[int]
    rule_corrections: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> "ComparativeNoveltyReply":
        n = _expected_count(info)
        if n is not None and len(self.scores) != n:
            raise ValueError(f"scores has {len(self.scores)} entries, expected {n} (one per candidate)")
        if sorted(self.ranking) != list(range(len(self.scores))):
            raise ValueError(
                f"ranking {self.ranking} is not a permutation of the candidate indices 0..{len(self.scores) - 1}: "
                "each index once, most novel first"
            )
        return self


SOURCE_BOUND_SCOPES = ("not_source_bound", "mildly_source_bound", "source_bound", "strongly_source_bound")
DIAGNOSTIC_SCOPES = ("not_diagnostic", "mildly_diagnostic", "diagnostic", "strongly_diagnostic")
# A narrowness score's scope label is its score in words: score field -> (scope field, label of each score).
SCOPE_OF_SCORE = {
    "source_bound_score": ("source_bound_scope", SOURCE_BOUND_SCOPES),
    "diagnostic_test_score": ("diagnostic_scope", DIAGNOSTIC_SCOPES),
}


class NarrownessScore(Reply):
    """Narrowness against one background paper; lower is broader."""

    mentions_source_specific_name: int = Field(ge=0, le=1)
    main_object_in_source: int = Field(ge=0, le=1)
    introduces_new_mechanism: int = Field(ge=0, le=1)
    source_bound_score: int = Field(ge=0, le=3)
    diagnostic_test_score: int = Field(ge=0, le=3)
    source_bound_scope: Literal["not_source_bound", "mildly_source_bound", "source_bound", "strongly_source_bound"]
    diagnostic_scope: Literal["not_diagnostic", "mildly_diagnostic", "diagnostic", "strongly_diagnostic"]
    short_reason_source_bound: str = Field(default="", max_length=MAX_SHORT_TEXT)
    short_reason_diagnostic: str = Field(default="", max_length=MAX_SHORT_TEXT)
    rule_corrections: list[str] = Field(default_factory=list)

    @field_validator(
        "mentions_source_specific_name", "main_object_in_source", "introduces_new_mechanism", mode="before"
    )
    @classmethod
    def _flag(cls, value: Any) -> Any:
        """A JSON true/false for a 0/1 flag says the same thing: read as 1/0 (any other value is checked as given)."""
        return int(value) if isinstance(value, bool) else value

    @model_validator(mode="after")
    def _scopes_are_their_scores(self) -> "NarrownessScore":
        for dim, (scope_key, scopes) in SCOPE_OF_SCORE.items():
            score, scope = getattr(self, dim), getattr(self, scope_key)
            if scope != scopes[score]:
                raise ValueError(f"{scope_key}={scope!r} contradicts {dim}={score}, whose scope is {scopes[score]!r}")
        return self


class StandaloneNarrownessReply(NarrownessScore):
    pass


class ComparativeNarrownessReply(Reply):
    scores: list[NarrownessScore] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self, info: ValidationInfo) -> "ComparativeNarrownessReply":
        n = _expected_count(info)
        if n is not None and len(self.scores) != n:
            raise ValueError(f"scores has {len(self.scores)} entries, expected {n} (one per candidate)")
        return self


class OverlapReply(Reply):
    """Author-anchor overlap: 0-4 per candidate, the smallest covering subset."""

    # The docstring above is the schema's description, so part of every cache key: keep it as it is.

    pairwise_scores: list[int]
    covering_subset_indices: list[int]
    covered: bool
    rule_corrections: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> "OverlapReply":
        n = _expected_count(info)
        scores = self.pairwise_scores
        if n is not None and len(scores) != n:
            raise ValueError(f"pairwise_scores has {len(scores)} entries, expected {n}")
        for i, v in enumerate(scores):
            _in_scale(f"pairwise_scores[{i}]", v, *OVERLAP_SCALE)
        given = self.covering_subset_indices
        bad = [i for i in given if not 0 <= i < len(scores)]
        if bad:
            raise ValueError(
                f"covering_subset_indices {bad}: there is no candidate with that index (0..{len(scores) - 1})"
            )
        if len(set(given)) != len(given):
            raise ValueError(f"covering_subset_indices {given} names a candidate twice")
        if self.covered != bool(given):
            raise ValueError(
                f"covered={str(self.covered).lower()} contradicts covering_subset_indices {given} "
                "(covered is true exactly when the subset is non-empty)"
            )
        subset = sorted(given)
        strong = [i for i, v in enumerate(scores) if v >= COVERS_ALONE]
        # a judge's reply (validated with its candidate count); results files written before this check keep theirs
        if n is not None and not strong and len(subset) == 1:
            raise ValueError(
                f"covering_subset_indices {given} is one candidate scoring {scores[subset[0]]}; one "
                f"candidate covers the author-anchored RQ only at {COVERS_ALONE} or 4, otherwise the "
                "subset combines two or more, or is empty"
            )
        if strong and subset != strong[:1]:
            first = strong[0]
            what = f"candidate {first} scores {scores[first]}, so the subset is [{first}] (reply had {given})"
            self.rule_corrections.append(Rule.covering_subset.note(what))
            subset, self.covered = strong[:1], True
        self.covering_subset_indices = subset
        return self


def corrections_of(reply: BaseModel) -> list[str]:
    """Every rule application in a reply, including those of nested scores."""
    out: list[str] = list(getattr(reply, "rule_corrections", []) or [])
    for s in getattr(reply, "scores", []) or []:
        out.extend(getattr(s, "rule_corrections", []) or [])
    return out


# How results files written before rules had names began the entries of the two rules.
_UNNAMED = {"relevance=0 but": Rule.relevance_zero, "a candidate scores >=3": Rule.covering_subset}


def rule_of(correction: str) -> str:
    """The rule an entry of ``rule_corrections`` applied; ``other`` for an older file's repair that is no rule now."""
    name = correction.split(":", 1)[0]
    if name in Rule._value2member_map_:
        return name
    return next((r.value for start, r in _UNNAMED.items() if correction.startswith(start)), "other")


def rule_counts(reply: BaseModel) -> Counter[str]:
    """How often each of the paper's rules was applied in a reply, by rule name."""
    return Counter(rule_of(c) for c in corrections_of(reply))
