"""Every record RQ-Bench reads or writes, as pydantic models.

One module on purpose: the builder, the judges, the dataset card and the Space
all meet at these shapes, and a newcomer finds them in one place. Input models
forbid unknown fields so a typo in a file is an error, not a silent default.
Judge replies repair what the rubric itself decides (the hierarchical relevance
rule, score ranges, covering subsets) and record each repair in
``rule_corrections``, so a judge's violations can be counted, never hidden.
"""

from __future__ import annotations

import enum
import functools
import json
import re
from datetime import date as Date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

SCHEMA_VERSION = 1

ARXIV_ID_RE = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})$")
RQ_ID_RE = re.compile(r"^(?P<arxiv_id>.+)_rq(?P<index>\d+)$")

# Bounds on free text, shared by the models and the JSON schemas given to the
# local model (which needs maxLength to stop rambling).
MAX_RQ_CHARS = 600
MAX_SHORT_TEXT = 400
MAX_LONG_TEXT = 1000  # llama.cpp cannot compile a JSON grammar for much longer strings (measured: 1500 fails)


class Record(BaseModel):
    """Base of stored records: strict about unknown fields."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Reply(BaseModel):
    """Base of an LLM's JSON reply: extra keys are ignored, shapes are checked."""

    model_config = ConfigDict(extra="ignore")


def rq_id_for(arxiv_id: str, index: int) -> str:
    """The dataset's RQ id rule: ``<arxiv_id>_rq<index>``."""
    if index < 0:
        raise ValueError(f"RQ index must be >= 0, got {index}")
    return f"{arxiv_id}_rq{index}"


def parse_rq_id(rq_id: str) -> tuple[str, int]:
    """Split an RQ id into (arxiv_id, index); ValueError if it breaks the rule."""
    m = RQ_ID_RE.match(rq_id)
    if not m:
        raise ValueError(f"rq_id {rq_id!r} is not of the form <arxiv_id>_rq<index>")
    return m.group("arxiv_id"), int(m.group("index"))


# --------------------------------------------------------------------------
# Source papers and their structure
# --------------------------------------------------------------------------


class SourcePaper(Record):
    """A target paper M: arXiv metadata, plus Semantic Scholar's facts once filtered."""

    arxiv_id: str = Field(description="arXiv identifier without version, e.g. 2502.01113.")
    version: int | None = Field(default=None, description="arXiv version number.")
    title: str
    abstract: str = ""
    authors: list[str] = Field(default_factory=list)
    primary_category: str = Field(description="arXiv primary category, the sub-field (cs.CL, ...).")
    categories: list[str] = Field(default_factory=list, description="Primary and cross-list categories.")
    published: datetime | None = None
    updated: datetime | None = None
    doi: str | None = None
    journal_ref: str | None = None
    source: Literal["arxiv", "local"] = Field(
        default="arxiv", description="Where the LaTeX came from: the arXiv e-print or a local folder."
    )
    # Semantic Scholar (filled by the filtering stage)
    s2_paper_id: str | None = None
    citation_count: int | None = None
    venue: str | None = None
    publication_venue_type: str | None = Field(default=None, description="conference, journal, ...")
    publication_types: list[str] = Field(default_factory=list)
    external_ids: dict[str, str] = Field(default_factory=dict)


class Section(Record):
    """One section or subsection of a parsed paper, in document order."""

    index: int = Field(ge=0, description="Position in the document.")
    name: str
    level: int = Field(ge=0, le=3, description="0 preamble/abstract, 1 section, 2 subsection, 3 subsubsection.")
    text: str = Field(description="Plain text; math as [MATH] placeholders.")


class CitationContext(Record):
    """One citation of a key in M, with the sentences around it."""

    key: str
    citing_sentence: str
    before: list[str] = Field(default_factory=list, max_length=3)
    after: list[str] = Field(default_factory=list, max_length=3)
    section: str
    command: str = Field(default="cite", description="The LaTeX command used (citep, textcite, ...).")


class BibEntry(Record):
    """A bibliography entry of M, from .bib or .bbl."""

    key: str
    title: str | None = None
    authors: list[str] = Field(default_factory=list)
    year: int | None = None
    venue: str | None = None
    arxiv_id: str | None = None
    doi: str | None = None
    url: str | None = None
    abstract: str | None = None
    origin: Literal["bib", "bbl"] = "bib"


