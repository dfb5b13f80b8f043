"""Papers as the builder reads them: target papers, their parsed structure and bibliography, cited papers."""

from __future__ import annotations

import enum
from datetime import date, datetime, timezone
from typing import Literal

from pydantic import Field, model_validator

from rqbench import wellformed
from rqbench.records.common import Record, paper_id_from_arxiv_id

# How a paper's first-version date is known: arXiv's ``<published>`` (the API, online or a recorded reply), or the
# ``published`` field of a local paper folder's metadata.json (LaTeX with no arXiv record). No basis: no date.
DateBasis = Literal["arxiv_api", "metadata_file"]


# The sub-field recorded for a paper whose arXiv category is not known (a local folder with no arXiv metadata):
# what the builder writes to ``primary_category``, and so to every row's ``subfield``
UNKNOWN_CATEGORY = "unknown"


class SourcePaper(Record):
    """A target paper M: arXiv metadata, plus Semantic Scholar's facts once filtered."""

    paper_id: str = Field(
        description="M's id in the dataset: its arXiv id, or, for a paper from a local folder that "
        "is not named by one, a slug of the folder's name."
    )
    arxiv_id: str | None = Field(
        default=None,
        description="arXiv identifier without version, e.g. 2502.01113; "
        "null for a local paper that is not known to be on arXiv.",
    )
    version: int | None = Field(default=None, description="arXiv version number.")
    title: str
    abstract: str = ""
    authors: list[str] = Field(default_factory=list)
    primary_category: str = Field(description="arXiv primary category, the sub-field (cs.CL, ...).")
    categories: list[str] = Field(default_factory=list, description="Primary and cross-list categories.")
    published: datetime | None = None
    updated: datetime | None = None
    published_source: DateBasis | None = None
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

    _paper_id = model_validator(mode="before")(paper_id_from_arxiv_id)

    def first_version(self) -> tuple[date | None, DateBasis | None]:
        """The first-version day (UTC) and how it is known; (None, None) when it is not.

        Before ``published_source`` was recorded, a local folder's date could only come from its
        metadata.json (the build looked nothing up on arXiv for folders), and an arXiv paper's from the API.
        """
        if self.published is None:
            return None, None
        day = (self.published.astimezone(timezone.utc) if self.published.tzinfo else self.published).date()
        return day, self.published_source or ("arxiv_api" if self.source == "arxiv" else "metadata_file")


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


ContributionSource = Literal["extracted", "abstract"]


class CitedPaper(Record):
    """A background paper with its section-wise body text."""

    paper_id: str = Field(description="arXiv id when known, else 's2:<paperId>' or 'bib:<hash>'.")
    title: str
    arxiv_id: str | None = None
    abstract: str = ""
    text_level: TextLevel
    no_full_text: str | None = Field(
        default=None,
        description="Why the paper has no body text, by name (no_local_source: not among the local sources by arXiv "
        "id, title or version; no_arxiv_id: nothing to fetch it by; parse_skipped:<why>, fetch_failed:<why>, "
        "too_little_body_text); null when text_level is full.",
    )
    sections: list[SectionText] = Field(default_factory=list)
    contributions: list[str] = Field(
        default_factory=list,
        description="What the paper contributes, in short statements: extracted by an LLM from its body text, "
        "or its abstract as one statement when that could not be done (see contributions_source).",
    )
    contributions_source: ContributionSource | None = Field(
        default=None,
        description="Where contributions come from: 'extracted' (an LLM read the body text), 'abstract' (the "
        "abstract, because the body text was too short or the extraction failed), or null (neither exists).",
    )

    def wellformed_failures(self) -> list[tuple[str, wellformed.Failure]]:
        """The gate's failures of the LLM-extracted contributions as (field, failure); the abstract is the paper's own."""
        if self.contributions_source != "extracted":
            return []
        return [
            (f"contributions[{i}]", f)
            for i, t in enumerate(self.contributions)
            for f in wellformed.check(t, wellformed.Kind.contribution)
        ]
