"""The dataset's rows: author-anchored RQs with their gaps and verification, papers, evaluation instances."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from rqbench.records.common import Record, parse_rq_id
from rqbench.records.extraction import NoveltyType
from rqbench.records.papers import SourcePaper

class Gap(Record):
    text: str
    cited_key: str
    cited_paper_id: str | None = None


class Verification(Record):
    addressed: bool
    confidence: Literal["high", "medium", "low"]
    reasoning: str
    evidence: str = ""
    model: str


class RQRecord(Record):
    """One author-anchored RQ: a row of the ``rqs`` config."""

    rq_id: str
    rq: str = Field(min_length=1)
    arxiv_id: str
    subfield: str
    novelty_type: NoveltyType
    problem_statement: str
    main_idea_headline: str
    contributions: list[str]
    ideas: list[str] = Field(default_factory=list)
    gaps: list[Gap]
    cited_paper_ids: list[str] = Field(min_length=1, description="The RQ's background papers.")
    cited_keys: list[str] = Field(default_factory=list)
    verification: Verification | None = None

    @model_validator(mode="after")
    def _id_rule(self) -> "RQRecord":
        arxiv_id, _ = parse_rq_id(self.rq_id)
        if arxiv_id != self.arxiv_id:
            raise ValueError(f"rq_id {self.rq_id!r} does not belong to arxiv_id {self.arxiv_id!r}")
        return self


class PaperRecord(Record):
    """A row of the ``papers`` config: a source paper and what the builder extracted from it."""

    paper: SourcePaper
    problem_statement: str
    main_idea_headline: str
    novelty_type: NoveltyType
    ideas: list[str]
    contributions: list[str]
    n_rqs: int = Field(ge=0)
    influential_keys: list[str] = Field(default_factory=list)
    extraction_model: str


class EvaluationInstance(Record):
    """The evaluation view: one GT RQ and the papers a model reads."""

    rq_id: str
    gt_rq: str
    arxiv_id: str
    subfield: str
    background_paper_ids: list[str] = Field(min_length=1)
