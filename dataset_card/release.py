"""Turning a validated build into the file tree of one release (parquet per config and split, card, release.json).

The tree is the same whatever the target: ``LocalGitTarget`` commits it to a git
repository, ``HubTarget`` sends it as one Hub commit. Layout::

    README.md                       the card (YAML configs + dataset_info, then the body)
    LICENSE.md                      the licence of annotations and texts
    release.json                    ReleaseInfo: version, features, fingerprints, split sizes
    data/<config>/<split>-00000-of-00001.parquet
    build/manifest.json, funnel.json, skips.jsonl, manual_validation_sample.json
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from datasets import Dataset, DatasetInfo, SplitDict, SplitInfo

from rqbench.dataset_card.build_folder import Build
from rqbench.dataset_card.card import licence_text, render_card
from rqbench.dataset_card.card_base import CardError, CardSettings
from rqbench.dataset_card.card_validation import validate_card
from rqbench.dataset_card.features import (
    CONFIG_RECORDS,
    all_features,
    config_features,
    features_dict,
    schema_fingerprint,
    to_row,
)
from rqbench.dataset_card.splits import DEV_FRACTION, DEV_SEED, dev_papers
from rqbench.dataset_card.stats import DatasetStats, build_stats
from rqbench.dataset_card.versions import RELEASE_FILE, ReleaseAdditions, ReleaseInfo, Version
from rqbench.hashing import content_hash
from rqbench.records import parse_rq_id

BUILD_FILES = ("manifest.json", "funnel.json", "skips.jsonl", "manual_validation_sample.json")
# Folders whose content a release owns: files there that a new release lacks are deleted.
MANAGED_PREFIXES = tuple(f"data/{c}/" for c in CONFIG_RECORDS) + ("build/",)
MANAGED_FILES = ("README.md", "LICENSE.md", RELEASE_FILE)
DEV_SPLIT_CONFIGS = ("rqs", "instances")


def _rq_order(rq_id: str) -> tuple[str, int]:
    return parse_rq_id(rq_id)


def release_rows(build: Build) -> tuple[dict[str, dict[str, list[dict[str, Any]]]], list[str]]:
    """Rows per config and split, in a fixed order, and the dev papers."""
    dev = sorted(dev_papers(r.paper_id for r in build.rqs))
    ordered = {
        "rqs": sorted(build.rqs, key=lambda r: _rq_order(r.rq_id)),
        "papers": sorted(build.papers, key=lambda p: p.paper.paper_id),
        "cited_papers": sorted(build.cited_papers, key=lambda c: c.paper_id),
        "instances": sorted(build.instances, key=lambda i: _rq_order(i.rq_id)),
    }
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for config, records in ordered.items():
        splits = {"test": [to_row(r) for r in records]}
        if config in DEV_SPLIT_CONFIGS:
            splits["dev"] = [to_row(r) for r in records if r.paper_id in dev]  # type: ignore[attr-defined]
        out[config] = splits
    return out, dev


def data_fingerprint(rows: dict[str, dict[str, list[dict[str, Any]]]]) -> str:
    """Equal fingerprints mean equal published data (the card and provenance files aside)."""
    return content_hash(rows)


def build_fingerprint(build: Build) -> str:
    return data_fingerprint(release_rows(build)[0])


def _write_parquet(rows: list[dict[str, Any]], config: str, path: Path) -> int:
    """Write one split; returns its in-memory size (dataset_info's num_bytes)."""
    ds = Dataset.from_list(rows, features=config_features(config))
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(ds.data.table, path)  # keeps the 'huggingface' features metadata
    return ds.data.nbytes


def assemble(
    build: Build,
    version: Version,
    out: Path,
    settings: CardSettings,
    *,
    existing_card: str | None = None,
    notes: str = "",
    published_at: datetime | None = None,
    added: ReleaseAdditions | None = None,
) -> tuple[ReleaseInfo, DatasetStats]:
    """Write the release tree of ``build`` into the empty folder ``out``; the card is validated there."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out}: staging folder is not empty")
    out.mkdir(parents=True, exist_ok=True)
    rows, dev = release_rows(build)
    infos: dict[str, DatasetInfo] = {}
    for config, splits in rows.items():
        split_dict = SplitDict()
        download = 0
        for split, split_rows in splits.items():
            path = out / "data" / config / f"{split}-00000-of-00001.parquet"
            nbytes = _write_parquet(split_rows, config, path)
            download += path.stat().st_size
            split_dict.add(SplitInfo(name=split, num_bytes=nbytes, num_examples=len(split_rows)))
        infos[config] = DatasetInfo(
            features=config_features(config),
            splits=split_dict,
            download_size=download,
            dataset_size=sum(s.num_bytes for s in split_dict.values()),
            config_name=config,
        )
    feats = all_features()
    release = ReleaseInfo(
        version=str(version),
        tag=version.tag,
        build_id=build.manifest.build_id,
        built_at=build.manifest.created_at,
        published_at=published_at or datetime.now(timezone.utc),
        features=features_dict(feats),
        schema_fingerprint=schema_fingerprint(feats),
        data_fingerprint=data_fingerprint(rows),
        splits={c: {s: len(r) for s, r in splits.items()} for c, splits in rows.items()},
        dev_rule={"seed": DEV_SEED, "fraction": DEV_FRACTION, "unit": "paper", "dev_papers": dev},
        sample=settings.sample,
        notes=notes,
        added=added,
    )
    stats = build_stats(build)
    card = render_card(release, stats, infos, build.manifest, build.funnel, settings, existing_card)
    (out / "README.md").write_text(card, encoding="utf-8")
    (out / "LICENSE.md").write_text(
        f"# Licence of {settings.pretty_name}\n\n{licence_text(settings)}\n", encoding="utf-8"
    )
    (out / RELEASE_FILE).write_text(release.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (out / "build").mkdir()
    for name in BUILD_FILES:
        if (build.root / name).is_file():
            shutil.copyfile(build.root / name, out / "build" / name)
    problems = validate_card(card, tree=out, version=release.version)
    if problems:
        raise CardError("the generated card does not validate:\n  " + "\n  ".join(problems))
    return release, stats


def tree_files(root: Path) -> list[str]:
    """Every file of a staged tree, as repository paths."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def is_managed(path: str) -> bool:
    return path in MANAGED_FILES or path.startswith(MANAGED_PREFIXES)
