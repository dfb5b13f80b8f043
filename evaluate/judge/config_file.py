"""A judge as a file: ``--judge judges/strict-deepseek.toml`` names a model and its settings in TOML.

A judge is a model configuration: a model name and the settings it is called with (temperature, reasoning effort,
reply budget, rate limits). On the command line that is a spec, ``model@key=value,...``; a team that keeps its
judges under version control writes one file per judge instead:

    model = "deepseek/deepseek-chat"
    [settings]
    temperature = 0
    max_tokens = 4096

The file becomes the same spec (``deepseek/deepseek-chat@max_tokens=4096,temperature=0``), so it is resolved,
labelled, cached and recorded exactly as the spec would be: one judge, whichever way it was named.
"""

from __future__ import annotations

from pathlib import Path

import tomllib
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rqbench.llm.catalog import parse_model_spec
from rqbench.llm.config import ModelConfig

SUFFIX = ".toml"
# what a spec may set: a model configuration's fields, less those the model name itself decides
SETTABLE = frozenset(ModelConfig.model_fields) - {"name", "litellm_model", "api_key", "local"}


class JudgeFile(BaseModel):
    """What a judge file holds: the model, and the settings that make it this judge."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, description="litellm model name, or local / local/<id> for the embedded model")
    settings: dict[str, str | int | float] = Field(
        default_factory=dict, description="ModelConfig settings: temperature, reasoning_effort, max_tokens, ..."
    )


def spec_of(file: JudgeFile, where: str) -> str:
    """The spec a judge file stands for, settings in name order (the same file, the same spec and cache keys)."""
    if "@" in file.model:
        raise ValueError(f"{where}: model {file.model!r}: put its settings under [settings], not after '@'")
    parts = []
    for key, value in sorted(file.settings.items()):
        if key not in SETTABLE:
            raise ValueError(f"{where}: settings.{key}: not a judge setting; one of {', '.join(sorted(SETTABLE))}")
        text = str(value)
        if any(c in text for c in ",@=") or any(c in key for c in ",@="):
            raise ValueError(f"{where}: settings.{key}: {text!r} cannot hold ',', '@' or '='")
        parts.append(f"{key}={text}")
    spec = file.model + ("@" + ",".join(parts) if parts else "")
    parse_model_spec(spec)  # the spec reads back as it was written
    return spec


def judge_spec(value: str) -> str:
    """A ``--judge`` value as a model spec: a spec as given, or the spec of a ``.toml`` judge file.

    A file that cannot be read or does not describe a judge raises ValueError naming the file and the field."""
    if not value.endswith(SUFFIX):
        return value
    path = Path(value)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"judge file {path}: cannot be read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"judge file {path}: not TOML: {exc}") from None
    try:
        file = JudgeFile.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"judge file {path}: {problems}") from None
    return spec_of(file, f"judge file {path}")