class CitedWork(Record):
    """What M says about one cited key: the input of influence labelling."""

    key: str
    bib: BibEntry | None = None
    frequency: int = Field(ge=1)
    sections: list[str]
    contexts: list[CitationContext]


class ParsedPaper(Record):
    """Stage 3's output for one paper."""

    arxiv_id: str
    sections: list[Section]
    bibliography: list[BibEntry]
    cited_works: list[CitedWork]
    main_file: str = Field(description="The root .tex file, relative to the paper folder.")
    warnings: list[str] = Field(default_factory=list)


class SectionText(Record):
    """A cited paper's section: the shape of the ``cited_papers`` config's body."""

    section: str
    text: str


class TextLevel(str, enum.Enum):
    """How much of a cited paper's text we have: full body, abstract, or title only."""

    full = "full"
    abstract = "abstract"
    title = "title"


class CitedPaper(Record):
    """A background paper with its section-wise body text."""

    paper_id: str = Field(description="arXiv id when known, else 's2:<paperId>' or 'bib:<hash>'.")
    title: str
    arxiv_id: str | None = None
    abstract: str = ""
    text_level: TextLevel
    sections: list[SectionText] = Field(default_factory=list)


class SkipRecord(Record):
    """A paper or item a stage could not use, with the reason, so nothing vanishes silently."""

    stage: str
    item_id: str
    reason: str
    detail: str = ""


# --------------------------------------------------------------------------
# LLM stage replies of the builder
# --------------------------------------------------------------------------


class InfluenceLabel(str, enum.Enum):
    """The five labels of method.md step 3; the first two count as influential."""

    inspiration = "inspiration"
    competitor_baseline = "competitor_baseline"
    irrelevant = "irrelevant"
    minimally_influential = "minimally_influential"
    canonical_reference = "canonical_reference"

    @property
    def influential(self) -> bool:
        return self in (InfluenceLabel.inspiration, InfluenceLabel.competitor_baseline)


class InfluenceReply(Reply):
    label: InfluenceLabel
    reason: str = Field(default="", max_length=MAX_SHORT_TEXT)


class NoveltyType(str, enum.Enum):
    """What kind of novelty a paper claims (closed set, documented in the README).

    new_problem: poses a task or question not studied before.
    new_method: a new model, algorithm or technique.
    method_improvement: a modification or extension of an existing method.
    new_resource: a dataset, benchmark, corpus or tool for others to use.
    empirical_finding: an analysis or evaluation that reveals a new result.
    theory: a proof, bound or formal framework.
    application: an existing technique carried into a new domain.
    """

    new_problem = "new_problem"
    new_method = "new_method"
    method_improvement = "method_improvement"
    new_resource = "new_resource"
    empirical_finding = "empirical_finding"
    theory = "theory"
    application = "application"


class ContributionsReply(Reply):
    problem_statement: str = Field(min_length=1, max_length=MAX_LONG_TEXT)
    main_idea_headline: str = Field(min_length=1, max_length=MAX_SHORT_TEXT)
    novelty_type: NoveltyType
    ideas: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT)]] = Field(min_length=1, max_length=8)
    contributions: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT)]] = Field(
        min_length=1, max_length=8
    )


class GapReply(Reply):
    """Gaps that M identifies in one cited work and addresses; may be empty."""

    gaps: list[Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT)]] = Field(max_length=6)


class AuthorRQ(Reply):
    question: str = Field(min_length=5, max_length=MAX_RQ_CHARS)
    cited_keys: list[str] = Field(min_length=1, description="Background papers: bib keys of M's citations.")

    @field_validator("question")
    @classmethod
    def _is_question(cls, v: str) -> str:
        v = v.strip()
        if not v.endswith("?"):
            raise ValueError("a research question must end with '?'")
        return v


class AuthorRQsReply(Reply):
    research_questions: list[AuthorRQ] = Field(min_length=1, max_length=6)


class VerificationReply(Reply):
    """Does M's own contribution address the RQ? (strict JSON of step 8)."""

    addressed: bool
    confidence: Literal["high", "medium", "low"]
    reasoning: str = Field(max_length=MAX_LONG_TEXT)
    evidence: str = Field(default="", max_length=MAX_SHORT_TEXT)


# --------------------------------------------------------------------------
# The dataset
# --------------------------------------------------------------------------


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


class PromptSetRef(Record):
    name: str
    hash: str


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


