"""A paper's bibliography as BibEntry records: from .bib (bibtexparser v2) or, without one, from the .bbl.

arXiv sources often ship only the compiled ``.bbl`` (or name ``.bib`` files
they do not include), so both forms are read: biber's ``\\entry ...
\\endentry`` records field by field, and BibTeX's ``\\bibitem`` lists by the
layout the common styles print (authors, ``\\newblock`` title, ``\\newblock``
venue; or IEEE's quoted titles). Every entry gets its arXiv id and DOI from
wherever the entry hides them: eprint fields, journal strings such as
"arXiv preprint arXiv:2301.00001" or "CoRR abs/...", URLs and DOIs.
"""

from __future__ import annotations

import re
from pathlib import Path

from rqbench.builder.latex_macros import match_brace, match_bracket
from rqbench.builder.latex_source import decode_tex, looks_binary, strip_comments
from rqbench.builder.latex_text import latex_to_plain
from rqbench.records import ARXIV_ID_RE, BibEntry

MAX_BIB_BYTES = 30 * 1024 * 1024


class BibliographyError(ValueError):
    """A bibliography file that cannot be read at all (binary, too large, not BibTeX)."""


# --------------------------------------------------------------------------
# Identifiers
# --------------------------------------------------------------------------

_NEW_ID = r"(\d{4}\.\d{4,5})(?:v\d+)?"
_OLD_ID = r"([a-z][a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?"
_ARXIV_IN_TEXT = [
    re.compile(r"arxiv\.org/(?:abs|pdf|html)/" + _NEW_ID, re.I),
    re.compile(r"arxiv\.org/(?:abs|pdf|html)/" + _OLD_ID),
    re.compile(r"arxiv[:\s]*(?:preprint\s*)?(?:arxiv\s*:?\s*)?" + _NEW_ID, re.I),
    re.compile(r"arxiv[:\s]+" + _OLD_ID, re.I),
    re.compile(r"abs/" + _NEW_ID),
    re.compile(r"10\.48550/arxiv\." + _NEW_ID, re.I),
]
_DOI_RE = re.compile(r"(10\.\d{4,9}/[^\s{}\"'<>,]+)")


def clean_arxiv_id(value: str | None) -> str | None:
    """A bare arXiv id (no version, no prefix) if value holds one."""
    if not value:
        return None
    v = value.strip()
    v = re.sub(r"^(?:arxiv\s*:\s*|https?://arxiv\.org/(?:abs|pdf)/)", "", v, flags=re.I)
    v = re.sub(r"v\d+$", "", v.rstrip("/").removesuffix(".pdf"))
    return v if ARXIV_ID_RE.match(v) else None


def find_arxiv_id(*texts: str | None) -> str | None:
    for text in texts:
        if not text:
            continue
        for pat in _ARXIV_IN_TEXT:
            m = pat.search(text)
            if m and ARXIV_ID_RE.match(m.group(1)):
                return m.group(1)
    return None


def clean_doi(value: str | None) -> str | None:
    if not value:
        return None
    m = _DOI_RE.search(value.replace("\\_", "_"))
    if not m:
        return None
    doi = m.group(1).rstrip(".;)")
    if doi.lower().startswith("10.48550/arxiv."):
        return doi  # arXiv's own DOI is still a DOI
    return doi


# --------------------------------------------------------------------------
# Fields to a record
# --------------------------------------------------------------------------


def split_authors(raw: str) -> list[str]:
    """BibTeX author list ('A and B and others') to display names ('First Last')."""
    names: list[str] = []
    depth = 0
    buf: list[str] = []
    parts: list[str] = []
    tokens = re.split(r"(\{|\}|\s+and\s+)", raw)
    for tok in tokens:
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth = max(0, depth - 1)
        if depth == 0 and re.fullmatch(r"\s+and\s+", tok or ""):
            parts.append("".join(buf))
            buf = []
        else:
            buf.append(tok)
    parts.append("".join(buf))
    for part in parts:
        part = part.strip()
        if not part or part.lower() == "others":
            continue
        pieces = _split_top_commas(part)
        if len(pieces) == 2:
            part = f"{pieces[1]} {pieces[0]}"
        elif len(pieces) == 3:  # von Last, Jr, First
            part = f"{pieces[2]} {pieces[0]} {pieces[1]}"
        name = re.sub(r"\s+", " ", latex_to_plain(part)).strip()
        if name:
            names.append(name)
    return names


