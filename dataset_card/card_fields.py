"""The card's "Configs and fields" tables: every published field with its feature type and meaning."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from rqbench.dataset_card.card_base import table_rows
from rqbench.dataset_card.features import CONFIG_RECORDS, config_features
from rqbench.dataset_card.field_docs import FIELD_DOCS


def _feature_type(feature: Any) -> str:
    from datasets import List, Value

    if isinstance(feature, Value):
        return feature.dtype
    if isinstance(feature, List):
        return f"list<{_feature_type(feature.feature)}>"
    if isinstance(feature, dict):
        return "struct"
    return type(feature).__name__


def _field_doc(model: type[BaseModel], name: str) -> str:
    desc = model.model_fields[name].description
    return desc or FIELD_DOCS.get(f"{model.__name__}.{name}", "")


def field_rows(model: type[BaseModel], features: dict[str, Any], prefix: str = "") -> list[tuple[str, str, str]]:
    """(field path, feature type, meaning) for every field, nested ones as ``a.b`` / ``a[].b``."""
    import typing

    from datasets import List

    from rqbench.dataset_card.features import _unwrap_optional

    out = []
    for name, feature in features.items():
        path = f"{prefix}{name}"
        out.append((path, _feature_type(feature), _field_doc(model, name)))
        inner, sep = feature, "."
        if isinstance(feature, List) and isinstance(feature.feature, dict):
            inner, sep = feature.feature, "[]."
        if isinstance(inner, dict):
            tp = _unwrap_optional(model.model_fields[name].annotation)
            if typing.get_origin(tp) is list:
                tp = _unwrap_optional(typing.get_args(tp)[0])
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                out.extend(field_rows(tp, inner, f"{path}{sep}"))
    return out


def undocumented_fields() -> list[str]:
    """Published fields with no meaning for the card (a test keeps this empty)."""
    missing = []
    for config, model in CONFIG_RECORDS.items():
        for path, _, doc in field_rows(model, config_features(config)):
            if not doc.strip():
                missing.append(f"{config}.{path}")
    return missing


def fields_tables() -> str:
    parts = []
    for config, model in CONFIG_RECORDS.items():
        rows = field_rows(model, config_features(config))
        parts.append(
            f"### `{config}` ({model.__name__})\n\n| field | type | meaning |\n|---|---|---|\n"
            + table_rows((f"`{p}`", t, d) for p, t, d in rows)
        )
    return "\n\n".join(parts)
