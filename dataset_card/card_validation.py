"""Checking a rendered card the way the Hub and ``datasets`` will read it."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from rqbench.dataset_card.card_base import PLACEHOLDER
from rqbench.dataset_card.card_changelog import changelog_entries
from rqbench.dataset_card.features import CONFIG_RECORDS, config_features

# Keys of the YAML header a card must have (``card_metadata`` owns them; all others are left as found).
REQUIRED_KEYS = (
    "license",
    "task_categories",
    "language",
    "size_categories",
    "pretty_name",
    "tags",
    "configs",
    "dataset_info",
)
SIZE_CATEGORIES = {
    "n<1K",
    "1K<n<10K",
    "10K<n<100K",
    "100K<n<1M",
    "1M<n<10M",
    "10M<n<100M",
    "100M<n<1B",
    "1B<n<10B",
    "10B<n<100B",
    "100B<n<1T",
    "n>1T",
}
REQUIRED_SECTIONS = (
    "## Summary",
    "## How to load",
    "## Configs and fields",
    "## Splits",
    "## How it was made",
    "## Summary statistics",
    "## Cited papers' text",
    "## Verification",
    "## Limitations",
    "## Licence of the texts",
    "## Citation",
    "## Changelog",
)


def _files_matching(tree: Path, pattern: str) -> list[str]:
    files = [p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts]
    return [f for f in files if fnmatch.fnmatch(f, pattern)]


def validate_card(text: str, *, tree: Path | None = None, version: str | None = None) -> list[str]:
    """Problems of a card, one per line (empty = valid).

    Parses with huggingface_hub's ``DatasetCard`` (strict metadata), reads
    ``configs`` and ``dataset_info`` with datasets' own parsers, checks that our
    configs declare exactly the features of the records, that every data_files
    pattern matches a file in ``tree``, and that the body has every section, no
    unfilled placeholder, and the changelog entry of ``version``.
    """
    problems: list[str] = []
    try:
        card = DatasetCard(text, ignore_metadata_errors=False)
    except Exception as exc:
        return [f"README.md: not a valid dataset card: {exc}"]
    data: DatasetCardData = card.data
    meta = data.to_dict()
    for key in REQUIRED_KEYS:
        if not meta.get(key):
            problems.append(f"README.md: metadata key {key!r} is missing or empty")
    if meta.get("license") == "other" and not (meta.get("license_name") and meta.get("license_link")):
        problems.append("README.md: license 'other' needs license_name and license_link")
    for cat in meta.get("size_categories") or []:
        if cat not in SIZE_CATEGORIES:
            problems.append(f"README.md: size_categories value {cat!r} is not one the Hub knows")
    try:
        configs = MetadataConfigs.from_dataset_card_data(data)
        infos = DatasetInfosDict.from_dataset_card_data(data)
    except Exception as exc:
        return problems + [f"README.md: configs/dataset_info not readable by datasets: {exc}"]
    defaults = [name for name, c in configs.items() if c.get("default")]
    if len(defaults) != 1:
        problems.append(f"README.md: exactly one config must be the default, found {defaults}")
    for name in CONFIG_RECORDS:
        if name not in configs:
            problems.append(f"README.md: configs has no {name!r}")
            continue
        info = infos.get(name)
        if info is None or info.features is None:
            problems.append(f"README.md: dataset_info has no features for {name!r}")
        elif info.features != config_features(name):
            problems.append(f"README.md: dataset_info features of {name!r} differ from the {name} records")
        if tree is not None:
            for df in configs[name].get("data_files") or []:
                if not _files_matching(tree, df["path"]):
                    problems.append(f"README.md: config {name!r} split {df['split']!r}: no file matches {df['path']}")
    body = card.text
    for section in REQUIRED_SECTIONS:
        if section not in body:
            problems.append(f"README.md: section {section!r} is missing")
    left = sorted(set(PLACEHOLDER.findall(body)))
    if left:
        problems.append(f"README.md: unfilled placeholders {left}")
    if version is not None and not any(e.startswith(f"- **v{version}**") for e in changelog_entries(text)):
        problems.append(f"README.md: the changelog has no entry for v{version}")
    return problems
