"""The card's YAML header: our keys, ``configs`` and ``dataset_info``, merged over the header already published."""

from __future__ import annotations

from typing import Any

from datasets import DatasetInfo
from datasets.info import DatasetInfosDict
from huggingface_hub import DatasetCardData

from rqbench.dataset_card.card_base import CardSettings
from rqbench.dataset_card.features import CONFIG_RECORDS, DEFAULT_CONFIG
from rqbench.dataset_card.stats import DatasetStats, size_category
from rqbench.dataset_card.versions import ReleaseInfo


def configs_metadata(splits: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """The ``configs:`` entries: one per config, parquet files per split, ``rqs`` the default."""
    out = []
    for config in CONFIG_RECORDS:
        entry: dict[str, Any] = {"config_name": config}
        if config == DEFAULT_CONFIG:
            entry["default"] = True
        entry["data_files"] = [
            {"split": split, "path": f"data/{config}/{split}-*.parquet"} for split in splits.get(config, {})
        ]
        out.append(entry)
    return out


def dataset_info_metadata(infos: dict[str, DatasetInfo]) -> list[dict[str, Any]]:
    """The ``dataset_info:`` entries, written by datasets' own serialiser."""
    data = DatasetCardData()
    DatasetInfosDict(infos).to_dataset_card_data(data)
    value = data.to_dict().get("dataset_info", [])
    return value if isinstance(value, list) else [value]


def card_metadata(
    release: ReleaseInfo, stats: DatasetStats, infos: dict[str, DatasetInfo], settings: CardSettings
) -> dict[str, Any]:
    tags = ["research-questions", "scientific-novelty", "llm-as-a-judge", "benchmark", "arxiv"]
    if settings.sample:
        tags.append("sample")
    return {
        "pretty_name": settings.pretty_name,
        "license": "other",
        "license_name": settings.license_name,
        "license_link": "LICENSE.md",
        "language": ["en"],
        "task_categories": ["text-generation"],
        "size_categories": [size_category(stats.rqs)],
        "annotations_creators": ["machine-generated"],
        "language_creators": ["found"],
        "source_datasets": ["original"],
        "tags": tags,
        "configs": configs_metadata(release.splits),
        "dataset_info": dataset_info_metadata(infos),
    }


def _by_name(entries: Any) -> dict[str, dict[str, Any]]:
    if isinstance(entries, dict):
        entries = [entries]
    out = {}
    for e in entries or []:
        if isinstance(e, dict):
            out[e.get("config_name", "default")] = e
    return out


def merge_metadata(existing: dict[str, Any] | None, ours: dict[str, Any]) -> dict[str, Any]:
    """Ours over the existing header; configs/dataset_info merged by config name; tags unioned."""
    merged = dict(existing or {})
    for key, value in ours.items():
        if key in ("configs", "dataset_info"):
            old, new = _by_name(merged.get(key)), _by_name(value)
            kept = [e for name, e in old.items() if name not in new]
            if key == "configs" and any(e.get("default") for e in new.values()):
                kept = [{k: v for k, v in e.items() if k != "default"} for e in kept]
            merged[key] = list(new.values()) + kept
        elif key == "tags":
            merged[key] = list(dict.fromkeys(list(value) + list(merged.get(key) or [])))
        else:
            merged[key] = value
    return merged
