"""The dataset's rows: author-anchored RQs with their gaps and verification, papers, evaluation instances.

The texts of a row pass the well-formedness gate (``rqbench.wellformed``) when
the builder writes it and again before a release is published
(``check_build``), but reading a row does not apply the gate: a release
published before the gate, or under an older rule set, must still load. So the
gate is a method here (``wellformed_failures``), not a validator; the reply
models the builder asks for (``extraction``) are where it refuses text.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import Literal

from pydantic import Field, model_validator

from rqbench import wellformed
from rqbench.records.common import Record, paper_id_from_arxiv_id, parse_rq_id
from rqbench.records.extraction import NoveltyType
from rqbench.records.papers import DateBasis, SourcePaper

TextField = tuple[str, str, wellformed.Kind]  # (field path, text, the gate's kind)


def _failures(texts: Iterable[TextField]) -> list[tuple[str, wellformed.Failure]]:
    return [(path, f) for path, text, kind in texts for f in wellformed.check(text, kind)]


def _same_basis(row: RQRecord | EvaluationInstance) -> None:
    """A first-version date always says how it is known, and a basis comes with its date."""
    if (row.paper_published is None) != (row.paper_published_source is None):
        raise ValueError(
            f"paper_published ({row.paper_published}) and paper_published_source "
            f"({row.paper_published_source!r}) are set together or not at all"
        )


def _extraction_texts(row: RQRecord | PaperRecord) -> list[TextField]:
    K = wellformed.Kind
    return [
        ("problem_statement", row.problem_statement, K.problem_statement),
        ("main_idea_headline", row.main_idea_headline, K.headline),
        *((f"contributions[{i}]", t, K.contribution) for i, t in enumerate(row.contributions)),
        *((f"ideas[{i}]", t, K.contribution) for i, t in enumerate(row.ideas)),
    ]


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
    paper_id: str = Field(description="The source paper M: its arXiv id, or a local paper's id.")
    arxiv_id: str | None = Field(default=None, description="M's arXiv id; null for a paper from a local folder.")
    paper_published: date | None = None
    paper_published_source: DateBasis | None = None
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

    _paper_id = model_validator(mode="before")(paper_id_from_arxiv_id)

    @model_validator(mode="after")
    def _id_rule(self) -> "RQRecord":
        paper_id, _ = parse_rq_id(self.rq_id)
        if paper_id != self.paper_id:
            raise ValueError(f"rq_id {self.rq_id!r} does not belong to paper_id {self.paper_id!r}")
        _same_basis(self)
        return self

    def wellformed_failures(self) -> list[tuple[str, wellformed.Failure]]:
        """Every gate failure of the row's texts as (field, failure); [] for a row the builder writes."""
        gaps = ((f"gaps[{i}].text", g.text, wellformed.Kind.gap) for i, g in enumerate(self.gaps))
        return _failures([("rq", self.rq, wellformed.Kind.research_question), *_extraction_texts(self), *gaps])


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

    def wellformed_failures(self) -> list[tuple[str, wellformed.Failure]]:
        """Every gate failure of the row's texts as (field, failure); [] for a row the builder writes."""
        return _failures(_extraction_texts(self))


class EvaluationInstance(Record):
    """The evaluation view: one GT RQ and the papers a model reads."""

    rq_id: str
    gt_rq: str
    paper_id: str = Field(description="The source paper M: its arXiv id, or a local paper's id.")
    arxiv_id: str | None = Field(default=None, description="M's arXiv id; null for a paper from a local folder.")
    paper_published: date | None = None
    paper_published_source: DateBasis | None = None
    subfield: str
    background_paper_ids: list[str] = Field(min_length=1)

    _paper_id = model_validator(mode="before")(paper_id_from_arxiv_id)

    @model_validator(mode="after")
    def _dated(self) -> "EvaluationInstance":
        _same_basis(self)
        return self

    def wellformed_failures(self) -> list[tuple[str, wellformed.Failure]]:
        """The gate's failures of the ground-truth RQ as (field, failure); [] for a row the builder writes."""
        return _failures([("gt_rq", self.gt_rq, wellformed.Kind.research_question)])
