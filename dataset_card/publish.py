"""``rqbench publish BUILD_DIR --version X.Y.Z``: one commit with every file of a release, then tag vX.Y.Z.

``--repo ORG/NAME`` pushes to the Hub; ``--to DIR`` writes the same tree to a
local git repository (the offline default and the round-trip test). Both go
through ``publish()``, which refuses, each with its own message:

- a version that already exists (or is older than the newest one);
- a build whose records do not validate or contradict each other;
- a schema change (any config's features differ from the newest release's)
  without a major version bump.

A build made ``--since-release vX.Y.Z`` (a rolling build: its manifest's
``inputs.window``) is published as the union of that release's rows and its
own (``rolling.union_build``), by default as the next minor version; it is
refused unless vX.Y.Z is the newest release of the target and holds the data
the build was made from. Every release records what it added (``added`` in
release.json: the months of its new papers, or of all its papers when built
whole, and the build's counts by keep rule), which the card's changelog lists.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from rqbench import paths
from rqbench.dataset_card.build_folder import Build, BuildError, check_build, load_build
from rqbench.dataset_card.card_base import CardSettings
from rqbench.dataset_card.features import all_features, features_dict, schema_differences
from rqbench.dataset_card.release import assemble
from rqbench.dataset_card.repo import Target, TargetError, target_for
from rqbench.dataset_card.rolling import RollingError, additions, read_release, union_build
from rqbench.dataset_card.versions import RELEASE_FILE, ReleaseAdditions, ReleaseInfo, Version, VersionError
from rqbench.io import RecordError
from rqbench.records import SourceWindow


class PublishRefused(RuntimeError):
    """A release that must not be made; the message says why and what to do instead."""


@dataclass
class Published:
    version: Version
    commit: str
    target: str
    release: ReleaseInfo


def previous_release(target: Target, version: Version) -> ReleaseInfo | None:
    """release.json of the tag of ``version`` (None when absent or from another tool)."""
    text = target.read_text(RELEASE_FILE, version.tag)
    if text is None:
        return None
    try:
        return ReleaseInfo.model_validate_json(text)
    except ValidationError as exc:
        where = f"{target.describe()}@{version.tag}:{RELEASE_FILE}"
        raise PublishRefused(str(RecordError.from_validation(exc, path=where, kind="ReleaseInfo"))) from exc


def check_version(target: Target, version: Version) -> Version | None:
    """Refuse an existing or an older version; return the newest existing version (None for the first)."""
    existing = target.versions()
    if version in existing:
        newest = max(existing)
        raise PublishRefused(
            f"version {version} already exists in {target.describe()} (tag {version.tag} -> commit "
            f"{existing[version][:12]}); a published version never changes. Publish a new version instead, "
            f"e.g. --version {newest.next_patch()}"
        )
    if not existing:
        return None
    newest = max(existing)
    if version < newest:
        raise PublishRefused(
            f"version {version} is older than the newest release {newest} in {target.describe()}; "
            f"versions only go up (next patch: {newest.next_patch()})"
        )
    return newest


def check_schema(target: Target, version: Version, newest: Version | None) -> None:
    """Refuse a features change unless the major version goes up."""
    if newest is None:
        return
    prev = previous_release(target, newest)
    if prev is None:
        return
    diffs = schema_differences(prev.features, features_dict(all_features()))
    if diffs and version.major == newest.major:
        raise PublishRefused(
            f"the schema changed since {newest.tag} ({'; '.join(diffs)}); features stay identical within a "
            f"major version, so publish this as {newest.major + 1}.0.0"
        )


def check_build_valid(build_dir: Path) -> Build:
    try:
        build = load_build(build_dir)
    except BuildError as exc:
        raise PublishRefused(f"build {build_dir} failed validation: {exc}") from exc
    problems = check_build(build)
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise PublishRefused(f"build {build_dir} failed validation ({len(problems)} problems):\n  {shown}{more}")
    return build


def build_window(build: Build) -> SourceWindow | None:
    """The source window a build was made with (its manifest's ``inputs.window``); None for a whole build."""
    raw = build.manifest.inputs.get("window")
    return SourceWindow.model_validate(raw) if raw else None


def default_version(target: Target, window: SourceWindow | None) -> Version:
    """A rolling build's version when none is given: the next minor of the newest release."""
    existing = target.versions()
    if window is None or window.since_release is None or not existing:
        raise PublishRefused(
            "give --version X.Y.Z (only a build made with --since-release defaults to the next "
            "minor version of the newest release)"
        )
    return max(existing).next_minor()


def rolling_union(
    build: Build, window: SourceWindow, target: Target, newest: Version | None, root: Path
) -> tuple[Build, ReleaseAdditions]:
    """The union a rolling build publishes, and what it adds; refused unless the base is the target's newest
    release and holds the data the build was made from, or when the union's records contradict each other."""
    base_version = Version.parse(window.since_release or "")
    if newest != base_version:
        raise PublishRefused(
            f"the build extends {base_version.tag}, but the newest release in {target.describe()} is "
            f"{newest.tag if newest else 'none'}; rebuild with --since-release "
            f"{newest.tag if newest else 'vX.Y.Z'} so no release's papers are left out"
        )
    try:
        base = read_release(target, base_version)
    except RollingError as exc:
        raise PublishRefused(str(exc)) from exc
    if base.info.data_fingerprint != window.base_data_fingerprint:
        raise PublishRefused(
            f"{base_version.tag} in {target.describe()} is not the release the build was made from "
            f"(its data fingerprint is {base.info.data_fingerprint}, the build's window names "
            f"{window.base_data_fingerprint}); rebuild against this repository"
        )
    union = union_build(base, build, root)
    # the union's files are staged and gone after this: name it by what it joins
    problems = [p.replace(str(union.root), f"<{base_version.tag} + {build.root}>") for p in check_build(union)]
    if problems:
        shown = "\n  ".join(problems[:20])
        raise PublishRefused(
            f"the union of {base_version.tag} and {build.root} does not hold together "
            f"({len(problems)} problems):\n  {shown}"
        )
    return union, additions(build.papers, build.rqs, build.funnel, build.manifest, base_version.tag)


def publish(
    build_dir: str | Path,
    version: str | Version | None,
    target: Target,
    settings: CardSettings,
    *,
    notes: str = "",
    build: Build | None = None,
) -> Published:
    """Validate, stage, commit and tag one release (see the module docstring for what is refused).

    ``version`` None: the next minor version, for a build made with ``--since-release`` only.
    """
    build_dir = Path(build_dir)
    build = build or check_build_valid(build_dir)
    window = build_window(build)
    v = (
        default_version(target, window)
        if version is None
        else version
        if isinstance(version, Version)
        else Version.parse(version)
    )
    newest = check_version(target, v)
    check_schema(target, v, newest)
    existing_card = target.read_text("README.md")
    stage = paths.home() / "staging" / f"publish-{uuid.uuid4().hex[:10]}"
    try:
        if window is not None and window.since_release is not None:
            build, added = rolling_union(build, window, target, newest, stage / "union-build")
        else:
            added = additions(build.papers, build.rqs, build.funnel, build.manifest, None)  # built whole: all of it
        release, stats = assemble(
            build, v, stage / "tree", settings, existing_card=existing_card, notes=notes, added=added
        )
        message = (
            f"RQ-Bench {v.tag}: {stats.rqs} RQs, {stats.papers} papers, {stats.unique_cited_papers} "
            f"cited papers (build {release.build_id})"
        )
        commit = target.publish_tree(stage / "tree", v, message)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return Published(version=v, commit=commit, target=target.describe(), release=release)


# -- the job ------------------------------------------------------------------


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("build_dir", type=Path, help="a build folder (records/, manifest.json, ...)")
    parser.add_argument(
        "--version",
        default=None,
        help="the release version X.Y.Z (tagged vX.Y.Z); a build made with --since-release defaults "
        "to the next minor version and is published holding the release's rows and its own",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--repo", help="push to this Hub dataset repo ORG/NAME (token from HF_TOKEN or the login)")
    where.add_argument(
        "--to",
        type=Path,
        default=None,
        help="write to this local git repository instead (created if absent; the offline default)",
    )
    parser.add_argument("--notes", default="", help="one line for the changelog entry")
    parser.add_argument("--pretty-name", default="RQ-Bench")
    parser.add_argument(
        "--annotation-licence",
        default="CC BY 4.0",
        help="licence of what RQ-Bench made (the papers' texts keep their own)",
    )
    parser.add_argument("--sample", action="store_true", help="mark the card as a sample for trying the tools")
    parser.add_argument("--private", action="store_true", help="create the Hub repository as private")


def run(args: argparse.Namespace) -> int:
    from huggingface_hub.errors import HfHubHTTPError

    try:
        target = target_for(args.repo or "", args.to)
        if args.private and target.kind == "hub":
            target.private = True  # type: ignore[attr-defined]
        settings = CardSettings(
            repo=target.describe() if target.kind == "local" else args.repo,
            target=target.kind,  # type: ignore[arg-type]
            pretty_name=args.pretty_name,
            annotation_licence=args.annotation_licence,
            sample=args.sample,
        )
        done = publish(args.build_dir, args.version, target, settings, notes=args.notes)
    except (PublishRefused, VersionError, TargetError) as exc:
        print(f"rqbench publish: refused: {exc}", file=sys.stderr)
        return 1
    except HfHubHTTPError as exc:  # auth, permissions, a concurrent push (parent_commit moved)
        print(f"rqbench publish: the Hub refused the upload of {args.repo}: {exc}", file=sys.stderr)
        return 1
    print(
        json.dumps(
            {
                "version": str(done.version),
                "tag": done.version.tag,
                "commit": done.commit,
                "target": done.target,
                "rqs": done.release.splits["rqs"]["test"],
            }
        )
    )
    return 0
