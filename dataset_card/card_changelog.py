"""The card's changelog: one line per version, kept across releases between two markers, newest first."""

from __future__ import annotations

import re

from rqbench.dataset_card.stats import DatasetStats
from rqbench.dataset_card.versions import ReleaseAdditions, ReleaseInfo, Version

CHANGELOG_START = "<!-- rqbench:changelog:start -->"
CHANGELOG_END = "<!-- rqbench:changelog:end -->"
_ENTRY_RE = re.compile(r"^- \*\*v(?P<version>\d+\.\d+\.\d+)\*\*")


def changelog_entries(card_text: str | None) -> list[str]:
    """The entries of an existing card's changelog (one line each), in the order found."""
    if not card_text or CHANGELOG_START not in card_text:
        return []
    body = card_text.split(CHANGELOG_START, 1)[1].split(CHANGELOG_END, 1)[0]
    return [line for line in body.splitlines() if _ENTRY_RE.match(line)]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def additions_text(added: ReleaseAdditions) -> str:
    """The changelog's account of what a release added: the base it extends, the months, the counts by rule."""
    months = (
        "; ".join(
            f"{m}: {_plural(c.get('papers', 0), 'paper')}, {c.get('rqs', 0)} RQs" for m, c in added.months.items()
        )
        or "none"
    )
    if added.extends:
        parts = [f"Extends v{added.extends.removeprefix('v')} with its rows unchanged.", f"Added {months}."]
    else:
        parts = [f"Built whole; papers by first-version month: {months}."]
    if added.removed_by_rule:
        parts.append(
            "Papers removed by keep rule: " + ", ".join(f"{r} {n}" for r, n in added.removed_by_rule.items()) + "."
        )
    if added.rqs_dropped:
        parts.append("RQs dropped: " + ", ".join(f"{r} {n}" for r, n in added.rqs_dropped.items()) + ".")
    return " ".join(p for p in parts if p)


def changelog_entry(release: ReleaseInfo, stats: DatasetStats) -> str:
    notes = f" {release.notes.strip()}" if release.notes.strip() else ""
    added = f" {additions_text(release.added)}" if release.added is not None else ""
    return (
        f"- **v{release.version}** ({release.published_at.date().isoformat()}): build `{release.build_id}`, "
        f"{stats.rqs} RQs from {stats.papers} papers, {stats.unique_cited_papers} cited papers; "
        f"schema `{release.schema_fingerprint}`.{added}{notes}"
    )


def merged_changelog(existing: str | None, entry: str) -> str:
    """Earlier entries plus this one (replacing an entry of the same version), newest first."""
    version = _ENTRY_RE.match(entry).group("version")  # type: ignore[union-attr]
    entries = [e for e in changelog_entries(existing) if _ENTRY_RE.match(e).group("version") != version]  # type: ignore[union-attr]
    entries.append(entry)
    entries.sort(key=lambda e: Version.parse(_ENTRY_RE.match(e).group("version")), reverse=True)  # type: ignore[union-attr]
    return "\n".join(entries)
