"""The expert-labelled pair pool: RQ pairs that experts compared, with their picks and where each came from.

A pair is what an expert saw: a background (the papers, or their summary, as the
expert read them), the author-anchored RQ and one model RQ, unlabelled. Each
expert picked the more non-obvious of the two (``gt``, ``model`` or ``tie``).
The pool holds the paper's printed study (appendix A.6) and every pair annotated
in the Space's Annotate tab; the judge board asks LLM judges the same question
on the same pairs. The pool's ``version`` is a hash of its content, so a board
row says which pool it was computed on, and a new annotation makes a new version.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rqbench.hashing import content_hash
from rqbench.records.common import SCHEMA_VERSION, Record
from rqbench.records.outcomes import Pick
from rqbench.records.papers import CitedPaper

PoolSource = Literal["paper_a6", "annotate"]


class ExpertPair(Record):
    """One pair of the pool: the two RQs, the background as the experts saw it, and every expert's pick."""

    pair_id: str = Field(min_length=1, description="Stable across pool versions: 'a6-<sample>' or the Space's pair id.")
    source: PoolSource
    provenance: str = Field(min_length=1, description="Where the pair and its picks come from, in words.")
    rq_id: str = Field(min_length=1)
    arxiv_id: str = Field(default="", description="The source paper, where known (the A.6 samples name none).")
    subfield: str = ""
    model: str = Field(min_length=1, description="The model that wrote the model RQ.")
    gt_rq: str = Field(min_length=1, description="The author-anchored RQ.")
    model_rq: str = Field(min_length=1)
    background: list[CitedPaper] = Field(min_length=1, description="The background papers as the experts saw them.")
    dimension: Literal["non_obviousness"] = "non_obviousness"
    expert_picks: dict[str, Pick] = Field(min_length=1, description="Expert (or hashed annotator id) -> pick.")
    reference_picks: dict[str, Pick] = Field(
        default_factory=dict,
        description="Published LLM judges' picks on this pair (the paper's, on A.6): reference rows.",
    )

    def content_key(self) -> str:
        """A hash of what a judge is shown (the RQs and the background), not of the picks: a judge's verdict
        on the pair stays valid while experts add picks, and is void once the texts change."""
        return content_hash(
            {
                "gt": self.gt_rq,
                "model": self.model_rq,
                "background": [p.model_dump(mode="json") for p in self.background],
            }
        )


def pool_version(pairs: list[ExpertPair]) -> str:
    """The content hash of the pairs, in pair-id order: pairs, texts, backgrounds and picks."""
    return content_hash([p.model_dump(mode="json") for p in sorted(pairs, key=lambda p: p.pair_id)])


class ExpertPool(Record):
    """Every expert-labelled pair, the pool's version, and what was left out of it (with why)."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.expert_pool"] = "rqbench.expert_pool"
    version: str
    pairs: list[ExpertPair]
    left_out: list[str] = Field(default_factory=list, description="Pairs that could not enter the pool, each with why.")

    @model_validator(mode="before")
    @classmethod
    def _versioned(cls, data: object) -> object:
        """A pool made in code gets its version; a stored one must still hash to the version it says."""
        if not isinstance(data, dict) or "pairs" not in data:
            return data
        pairs = [p if isinstance(p, ExpertPair) else ExpertPair.model_validate(p) for p in data["pairs"]]
        got = pool_version(pairs)
        if data.get("version") not in (None, got):
            raise ValueError(f"version {data['version']} does not match its pairs ({got}); was the file edited?")
        return {**data, "pairs": pairs, "version": got}

    @model_validator(mode="after")
    def _unique(self) -> ExpertPool:
        seen: set[str] = set()
        for p in self.pairs:
            if p.pair_id in seen:
                raise ValueError(f"pair {p.pair_id!r} appears twice")
            seen.add(p.pair_id)
        return self

    def pair(self, pair_id: str) -> ExpertPair:
        for p in self.pairs:
            if p.pair_id == pair_id:
                return p
        raise KeyError(pair_id)

    def experts(self) -> list[str]:
        """Every expert, in the order they first appear."""
        out: list[str] = []
        for p in self.pairs:
            out += [e for e in p.expert_picks if e not in out]
        return out
