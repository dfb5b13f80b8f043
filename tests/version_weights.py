"""Measure the ``u`` probabilities of ``builder/version_match.py`` (test support).

``u`` is how often a comparison level occurs between two *different* papers. The
population that matters is the one the matcher meets: a citation and a source
from one neighbourhood of the literature, often by the same people. So the
pairs are the works one paper cites, two at a time, over the reference lists of
the ContextLab fixture papers (a lab citing its own and its neighbours' work);
works with one title are the same paper and left out. A candidate can reach the
threshold only when the authors agree, and papers by the same people have more
similar titles, years and venues than papers at random, so for title, year and
venue the rate among pairs whose authors agree is used where it is the larger.
Counts are Laplace-smoothed (one added to each level), so a level never seen
still has a rate.
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

from rqbench.builder import version_match as vm

TUNING_PAPERS = (
    "efficient-learning-khan",
    "hypertools-arxiv-bblonly",
    "hypertools-jmlr",
    "llm-stylometry",
    "pca-paper",
    "sherlock-topic-model",
    "supereeg-paper",
    "timecorr-paper",
)
AGREEING_AUTHORS = ("same", "same_single", "subset")
LEVELS = {f: tuple(vm.WEIGHTS[f]) for f in ("title", "authors", "year", "venue")}


def reference_pairs(latex_dir: Path, papers=TUNING_PAPERS):
    from rqbench.builder.front_matter import cited_entries

    for name in papers:
        works = [vm.from_bib(e) for e in cited_entries(latex_dir / name) if e.title and e.authors]
        for a, b in itertools.combinations(works, 2):
            if a.title != b.title:
                yield a, b


def measure_u(latex_dir: Path, papers=TUNING_PAPERS) -> dict[str, dict[str, float]]:
    overall = {f: Counter() for f in LEVELS}
    agreeing = {f: Counter() for f in LEVELS}
    n = n_agree = 0
    for a, b in reference_pairs(latex_dir, papers):
        authors = vm.authors_level(a, b)
        levels = {
            "title": vm.title_level(a.title, b.title),
            "authors": authors,
            "year": vm.year_level(a, b),
            "venue": vm.venue_level(a, b),
        }
        if a.year and b.year:  # b's year as the newest reference of an undated source
            levels["year_floor"] = "consistent" if a.year >= b.year - 1 else "impossible"
        n += 1
        n_agree += authors in AGREEING_AUTHORS
        for f, lv in levels.items():
            key = "year" if f == "year_floor" else f
            overall[key][lv] += 1
            if authors in AGREEING_AUTHORS:
                agreeing[key][lv] += 1
    u: dict[str, dict[str, float]] = {}
    for f, levels in LEVELS.items():

        def rate(counts: Counter, total: int, lv: str, group: tuple[str, ...]) -> float:
            seen = sum(counts[x] for x in group)
            return (counts[lv] + 1) / (seen + len(group)) if total else 0.0

        pair = {
            "agree": ("agree", "disagree"),
            "disagree": ("agree", "disagree"),
            "consistent": ("consistent", "impossible"),
            "impossible": ("consistent", "impossible"),
        }
        u[f] = {}
        for lv in levels:
            group = pair.get(lv, levels) if f == "year" else levels
            if f == "venue":
                group = tuple(x for x in levels)
            measured = rate(overall[f], n, lv, group)
            if f != "authors":
                measured = max(measured, rate(agreeing[f], n_agree, lv, group))
            u[f][lv] = measured
    return u
