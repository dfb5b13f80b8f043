"""Every record RQ-Bench reads or writes, as pydantic models, one module per concept.

The builder, the judges, the dataset card and the Space all meet at these
shapes; ``from rqbench.records import X`` reaches each of them. Class names are
part of the output: they are the titles and ``$defs`` of the JSON schemas sent
to models, and so of the cache keys.

- ``common``: the ``Record`` and ``Reply`` bases, the schema version, text limits, RQ ids, the reply schema,
  the well-formedness gate as a field validator
- ``papers``: target papers, their parsed structure and bibliography, cited papers
- ``extraction``: the builder's LLM replies
- ``build``: a build's manifest, skipped items and the texts the gate refused
- ``dataset``: the dataset's rows (RQs, papers, evaluation instances)
- ``submission``: generated RQs and submission lines
- ``judging``: the judges' replies, what makes one invalid, and the paper's rules applied to them
- ``results``: results files
"""

from rqbench.records.build import BuildManifest, GateDrop, MalformedCount, SkipRecord, StageRun
from rqbench.records.common import (
    ARXIV_ID_RE,
    MAX_LONG_TEXT,
    MAX_RQ_CHARS,
    MAX_SHORT_TEXT,
    RQ_ID_RE,
    SCHEMA_VERSION,
    WELLFORMED_PER_ITEM,
    PromptSetRef,
    Record,
    Reply,
    gate_fields,
    gate_type,
    parse_rq_id,
    reply_json_schema,
    rq_id_for,
)
from rqbench.records.dataset import EvaluationInstance, Gap, PaperRecord, RQRecord, Verification
from rqbench.records.extraction import (
    AuthorRQ,
    AuthorRQsReply,
    CitedContributionsReply,
    ContributionsReply,
    GapReply,
    InfluenceLabel,
    InfluenceReply,
    NoveltyType,
    VerificationReply,
)
from rqbench.records.judging import (
    DIAGNOSTIC_SCOPES,
    NARROWNESS_DIMENSIONS,
    NOVELTY_DIMENSIONS,
    SOURCE_BOUND_SCOPES,
    ComparativeNarrownessReply,
    ComparativeNoveltyReply,
    NarrownessScore,
    NoveltyScore,
    OverlapReply,
    Rule,
    StandaloneNarrownessReply,
    StandaloneNoveltyReply,
    corrections_of,
    ranking_from_scores,
    rule_counts,
    rule_of,
)
from rqbench.records.papers import (
    BibEntry,
    CitationContext,
    CitedPaper,
    CitedWork,
    ContributionSource,
    ParsedPaper,
    Section,
    SectionText,
    SourcePaper,
    TextLevel,
)
from rqbench.records.results import (
    CallTotals,
    CandidateScores,
    Departure,
    InstanceResult,
    JudgeSpec,
    PaperCut,
    ProtocolRecord,
    RawReply,
    ResultsFile,
)
from rqbench.records.submission import (
    GenerationReply,
    Question,
    SubmissionEntry,
    SubmissionMetadata,
    check_distinct,
)

__all__ = [
    "ARXIV_ID_RE",
    "DIAGNOSTIC_SCOPES",
    "MAX_LONG_TEXT",
    "MAX_RQ_CHARS",
    "MAX_SHORT_TEXT",
    "NARROWNESS_DIMENSIONS",
    "NOVELTY_DIMENSIONS",
    "RQ_ID_RE",
    "SCHEMA_VERSION",
    "SOURCE_BOUND_SCOPES",
    "WELLFORMED_PER_ITEM",
    "AuthorRQ",
    "AuthorRQsReply",
    "CitedContributionsReply",
    "BibEntry",
    "BuildManifest",
    "CallTotals",
    "CandidateScores",
    "CitationContext",
    "CitedPaper",
    "ContributionSource",
    "CitedWork",
    "ComparativeNarrownessReply",
    "ComparativeNoveltyReply",
    "ContributionsReply",
    "Departure",
    "EvaluationInstance",
    "GateDrop",
    "Gap",
    "GapReply",
    "GenerationReply",
    "InfluenceLabel",
    "InfluenceReply",
    "InstanceResult",
    "JudgeSpec",
    "MalformedCount",
    "NarrownessScore",
    "NoveltyScore",
    "NoveltyType",
    "OverlapReply",
    "PaperCut",
    "PaperRecord",
    "ParsedPaper",
    "PromptSetRef",
    "ProtocolRecord",
    "Question",
    "RQRecord",
    "Rule",
    "RawReply",
    "Record",
    "Reply",
    "ResultsFile",
    "Section",
    "SectionText",
    "SkipRecord",
    "SourcePaper",
    "StageRun",
    "StandaloneNarrownessReply",
    "StandaloneNoveltyReply",
    "SubmissionEntry",
    "SubmissionMetadata",
    "TextLevel",
    "Verification",
    "VerificationReply",
    "check_distinct",
    "corrections_of",
    "rule_counts",
    "rule_of",
    "gate_fields",
    "gate_type",
    "parse_rq_id",
    "ranking_from_scores",
    "reply_json_schema",
    "rq_id_for",
]
