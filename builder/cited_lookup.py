"""Which arXiv paper a bibliography entry means, and where its LaTeX sits in a local cited-sources folder.

Evidence is tried from the most to the least direct: the entry's ``eprint``
field, its URL, its DOI (arXiv DOIs are ``10.48550/arXiv.<id>``), an
``arXiv:<id>`` in its venue text, then Semantic Scholar's external ids, and
last a title match against known candidates. A title matches when its
normalised form is equal, or when difflib's similarity ratio reaches the
threshold (0.92 by default) for titles long enough to judge (at least 16
characters normalised). Two different ids matching equally well (within 0.02)
count as no match: a wrong background paper is worse than none.

Offline builds read cited papers from ``--cited-sources DIR``: one subfolder
per arXiv id (``2301.00001``, ``2301.00001v2``, ``hep-th_9901001``, or
``<id>/src/``), matched the same way, with titles taken from each folder's
``metadata.json`` or its LaTeX ``\\title``.
"""

from __future__ import annotations

import difflib
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rqbench.builder.arxiv_api import parse_arxiv_id
from rqbench.records import BibEntry, SourcePaper

log = logging.getLogger(__name__)

TITLE_THRESHOLD = 0.92
MIN_FUZZY_CHARS = 16
AMBIGUITY_MARGIN = 0.02

# The ``how`` values, from the most to the least direct evidence.
HOW_VALUES = (
    "given",
    "bib_eprint",
    "bib_url",
    "bib_doi",
    "bib_venue",
    "s2_external_ids",
    "title_exact",
    "title_similar",
    # find_local_source only: a title match against the cited-sources folder
    "local_title_exact",
    "local_title_similar",
)

_MARKUP = re.compile(
    r"\\(?:emph|textit|textbf|textsc|texttt|textrm|textsf|text|mathrm|mathbf|mathit|mathcal|mathsf|mathtt|url|bf|it|sc|em|rm)\b\*?"
)


def normalise_title(title: str | None) -> str:
    """Lower case ASCII words: accents folded, LaTeX markup and braces gone, punctuation as spaces."""
    if not title:
        return ""
    t = _MARKUP.sub(" ", title)
    t = re.sub(r"\\([a-zA-Z]+)", r" \1 ", t)  # keep names like \beta as words
    t = re.sub(r"[{}$]", "", t)  # {A}ttention is one word
    t = unicodedata.normalize("NFKD", t).encode("ascii", "ignore").decode("ascii")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", t.lower()).split())


def _versionless(raw: str | None) -> str | None:
    got = parse_arxiv_id(raw or "")
    return got[0] if got else None


class TitleIndex:
    """Candidate titles (normalised once) for repeated matching."""

    def __init__(self, candidates: Mapping[str, str] | Iterable[tuple[str, str]]):
        self.exact: dict[str, set[str]] = {}
        self.items: list[tuple[str, str]] = []
        pairs = candidates.items() if isinstance(candidates, Mapping) else candidates
        for title, raw_id in pairs:
            arxiv_id = _versionless(raw_id)
            norm = normalise_title(title)
            if arxiv_id is None or not norm:
                continue
            self.exact.setdefault(norm, set()).add(arxiv_id)
            self.items.append((norm, arxiv_id))

    def __len__(self) -> int:
        return len(self.items)

    def match(self, title: str | None, threshold: float = TITLE_THRESHOLD) -> tuple[str, float, str] | None:
        """``(arxiv_id, score, how)`` of the one candidate the title names; None when none or several do."""
        norm = normalise_title(title)
        if not norm:
            return None
        ids = self.exact.get(norm)
        if ids:
            if len(ids) == 1:
                return next(iter(ids)), 1.0, "title_exact"
            log.debug("title %r names several candidates exactly: %s", title, sorted(ids))
            return None
        if len(norm) < MIN_FUZZY_CHARS:
            return None
        best: dict[str, float] = {}
        sm = difflib.SequenceMatcher(autojunk=False)
        sm.set_seq2(norm)
        for cand, arxiv_id in self.items:
            sm.set_seq1(cand)
            if sm.real_quick_ratio() < threshold or sm.quick_ratio() < threshold:
                continue
            r = sm.ratio()
            if r >= threshold and r > best.get(arxiv_id, 0.0):
                best[arxiv_id] = r
        if not best:
            return None
        ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))
        if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < AMBIGUITY_MARGIN:
            log.debug("title %r is ambiguous between %s", title, ranked[:3])
            return None
        return ranked[0][0], ranked[0][1], "title_similar"


def best_title_match(
    title: str | None, candidates: Mapping[str, str] | TitleIndex, threshold: float = TITLE_THRESHOLD
) -> tuple[str, float] | None:
    """The candidate id a title names and the similarity, or None."""
    index = candidates if isinstance(candidates, TitleIndex) else TitleIndex(candidates)
    got = index.match(title, threshold)
    return (got[0], got[1]) if got else None


