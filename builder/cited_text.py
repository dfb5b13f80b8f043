"""Stage "cited_text" (method.md step 7): the influential cited works' section-wise body text.

For each influential cited work of M: find its LaTeX and turn it into section
text with stage 3's parser. The LaTeX comes from a local sources folder when
the work is there (``--sources DIR``: offline, the fixture papers; online, an
optional mirror that saves downloads), found by arXiv id, by title, or as a
version of the paper under another title (``cited_lookup.LocalSources``); else,
online, from the arXiv e-print when the bibliography entry gives an arXiv id.
Both paths give the same parse and the same section records. Every work gets
the best text there is and says which (``text_level``): ``full`` body text;
else an ``abstract`` (a recorded arXiv metadata response, else the bib entry's
own abstract); else the ``title`` alone, with the reason it has no more
(``no_full_text``). Whether abstract- or title-level works count as background
text is the build's ``--allow-abstract-only`` decision, taken in the final
tables, so flipping it does not redo this stage. A work without even a title
gets no CitedPaper and a named reason.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rqbench.builder.cited_lookup import LocalMatch, find_local_source, normalise_title, resolve_arxiv_id
from rqbench.builder.latex_text import FRONT_MATTER
from rqbench.hashing import content_hash
from rqbench.io import RecordError, read_model
from rqbench.records import BibEntry, CitedPaper, ParsedPaper, Record, SectionText, SourcePaper, TextLevel

log = logging.getLogger(__name__)

METADATA_FILE = "metadata.json"  # a recorded arXiv metadata response (a SourcePaper), beside the sources
LEVEL_RANK = {TextLevel.full: 2, TextLevel.abstract: 1, TextLevel.title: 0}


class CitedTextSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cited_sources: str | None = None  # a local sources folder: one subfolder per paper (--sources)
    fetch_dir: str | None = None  # online: where downloaded e-prints are unpacked (None = offline)
    min_section_chars: int = 200  # less body text than this is not "full" text


class CitedText(Record):
    """One influential cited work of M: its paper record, or why it has none; and why no full text."""

    key: str
    paper: CitedPaper | None = None
    arxiv_id_how: str | None = None
    source: str | None = Field(default=None, description="The local source folder the work was found in, if any.")
    lookup: str | None = Field(default=None, description="How the local source matched: a version match's score.")
    no_full_text: str | None = None  # reason, when text_level is not full
    no_paper: str | None = None  # reason, when there is no CitedPaper at all


class CitedTextResult(Record):
    arxiv_id: str
    cited: list[CitedText]


def paper_id_for(bib: BibEntry | None, arxiv_id: str | None, citing: str, key: str, title: str | None = None) -> str:
    """The id rule of CitedPaper: the arXiv id, else ``bib:<hash>`` of the normalised title (the local source's
    title when the work was found there, so every version and every citation of it is one paper)."""
    if arxiv_id:
        return arxiv_id
    title = title or (bib.title if bib is not None else None)
    if title and normalise_title(title):
        return "bib:" + content_hash(normalise_title(title))[3:19]
    return "bib:" + content_hash({"citing": citing, "key": key})[3:19]


def split_abstract(sections: list[SectionText]) -> tuple[list[SectionText], str]:
    """(body sections, abstract text): the abstract is kept apart from the section-wise body, and the front
    matter (the title block before the first section) is no body text when the paper has sections."""
    body, abstract = [], ""
    for s in sections:
        text = s.text.strip()
        if not text:
            continue
        if s.section.strip().lower() in ("abstract", "summary") and not abstract:
            abstract = text
            continue
        body.append(SectionText(section=s.section or "(untitled)", text=text))
    if len(body) > 1 and body[0].section == FRONT_MATTER:
        body = body[1:]
    return body, abstract


def _read_metadata(folder: Path | None) -> SourcePaper | None:
    if folder is None:
        return None
    path = folder / METADATA_FILE
    if not path.is_file():
        return None
    try:
        return read_model(path, SourcePaper)
    except RecordError as exc:  # one bad metadata file costs that work its abstract, not the build
        log.warning("%s (ignored)", exc)
        return None


def _local(settings: CitedTextSettings, bib: BibEntry, exclude: Path | None, citations: int) -> LocalMatch | None:
    if not settings.cited_sources or not Path(settings.cited_sources).is_dir():
        return None
    return find_local_source(Path(settings.cited_sources), bib, exclude=exclude, citations=citations)


def has_source(
    bib: BibEntry | None, settings: CitedTextSettings, *, exclude: Path | None = None, citations: int = 1
) -> bool:
    """Whether the build can read this work's text: it is in the local sources, or it will be fetched by id."""
    if bib is None:
        return False
    if _local(settings, bib, exclude, citations) is not None:
        return True
    return bool(settings.fetch_dir) and resolve_arxiv_id(bib, None, {})[0] is not None


