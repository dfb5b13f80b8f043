"""Stage 3's entry point: a paper folder in, a ParsedPaper out (or a named skip).

    parse_paper(folder, arxiv_id) -> ParsedPaper      # sections, bibliography, cited works
    parse_sections(folder) -> list[SectionText]       # body text only, for cited papers

Which bibliography is used: the ``.bib`` files the source declares
(``\\bibliography``, ``\\addbibresource``), resolved beside the main file;
keys they lack are filled from the compiled ``.bbl`` when one is there; with no
declared ``.bib`` present the ``.bbl`` (or an inline ``thebibliography``) is
the bibliography. Decisions that are warnings, not skips: a missing
``\\input`` file, a missing ``.bib`` when another source covers it, a cited key
absent from every bibliography.

Functions are pure apart from reading the folder, so they run in worker
processes.
"""

from __future__ import annotations

from pathlib import Path

from rqbench.builder.bibliography import BibliographyError, parse_bbl_text, read_bbl, read_bib
from rqbench.builder.citations import citation_contexts, cited_works
from rqbench.builder.latex_source import LatexSource, _inside, load_source
from rqbench.builder.latex_text import Document, convert_body, to_section_texts, to_sections
from rqbench.builder.paper_skip import PaperSkipped
from rqbench.records import BibEntry, ParsedPaper, SectionText

__all__ = [
    "PaperSkipped",
    "parse_paper",
    "parse_sections",
    "paper_full_text",
    "paper_section_texts",
    "read_bibliography",
]


def _find_file(source: LatexSource, name: str) -> Path | None:
    main_dir = (source.folder / source.main_file).parent
    for base in (main_dir, source.folder):
        cand = base / name
        if cand.is_file() and _inside(cand, source.folder):
            return cand
    return None


def _bbl_candidates(source: LatexSource) -> list[Path]:
    main = source.folder / source.main_file
    named = main.with_suffix(".bbl")
    if named.is_file():
        return [named]
    siblings = sorted(main.parent.glob("*.bbl"))
    return siblings[:1] if len(siblings) == 1 else []


def read_bibliography(
    source: LatexSource, doc: Document, keys: set[str] | None = None
) -> tuple[list[BibEntry], list[str], list[str]]:
    """(entries, warnings, files read) from the declared .bib files, the .bbl, and inline thebibliography;
    of the .bib files only the entries ``keys`` names, when given."""
    warnings: list[str] = []
    files: list[str] = []
    entries: dict[str, BibEntry] = {}

    def add(found: list[BibEntry]) -> None:
        for e in found:
            entries.setdefault(e.key, e)

    declared = source.bib_resources
    missing: list[str] = []
    for name in declared:
        path = _find_file(source, name)
        if path is None:
            missing.append(name)
            continue
        try:
            found, w = read_bib(path, keys)
        except BibliographyError as exc:
            warnings.append(f"bib_unreadable: {exc}")
            continue
        warnings += w
        files.append(str(path.relative_to(source.folder)))
        add(found)
    for body in doc.bibliography_env:
        add(parse_bbl_text("\\begin{thebibliography}{}" + body + "\\end{thebibliography}"))
    for bbl in _bbl_candidates(source):
        before = len(entries)
        try:
            add(read_bbl(bbl))
        except BibliographyError as exc:
            warnings.append(f"bbl_unreadable: {exc}")
            continue
        if len(entries) > before:
            files.append(str(bbl.relative_to(source.folder)))
    if not declared and not entries:
        # nothing declared and nothing compiled: the folder's .bib files are all we have
        for path in sorted(source.folder.rglob("*.bib"))[:5]:
            try:
                found, w = read_bib(path)
            except BibliographyError as exc:
                warnings.append(f"bib_unreadable: {exc}")
                continue
            if found:
                warnings.append(f"bib_undeclared: {path.name} used although the source declares no bibliography")
                files.append(str(path.relative_to(source.folder)))
                add(found)
                warnings += w
    for name in missing:
        warnings.append(f"missing_bib: {name} is declared but not in the paper folder")
    return list(entries.values()), warnings, files


def _convert(folder: Path, main_file: str | None) -> tuple[LatexSource, Document]:
    source = load_source(folder, main_file)
    doc = convert_body(source.text, source.cite_commands)
    if not doc.sections:
        raise PaperSkipped(
            "empty_document", f"{source.main_file} has no text between \\begin{{document}} and \\end{{document}}"
        )
    return source, doc


def parse_paper(folder: Path, arxiv_id: str, *, main_file: str | None = None) -> ParsedPaper:
    """Parse one paper folder. PaperSkipped(reason, detail) when it cannot be used.

    Reasons: no_tex_file, no_main_file, binary_main_file, unbalanced_braces,
    source_too_large, empty_document, no_citations, empty_bibliography.
    """
    folder = Path(folder)
    source, doc = _convert(folder, main_file)
    contexts = citation_contexts(doc)
    if not contexts:
        raise PaperSkipped("no_citations", f"{source.main_file} has no citation commands with keys")
    bibliography, bib_warnings, bib_files = read_bibliography(source, doc)
    if not bibliography:
        tried = ", ".join(source.bib_resources) or "no \\bibliography declared"
        raise PaperSkipped(
            "empty_bibliography",
            f"no bibliography entries could be read ({tried}; .bbl: "
            f"{', '.join(p.name for p in _bbl_candidates(source)) or 'none'})",
        )
    works = cited_works(contexts, bibliography)
    warnings = source.warnings + doc.warnings + bib_warnings
    unresolved = [w.key for w in works if w.bib is None]
    if unresolved:
        shown = ", ".join(unresolved[:10]) + (" ..." if len(unresolved) > 10 else "")
        warnings.append(f"unresolved_keys: {len(unresolved)} cited key(s) not in the bibliography: {shown}")
    return ParsedPaper(
        arxiv_id=arxiv_id,
        sections=to_sections(doc),
        bibliography=bibliography,
        cited_works=works,
        main_file=source.main_file,
        warnings=warnings,
    )


def parse_sections(folder: Path, *, main_file: str | None = None) -> list[SectionText]:
    """A (cited) paper's body text section by section; no bibliography needed."""
    _, doc = _convert(Path(folder), main_file)
    return to_section_texts(doc)


def paper_section_texts(parsed: ParsedPaper) -> list[SectionText]:
    """A parsed paper's non-empty sections as SectionText records."""
    return [SectionText(section=s.name, text=s.text) for s in parsed.sections if s.text.strip()]


def paper_full_text(parsed: ParsedPaper) -> str:
    """The whole paper as one text with section headings, for prompts that read M in full."""
    parts = []
    for s in parsed.sections:
        heading = "#" * max(1, s.level) + " " + s.name
        parts.append(heading + ("\n\n" + s.text if s.text.strip() else ""))
    return "\n\n".join(parts)
