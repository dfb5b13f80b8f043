"""Stage "cited_text" (method.md step 7): the influential cited works' section-wise body text.

For each influential cited work of M: find its arXiv id, find its LaTeX (a
local ``--cited-sources`` folder with one subfolder per arXiv id, or, online,
the arXiv e-print), and turn it into section text with stage 3's parser. Every
work gets the best text there is and says which (``text_level``): ``full``
body text; else an ``abstract`` (a recorded arXiv metadata response, else the
bib entry's own abstract); else the ``title`` alone. Whether abstract- or
title-level works count as background text is the build's
``--allow-abstract-only`` decision, taken in the final tables, so flipping it
does not redo this stage. A work without even a title gets no CitedPaper and a
named reason.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from rqbench.builder.cited_lookup import normalise_title

from rqbench.hashing import content_hash
from rqbench.io import RecordError, read_model
from rqbench.records import BibEntry, CitedPaper, ParsedPaper, Record, SectionText, SourcePaper, TextLevel

log = logging.getLogger(__name__)

METADATA_FILE = "metadata.json"  # a recorded arXiv metadata response (a SourcePaper), beside the sources
LEVEL_RANK = {TextLevel.full: 2, TextLevel.abstract: 1, TextLevel.title: 0}


class CitedTextSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cited_sources: str | None = None  # offline: folder with one subfolder per arXiv id
    fetch_dir: str | None = None  # online: where downloaded e-prints are unpacked (None = offline)
    min_section_chars: int = 200  # less body text than this is not "full" text


class CitedText(Record):
    """One influential cited work of M: its paper record, or why it has none; and why no full text."""

    key: str
    paper: CitedPaper | None = None
    arxiv_id_how: str | None = None
    no_full_text: str | None = None  # reason, when text_level is not full
    no_paper: str | None = None  # reason, when there is no CitedPaper at all


class CitedTextResult(Record):
    arxiv_id: str
    cited: list[CitedText]


def paper_id_for(bib: BibEntry | None, arxiv_id: str | None, citing: str, key: str) -> str:
    """The id rule of CitedPaper: the arXiv id, else ``bib:<hash>`` of the normalised title."""
    if arxiv_id:
        return arxiv_id
    if bib is not None and bib.title and normalise_title(bib.title):
        return "bib:" + content_hash(normalise_title(bib.title))[3:19]
    return "bib:" + content_hash({"citing": citing, "key": key})[3:19]


def split_abstract(sections: list[SectionText]) -> tuple[list[SectionText], str]:
    """(body sections, abstract text): the abstract is kept apart from the section-wise body."""
    body, abstract = [], ""
    for s in sections:
        text = s.text.strip()
        if not text:
            continue
        if s.section.strip().lower() in ("abstract", "summary") and not abstract:
            abstract = text
            continue
        body.append(SectionText(section=s.section or "(untitled)", text=text))
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


def _local_folder(settings: CitedTextSettings, bib: BibEntry) -> tuple[str | None, Path | None, str | None]:
    """(arXiv id, source folder, how the id was found) from the bib entry and the local sources."""
    from rqbench.builder.cited_lookup import find_local_source, resolve_arxiv_id

    root = Path(settings.cited_sources) if settings.cited_sources else None
    arxiv_id, how = resolve_arxiv_id(bib, None, {})
    folder = None
    if root is not None and root.is_dir():
        found = find_local_source(root, bib, arxiv_id)
        if found is not None:
            folder, found_id, found_how = found
            if arxiv_id is None:
                arxiv_id, how = found_id, found_how
    return arxiv_id, folder, how


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


def text_for(work_key: str, bib: BibEntry | None, citing: str, settings: CitedTextSettings) -> CitedText:
    """The best text there is for one cited work, and the reasons for what is missing."""
    from rqbench.builder.paper_skip import PaperSkipped
    from rqbench.builder.parse import parse_sections

    if bib is None:
        return CitedText(key=work_key, no_paper="no_bib_entry", no_full_text="no_bib_entry")
    arxiv_id, folder, how = _local_folder(settings, bib)
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
        reason = "no_arxiv_id" if arxiv_id is None else "no_source"
    meta = _read_metadata(folder.parent if folder is not None and folder.name == "src" else folder)
    if not abstract and meta is not None:
        abstract = meta.abstract.strip()
    if not abstract and bib.abstract:
        abstract = bib.abstract.strip()
    title = (bib.title or (meta.title if meta else "") or "").strip()
    if not title:
        return CitedText(key=work_key, arxiv_id_how=how, no_paper="no_title", no_full_text=reason or "no_title")
    level = TextLevel.full if sections else TextLevel.abstract if abstract else TextLevel.title
    paper = CitedPaper(paper_id=paper_id_for(bib, arxiv_id, citing, work_key), title=title, arxiv_id=arxiv_id,
                       abstract=abstract, text_level=level, sections=sections)  # fmt: skip
    return CitedText(key=work_key, paper=paper, arxiv_id_how=how, no_full_text=None if sections else reason)


def cited_text(item: dict[str, Any], *, settings: CitedTextSettings) -> list[CitedTextResult]:
    """Text of every influential cited work of one paper (a cpu stage: runs in worker processes)."""
    parsed: ParsedPaper = item["parse"]
    influential = item["influence"].influential_keys
    works = {w.key: w for w in parsed.cited_works}
    bibs = {b.key: b for b in parsed.bibliography}
    out = []
    for key in influential:
        bib = works[key].bib if key in works and works[key].bib is not None else bibs.get(key)
        out.append(text_for(key, bib, parsed.arxiv_id, settings))
    return [CitedTextResult(arxiv_id=parsed.arxiv_id, cited=out)]
