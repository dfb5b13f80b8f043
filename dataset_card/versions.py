"""Release versions (``X.Y.Z``, tagged ``vX.Y.Z``) and ``release.json``, the machine-readable record of one release.

``release.json`` sits at the root of every published revision. ``rqbench publish``
reads the newest one to refuse a schema change without a major bump, and
``setup-sample`` reads its data fingerprint to do nothing when the data is
unchanged.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import total_ordering
from typing import Any, Literal

from pydantic import BaseModel, Field

from rqbench.records import SCHEMA_VERSION

_VERSION_RE = re.compile(r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
RELEASE_FILE = "release.json"


class VersionError(ValueError):
    """A version string that is not X.Y.Z."""


@total_ordering
class Version:
    """A semantic version without pre-release parts: major.minor.patch."""

    __slots__ = ("major", "minor", "patch")

    def __init__(self, major: int, minor: int, patch: int):
        self.major, self.minor, self.patch = major, minor, patch

    @classmethod
    def parse(cls, text: str) -> "Version":
        m = _VERSION_RE.match(text.strip())
        if not m:
            raise VersionError(f"version {text!r} is not of the form X.Y.Z (e.g. 1.0.0)")
        return cls(*(int(g) for g in m.groups()))

    @classmethod
    def from_tag(cls, tag: str) -> "Version | None":
        """The version of a tag ``vX.Y.Z``; None for any other tag."""
        if not tag.startswith("v"):
            return None
        try:
            return cls.parse(tag)
        except VersionError:
            return None

    @property
    def tag(self) -> str:
        return f"v{self}"

    def next_patch(self) -> "Version":
        return Version(self.major, self.minor, self.patch + 1)

    def next_minor(self) -> "Version":
        """The version a rolling release takes: the same schema, more data."""
        return Version(self.major, self.minor + 1, 0)

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other: "Version") -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def __repr__(self) -> str:
        return f"Version({self})"


class ReleaseAdditions(BaseModel):
    """What a release added, for the card's changelog: the months of its new papers (every paper, for a release
    built whole), and its build's counts."""

    extends: str | None = Field(
        default=None, description="The release whose rows it keeps (a rolling minor version), else None (built whole)."
    )
    months: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="First-version month (YYYY-MM, or 'undated') -> papers and RQs added."
    )
    removed_by_rule: dict[str, int] = Field(default_factory=dict, description="Papers each applied keep rule removed.")
    rqs_dropped: dict[str, int] = Field(default_factory=dict, description="RQs the build dropped, by reason.")


class ReleaseInfo(BaseModel):
    """What one published revision holds, as written to ``release.json``."""

    kind: Literal["rqbench.release"] = "rqbench.release"
    schema_version: int = SCHEMA_VERSION
    version: str
    tag: str
    build_id: str
    built_at: datetime
    published_at: datetime
    features: dict[str, Any] = Field(description="datasets.Features.to_dict() per config.")
    schema_fingerprint: str
    data_fingerprint: str = Field(description="Hash of every config's rows; equal means the same data.")
    splits: dict[str, dict[str, int]] = Field(description="Rows per config and split.")
    dev_rule: dict[str, Any]
    sample: bool = False
    notes: str = ""
    added: ReleaseAdditions | None = Field(
        default=None, description="What this release added; None in releases published before it was recorded."
    )
