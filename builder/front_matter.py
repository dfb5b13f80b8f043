"""What a LaTeX source says about itself: title, authors, year, venue, abstract, references, as text.

A local paper (a ``--papers`` folder, or a cited paper's source in a local
mirror) has no arXiv metadata, so its title and abstract come from the source,
read with the parser's own machinery: the merged source with its user macros
expanded (``\\newcommand{\\hypertools}{...}`` in ``\\title`` becomes the word),
rendered by the parser's text converter (discretionary hyphens, accents and
markup resolved; citations as ``[@key]``, as in section text). The facts that
tell one paper from another (who wrote it, when, where it appeared, what it
cites) feed the version matcher of ``cited_lookup``.

Where a paper sets its title by hand instead of ``\\title`` (a ``flushleft``
block at the top of the body), the first paragraph of its front matter is the
title when it is title-shaped; a source that gives no title has none: a folder
name never stands in.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field

from rqbench.builder.latex_macros import expand_macros, match_brace, match_bracket
from rqbench.builder.latex_source import _BEGIN_DOC_RE, LatexSource
from rqbench.builder.latex_text import FRONT_MATTER, Document, convert_body, latex_to_plain, section_text
from rqbench.records import BibEntry, Record

MIN_TITLE_CHARS = 8
MAX_TITLE_CHARS = 300
_YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")
# Commands whose argument dates the paper; \jmlrheading{volume}{year}{pages}... gives it second.
_DATE_COMMANDS = (("date", 0), ("copyrightyear", 0), ("acmYear", 0), ("year", 0), ("jmlrheading", 1))
# A class or style named after a venue (jmlr2e, neurips_2024, iclr2025_conference, acl, icml2024) names it;
# the names are only ever compared for agreement with a citation's venue, so a style that names none costs nothing.
_STYLE = re.compile(r"\\(?:documentclass|usepackage)\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}")


class FrontMatter(Record):
    """A source's own account of itself, every text rendered (no LaTeX commands left)."""

    title: str | None = None
    title_from: str | None = Field(default=None, description="'\\title', or 'front matter' for a hand-set title.")
    abstract: str | None = None
    author_text: str = Field(default="", description="The author block as text (names, affiliations).")
    author_surnames: list[str] = Field(default_factory=list, description="Surnames read from the author block.")
    year: int | None = Field(default=None, description="A year the source dates itself with (\\date, a heading).")
    latest_reference_year: int | None = Field(default=None, description="The newest year among its references.")
    venue_styles: list[str] = Field(default_factory=list, description="Class and style names that name a venue.")
    reference_titles: list[str] = Field(default_factory=list, description="Its bibliography's titles, as given.")
    body_chars: int = Field(default=0, description="Characters of LaTeX in the body: which version is the fullest.")


def _command_args(text: str, name: str) -> list[str]:
    """The first brace argument of every ``\\name`` (optional ``[...]`` skipped), in order."""
    out = []
    for m in re.finditer(r"\\" + re.escape(name) + r"(?![a-zA-Z@])\s*\*?", text):
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if text.startswith("[", pos):
            end = match_bracket(text, pos)
            if end < 0:
                continue
            pos = end
            while pos < len(text) and text[pos].isspace():
                pos += 1
        if text.startswith("{", pos):
            end = match_brace(text, pos)
            if end > 0:
                out.append(text[pos + 1 : end - 1])
    return out


def _nth_arg(text: str, name: str, n: int) -> str | None:
    """The ``n``-th (0-based) brace argument of the first ``\\name``."""
    m = re.search(r"\\" + re.escape(name) + r"(?![a-zA-Z@])\s*", text)
    if m is None:
        return None
    pos = m.end()
    for i in range(n + 1):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if not text.startswith("{", pos):
            return None
        end = match_brace(text, pos)
        if end < 0:
            return None
        if i == n:
            return text[pos + 1 : end - 1]
        pos = end
    return None


