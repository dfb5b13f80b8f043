"""What every part of the dataset card shares: its error, its settings, template filling and markdown table rows.

The card's parts (``card_fields``, ``card_metadata``, ``card_changelog``,
``card_validation``) import these from here, and ``card`` (the body and the
whole card) imports the parts, so no part needs ``card`` and there is no loop.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel

PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")


class CardError(ValueError):
    """A card that cannot be rendered or does not validate."""


class CardSettings(BaseModel):
    """What the card says that the data cannot: names, licence, where it lives."""

    repo: str = "ORG/rq-bench"
    target: Literal["hub", "local"] = "hub"
    pretty_name: str = "RQ-Bench"
    annotation_licence: str = "CC BY 4.0"
    license_name: str = "rq-bench-mixed"
    sample: bool = False
    notes: str = ""
    extra_limitations: list[str] = []
    citation_key: str = "rqbench"
    citation_title: str = "On the Limits of LLM-as-Judge for Scientific Novelty Assessment"


# -- filling a template -------------------------------------------------------


def fill(template: str, values: dict[str, Any], name: str) -> str:
    """Replace every ``{{name}}``; refuse a missing or an unused value so template and code agree."""
    wanted = set(PLACEHOLDER.findall(template))
    missing, extra = wanted - values.keys(), values.keys() - wanted
    if missing or extra:
        raise CardError(f"{name}: missing values {sorted(missing)}, unused values {sorted(extra)}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def _cell(value: Any) -> str:
    text = "—" if value is None or value == "" else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def table_rows(rows: Iterable[Iterable[Any]]) -> str:
    lines = ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
