"""The judges' replies and the rubric rules they repair.

Each reply repairs what the rubric itself decides (the hierarchical relevance
rule, score ranges, scopes that follow scores, covering subsets) and records
each repair in ``rule_corrections``, so a judge's violations can be counted,
never hidden.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from rqbench.records.common import MAX_SHORT_TEXT, Reply

def _clamp(name: str, value: Any, lo: int, hi: int, fixes: list[str]) -> Any:
    """Clamp an integer score into its range, noting the repair; non-ints pass to validation."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and not value.is_integer():
        return value  # let pydantic reject 1.5
    iv = int(value)
    if iv < lo or iv > hi:
        fixes.append(f"{name}={iv} outside {lo}..{hi}, clamped")
        return max(lo, min(hi, iv))
    return iv


NOVELTY_DIMENSIONS = ("originality", "gap_addressing", "non_obviousness")
NARROWNESS_DIMENSIONS = ("source_bound_score", "diagnostic_test_score")


class NoveltyScore(Reply):
    """Hierarchical novelty rubric: relevance 0 forces the three others to 0."""

    relevance: int = Field(ge=0, le=1)
    originality: int = Field(ge=0, le=3)
    gap_addressing: int = Field(ge=0, le=3)
    non_obviousness: int = Field(ge=0, le=3)
    rule_corrections: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _repair(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        fixes = list(data.get("rule_corrections") or [])
        data["relevance"] = _clamp("relevance", data.get("relevance"), 0, 1, fixes)
        for dim in NOVELTY_DIMENSIONS:
            if dim in data:
                data[dim] = _clamp(dim, data[dim], 0, 3, fixes)
        if data.get("relevance") == 0:
            for dim in NOVELTY_DIMENSIONS:
                if isinstance(data.get(dim), int) and data[dim] != 0:
                    fixes.append(f"relevance=0 but {dim}={data[dim]}, set to 0")
                    data[dim] = 0
        data["rule_corrections"] = fixes
        return data

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
            self.rule_corrections.append(
                f"ranking {self.ranking} is not a permutation of 0..{len(self.scores) - 1}; recomputed from scores"
            )
            self.ranking = ranking_from_scores(self.scores)
        return self


SOURCE_BOUND_SCOPES = ("not_source_bound", "mildly_source_bound", "source_bound", "strongly_source_bound")
DIAGNOSTIC_SCOPES = ("not_diagnostic", "mildly_diagnostic", "diagnostic", "strongly_diagnostic")


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

    @model_validator(mode="before")
    @classmethod
    def _repair(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        fixes = list(data.get("rule_corrections") or [])
        for flag in ("mentions_source_specific_name", "main_object_in_source", "introduces_new_mechanism"):
            if isinstance(data.get(flag), bool):
                data[flag] = int(data[flag])
            data[flag] = _clamp(flag, data.get(flag), 0, 1, fixes)
        for dim, scopes, scope_key in (
            ("source_bound_score", SOURCE_BOUND_SCOPES, "source_bound_scope"),
            ("diagnostic_test_score", DIAGNOSTIC_SCOPES, "diagnostic_scope"),
        ):
            data[dim] = _clamp(dim, data.get(dim), 0, 3, fixes)
            if isinstance(data.get(dim), int):
                want = scopes[data[dim]]
                if data.get(scope_key) != want:
                    fixes.append(f"{scope_key}={data.get(scope_key)!r} disagrees with {dim}={data[dim]}, set to {want}")
                    data[scope_key] = want
        data["rule_corrections"] = fixes
        return data


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

    pairwise_scores: list[int]
    covering_subset_indices: list[int]
    covered: bool
    rule_corrections: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _repair(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        fixes = list(data.get("rule_corrections") or [])
        scores = data.get("pairwise_scores")
        if isinstance(scores, list):
            data["pairwise_scores"] = [_clamp(f"pairwise_scores[{i}]", s, 0, 4, fixes) for i, s in enumerate(scores)]
        data["rule_corrections"] = fixes
        return data

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> "OverlapReply":
        n = _expected_count(info)
        if n is not None and len(self.pairwise_scores) != n:
            raise ValueError(f"pairwise_scores has {len(self.pairwise_scores)} entries, expected {n}")
        fixes = self.rule_corrections
        subset = sorted(set(self.covering_subset_indices))
        bad = [i for i in subset if not 0 <= i < len(self.pairwise_scores)]
        if bad:
            fixes.append(f"covering_subset_indices {bad} out of range, removed")
            subset = [i for i in subset if i not in bad]
        strong = [i for i, s in enumerate(self.pairwise_scores) if s >= 3]
        if strong and subset != [strong[0]]:
            fixes.append(f"a candidate scores >=3, so the subset is [{strong[0]}] (was {subset})")
            subset = [strong[0]]
        if subset != self.covering_subset_indices:
            self.covering_subset_indices = subset
        if self.covered != bool(subset):
            fixes.append(f"covered={self.covered} disagrees with subset {subset}, set to {bool(subset)}")
            self.covered = bool(subset)
        return self


def corrections_of(reply: BaseModel) -> list[str]:
    """Every rule repair in a reply, including those of nested scores."""
    out: list[str] = list(getattr(reply, "rule_corrections", []) or [])
    for s in getattr(reply, "scores", []) or []:
        out.extend(getattr(s, "rule_corrections", []) or [])
    return out