class StageRun(Record):
    """One stage of a build, as the manifest records it."""

    stage: str
    model: str | None = None
    prompt_set: PromptSetRef | None = None
    items_in: int = 0
    items_out: int = 0
    skipped: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = 0.0
    seconds: float = 0.0
    finished_at: datetime | None = None


class BuildManifest(Record):
    """What produced a build: stages, models, prompt sets, counts, time and cost."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.build"] = "rqbench.build"
    build_id: str
    created_at: datetime
    inputs: dict[str, Any] = Field(default_factory=dict, description="Query, date window, papers folder, limits.")
    settings: dict[str, Any] = Field(default_factory=dict)
    stages: list[StageRun] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    dropped: dict[str, int] = Field(default_factory=dict, description="RQs dropped, by reason.")


class EvaluationInstance(Record):
    """The evaluation view: one GT RQ and the papers a model reads."""

    rq_id: str
    gt_rq: str
    arxiv_id: str
    subfield: str
    background_paper_ids: list[str] = Field(min_length=1)


# --------------------------------------------------------------------------
# Generation and submissions
# --------------------------------------------------------------------------


def _check_question(v: str) -> str:
    v = v.strip()
    if not v:
        raise ValueError("research question is empty")
    if len(v) > MAX_RQ_CHARS:
        raise ValueError(f"research question is {len(v)} characters, over the limit of {MAX_RQ_CHARS}")
    if not v.endswith("?"):
        raise ValueError("research question must end with '?'")
    return v


def check_distinct(questions: list[str]) -> list[str]:
    """The five must differ: case and spacing aside, no question may repeat."""
    seen: set[str] = set()
    for q in questions:
        norm = " ".join(q.lower().split())
        if norm in seen:
            raise ValueError(f"research question repeated within the five: {q!r}")
        seen.add(norm)
    return questions


# Shown to grammar-constrained decoders (llama.cpp, vLLM) in the JSON schema only, so that a weak
# model ends every question with "?"; validation itself is _check_question's, with its clearer errors.
QUESTION_GRAMMAR_PATTERN = r'^[^"\\\n]{10,300}\?$'

Question = Annotated[
    str, Field(min_length=1, max_length=MAX_RQ_CHARS, json_schema_extra={"pattern": QUESTION_GRAMMAR_PATTERN})
]


class GenerationReply(Reply):
    """A model's answer to the RQ generation prompt.

    The JSON schema shown to the model asks for at most 6 gaps of 300 characters, which keeps a
    grammar-constrained reply inside a small model's token budget; validation accepts up to 10 of
    MAX_LONG_TEXT, so a longer answer from a hosted model is not refused.
    """

    gaps: list[
        Annotated[str, Field(min_length=1, max_length=MAX_LONG_TEXT, json_schema_extra={"maxLength": 300})]
    ] = Field(min_length=1, max_length=10, json_schema_extra={"maxItems": 6})
    research_questions: list[Question] = Field(min_length=5, max_length=5)

    @field_validator("research_questions")
    @classmethod
    def _questions(cls, v: list[str]) -> list[str]:
        return [_check_question(q) for q in v]


class SubmissionMetadata(Record):
    """The first line of a submission: who made the RQs and how."""

    kind: Literal["metadata"] = "metadata"
    model: str = Field(min_length=1)
    provider: str = ""
    model_type: Literal["open", "closed", "unknown"] = "unknown"
    knowledge_cutoff: Date | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    prompt_variant: Literal["original", "revised", "custom"] = "original"
    date: datetime | None = None
    contact: str = ""
    notes: str = Field(default="", max_length=4000)


class SubmissionEntry(Record):
    """One line of a submission: exactly five RQs for one rq_id."""

    rq_id: str
    research_questions: list[Question] = Field(default_factory=list, max_length=5)
    gaps: list[str] = Field(default_factory=list)
    failure: str | None = Field(default=None, description="Set when generation failed; the RQs are then absent.")

    @model_validator(mode="after")
    def _five_unless_failed(self) -> "SubmissionEntry":
        if self.failure is None and len(self.research_questions) != 5:
            raise ValueError(
                f"research_questions needs at least 5 and at most 5 entries, got {len(self.research_questions)}"
            )
        if self.failure is not None and self.research_questions:
            raise ValueError("a failed entry (failure set) carries no research_questions")
        return self

    @field_validator("research_questions")
    @classmethod
    def _questions(cls, v: list[str]) -> list[str]:
        return check_distinct([_check_question(q) for q in v])


# --------------------------------------------------------------------------
# Judge replies
# --------------------------------------------------------------------------


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


# Registry of prompt steps and the reply model each returns.
REPLY_MODELS: dict[str, type[Reply]] = {
    "influence": InfluenceReply,
    "contributions": ContributionsReply,
    "gaps": GapReply,
    "author_rqs": AuthorRQsReply,
    "verification": VerificationReply,
    "generation_original": GenerationReply,
    "generation_revised": GenerationReply,
    "novelty_standalone": StandaloneNoveltyReply,
    "novelty_comparative": ComparativeNoveltyReply,
    "narrowness_standalone": StandaloneNarrownessReply,
    "narrowness_comparative": ComparativeNarrownessReply,
    "overlap": OverlapReply,
}


def corrections_of(reply: BaseModel) -> list[str]:
    """Every rule repair in a reply, including those of nested scores."""
    out: list[str] = list(getattr(reply, "rule_corrections", []) or [])
    for s in getattr(reply, "scores", []) or []:
        out.extend(getattr(s, "rule_corrections", []) or [])
    return out


@functools.lru_cache(maxsize=64)
def _reply_json_schema(model: type[BaseModel]) -> str:
    return json.dumps(_strip_bookkeeping(model.model_json_schema()))


def reply_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema handed to the LLM: the reply without our bookkeeping fields."""
    return json.loads(_reply_json_schema(model))


