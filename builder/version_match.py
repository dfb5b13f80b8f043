"""Whether two descriptions of a paper name the same work: a scored record-linkage match.

A cited work is often a version of a paper under another title: the arXiv
preprint of a journal paper, the journal paper of a preprint. A title match
cannot find it, so the evidence is what a citation (a bibliography entry) and a
source (its front matter, ``front_matter.FrontMatter``, or its mirror's
``metadata.json``), or two sources, agree on: the title, the authors, the year,
the venue, and, between two sources, the works they cite.

The score is the Fellegi-Sunter log-likelihood ratio. Each field is compared
to a level (``title: related``, ``authors: same``, ...); a level observed with
probability ``m`` between versions of one paper and ``u`` between two
different papers adds ``log2(m / u)`` bits; an unknown field adds nothing. The
``u`` values are measured, not chosen (see ``WEIGHTS``): pairs of works one paper
cites, the neighbourhood a citation and a candidate source come from, often by
the same people. The ``m`` values say how versions of one paper differ (most
keep their title, all keep their authors, a preprint comes before its journal
version, ...); they are stated with their reasons.

The threshold: under ``u`` the likelihood ratio has expectation 1, so a pair of
different papers reaches ``T`` bits with probability at most ``2**-T``
(Markov's inequality). ``threshold_bits`` sets ``T = log2(pairs / 0.05)`` for the
number of (citation, source) pairs a citing paper compares, so a build expects
at most 0.05 false version matches per citing paper, and never less than 16
bits: the fields are not independent (a team writes several papers with related
titles, in one venue, a year apart), and the most a pair of different papers by
one team scored among the pairs checked (two ICLR papers of one team, 14.9 bits)
stays below it. The version match is tried only after every exact piece of
evidence (arXiv id, equal title) has failed. What passes: a retitled version
whose author list, year and venue agree (a journal paper against its arXiv
preprint in a mirror, 16.1 bits), or two sources that also share most of their
references (the HyperTools JMLR and arXiv folders, 20.2 bits). What does not: a
source that gives neither year nor venue, against a citation that agrees on
authors and part of the title (13.6 bits), which is how a team's other paper
looks too.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from rqbench.builder.front_matter import FrontMatter
from rqbench.records import BibEntry

MIN_MATCH_BITS = 16.0
FALSE_MATCHES = 0.05  # expected false version matches per citing paper the threshold allows
CLOSE_TITLE = 0.85  # difflib ratio of normalised titles: a changed word or two
RELATED_TITLE = 0.5  # a retitled version keeps about half its title (the HyperTools pair: 0.70)
MOST_REFERENCES = 0.6  # versions share most of their reference list (HyperTools: 15 of 17)
SOME_REFERENCES = 0.2
PREPRINT_LAG_YEARS = 3  # a journal version appears within three years of its preprint
_PREPRINT = re.compile(r"\b(arxiv|biorxiv|medrxiv|psyarxiv|chemrxiv|ssrn|preprint|corr|osf preprints)\b", re.I)
_VENUE_STOP = frozenset("of the and in on for a an to proceedings annual international conference journal".split())

# level -> (m, u). m: P(level | two versions of one paper), stated with its reason (each field's m sums to 1).
# u: P(level | two different papers), measured (tests/version_weights.py): pairs of works cited by one paper, over
# the reference lists of the eight ContextLab fixture papers (13,808 pairs); title, year and venue among the pairs
# whose authors agree where that rate is larger; one added to every count; the references field over the pairs of
# fixture sources that are different papers (104). Rounded up to two digits.
WEIGHTS: dict[str, dict[str, tuple[float, float]]] = {
    "title": {
        # most versions keep their title; a retitled one keeps part of it; a number (Part 3, 27B) never changes
        "exact": (0.70, 2.9e-2),
        "close": (0.14, 2.9e-2),
        "related": (0.15, 8.6e-2),
        "numbered_apart": (1.0e-4, 2.9e-2),
        "different": (0.01, 0.99),
    },
    "authors": {
        # a version keeps its author list (a name added or dropped at most) and its first author
        "same": (0.70, 1.5e-4),
        "same_single": (0.08, 5.1e-4),  # one author: a prolific single author writes many papers
        "subset": (0.14, 1.8e-3),
        "most": (0.06, 1.8e-2),
        "none": (0.02, 0.98),
    },
    "year": {
        # same year or the next, or a preprint up to three years before its journal version
        "agree": (0.97, 0.22),
        "disagree": (0.03, 0.86),
        # an undated source is at least as new as its newest reference (one year's grace for in-press work)
        "consistent": (0.99, 0.63),
        "impossible": (0.01, 0.44),
    },
    "venue": {
        # a citation of the journal version names the journal; of the preprint, the server
        "same": (0.45, 3.6e-2),
        # a venue publishes a paper once: the same venue in two years is two papers, or a year off by one
        "same_other_year": (0.03, 3.6e-2),
        "preprint_and_published": (0.35, 0.18),
        "different": (0.17, 0.82),
    },
    "references": {
        # two versions cite nearly the same works; two papers of one lab share a third at most (fixtures: <= 0.29)
        "most": (0.90, 9.3e-3),
        "some": (0.08, 3.8e-2),
        "few": (0.02, 0.96),
    },
}


def threshold_bits(pairs: int) -> float:
    """The score a match needs when ``pairs`` (citation, source) pairs are compared: under ``u`` a pair of
    different papers reaches ``T`` bits with probability at most ``2**-T`` (the likelihood ratio has mean 1:
    Markov's inequality), so ``T = log2(pairs / FALSE_MATCHES)`` keeps the expected false matches at
    ``FALSE_MATCHES``; never below ``MIN_MATCH_BITS`` (one false match in 65,536 pairs)."""
    return max(MIN_MATCH_BITS, math.log2(max(1, pairs) / FALSE_MATCHES))


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


class WorkFacts(BaseModel):
    """What one description (a citation or a source) says about a paper, normalised for comparison."""

    model_config = ConfigDict(frozen=True)

    title: str
    surnames: tuple[str, ...] = ()  # a bibliography entry's authors, or the names read from a source's author block
    year: int | None = None
    latest_reference_year: int | None = None  # a source without a date is at least as new as its references
    venue: str | None = None
    venue_styles: tuple[str, ...] = ()
    preprint: bool | None = None
    references: frozenset[str] | None = None  # normalised titles of the works it cites


class Comparison(BaseModel):
    """The level of every field that could be compared, the bits each adds, and the total."""

    levels: dict[str, str]
    bits: dict[str, float]
    score: float

    def explain(self) -> str:
        parts = ", ".join(f"{f} {lv} ({self.bits[f]:+.1f})" for f, lv in self.levels.items())
        return f"{self.score:.1f} bits: {parts}"


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()


def surname(name: str) -> str:
    """A person's surname, lower-case ASCII: the part before a comma, else the last word."""
    name = name.strip()
    part = name.split(",")[0] if "," in name else (name.split() or [""])[-1]
    return re.sub(r"[^a-z]", "", _ascii(part))


def is_preprint(entry: BibEntry) -> bool:
    return bool(entry.arxiv_id) or bool(entry.venue and _PREPRINT.search(entry.venue))


def from_bib(entry: BibEntry) -> WorkFacts:
    return WorkFacts(
        title=normalise_title(entry.title),
        surnames=tuple(s for s in (surname(a) for a in entry.authors) if s),
        year=entry.year,
        venue=entry.venue,
        preprint=is_preprint(entry),
    )


def from_source(front: FrontMatter) -> WorkFacts:
    """A source's facts, as its front matter gives them."""
    return WorkFacts(
        title=normalise_title(front.title),
        surnames=tuple(s for s in (surname(n) for n in front.author_surnames) if s),
        year=front.year,
        latest_reference_year=front.latest_reference_year,
        venue_styles=tuple(front.venue_styles),
        references=frozenset(t for t in (normalise_title(r) for r in front.reference_titles) if t),
    )


# --------------------------------------------------------------------------
# Field comparisons: each returns a level of WEIGHTS[field], or None when it cannot be compared
# --------------------------------------------------------------------------


def _numbers(title: str) -> frozenset[str]:
    return frozenset(w for w in title.split() if any(c.isdigit() for c in w))


def title_level(a: str, b: str) -> str | None:
    if not a or not b:
        return None
    if a == b:
        return "exact"
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if sm.real_quick_ratio() < RELATED_TITLE or sm.quick_ratio() < RELATED_TITLE:  # upper bounds of ratio()
        return "different"
    ratio = sm.ratio()
    if ratio < RELATED_TITLE:
        return "different"
    if _numbers(a) != _numbers(b):  # Part 3 / Part 4, Gemma 3 1B / 27B: a series, not versions
        return "numbered_apart"
    return "close" if ratio >= CLOSE_TITLE else "related"


def authors_level(a: WorkFacts, b: WorkFacts) -> str | None:
    """``same`` list (``same_single`` for one author), a ``subset`` (the shorter list inside the longer, first
    author first in both), ``most`` (half of the shorter list or more), ``none``."""
    if not a.surnames or not b.surnames:
        return None
    mine, theirs = set(a.surnames), set(b.surnames)
    first = a.surnames[0] == b.surnames[0]
    if mine == theirs and first:
        return "same" if len(mine) > 1 else "same_single"
    shared = len(mine & theirs) / min(len(mine), len(theirs))
    if shared == 1.0 and first:
        return "subset"
    return "most" if shared >= 0.5 else "none"


def year_level(a: WorkFacts, b: WorkFacts) -> str | None:
    if a.year is not None and b.year is not None:
        if a.preprint and b.preprint is False:
            lag = b.year - a.year
        elif b.preprint and a.preprint is False:
            lag = a.year - b.year
        else:
            return "agree" if abs(a.year - b.year) <= 1 else "disagree"
        return "agree" if -1 <= lag <= PREPRINT_LAG_YEARS else "disagree"
    for dated, floored in ((a, b), (b, a)):
        if dated.year is not None and floored.latest_reference_year is not None:
            return "consistent" if dated.year >= floored.latest_reference_year - 1 else "impossible"
    return None


def _venue_words(venue: str) -> list[str]:
    return [w for w in re.split(r"[^a-z]+", _ascii(venue)) if w and w not in _VENUE_STOP]


def _acronym(venue: str) -> str:
    return "".join(w[0] for w in _venue_words(venue))


def same_venue(a: str, b: str) -> bool:
    """Equal venues, allowing abbreviations (``ACM Comput. Surv.`` = ``ACM Computing Surveys``) and acronyms."""
    wa, wb = _venue_words(a), _venue_words(b)
    if not wa or not wb:
        return False
    if wa == wb or _acronym(a) == "".join(wb) or _acronym(b) == "".join(wa):
        return True
    short, long_ = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    return len(short) >= 2 and all(any(x.startswith(s) for x in long_) for s in short)


def venue_level(a: WorkFacts, b: WorkFacts) -> str | None:
    if a.venue and b.venue:
        if same_venue(a.venue, b.venue) or (a.preprint and b.preprint):
            published_twice = not a.preprint and a.year and b.year and a.year != b.year
            return "same_other_year" if published_twice else "same"
        if a.preprint != b.preprint and a.preprint is not None and b.preprint is not None:
            return "preprint_and_published"
        return "different"
    cited, source = (a, b) if a.venue else (b, a)
    if cited.venue and source.venue_styles:  # a source's class names its venue only when they agree
        names = {_acronym(cited.venue), *_venue_words(cited.venue)}
        return "same" if names & set(source.venue_styles) else None
    return None


def references_level(a: WorkFacts, b: WorkFacts) -> str | None:
    if not a.references or not b.references:
        return None
    shared = len(a.references & b.references) / min(len(a.references), len(b.references))
    return "most" if shared >= MOST_REFERENCES else "some" if shared >= SOME_REFERENCES else "few"


def compare(a: WorkFacts, b: WorkFacts) -> Comparison:
    """The match score of two descriptions, in bits (positive: evidence for one paper)."""
    levels = {
        "title": title_level(a.title, b.title),
        "authors": authors_level(a, b),
        "year": year_level(a, b),
        "venue": venue_level(a, b),
        "references": references_level(a, b),
    }
    known = {f: lv for f, lv in levels.items() if lv is not None}  # an unknown field is no evidence
    bits = {f: math.log2(WEIGHTS[f][lv][0] / WEIGHTS[f][lv][1]) for f, lv in known.items()}
    return Comparison(levels=known, bits=bits, score=sum(bits.values()))


def best_match(
    facts: WorkFacts, candidates: Iterable[tuple[str, WorkFacts]], threshold: float
) -> tuple[str, Comparison] | None:
    """The one candidate ``facts`` matches at ``threshold`` bits; None when none does, or when the runner-up
    comes within one bit of the best (a wrong paper is worse than none)."""
    scored = sorted(((name, compare(facts, f)) for name, f in candidates), key=lambda h: -h[1].score)
    hits = [h for h in scored if h[1].score >= threshold]
    if not hits or (len(hits) > 1 and hits[1][1].score >= hits[0][1].score - 1.0):
        return None
    return hits[0]
