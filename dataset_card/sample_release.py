"""``rqbench setup-sample``: build rq-bench-sample on the embedded model and publish it locally.

What it is built from and with which settings is the builder's (``rqbench.builder.sample``); this module runs that
build and publishes it as a local git repository at ``rqbench.paths.sample_dataset_dir()`` (inside the ignored data
folder: the papers' texts never enter the project repository), first as v0.1.0, later as the next patch version
when the data changed (the next major version when the schema did). A rerun with the same data makes no LLM call
(the cache) and publishes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rqbench import paths
from rqbench.builder.sample import (
    DEFAULT_LIMIT,
    DEFAULT_MAX_CITED,
    DEFAULT_MIN_INFLUENTIAL,
    SAMPLE_IDS,
    sample_config,
)
from rqbench.dataset_card.build_folder import Build
from rqbench.dataset_card.card_base import CardSettings
from rqbench.dataset_card.features import all_features, schema_fingerprint
from rqbench.dataset_card.publish import Published, PublishRefused, check_build_valid, previous_release, publish
from rqbench.dataset_card.release import build_fingerprint
from rqbench.dataset_card.repo import LocalGitTarget, TargetError
from rqbench.dataset_card.versions import Version

FIRST_VERSION = Version(0, 1, 0)


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
