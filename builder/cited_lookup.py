"""Which arXiv paper a bibliography entry means, and where its LaTeX sits in a local cited-sources folder.

Evidence is tried from the most to the least direct: the entry's ``eprint``
field, its URL, its DOI (arXiv DOIs are ``10.48550/arXiv.<id>``), an
``arXiv:<id>`` in its venue text, then Semantic Scholar's external ids, and
last a title match against known candidates. A title matches when its
normalised form is equal, or when difflib's similarity ratio reaches the
threshold (0.92 by default) for titles long enough to judge (at least 16
characters normalised). Two different ids matching equally well (within 0.02)
count as no match: a wrong background paper is worse than none.

Cited papers' LaTeX can sit in a local sources folder (``--sources DIR``: the
fixture papers offline, a mirror of e-prints online): one subfolder per paper,
named by its arXiv id (``2301.00001``, ``2301.00001v2``, ``hep-th_9901001``, or
``<id>/src/``) or by anything else. A cited work is found there by its arXiv
id, by its title (from each folder's ``metadata.json`` or its LaTeX, title
macros and discretionary hyphens expanded: ``front_matter``), or as a version
of the paper under another title (``version_match``: what the citation and
the source agree on, scored). Subfolders that are versions of one paper read
as one paper.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rqbench.builder.arxiv_api import parse_arxiv_id
from rqbench.builder.version_match import (
    WorkFacts,
    best_match,
    compare,
    from_bib,
    from_source,
    normalise_title,
    surname,
    threshold_bits,
)
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
    # find_local_source only: a title match against the local sources, or a version of the paper there
    "local_title_exact",
    "local_title_similar",
    "local_version",
)


def _versionless(raw: str | None) -> str | None:
    got = parse_arxiv_id(raw or "")
    return got[0] if got else None


class TitleIndex:
    """Candidate titles (normalised once) for repeated matching; candidates are arXiv ids, or any names with
    ``key=str`` (the local sources' folder names)."""

    def __init__(
        self, candidates: Mapping[str, str] | Iterable[tuple[str, str]], key: Callable[[str], str | None] = _versionless
    ):
        self.exact: dict[str, set[str]] = {}
        self.items: list[tuple[str, str]] = []
        pairs = candidates.items() if isinstance(candidates, Mapping) else candidates
        for title, raw_id in pairs:
            arxiv_id = key(raw_id)
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
# Local sources: a folder of paper folders (the fixture papers offline, a mirror of e-prints online)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalEntry:
    name: str  # the subfolder's name
    folder: Path  # the folder holding the LaTeX
    arxiv_id: str | None
    title: str | None
    facts: WorkFacts | None  # None when the parser cannot read the source
    body_chars: int = 0


@dataclass(frozen=True)
class LocalMatch:
    """A cited work's local source: the version whose text is used, and how the citation was matched."""

    folder: Path  # the LaTeX of the version read for the text (the version group's fullest)
    arxiv_id: str | None  # that version's arXiv id (from its folder name), if any
    title: str | None  # that version's title
    how: str  # one of HOW_VALUES
    matched: str  # the subfolder the citation named (a version of ``folder``'s paper, or the same folder)
    detail: str = ""  # the score and its fields for a version match; the versions read as one paper


class LocalSources:
    """A scan of a sources folder: each subfolder's id, title and front matter, and which are versions of one paper.

    Two subfolders are versions of one paper when their front matter matches
    (``version_match``: title, authors, year, references) above the threshold
    for the number of pairs compared; a version group reads as one paper, with
    the text of its fullest version.
    """

    def __init__(self, root: Path):
        from rqbench.builder.front_matter import read_front_matter
        from rqbench.builder.paper_skip import PaperSkipped
        from rqbench.builder.sourcing import METADATA_FILE, folder_arxiv_id

        self.root = Path(root)
        self.entries: list[LocalEntry] = []
        self.by_id: dict[str, LocalEntry] = {}
        for sub in sorted(p for p in self.root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
            got = folder_arxiv_id(sub.name)
            src = sub / "src"
            folder = src if src.is_dir() and not any(f.suffix == ".tex" for f in sub.glob("*.tex")) else sub
            meta = None
            if (sub / METADATA_FILE).is_file():
                try:
                    meta = SourcePaper.model_validate_json((sub / METADATA_FILE).read_text(encoding="utf-8"))
                except ValueError as exc:
                    raise ValueError(f"{sub / METADATA_FILE}: not a SourcePaper record ({exc})") from exc
            try:
                front = read_front_matter(folder)
            except PaperSkipped as skip:  # found by its id still; no title, no version evidence
                log.info("local source %s: front matter unreadable (%s)", folder, skip)
                front = None
            facts = from_source(front) if front is not None else None
            if meta is not None and facts is not None:  # arXiv's metadata is better evidence than the LaTeX
                facts = facts.model_copy(
                    update={
                        "title": normalise_title(meta.title) or facts.title,
                        "surnames": tuple(x for x in (surname(a) for a in meta.authors) if x) or facts.surnames,
                        "year": meta.published.year if meta.published else facts.year,
                    }
                )
            if got and facts is not None:  # a folder named by an arXiv id holds the arXiv version: a preprint
                facts = facts.model_copy(update={"venue": "arXiv", "preprint": True})
            title = (meta.title if meta is not None else None) or (front.title if front is not None else None)
            entry = LocalEntry(
                name=sub.name,
                folder=folder,
                arxiv_id=got[0] if got else None,
                title=title,
                facts=facts,
                body_chars=front.body_chars if front is not None else 0,
            )
            self.entries.append(entry)
            if entry.arxiv_id:
                if entry.arxiv_id in self.by_id:
                    raise ValueError(
                        f"cited sources {self.root}: {self.by_id[entry.arxiv_id].folder} and {folder} "
                        f"are both arXiv {entry.arxiv_id}"
                    )
                self.by_id[entry.arxiv_id] = entry
        self._titles = TitleIndex([(e.title, e.name) for e in self.entries if e.title], key=str)
        self._by_name = {e.name: e for e in self.entries}
        self.groups = self._version_groups()

    def _version_groups(self) -> dict[str, tuple[str, ...]]:
        """name -> the names of every version of its paper (itself included), fullest version first."""
        parent = {e.name: e.name for e in self.entries}

        def root(x: str) -> str:
            while parent[x] != x:
                x = parent[x]
            return x

        readable = [e for e in self.entries if e.facts is not None and e.facts.title]
        bar = threshold_bits(len(readable) * (len(readable) - 1) // 2)
        for i, a in enumerate(readable):
            for b in readable[i + 1 :]:
                if compare(a.facts, b.facts).score >= bar:  # type: ignore[arg-type]
                    parent[root(b.name)] = root(a.name)
        members: dict[str, list[LocalEntry]] = {}
        for e in self.entries:
            members.setdefault(root(e.name), []).append(e)
        out = {}
        for group in members.values():
            names = tuple(e.name for e in sorted(group, key=lambda e: (-e.body_chars, e.name)))
            out.update({n: names for n in names})
        return out

    def versions(self, name: str) -> tuple[str, ...]:
        return self.groups.get(name, (name,))

    def _matched(self, entry: LocalEntry, how: str, detail: str = "") -> LocalMatch:
        group = self.versions(entry.name)
        best = self._by_name[group[0]]
        if len(group) > 1:
            detail = "; ".join(x for x in (detail, f"versions of one paper: {', '.join(group)}") if x)
        return LocalMatch(
            folder=best.folder, arxiv_id=best.arxiv_id, title=best.title, how=how, matched=entry.name, detail=detail
        )

    def find(
        self,
        bib: BibEntry | None,
        arxiv_id: str | None = None,
        *,
        s2_external_ids: Mapping[str, object] | None = None,
        threshold: float = TITLE_THRESHOLD,
        exclude: Path | None = None,
        citations: int = 1,
    ) -> LocalMatch | None:
        """The local source of a cited work, or None.

        Evidence in order: its arXiv id (given, or from the entry); its title, equal
        once normalised (macros expanded, hyphens resolved) or nearly so; then a version
        match on title, authors, year and venue at the threshold for ``citations`` x the
        sources compared. ``exclude`` is the citing paper's own folder: neither it nor a
        version of it is a background paper.
        """
        banned: set[str] = set()
        if exclude is not None:
            mine = Path(exclude).resolve()
            for e in self.entries:
                if e.folder.resolve() == mine or e.folder.parent.resolve() == mine:
                    banned.update(self.versions(e.name))
        how = "given" if arxiv_id else None
        if arxiv_id is None and bib is not None:
            arxiv_id, how = resolve_arxiv_id(bib, s2_external_ids, None)
        arxiv_id = _versionless(arxiv_id) if arxiv_id else None
        if arxiv_id is not None:
            entry = self.by_id.get(arxiv_id)
            if entry is not None and entry.name not in banned:
                return self._matched(entry, how or "given")
        if bib is None or not bib.title:
            return None
        got = self._titles.match(bib.title, threshold)
        if got and got[0] not in banned:
            entry = self._by_name[got[0]]
            if arxiv_id is None or entry.arxiv_id in (None, arxiv_id):
                return self._matched(entry, "local_" + got[2])
        if arxiv_id is not None:
            return None  # a known id that is not here: the online path fetches it, a title elsewhere is no better
        candidates = [(e.name, e.facts) for e in self.entries if e.facts is not None and e.name not in banned]
        bar = threshold_bits(max(1, citations) * len(candidates))
        found = best_match(from_bib(bib), candidates, bar)
        if found is None:
            return None
        name, comparison = found
        return self._matched(
            self._by_name[name], "local_version", f"version match {comparison.explain()} (threshold {bar:.1f})"
        )


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
    exclude: Path | None = None,
    citations: int = 1,
) -> LocalMatch | None:
    """The local source of a cited work in the sources folder ``root``, or None if it is not there."""
    return local_sources(root).find(
        bib, arxiv_id, s2_external_ids=s2_external_ids, threshold=threshold, exclude=exclude, citations=citations
    )
