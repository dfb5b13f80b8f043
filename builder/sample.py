"""``rqbench setup-sample``: build rq-bench-sample on the embedded model and publish it locally.

Offline (``../shared`` present): the fixture papers in ``../shared/fixtures/latex``
that have a real bibliography are linked into ``RQB_HOME/sample-papers`` and
built with small budgets (a few papers, a few cited works each, abstracts
allowed). Online (no ``../shared``, or ``--online``): the committed
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

from rqbench import paths
from rqbench.dataset_card.build_folder import Build
from rqbench.dataset_card.card import CardSettings
from rqbench.dataset_card.features import all_features, schema_fingerprint
from rqbench.dataset_card.publish import Published, PublishRefused, check_build_valid, previous_release, publish
from rqbench.dataset_card.release import build_fingerprint
from rqbench.dataset_card.repo import LocalGitTarget, TargetError
from rqbench.dataset_card.versions import Version

SAMPLE_IDS = Path(__file__).with_name("sample_arxiv_ids.txt")
MIN_BIB_ENTRIES = 10  # fewer is a template or a stub bibliography, not a paper's
DEFAULT_LIMIT = 3
DEFAULT_MAX_CITED = 4
# The embedded model labels nearly every work a canonical reference; the builder's flagged fallback
# promotes each paper's most cited works (marked and counted in the manifest) so the sample has RQs.
DEFAULT_MIN_INFLUENTIAL = 2
FIRST_VERSION = Version(0, 1, 0)

_BIB_ENTRY = re.compile(r"^\s*@(?!string|comment|preamble)[a-zA-Z]+\s*[{(]", re.M | re.I)
_BBL_ENTRY = re.compile(r"\\bibitem\b|\\entry\{")


def bibliography_size(folder: Path) -> int:
    """Entries in the largest .bib or .bbl under ``folder`` (0 when it has none)."""
    best = 0
    for f in folder.rglob("*"):
        if f.suffix not in (".bib", ".bbl") or not f.is_file():
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        best = max(best, len((_BIB_ENTRY if f.suffix == ".bib" else _BBL_ENTRY).findall(text)))
    return best


def choose_fixture_papers(latex_dir: Path, limit: int = DEFAULT_LIMIT) -> list[Path]:
    """Fixture folders with a .tex file and at least MIN_BIB_ENTRIES bibliography entries, by name, at most ``limit``."""
    chosen = []
    for folder in sorted(p for p in latex_dir.iterdir() if p.is_dir()):
        if any(folder.rglob("*.tex")) and bibliography_size(folder) >= MIN_BIB_ENTRIES:
            chosen.append(folder)
    if not chosen:
        raise FileNotFoundError(f"{latex_dir}: no paper folder with a .tex file and a bibliography")
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
    parser.add_argument("--online", action="store_true",
                        help=f"build from {SAMPLE_IDS.name} on arXiv even where ../shared is present")
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="papers (default %(default)s)")
    parser.add_argument("--max-cited", type=int, default=DEFAULT_MAX_CITED,
                        help="cited works labelled per paper (default %(default)s)")
    parser.add_argument("--min-influential", type=int, default=DEFAULT_MIN_INFLUENTIAL,
                        help="promote the most cited works when fewer are labelled influential (default %(default)s)")
    parser.add_argument("--model", default="local", help="model for every stage (default: the embedded one)")
    parser.add_argument("--build-dir", type=Path, default=None, help="default: RQB_HOME/builds/rq-bench-sample")
    parser.add_argument("--dataset-dir", type=Path, default=None, help="default: RQB_HOME/datasets/rq-bench-sample")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the calls, tokens and cost the build would spend; send nothing, publish nothing")
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from rqbench.builder.pipeline import BuildConfig, run_build

    build_dir = args.build_dir or paths.sample_build_dir()
    dataset_dir = args.dataset_dir or paths.sample_dataset_dir()
    shared = paths.shared_dir()
    if args.online or shared is None:
        papers, where = SAMPLE_IDS, f"arXiv ids in {SAMPLE_IDS} (online)"
    else:
        chosen = choose_fixture_papers(shared / "fixtures" / "latex", args.limit)
        papers = link_papers(chosen, paths.home() / "sample-papers")
        where = f"{len(chosen)} fixture papers: {', '.join(p.name for p in chosen)}"
    print(f"setup-sample: building from {where} on model {args.model!r} into {build_dir}", file=sys.stderr)
    config = BuildConfig(
        out=build_dir, papers=papers, limit=args.limit, max_cited_per_paper=args.max_cited,
        allow_abstract_only=True, min_influential=args.min_influential, models={role: args.model for role in ("strong", "light", "labeller")},
        progress=not args.no_progress, dry_run=args.dry_run,
    )
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
    print(f"setup-sample: published {result.version.tag} ({result.release.splits['rqs']['test']} RQs) to "
          f"{dataset_dir}; load it with load_dataset({str(dataset_dir)!r}, 'rqs', split='test')")
    return 0


def publish_sample(build_dir: Path, dataset_dir: Path, *, notes: str = "") -> Published | None:
    """Publish a finished sample build locally as the next version; None when the data is unchanged."""
    build = check_build_valid(build_dir)
    target = LocalGitTarget(dataset_dir)
    version = next_version(target, build)
    if version is None:
        return None
    settings = CardSettings(target="local", repo=str(Path(dataset_dir).resolve()),
                            pretty_name="RQ-Bench sample (rq-bench-sample)", sample=True)
    return publish(build_dir, version, target, settings, build=build, notes=notes)
