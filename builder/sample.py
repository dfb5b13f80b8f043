"""``rqbench setup-sample``: build rq-bench-sample on the embedded model and publish it locally.

Offline (``../shared`` present): the fixture papers in ``../shared/fixtures/latex``
that have a real bibliography and cite another fixture paper (found by the
cited-text stage's own lookup: arXiv id, title, or a version of the paper) are
linked into ``RQB_HOME/sample-papers`` and built with small budgets (a few
papers, a few cited works each), the fixture folder serving as the local
sources of the cited papers' text. Only cited papers with full text count as
background papers, as in the paper, so every RQ the sample publishes reads the
section text of at least one paper it builds on. Online (no ``../shared``, or ``--online``): the committed
``sample_arxiv_ids.txt`` is built the same way from arXiv. Either way the build is
published as a local git repository at ``rqbench.paths.sample_dataset_dir()``
(inside the ignored data folder: the papers' texts never enter the project
repository), first as v0.1.0, later as the next patch version when the data
changed (the next major version when the schema did). A rerun with the same
data makes no LLM call (the cache) and publishes nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rqbench import paths
from rqbench.dataset_card.build_folder import Build
from rqbench.dataset_card.card_base import CardSettings
from rqbench.dataset_card.features import all_features, schema_fingerprint
from rqbench.dataset_card.publish import Published, PublishRefused, check_build_valid, previous_release, publish
from rqbench.dataset_card.release import build_fingerprint
from rqbench.dataset_card.repo import LocalGitTarget, TargetError
from rqbench.dataset_card.versions import Version

if TYPE_CHECKING:
    from rqbench.builder.build_config import BuildConfig

SAMPLE_IDS = Path(__file__).with_name("sample_arxiv_ids.txt")
MIN_BIB_ENTRIES = 10  # fewer is a template or a stub bibliography, not a paper's
DEFAULT_LIMIT = 4  # every fixture paper that cites another one, today
DEFAULT_MAX_CITED = 4
# The embedded model labels nearly every work a canonical reference; the builder's flagged fallback
# promotes each paper's most cited works (marked and counted in the manifest) so the sample has RQs.
DEFAULT_MIN_INFLUENTIAL = 2
FIRST_VERSION = Version(0, 1, 0)

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


def next_version(target: LocalGitTarget, build: Build) -> Version | None:
    """The version to publish, or None when the newest release already holds this data and schema."""
    versions = target.versions()
    if not versions:
        return FIRST_VERSION
    newest = max(versions)
    prev = previous_release(target, newest)
    schema = schema_fingerprint(all_features())
    if prev is not None and prev.schema_fingerprint != schema:
        return Version(newest.major + 1, 0, 0)
    if prev is not None and prev.data_fingerprint == build_fingerprint(build):
        return None
    return newest.next_patch()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--online", action="store_true", help=f"build from {SAMPLE_IDS.name} on arXiv even where ../shared is present"
    )
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="papers (default %(default)s)")
    parser.add_argument(
        "--max-cited", type=int, default=DEFAULT_MAX_CITED, help="cited works labelled per paper (default %(default)s)"
    )
    parser.add_argument(
        "--min-influential",
        type=int,
        default=DEFAULT_MIN_INFLUENTIAL,
        help="promote the most cited works when fewer are labelled influential (default %(default)s)",
    )
    parser.add_argument("--model", default="local", help="model for every stage (default: the embedded one)")
    parser.add_argument(
        "--sources",
        type=Path,
        default=None,
        help="a local folder of cited papers' LaTeX, one subfolder per paper (default offline: the "
        "fixture papers; online: none, the arXiv e-prints are fetched)",
    )
    parser.add_argument("--build-dir", type=Path, default=None, help="default: RQB_HOME/builds/rq-bench-sample")
    parser.add_argument("--dataset-dir", type=Path, default=None, help="default: RQB_HOME/datasets/rq-bench-sample")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the calls, tokens and cost the build would spend; send nothing, publish nothing",
    )
    parser.add_argument("--no-progress", action="store_true")


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


def run(args: argparse.Namespace) -> int:
    from rqbench.builder.pipeline import run_build

    build_dir = args.build_dir or paths.sample_build_dir()
    dataset_dir = args.dataset_dir or paths.sample_dataset_dir()
    shared = paths.shared_dir()
    latex = None if args.online or shared is None else shared / "fixtures" / "latex"
    config, where = sample_config(
        latex,
        build_dir,
        links_dir=paths.home() / "sample-papers",
        model=args.model,
        limit=args.limit,
        max_cited=args.max_cited,
        min_influential=args.min_influential,
        sources=args.sources,
        progress=not args.no_progress,
        dry_run=args.dry_run,
    )
    print(f"setup-sample: building from {where} on model {args.model!r} into {build_dir}", file=sys.stderr)
    manifest = run_build(config)
    if args.dry_run:
        print(manifest.settings["dry_run"]["line"])
        return 0
    try:
        result = publish_sample(build_dir, dataset_dir, notes=f"Sample built from {where} on {args.model}.")
    except (PublishRefused, TargetError) as exc:
        print(f"setup-sample: {exc}", file=sys.stderr)
        return 1
    if result is None:
        newest = max(LocalGitTarget(dataset_dir).versions())
        print(f"setup-sample: {dataset_dir} is up to date at {newest.tag} (same data); nothing to publish")
        return 0
    print(
        f"setup-sample: published {result.version.tag} ({result.release.splits['rqs']['test']} RQs) to "
        f"{dataset_dir}; load it with load_dataset({str(dataset_dir)!r}, 'rqs', split='test')"
    )
    return 0


def publish_sample(build_dir: Path, dataset_dir: Path, *, notes: str = "") -> Published | None:
    """Publish a finished sample build locally as the next version; None when the data is unchanged."""
    build = check_build_valid(build_dir)
    target = LocalGitTarget(dataset_dir)
    version = next_version(target, build)
    if version is None:
        return None
    settings = CardSettings(
        target="local",
        repo=str(Path(dataset_dir).resolve()),
        pretty_name="RQ-Bench sample (rq-bench-sample)",
        sample=True,
    )
    return publish(build_dir, version, target, settings, build=build, notes=notes)