def _strip_bookkeeping(schema: dict[str, Any]) -> dict[str, Any]:
    def strip(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                props.pop("rule_corrections", None)
                if "required" in node:
                    node["required"] = [r for r in node["required"] if r != "rule_corrections"]
            for v in node.values():
                strip(v)
        elif isinstance(node, list):
            for v in node:
                strip(v)

    strip(schema)
    return schema


# --------------------------------------------------------------------------
# Judging results: one self-describing file per (submission, judge, setting)
# --------------------------------------------------------------------------


class JudgeSpec(Record):
    """Which judge produced a result, configured how."""

    model: str = Field(description="litellm model name, e.g. gemini/gemini-3.1-pro or local/smollm2-135m.")
    label: str = Field(description="Display name; distinguishes two configurations of one model.")
    setting: Literal["standalone", "comparative"]
    temperature: float = 0.0
    reasoning_effort: str | None = None
    seed: int = 0
    orderings: int = Field(default=1, ge=1, description="Shuffled orderings per comparative call.")
    prompt_set: PromptSetRef


class RawReply(Record):
    """A judge's reply text as received, kept so scores can be reparsed without a call."""

    step: str
    cache_key: str
    text: str | None
    error: str | None = None
    candidate_order: list[str] = Field(
        default_factory=list, description="Candidate ids in the order shown (gt, m0..m4)."
    )
    paper_id: str | None = None


class CandidateScores(Record):
    """A candidate's scores under one judge; None means unscored (with the reason in failures)."""

    candidate_id: str = Field(description="'gt' or 'm0'..'m4'.")
    text: str
    novelty: NoveltyScore | None = None
    novelty_by_ordering: list[NoveltyScore] = Field(default_factory=list)
    rank_by_ordering: list[int] = Field(default_factory=list)
    narrowness: dict[str, NarrownessScore] = Field(
        default_factory=dict, description="Per background paper id."
    )


class InstanceResult(Record):
    rq_id: str
    arxiv_id: str
    subfield: str
    background_paper_ids: list[str]
    candidates: list[CandidateScores] = Field(description="GT first, then the model's five.")
    overlap: OverlapReply | None = None
    raw_replies: list[RawReply] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    rule_corrections: int = 0


class CallTotals(Record):
    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0


class ResultsFile(Record):
    """Everything a leaderboard row or a report table is computed from."""

    schema_version: int = SCHEMA_VERSION
    kind: Literal["rqbench.results"] = "rqbench.results"
    dataset_repo: str
    dataset_revision: str
    submission_hash: str
    submission: SubmissionMetadata
    judge: JudgeSpec
    created_at: datetime
    instances_expected: int = Field(ge=0, description="Instances in the dataset revision (coverage denominator).")
    instances: list[InstanceResult]
    totals: CallTotals = Field(default_factory=CallTotals)
    settings: dict[str, Any] = Field(
        default_factory=dict, description="Run settings that shape the prompts (background truncation policy, metrics)."
    )