def resolve_arxiv_id(
    bib: BibEntry,
    s2_external_ids: Mapping[str, object] | None = None,
    candidates: Mapping[str, str] | TitleIndex | None = None,
    *,
    threshold: float = TITLE_THRESHOLD,
) -> tuple[str | None, str | None]:
    """``(arxiv_id, how)`` for a bib entry; ``(None, None)`` when nothing identifies an arXiv paper.

    ``candidates`` maps titles to arXiv ids (say, S2 search hits or the local
    cited-sources folder); ``how`` is one of :data:`HOW_VALUES`.
    """
    for how, value in (("bib_eprint", bib.arxiv_id), ("bib_url", bib.url), ("bib_doi", bib.doi)):
        if value:
            found = _versionless(value)
            if found:
                return found, how
            log.debug("bib %s: %s %r holds no arXiv id", bib.key, how, value)
    if bib.venue and re.search(r"arxiv", bib.venue, re.IGNORECASE):
        found = _versionless(bib.venue)
        if found:
            return found, "bib_venue"
    if s2_external_ids:
        for k, v in s2_external_ids.items():
            if str(k).lower() == "arxiv" and v:
                found = _versionless(str(v))
                if found:
                    return found, "s2_external_ids"
    if candidates:
        index = candidates if isinstance(candidates, TitleIndex) else TitleIndex(candidates)
        got = index.match(bib.title, threshold)
        if got:
            return got[0], got[2]
    return None, None


# --------------------------------------------------------------------------
# Local cited-sources folders
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalEntry:
    folder: Path  # the folder holding the LaTeX
    arxiv_id: str | None
    title: str | None


class LocalSources:
    """A scan of a cited-sources folder: ids from folder names, titles from metadata or LaTeX."""

    def __init__(self, root: Path):
        from rqbench.builder.sourcing import METADATA_FILE, folder_arxiv_id, peek_title_abstract

        self.root = Path(root)
        self.entries: list[LocalEntry] = []
        self.by_id: dict[str, LocalEntry] = {}
        for sub in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
            got = folder_arxiv_id(sub.name)
            src = sub / "src"
            folder = src if src.is_dir() and not any(f.suffix == ".tex" for f in sub.glob("*.tex")) else sub
            title = None
            meta = sub / METADATA_FILE
            if meta.is_file():
                try:
                    title = SourcePaper.model_validate_json(meta.read_text(encoding="utf-8")).title
                except ValueError as exc:
                    raise ValueError(f"{meta}: not a SourcePaper record ({exc})") from exc
            if not title:
                title, _ = peek_title_abstract(folder)
            entry = LocalEntry(folder=folder, arxiv_id=got[0] if got else None, title=title)
            self.entries.append(entry)
            if entry.arxiv_id:
                if entry.arxiv_id in self.by_id:
                    raise ValueError(
                        f"cited sources {self.root}: {self.by_id[entry.arxiv_id].folder} and {folder} "
                        f"are both arXiv {entry.arxiv_id}"
                    )
                self.by_id[entry.arxiv_id] = entry
        self._titles = TitleIndex([(e.title, e.arxiv_id) for e in self.entries if e.title and e.arxiv_id])
        self._by_title_slug = {
            normalise_title(e.title): e for e in self.entries if e.title and not e.arxiv_id
        }

    def find(
        self,
        bib: BibEntry | None,
        arxiv_id: str | None = None,
        *,
        s2_external_ids: Mapping[str, object] | None = None,
        threshold: float = TITLE_THRESHOLD,
    ) -> tuple[Path, str | None, str] | None:
        """``(folder, arxiv_id, how)`` of the local source for a cited work, or None."""
        how = "given" if arxiv_id else None
        if arxiv_id is None and bib is not None:
            arxiv_id, how = resolve_arxiv_id(bib, s2_external_ids, None)
        arxiv_id = _versionless(arxiv_id) if arxiv_id else None
        if arxiv_id is not None:
            entry = self.by_id.get(arxiv_id)
            if entry is not None:
                return entry.folder, arxiv_id, how or "given"
        if bib is None or not bib.title:
            return None
        got = self._titles.match(bib.title, threshold)
        if got and (arxiv_id is None or got[0] == arxiv_id):
            return self.by_id[got[0]].folder, got[0], "local_" + got[2]
        plain = self._by_title_slug.get(normalise_title(bib.title))
        if plain is not None and arxiv_id is None:
            return plain.folder, None, "local_title_exact"
        return None


@lru_cache(maxsize=8)
def _scan(root: str, mtime_ns: int) -> LocalSources:
    return LocalSources(Path(root))


def local_sources(root: Path) -> LocalSources:
    """The scan of ``root``, reused while the folder is unchanged (the stage asks once per cited work)."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise ValueError(f"cited sources folder {root} does not exist or is not a folder")
    return _scan(str(root), root.stat().st_mtime_ns)


def find_local_source(
    root: Path,
    bib: BibEntry | None,
    arxiv_id: str | None = None,
    *,
    s2_external_ids: Mapping[str, object] | None = None,
    threshold: float = TITLE_THRESHOLD,
) -> tuple[Path, str | None, str] | None:
    """``(folder, arxiv_id, how)`` for a cited work in a ``--cited-sources`` folder, or None if it is not there."""
    return local_sources(root).find(bib, arxiv_id, s2_external_ids=s2_external_ids, threshold=threshold)