def render(source: LatexSource, fragment: str) -> str:
    """A LaTeX fragment of this source as plain text: its macros expanded, then rendered like body text."""
    expanded, _ = expand_macros(fragment, source.macros, budget=20 * len(fragment) + 10_000)
    text = re.sub(r"\\(?:AND|And|and)(?![a-zA-Z])", ", ", expanded)  # author separators of several classes
    text = re.sub(r"\\(?:email|name|affiliation|address|thanks|textsuperscript|footnote)(?![a-zA-Z])", " ", text)
    # inline math in a title or a name is a symbol, not a formula: $\beta$-DPO reads "β-DPO", not "[MATH]-DPO"
    return " ".join(latex_to_plain(text, math="symbols").split())


_AFFILIATION = re.compile(
    r"(?<![A-Za-z])(?:Department|Dept|University|Universit|College|Institute|School|Laborator|Labs?|Center|Centre|Inc|Ltd|"
    r"Corporation|Hospital|Faculty|Group|Research|Google|Microsoft|Meta|Address|Corresponding|Denotes|Equal)",
    re.I,
)
_NAME_WORD = re.compile(r"^[A-Z][a-z'\u00c0-\u024f-]+$")


def author_surnames(block: str) -> list[str]:
    """Surnames in an author block: the block up to its first affiliation word, cut at commas and "and",
    the last capitalised word of each piece (initials, numbers, marks and e-mail addresses skipped)."""
    m = _AFFILIATION.search(block)
    names = block[: m.start()] if m else block
    out = []
    for piece in re.split(r",|;|\band\b|&", names):
        words = [re.sub(r"^[^A-Za-z\u00c0-\u024f]+|[^A-Za-z\u00c0-\u024f]+$", "", w) for w in piece.split()]
        named = [w for w in words if _NAME_WORD.match(w)]
        if named and named[-1] not in out:
            out.append(named[-1])
    return out


def _title_shaped(text: str) -> bool:
    return (
        MIN_TITLE_CHARS <= len(text) <= MAX_TITLE_CHARS
        and "[MATH]" not in text
        and bool(re.search(r"[A-Za-z]{3}", text))
    )


def _dated(source: LatexSource, head: str) -> int | None:
    for name, position in _DATE_COMMANDS:
        arg = _nth_arg(head, name, position) if position else next(iter(_command_args(head, name)), None)
        if arg:
            m = _YEAR.search(render(source, arg))
            if m:
                return int(m.group(1))
    return None


def _preamble(text: str) -> str:
    m = _BEGIN_DOC_RE.search(text)
    return text[: m.start()] if m else text


def venue_styles(text: str) -> list[str]:
    """Class and package names that can name a venue, as lower-case letters (``jmlr2e`` -> ``jmlr``)."""
    names = []
    for m in _STYLE.finditer(text):
        for raw in m.group(1).split(","):
            m2 = re.match(r"[a-z]+", raw.strip().split("/")[-1].lower())
            base = m2.group(0) if m2 else ""
            if len(base) >= 3 and base not in names:
                names.append(base)
    return names


_SECTIONING = re.compile(r"\\(?:part|chapter|section)\s*\*?\s*[\[{]")
_CITE = re.compile(r"\\([a-zA-Z]+)\*?\s*(?:\[[^\]]*\]\s*){0,2}\{([^{}]*)\}")


def head_of(text: str) -> str:
    """The source up to its first sectioning command: preamble, title block, abstract (``\\end{document}`` added)."""
    m = _BEGIN_DOC_RE.search(text)
    if m is None:
        return text
    first = _SECTIONING.search(text, m.end())
    abstract_end = text.find("\\end{abstract}", m.end())
    cut = first.start() if first is not None else len(text)
    if abstract_end > cut:  # an abstract after the first heading still belongs to the front matter
        cut = abstract_end + len("\\end{abstract}")
    return text[:cut] + "\n\\end{document}\n"