def _split_top_commas(s: str) -> list[str]:
    out, depth, buf = [], 0, []
    for c in s:
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(0, depth - 1)
        if c == "," and depth == 0:
            out.append("".join(buf).strip())
            buf = []
        else:
            buf.append(c)
    out.append("".join(buf).strip())
    return [p for p in out if p]


def _year(*values: str | None) -> int | None:
    for v in values:
        if v:
            m = re.search(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)", v)
            if m:
                return int(m.group(1))
    return None


_VENUE_FIELDS = (
    "journal",
    "journaltitle",
    "booktitle",
    "eventtitle",
    "series",
    "howpublished",
    "school",
    "institution",
    "organization",
)


def entry_from_fields(key: str, fields: dict[str, str], origin: str = "bib") -> BibEntry:
    """Map BibTeX/biblatex fields (lower-case names) to a BibEntry."""
    f = {k.lower(): v for k, v in fields.items() if isinstance(v, str)}
    title = latex_to_plain(f.get("title", "")).strip() or None
    venue = None
    for name in _VENUE_FIELDS:
        v = f.get(name)
        if v and not re.match(r"\s*\\?(url|https?:)", v):
            venue = latex_to_plain(v).strip() or None
            if venue:
                break
    eprint_type = (f.get("archiveprefix") or f.get("eprinttype") or "").lower()
    arxiv = None
    if f.get("eprint") and (eprint_type in ("arxiv", "") or "arxiv" in f.get("eprint", "").lower()):
        arxiv = clean_arxiv_id(f.get("eprint"))
    if arxiv is None:
        arxiv = find_arxiv_id(
            f.get("journal"),
            f.get("volume"),
            f.get("url"),
            f.get("doi"),
            f.get("note"),
            f.get("howpublished"),
            f.get("booktitle"),
            f.get("pages"),
            f.get("number"),
        )
    doi = clean_doi(f.get("doi")) or (clean_doi(f.get("url")) if "doi.org" in f.get("url", "") else None)
    url = f.get("url", "").strip() or None
    abstract = latex_to_plain(f.get("abstract", "")).strip() or None
    return BibEntry(
        key=key,
        title=title,
        authors=split_authors(f.get("author", "") or f.get("editor", "")),
        year=_year(f.get("year"), f.get("date")),
        venue=venue,
        arxiv_id=arxiv,
        doi=doi,
        url=url,
        abstract=abstract,
        origin=origin,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------
# .bib
# --------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_BIB_BYTES:
            raise BibliographyError(f"{path.name}: {size} bytes, over the {MAX_BIB_BYTES} limit")
        data = path.read_bytes()
    except OSError as exc:
        raise BibliographyError(f"{path.name}: {exc}") from exc
    if looks_binary(data):
        raise BibliographyError(f"{path.name} is not a text file")
    return decode_tex(data)


def parse_bib_text(text: str, source: str = "<bib>") -> tuple[list[BibEntry], list[str]]:
    """Entries of a .bib text, crossref fields inherited; (entries, warnings).

    BibliographyError only when the library itself fails on the text.
    """
    import bibtexparser

    try:
        library = bibtexparser.parse_string(text)
    except Exception as exc:  # the parser's own errors, turned into ours with the file name
        raise BibliographyError(f"{source}: bibtexparser failed: {type(exc).__name__}: {exc}") from exc
    warnings: list[str] = []
    failed = 0
    for block in library.failed_blocks:
        if type(block).__name__ == "DuplicateBlockKeyBlock":
            warnings.append(f"duplicate_bib_key: {getattr(block, 'key', '?')} in {source}; the first is kept")
        else:
            failed += 1
    if failed:
        warnings.append(f"bib_blocks_failed: {failed} block(s) of {source} could not be parsed")
    raw: dict[str, dict[str, str]] = {}
    for entry in library.entries:
        key = entry.key.strip()
        if not key:
            continue
        if key in raw:
            warnings.append(f"duplicate_bib_key: {key} in {source}; the first is kept")
            continue
        fields = {}
        for fld in entry.fields:
            if isinstance(fld.value, str):
                fields[fld.key.lower()] = fld.value
        raw[key] = fields
    for fields in raw.values():
        parent = raw.get(fields.get("crossref", "").strip())
        if parent:
            for k, v in parent.items():
                if k not in fields:
                    fields[k] = v
            if "booktitle" not in fields and "title" in parent:
                fields["booktitle"] = parent["title"]
    entries = []
    for key, fields in raw.items():
        try:
            entries.append(entry_from_fields(key, fields, "bib"))
        except ValueError as exc:
            warnings.append(f"bib_entry_invalid: {key} in {source}: {exc}")
    return entries, warnings


_BIB_CHUNK = re.compile(r"(?m)^[ \t]*(?=@)")
_CHUNK_HEAD = re.compile(r"@\s*([a-zA-Z]+)\s*[{(]\s*([^,\s]*)")
_CROSSREF = re.compile(r"crossref\s*=\s*[{\"]\s*([^}\"\s]+)", re.IGNORECASE)


def select_entries(text: str, keys: set[str]) -> str:
    """A .bib text cut down to the entries ``keys`` name (with their crossref parents) and every @string and
    @preamble: a paper that cites 70 works of a shared 6,000-entry lab bibliography is read in a fraction of the time."""
    chunks = _BIB_CHUNK.split(text)
    heads = [_CHUNK_HEAD.match(c) for c in chunks]
    wanted = set(keys)
    for c, h in zip(chunks, heads):
        if h and h.group(2) in wanted:
            wanted.update(_CROSSREF.findall(c))
    return "".join(
        c for c, h in zip(chunks, heads) if h and (h.group(1).lower() in ("string", "preamble") or h.group(2) in wanted)
    )


def read_bib(path: Path, keys: set[str] | None = None) -> tuple[list[BibEntry], list[str]]:
    """A .bib file's entries; with ``keys``, only those (``select_entries``)."""
    text = _read_text(path)
    return parse_bib_text(select_entries(text, keys) if keys is not None else text, path.name)


# --------------------------------------------------------------------------
# .bbl: biber
# --------------------------------------------------------------------------

_ENTRY_RE = re.compile(r"\\entry\{([^{}]*)\}\{([^{}]*)\}\{[^{}]*\}(?:\{[^{}]*\})?(.*?)\\endentry", re.DOTALL)


def _braced_after(text: str, pos: int) -> tuple[str, int] | None:
    while pos < len(text) and text[pos] in " \t\n":
        pos += 1
    if pos >= len(text) or text[pos] != "{":
        return None
    end = match_brace(text, pos)
    if end < 0:
        return None
    return text[pos + 1 : end - 1], end


def _biber_names(block: str) -> list[str]:
    names = []
    for m in re.finditer(r"\{\{[^{}]*\}\{(.*?)\}\}%?\s*(?=\{\{|\s*\}|\Z)", block, re.DOTALL):
        parts = dict(re.findall(r"(family|given|prefix|suffix)=\{((?:[^{}]|\{[^{}]*\})*)\}", m.group(1)))
        name = " ".join(
            p for p in (parts.get("given"), parts.get("prefix"), parts.get("family"), parts.get("suffix")) if p
        )
        name = re.sub(r"\s+", " ", latex_to_plain(name)).strip()
        if name:
            names.append(name)
    return names


def parse_biber_bbl(text: str) -> list[BibEntry]:
    """biblatex/biber ``.bbl`` (``\\entry{key}{type}{}{}`` ... ``\\endentry``)."""
    entries: list[BibEntry] = []
    seen: set[str] = set()
    for m in _ENTRY_RE.finditer(text):
        key, body = m.group(1).strip(), m.group(3)
        if not key or key in seen:
            continue
        seen.add(key)
        fields: dict[str, str] = {}
        authors: list[str] = []
        for fm in re.finditer(r"\\(field|list|name)\{([^{}]*)\}", body):
            kind, name = fm.group(1), fm.group(2).lower()
            pos = fm.end()
            if kind == "field":
                got = _braced_after(body, pos)
                if got:
                    fields.setdefault(name, got[0])
            elif kind == "list":
                first = _braced_after(body, pos)  # count
                got = _braced_after(body, first[1]) if first else None
                if got:
                    items = re.findall(r"\{((?:[^{}]|\{[^{}]*\})*)\}%?", got[0])
                    fields.setdefault(name, ", ".join(items))
            else:  # name{author}{n}{opts}{...}
                cur = pos
                for _ in range(2):
                    got = _braced_after(body, cur)
                    if not got:
                        break
                    cur = got[1]
                got = _braced_after(body, cur)
                if got and name in ("author", "editor") and not (name == "editor" and authors):
                    authors = _biber_names(got[0])
        for vm in re.finditer(r"\\verb\{([^{}]*)\}\s*\n\s*\\verb\s?(.*?)\n\s*\\endverb", body, re.DOTALL):
            fields.setdefault(vm.group(1).lower(), vm.group(2).strip())
        fields.pop("author", None)
        entry = entry_from_fields(key, fields, "bbl")
        entries.append(entry.model_copy(update={"authors": authors}))
    return entries


# --------------------------------------------------------------------------
# .bbl: BibTeX thebibliography
# --------------------------------------------------------------------------

_EMPH_RE = re.compile(
    r"\{\\(?:em|it|itshape|sl)\s+((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}|\\(?:emph|textit|textsl)\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}"
)
_INITIALS_RE = re.compile(r"^(?:[A-Z]\.?(?:-[A-Z]\.?)?\s*)+$")


def _split_bibitem_authors(text: str) -> list[str]:
    text = latex_to_plain(text)
    text = re.sub(r"[.,]?\s*\(?\s*(?:1[5-9]|20)\d\d[a-z]?\s*\)?\s*\.?\s*$", "", text.strip()).strip().rstrip(".,")
    text = re.sub(r"\bet\s+al\.?", "", text)
    parts = [p.strip() for p in re.split(r",\s*and\s+|\s+and\s+|,|;|&", text) if p.strip()]
    names: list[str] = []
    for p in parts:
        if _INITIALS_RE.match(p) and names and " " not in names[-1]:
            p = re.sub(r"\b([A-Z])(?=\s|$)", r"\1.", p)  # the trailing period the list separator ate
            names[-1] = f"{p} {names[-1]}"  # "Anscombe, F. J." -> "F. J. Anscombe"
        else:
            names.append(p)
    return [re.sub(r"\s+", " ", n) for n in names if len(n) > 1]


def _bibinfo(body: str) -> dict[str, list[str]]:
    """``\\bibinfo{field}{value}`` pairs of a tagged .bbl entry, every value of a field in order."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"\\bibinfo\s*\{([a-zA-Z]+)\}\s*(?=\{)", body):
        got = _braced_after(body, m.end())
        if got:
            out.setdefault(m.group(1).lower(), []).append(got[0])
    return out


_EMPH_ET_AL = re.compile(r"\\(?:emph|textit)\{\s*et[~\s]*al\.?\s*\}|\{\\(?:em|it)\s+et[~\s]*al\.?\s*\}")


def _bibitem_entry(key: str, label: str | None, body: str) -> BibEntry:
    body = _EMPH_ET_AL.sub("et al.", body.strip())  # an italic "et al." is part of the authors, not a book title
    urls = " ".join(re.findall(r"\\(?:url|href|doi)\{([^{}]*)\}", body))
    blocks = [b.strip() for b in re.split(r"\\newblock", body)]
    title = venue = None
    authors: list[str] = []
    quoted = re.search(r"``(.+?)(?:,)?''", body, re.DOTALL)
    info = _bibinfo(body)
    if "title" in info or "author" in info:  # styles that tag every field (\bibinfo{title}{...}: nature, unsrtnat)
        authors = [n for a in info.get("author", []) for n in _split_bibitem_authors(a)]
        title = (info.get("title") or [None])[0]
        venue = next((info[f][0] for f in ("journal", "booktitle", "publisher") if f in info), None)
    elif quoted:  # IEEE-like: authors, ``title,'' venue
        authors = _split_bibitem_authors(body[: quoted.start()])
        title = quoted.group(1)
        rest = body[quoted.end() :]
        em = _EMPH_RE.search(rest)
        venue = (em.group(1) or em.group(2)) if em else rest.split(",")[0]
    elif len(blocks) >= 2 and _EMPH_RE.search(blocks[0]) and _EMPH_RE.search(blocks[0]).start() > 0:
        em = _EMPH_RE.search(blocks[0])  # a book: authors, {\em title}. \newblock publisher
        authors = _split_bibitem_authors(blocks[0][: em.start()])
        title = em.group(1) or em.group(2)
        venue = None
    elif len(blocks) >= 2:
        authors = _split_bibitem_authors(blocks[0])
        title = blocks[1]
        if len(blocks) >= 3:
            em = _EMPH_RE.search(blocks[2])
            venue = (em.group(1) or em.group(2)) if em else re.split(r",|\d{4}", blocks[2])[0]
    else:
        em = _EMPH_RE.search(body)
        title = (em.group(1) or em.group(2)) if em else body
    title_text = latex_to_plain(title or "").strip().rstrip(".,") or None
    venue_text = latex_to_plain(venue or "").strip().rstrip(".,") or None
    if venue_text:
        venue_text = re.sub(r"^In\s+", "", venue_text).strip() or None
    plain = latex_to_plain(body)
    years = re.findall(r"(?<![\d/])(?:1[5-9]\d\d|20\d\d)(?![\d/])", re.sub(r"\\(?:url|href|doi)\{[^{}]*\}", "", body))
    year = _year(label or "") or _year(*years[-1:])
    return BibEntry(
        key=key,
        title=title_text,
        authors=authors,
        year=year,
        venue=venue_text,
        arxiv_id=find_arxiv_id(urls, plain, body),
        doi=clean_doi(urls) or (clean_doi(plain) if re.search(r"\bdoi\b|doi\.org", body, re.I) else None),
        url=(re.findall(r"\\url\{([^{}]*)\}", body) or [None])[0],
        origin="bbl",
    )


def _apacite_entry(key: str, body: str) -> BibEntry:
    """apacite's .bbl: authors in APACrefauthors, title and venue in APAC macros."""

    def first_arg(macro: str) -> str | None:
        m = re.search(r"\\" + macro + r"\s*(?=\{)", body)
        got = _braced_after(body, m.end()) if m else None
        return got[0] if got else None

    authors_raw = re.search(r"\\begin\{APACrefauthors\}(.*?)\\end\{APACrefauthors\}", body, re.DOTALL)
    authors: list[str] = []
    if authors_raw:
        a = re.sub(r"\\BBA\s*(\{\})?", " and ", authors_raw.group(1))
        a = re.sub(r"\\BCBL\s*(\{\})?|\\BCBT\s*(\{\})?", ",", a)
        a = re.sub(r"\\BPBI\s*", ". ", a)
        authors = _split_bibitem_authors(a)
    title = first_arg("APACrefatitle") or first_arg("APACrefbtitle")
    venue = first_arg("APACjournalVolNumPages") or first_arg("APACjournalVolNumPagesWithArticle")
    if venue is None:
        m = re.search(r"\\newblock\s*In\s", body)
        if m:
            venue = first_arg("APACrefbtitle") if first_arg("APACrefatitle") else None
    year = _year(first_arg("APACrefYearMonthDay") or first_arg("APACrefYear") or "")
    urls = " ".join(re.findall(r"\\(?:url|href|doi)\s*\{([^{}]*)\}", body))
    return BibEntry(
        key=key,
        title=latex_to_plain(title or "").strip().rstrip(".") or None,
        authors=authors,
        year=year,
        venue=latex_to_plain(venue or "").strip() or None,
        arxiv_id=find_arxiv_id(urls, body),
        doi=clean_doi(urls) or clean_doi(first_arg("doi")),
        url=(re.findall(r"\\url\{([^{}]*)\}", body) or [None])[0],
        origin="bbl",
    )


def parse_bibitems(text: str) -> list[BibEntry]:
    """``\\bibitem[label]{key}`` lists (thebibliography) as entries, by the common styles' layout."""
    text = strip_comments(text)
    starts: list[tuple[int, int, str | None, str]] = []  # (item start, body start, label, key)
    for m in re.finditer(r"\\bibitem(?![a-zA-Z])", text):
        pos = m.end()
        while pos < len(text) and text[pos] in " \t\n":
            pos += 1
        label = None
        if text.startswith("[", pos):
            end = match_bracket(text, pos)
            if end < 0:
                continue
            label = text[pos + 1 : end - 1]
            pos = end
        got = _braced_after(text, pos)
        if got is None:
            continue
        starts.append((m.start(), got[1], label, got[0].strip()))
    entries: list[BibEntry] = []
    seen: set[str] = set()
    for n, (_, body_start, label, key) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        body = re.split(r"\\end\{thebibliography\}", text[body_start:end])[0]
        if not key or key in seen or re.search(r"[\s{}\\,]", key):
            continue
        seen.add(key)
        if "APACrefauthors" in body or "APACinsertmetastar" in body:
            entries.append(_apacite_entry(key, body))
        else:
            entries.append(_bibitem_entry(key, label, body))
    return entries


def parse_bbl_text(text: str) -> list[BibEntry]:
    """Either kind of .bbl, chosen by what it contains."""
    if "\\entry{" in text and "\\endentry" in text:
        return parse_biber_bbl(text)
    return parse_bibitems(text)


def read_bbl(path: Path) -> list[BibEntry]:
    return parse_bbl_text(_read_text(path))