def _fetch(settings: CitedTextSettings, arxiv_id: str) -> Path | None:
    """Online: the cited paper's e-print, downloaded once and unpacked under ``fetch_dir``."""
    from rqbench.builder.archive import unpack_eprint
    from rqbench.builder.arxiv_api import ArxivClient

    root = Path(settings.fetch_dir) / arxiv_id.replace("/", "_")
    src = root / "src"
    if src.is_dir() and any(src.iterdir()):
        return src
    root.mkdir(parents=True, exist_ok=True)
    with ArxivClient() as client:
        if not (root / METADATA_FILE).exists():
            feed = client.query_page(id_list=[arxiv_id], max_results=1)
            if feed.entries:
                (root / METADATA_FILE).write_text(feed.entries[0].model_dump_json(), encoding="utf-8")
        blob = root / "eprint"
        client.download_eprint(arxiv_id, blob)
    return unpack_eprint(blob, src)


def _no_source_reason(settings: CitedTextSettings) -> str:
    if settings.fetch_dir:
        return "no_arxiv_id"  # online: not in the mirror, and nothing to fetch it by
    if settings.cited_sources:
        return "no_local_source"  # offline: not among the local sources by id, title or version
    return "no_source"


def text_for(
    work_key: str,
    bib: BibEntry | None,
    citing: str,
    settings: CitedTextSettings,
    *,
    exclude: Path | None = None,
    citations: int = 1,
) -> CitedText:
    """The best text there is for one cited work, and the reasons for what is missing."""
    from rqbench.builder.paper_skip import PaperSkipped
    from rqbench.builder.parse import parse_sections

    if bib is None:
        return CitedText(key=work_key, no_paper="no_bib_entry", no_full_text="no_bib_entry")
    arxiv_id, how = resolve_arxiv_id(bib, None, {})
    local = _local(settings, bib, exclude, citations)
    folder = local.folder if local is not None else None
    if local is not None:
        arxiv_id, how = local.arxiv_id or arxiv_id, local.how
    reason: str | None = None
    sections: list[SectionText] = []
    abstract = ""
    if folder is None and arxiv_id and settings.fetch_dir:
        try:
            folder = _fetch(settings, arxiv_id)
        except PaperSkipped as skip:
            reason = f"fetch_skipped:{skip.reason}"
        except Exception as exc:  # a network or archive failure costs this work its text, not the build
            reason = f"fetch_failed:{type(exc).__name__}"
    if folder is not None:
        try:
            sections, abstract = split_abstract(parse_sections(folder))
            if sum(len(s.text) for s in sections) < settings.min_section_chars:
                reason, sections = "too_little_body_text", []
        except PaperSkipped as skip:
            reason = f"parse_skipped:{skip.reason}"
    elif reason is None:
        reason = _no_source_reason(settings)
    meta = _read_metadata(folder.parent if folder is not None and folder.name == "src" else folder)
    if not abstract and meta is not None:
        abstract = meta.abstract.strip()
    if not abstract and bib.abstract:
        abstract = bib.abstract.strip()
    title = ((local.title if local is not None else None) or bib.title or (meta.title if meta else "") or "").strip()
    if not title:
        return CitedText(key=work_key, arxiv_id_how=how, no_paper="no_title", no_full_text=reason or "no_title")
    level = TextLevel.full if sections else TextLevel.abstract if abstract else TextLevel.title
    paper = CitedPaper(
        paper_id=paper_id_for(bib, arxiv_id, citing, work_key, local.title if local else None),
        title=title,
        arxiv_id=arxiv_id,
        abstract=abstract,
        text_level=level,
        no_full_text=None if sections else reason,
        sections=sections,
    )
    return CitedText(
        key=work_key,
        paper=paper,
        arxiv_id_how=how,
        source=local.matched if local else None,
        lookup=local.detail or None if local else None,
        no_full_text=None if sections else reason,
    )


def citing_works(parsed: ParsedPaper) -> int:
    """How many of M's citations could be looked up: the count a version match's threshold is set for."""
    return sum(1 for w in parsed.cited_works if w.bib is not None)


def cited_text(item: dict[str, Any], *, settings: CitedTextSettings) -> list[CitedTextResult]:
    """Text of every influential cited work of one paper (a cpu stage: runs in worker processes)."""
    parsed: ParsedPaper = item["parse"]
    folder = item["filter"].folder if "filter" in item else None
    influential = item["influence"].influential_keys
    works = {w.key: w for w in parsed.cited_works}
    bibs = {b.key: b for b in parsed.bibliography}
    out = []
    for key in influential:
        bib = works[key].bib if key in works and works[key].bib is not None else bibs.get(key)
        out.append(
            text_for(
                key,
                bib,
                parsed.arxiv_id,
                settings,
                exclude=Path(folder) if folder else None,
                citations=citing_works(parsed),
            )
        )
    return [CitedTextResult(arxiv_id=parsed.arxiv_id, cited=out)]