def cited_keys(source: LatexSource) -> list[str]:
    """Every key the body cites, in order of first citation (the parser's cite commands, read without the text)."""
    from rqbench.builder.cite_syntax import is_cite_command, split_keys

    m = _BEGIN_DOC_RE.search(source.text)
    body = source.text[m.end() :] if m else source.text
    keys: list[str] = []
    for c in _CITE.finditer(body):
        if is_cite_command(c.group(1), source.cite_commands):
            keys += split_keys(c.group(2))[0]
    return list(dict.fromkeys(keys))


def cited_entries(folder: Path, source: LatexSource | None = None) -> list[BibEntry]:
    """The bibliography entries a paper cites (of a shared lab .bib, only those), in order of first citation."""
    from rqbench.builder.latex_source import load_source
    from rqbench.builder.parse import read_bibliography

    source = source or load_source(Path(folder))
    inline = []  # an inline thebibliography's body, after its widest-label argument
    for m in re.finditer(r"\\begin\s*\{thebibliography\}\s*", source.text):
        start = match_brace(source.text, m.end()) if source.text.startswith("{", m.end()) else m.end()
        end = source.text.find("\\end{thebibliography}", max(start, m.end()))
        if start > 0 and end > 0:
            inline.append(source.text[start:end])
    keys = cited_keys(source)
    entries, _, _ = read_bibliography(source, Document(sections=[], cites=[], bibliography_env=inline), set(keys))
    by_key = {e.key: e for e in entries}
    return [by_key[k] for k in keys if k in by_key]


def read_front_matter(folder: Path, *, main_file: str | None = None, references: bool = True) -> FrontMatter:
    """The front matter of the paper in ``folder``; PaperSkipped when the parser cannot read it at all.

    Only the head of the source (up to the first section) is converted to text: a
    paper's front matter is there, and the body's sentence splitting is the slow part.
    """
    from rqbench.builder.latex_source import load_source

    source = load_source(Path(folder), main_file)
    doc = convert_body(head_of(source.text), source.cite_commands)
    cut = source.text.find("\\maketitle")
    head = source.text if cut < 0 else source.text[:cut]  # the last \title before \maketitle is the one printed
    titles = [t for t in (render(source, a) for a in _command_args(head, "title")) if t]
    subtitles = [t for t in (render(source, a) for a in _command_args(head, "subtitle")) if t]
    title, title_from = (titles[-1], "\\title") if titles else (None, None)
    if title and subtitles:
        title = f"{title} {subtitles[-1]}" if title.endswith((":", "?", ".")) else f"{title}: {subtitles[-1]}"
    sections = {b.name: b for b in doc.sections}
    front = section_text(sections[FRONT_MATTER], doc.cites) if FRONT_MATTER in sections else ""
    front_paragraphs = [p.strip() for p in front.split("\n\n") if p.strip()]
    if title is None and front_paragraphs and _title_shaped(front_paragraphs[0]):
        title, title_from = front_paragraphs[0], "front matter"
        front_paragraphs = front_paragraphs[1:]
    authors = " ".join(render(source, a) for a in _command_args(head, "author"))
    if not authors and title_from == "front matter":
        authors = " ".join(front_paragraphs[:3])
    abstract_block = next((b for b in doc.sections if b.name.lower() in ("abstract", "summary") and b.level == 0), None)
    abstract = section_text(abstract_block, doc.cites).strip() if abstract_block is not None else ""
    if not abstract:
        abstract = " ".join(render(source, a) for a in _command_args(head, "abstract"))
    begin = _BEGIN_DOC_RE.search(source.text)
    refs: list[BibEntry] = cited_entries(Path(folder), source) if references else []
    years = [e.year for e in refs if e.year]
    return FrontMatter(
        title=title or None,
        title_from=title_from,
        abstract=" ".join(abstract.split()) or None,
        author_text=authors,
        author_surnames=author_surnames(authors),
        year=_dated(source, head),
        latest_reference_year=max(years) if years else None,
        venue_styles=venue_styles(_preamble(source.text)),
        reference_titles=[e.title for e in refs if e.title],
        body_chars=len(source.text) - (begin.end() if begin else 0),
    )
