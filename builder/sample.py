"""What rq-bench-sample is built from: the papers chosen, and the build's settings.

``rqbench setup-sample`` (``rqbench.dataset_card.sample_release``) builds it with this configuration and
publishes it.
Offline (``../shared`` present): the fixture papers in ``../shared/fixtures/latex``
that have a real bibliography and cite another fixture paper (found by the
cited-text stage's own lookup: arXiv id, title, or a version of the paper) are
linked into ``RQB_HOME/sample-papers`` and built with small budgets (a few
papers, a few cited works each), the fixture folder serving as the local
sources of the cited papers' text. Only cited papers with full text count as
background papers, as in the paper, so every RQ the sample publishes reads the
section text of at least one paper it builds on. Online (no ``../shared``, or ``--online``): the committed
``sample_arxiv_ids.txt`` is built the same way from arXiv. The builder knows nothing of publishing: this module
imports no part of ``dataset_card``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rqbench.builder.build_config import BuildConfig

SAMPLE_IDS = Path(__file__).with_name("sample_arxiv_ids.txt")
MIN_BIB_ENTRIES = 10  # fewer is a template or a stub bibliography, not a paper's
DEFAULT_LIMIT = 4  # every fixture paper that cites another one, today
DEFAULT_MAX_CITED = 4
# The embedded model labels nearly every work a canonical reference; the builder's flagged fallback
# promotes each paper's most cited works (marked and counted in the manifest) so the sample has RQs.
DEFAULT_MIN_INFLUENTIAL = 2

_BIB_ENTRY = re.compile(r"^\s*@(?!string|comment|preamble)[a-zA-Z]+\s*[{(]", re.M | re.I)
_BBL_ENTRY = re.compile(r"\\bibitem\b|\\entry\{")


def bibliography_size(folder: Path) -> int:
    """Entries in the largest .bib, .bbl or inline ``thebibliography`` (in a .tex file) under ``folder``."""
    best = 0
    for f in folder.rglob("*"):
        if f.suffix not in (".bib", ".bbl", ".tex") or not f.is_file():
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        best = max(best, len((_BIB_ENTRY if f.suffix == ".bib" else _BBL_ENTRY).findall(text)))
    return best


def cites_a_local_paper(folder: Path, latex_dir: Path) -> list[str]:
    """The keys of ``folder``'s citations whose source is another paper under ``latex_dir`` (the cited-text
    stage's lookup: arXiv id, title, or a version of the paper), in order of first citation."""
    from rqbench.builder.cited_lookup import local_sources
    from rqbench.builder.front_matter import cited_entries
    from rqbench.builder.paper_skip import PaperSkipped

    try:
        entries = cited_entries(folder)
    except PaperSkipped:
        return []
    pool = local_sources(latex_dir)
    return [e.key for e in entries if pool.find(e, exclude=folder, citations=len(entries)) is not None]


def choose_fixture_papers(latex_dir: Path, limit: int = DEFAULT_LIMIT) -> list[Path]:
    """Fixture folders with a .tex file, at least MIN_BIB_ENTRIES bibliography entries and a citation of another
    fixture paper, by name, at most ``limit``."""
    chosen = []
    for folder in sorted(p for p in latex_dir.iterdir() if p.is_dir()):
        if (
            any(folder.rglob("*.tex"))
            and bibliography_size(folder) >= MIN_BIB_ENTRIES
            and cites_a_local_paper(folder, latex_dir)
        ):
            chosen.append(folder)
    if not chosen:
        raise FileNotFoundError(
            f"{latex_dir}: no paper folder with a .tex file and a bibliography that cites another paper there"
        )
    return chosen[:limit]


def link_papers(chosen: list[Path], dest: Path) -> Path:
    """A folder of links to the chosen papers (the builder reads one subfolder per paper); nothing is copied."""
    dest.mkdir(parents=True, exist_ok=True)
    wanted = {p.name: p.resolve() for p in chosen}
    for entry in dest.iterdir():
        if entry.is_symlink() and (entry.name not in wanted or entry.resolve() != wanted[entry.name]):
            entry.unlink()
    for name, target in wanted.items():
        link = dest / name
        if not link.is_symlink():
            if link.exists():
                raise FileExistsError(f"{link}: exists and is not a link to a fixture paper; remove it")
            link.symlink_to(target, target_is_directory=True)
    return dest


def sample_config(
    latex_dir: Path | None,
    build_dir: Path,
    *,
    links_dir: Path,
    model: str = "local",
    limit: int = DEFAULT_LIMIT,
    max_cited: int = DEFAULT_MAX_CITED,
    min_influential: int = DEFAULT_MIN_INFLUENTIAL,
    sources: Path | None = None,
    progress: bool = True,
    dry_run: bool = False,
) -> tuple[BuildConfig, str]:
    """The sample's build: from the fixture papers that cite others under ``latex_dir`` (linked into ``links_dir``,
    with ``latex_dir`` as the cited papers' local sources), or online from SAMPLE_IDS when it is None; and a
    sentence saying which."""
    from rqbench.builder.build_config import BuildConfig

    if latex_dir is None:
        papers, where = SAMPLE_IDS, f"arXiv ids in {SAMPLE_IDS} (online)"
    else:
        chosen = choose_fixture_papers(latex_dir, limit)
        papers = link_papers(chosen, links_dir)
        sources = sources or latex_dir
        where = f"{len(chosen)} fixture papers that cite other fixture papers: {', '.join(p.name for p in chosen)}"
    config = BuildConfig(
        out=build_dir,
        papers=papers,
        limit=limit,
        max_cited_per_paper=max_cited,
        min_influential=min_influential,
        models={role: model for role in ("strong", "light", "labeller")},
        cited_sources=sources,
        progress=progress,
        dry_run=dry_run,
    )
    return config, where
