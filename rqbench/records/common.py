"""What every record shares: the two bases, the schema version, text limits, RQ ids, the reply schema.

Input models forbid unknown fields so a typo in a file is an error, not a
silent default; an LLM's reply ignores extra keys but checks its shape.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1

ARXIV_ID_RE = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(\.[A-Z]{2})?/\d{7})$")
RQ_ID_RE = re.compile(r"^(?P<arxiv_id>.+)_rq(?P<index>\d+)$")

# Bounds on free text, shared by the models and the JSON schemas given to the
# local model (which needs maxLength to stop rambling).
MAX_RQ_CHARS = 600
MAX_SHORT_TEXT = 400
MAX_LONG_TEXT = 1000  # llama.cpp cannot compile a JSON grammar for much longer strings (measured: 1500 fails)


class Record(BaseModel):
    """Base of stored records: strict about unknown fields."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class Reply(BaseModel):
    """Base of an LLM's JSON reply: extra keys are ignored, shapes are checked."""

    model_config = ConfigDict(extra="ignore")


def rq_id_for(arxiv_id: str, index: int) -> str:
    """The dataset's RQ id rule: ``<arxiv_id>_rq<index>``."""
    if index < 0:
        raise ValueError(f"RQ index must be >= 0, got {index}")
    return f"{arxiv_id}_rq{index}"


def parse_rq_id(rq_id: str) -> tuple[str, int]:
    """Split an RQ id into (arxiv_id, index); ValueError if it breaks the rule."""
    m = RQ_ID_RE.match(rq_id)
    if not m:
        raise ValueError(f"rq_id {rq_id!r} is not of the form <arxiv_id>_rq<index>")
    return m.group("arxiv_id"), int(m.group("index"))


class PromptSetRef(Record):
    name: str
    hash: str


@functools.lru_cache(maxsize=64)
def _reply_json_schema(model: type[BaseModel]) -> str:
    return json.dumps(_strip_bookkeeping(model.model_json_schema()))


def reply_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema handed to the LLM: the reply without our bookkeeping fields."""
    return json.loads(_reply_json_schema(model))


def _strip_bookkeeping(schema: dict[str, Any]) -> dict[str, Any]:
    def strip(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                props.pop("rule_corrections", None)
                if "required" in node:
                    node["required"] = [r for r in node["required"] if r != "rule_corrections"]
            for v in node.values():
                strip(v)
        elif isinstance(node, list):
            for v in node:
                strip(v)

    strip(schema)
    return schema
