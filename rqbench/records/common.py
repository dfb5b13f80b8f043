"""What every record shares: the two bases, the schema version, text limits, RQ ids, the reply schema.

Input models forbid unknown fields so a typo in a file is an error, not a
silent default; an LLM's reply ignores extra keys but checks its shape.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo, field_validator

from rqbench import wellformed

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


def rq_id_for(paper_id: str, index: int) -> str:
    """The dataset's RQ id rule: ``<paper_id>_rq<index>`` (the paper id is M's arXiv id for an arXiv paper)."""
    if index < 0:
        raise ValueError(f"RQ index must be >= 0, got {index}")
    return f"{paper_id}_rq{index}"


def parse_rq_id(rq_id: str) -> tuple[str, int]:
    """Split an RQ id into (paper_id, index); ValueError if it breaks the rule."""
    m = RQ_ID_RE.match(rq_id)
    if not m:
        raise ValueError(f"rq_id {rq_id!r} is not of the form <paper_id>_rq<index>")
    return m.group("arxiv_id"), int(m.group("index"))


def paper_id_from_arxiv_id(data: object) -> object:
    """A ``mode="before"`` validator body: a record written before ``paper_id`` existed (every paper was then
    named by its arXiv id) gets its ``paper_id`` from ``arxiv_id``, so older releases and files still load."""
    if isinstance(data, dict) and not data.get("paper_id") and data.get("arxiv_id"):
        return {**data, "paper_id": data["arxiv_id"]}
    return data


# The validation context under which the gate's validators (``gate_fields``, ``gate_type``) let text through
# unchecked: for a caller that applies the gate itself, item by item. The builder reads a reply that still
# failed after its re-ask this way and drops only the items that fail, by rule; the submission validator
# gates each RQ of a line that will be judged itself, with a problem code per rule.
WELLFORMED_PER_ITEM = {"wellformed": "per_item"}


def _gate(kind: wellformed.Kind | str, standard: wellformed.Standard = wellformed.Standard.extracted) -> Any:
    """The gate on a str or a list of str, for pydantic (texts come back stripped); off under WELLFORMED_PER_ITEM.

    Only failures that refuse raise (under ``Standard.submitted`` those that go to review are the
    submission report's, not a re-ask's).
    """
    k = wellformed.Kind(kind)

    def gate(value: Any, info: ValidationInfo) -> Any:
        if isinstance(info.context, dict) and info.context.get("wellformed") == WELLFORMED_PER_ITEM["wellformed"]:
            return value
        if isinstance(value, str):
            return wellformed.require(value, k, standard)
        problems = [
            f"item {i}: {wellformed.explain(k, failures)}"
            for i, failures in enumerate(wellformed.refusals(wellformed.check(t, k, standard)) for t in value)
            if failures
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return [t.strip() for t in value]

    gate.__name__ = f"wellformed_{k.value}"
    return gate


def gate_fields(kind: wellformed.Kind | str, *fields: str) -> Any:
    """A field validator applying the gate (``rqbench.wellformed``) to ``fields``: each a str or a list of str.

    Assign it in a reply model (``_gate = gate_fields("gap", "gaps")``). It is a validator by field
    name, so a subclass that narrows a field (a stage's bounded reply) keeps it. A failure's message
    names the item and every rule broken with what to fix: the LLM layer quotes it in the re-ask.
    """
    return field_validator(*fields)(_gate(kind))


def gate_type(
    kind: wellformed.Kind | str, standard: wellformed.Standard = wellformed.Standard.extracted
) -> AfterValidator:
    """The gate for one ``Annotated[str, ...]`` type (a failure's location is the item itself)."""
    return AfterValidator(_gate(kind, standard))


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
