"""The typed ``datasets.Features`` of each config, derived from the pydantic records in one place.

The records in ``rqbench.records`` are the single source of truth: every config's
features are computed from its record class, so the parquet schema, the card's
``dataset_info`` and the records cannot drift apart. The mapping, chosen once:

- ``str`` -> ``string``, ``int`` -> ``int64``, ``float`` -> ``float64``, ``bool`` -> ``bool``;
- enums and ``Literal`` tags -> ``string`` (their value), so readers need no enum table;
- ``datetime`` and ``date`` -> ``string`` in ISO 8601, exactly as pydantic writes them:
  the records allow naive and aware datetimes, and a string keeps what the builder
  wrote and validates back into the record without a timezone guess;
- nested models -> a struct (a dict of features), ``None`` allowed where the record allows it;
- ``list[X]`` -> ``List(X)``;
- ``dict[str, str]`` -> ``List({key, value})`` (Arrow maps are not a datasets feature);
- ``Any`` and ``dict[str, Any]`` -> a JSON string (``json.dumps`` with sorted keys).

``to_row`` and ``from_row`` apply the same mapping to values, so a record read back
from the published parquet validates into the same record.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from datetime import date, datetime
from typing import Any, Literal

from datasets import Features, List, Value
from pydantic import BaseModel, ValidationError

from rqbench.hashing import content_hash
from rqbench.io import RecordError
from rqbench.records import CitedPaper, EvaluationInstance, PaperRecord, RQRecord

# config name -> the record of one row. Order is the order of the card's configs.
CONFIG_RECORDS: dict[str, type[BaseModel]] = {
    "rqs": RQRecord,
    "papers": PaperRecord,
    "cited_papers": CitedPaper,
    "instances": EvaluationInstance,
}
DEFAULT_CONFIG = "rqs"


class FeatureError(TypeError):
    """A record field whose type has no feature mapping (extend the mapping, don't guess)."""


class RowError(RecordError):
    """A published row that does not validate back into its record: ``<where>: <Model>.<field>: <problem>``."""

    FIELD_FORMAT = "{model}.{field}"


def _strip_annotated(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _unwrap_optional(tp: Any) -> Any:
    """``X | None`` -> ``X``; other unions are not mapped."""
    tp = _strip_annotated(tp)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) != 1:
            raise FeatureError(f"union {tp!r} has no single feature type")
        return _strip_annotated(args[0])
    return tp


def _is_str_dict(tp: Any) -> bool:
    return typing.get_origin(tp) is dict and typing.get_args(tp) == (str, str)


def _is_json(tp: Any) -> bool:
    if tp is Any:
        return True
    return typing.get_origin(tp) is dict and not _is_str_dict(tp)


def feature_for(annotation: Any, where: str = "") -> Any:
    """The datasets feature for one type annotation (see the module docstring)."""
    tp = _unwrap_optional(annotation)
    origin = typing.get_origin(tp)
    if _is_json(tp):
        return Value("string")
    if _is_str_dict(tp):
        return List({"key": Value("string"), "value": Value("string")})
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return List(feature_for(item, f"{where}[]"))
    if origin is Literal:
        values = typing.get_args(tp)
        if not all(isinstance(v, str) for v in values):
            raise FeatureError(f"{where}: only string Literal tags are mapped, got {values!r}")
        return Value("string")
    if isinstance(tp, type):
        if issubclass(tp, BaseModel):
            return features_for(tp)
        if issubclass(tp, enum.Enum):
            return Value("string")
        if tp is bool:
            return Value("bool")
        if tp is int:
            return Value("int64")
        if tp is float:
            return Value("float64")
        if tp is str or issubclass(tp, (datetime, date)):
            return Value("string")
    raise FeatureError(f"{where or 'field'}: no feature mapping for type {tp!r}")


def features_for(model: type[BaseModel]) -> Features:
    """Features of a record class, fields in declaration order."""
    return Features(
        {name: feature_for(f.annotation, f"{model.__name__}.{name}") for name, f in model.model_fields.items()}
    )


def config_features(config: str) -> Features:
    """The declared features of one config."""
    try:
        model = CONFIG_RECORDS[config]
    except KeyError:
        raise KeyError(f"unknown config {config!r}; configs are {list(CONFIG_RECORDS)}") from None
    return features_for(model)


def all_features() -> dict[str, Features]:
    return {name: config_features(name) for name in CONFIG_RECORDS}


def features_dict(features_by_config: dict[str, Features]) -> dict[str, Any]:
    """A JSON-ready form of the features of every config (what release.json stores)."""
    return {name: f.to_dict() for name, f in features_by_config.items()}


def schema_fingerprint(features_by_config: dict[str, Features]) -> str:
    """One hash of every config's features: equal fingerprints mean the same schema."""
    return content_hash(features_dict(features_by_config))


def schema_differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Human-readable differences between two ``features_dict`` results, one line each."""
    out: list[str] = []
    for config in sorted(set(old) | set(new)):
        if config not in new:
            out.append(f"config {config!r} removed")
            continue
        if config not in old:
            out.append(f"config {config!r} added")
            continue
        a, b = old[config], new[config]
        here: list[str] = []
        for field in sorted(set(a) | set(b)):
            if field not in b:
                here.append(f"{config}.{field} removed")
            elif field not in a:
                here.append(f"{config}.{field} added")
            elif a[field] != b[field]:
                here.append(f"{config}.{field} changed type")
        if not here and list(a) != list(b):
            here.append(f"{config}: field order changed")
        out.extend(here)
    return out


# -- values ----------------------------------------------------------------


def _encode(annotation: Any, value: Any) -> Any:
    if value is None:
        return None
    tp = _unwrap_optional(annotation)
    if _is_json(tp):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    if _is_str_dict(tp):
        return [{"key": k, "value": v} for k, v in value.items()]
    if typing.get_origin(tp) is list:
        (item,) = typing.get_args(tp) or (Any,)
        return [_encode(item, v) for v in value]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return {name: _encode(f.annotation, value.get(name)) for name, f in tp.model_fields.items()}
    return value


def _decode(annotation: Any, value: Any) -> Any:
    if value is None:
        return None
    tp = _unwrap_optional(annotation)
    if _is_json(tp):
        return json.loads(value)
    if _is_str_dict(tp):
        return {kv["key"]: kv["value"] for kv in value}
    if typing.get_origin(tp) is list:
        (item,) = typing.get_args(tp) or (Any,)
        return [_decode(item, v) for v in value]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return {name: _decode(f.annotation, value.get(name)) for name, f in tp.model_fields.items()}
    return value


def to_row(record: BaseModel) -> dict[str, Any]:
    """A record as a row of its config: JSON-mode values, then the feature mapping."""
    dumped = record.model_dump(mode="json")
    return {name: _encode(f.annotation, dumped.get(name)) for name, f in type(record).model_fields.items()}


def from_row(model: type[BaseModel], row: dict[str, Any], where: str = "row") -> BaseModel:
    """A row read back from the dataset, validated into its record."""
    data = {name: _decode(f.annotation, row.get(name)) for name, f in model.model_fields.items()}
    # Optional fields come back as None where the record has a non-None default
    # (e.g. lists); drop those so the record's default applies.
    for name, f in model.model_fields.items():
        if data[name] is None and not f.is_required() and f.get_default(call_default_factory=True) is not None:
            del data[name]
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise RowError.from_validation(exc, record=where) from exc
