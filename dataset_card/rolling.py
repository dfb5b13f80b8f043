"""Rolling releases: what a published release holds, the window the next build sources, the union it publishes.

A monthly refresh builds only the papers newer than the newest paper of the last
release (``source_window``, recorded in the build's manifest), and ``rqbench
publish`` makes the next minor version from that release's rows plus the new
build's (``union_build``). Every published row is kept as it was, so results
judged on the last release stay valid for its instances and ``rqbench judge
--only-new`` judges only the new ones; a cited paper both hold keeps its
published row. Each release records what it added (``additions``): the months
of its new papers and the new build's counts by keep rule and by drop reason,
which the card's changelog lists.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from pydantic import BaseModel, ValidationError

from rqbench.dataset_card.build_folder import Build, read_manual_sample
from rqbench.dataset_card.features import CONFIG_RECORDS, from_row
from rqbench.dataset_card.repo import HubTarget, LocalGitTarget, Target, TargetError, materialize
from rqbench.dataset_card.versions import RELEASE_FILE, ReleaseAdditions, ReleaseInfo, Version
from rqbench.hashing import content_hash
from rqbench.io import RecordError, read_jsonl, write_atomic, write_jsonl
from rqbench.records import (
    BuildManifest,
    CitedPaper,
    EvaluationInstance,
    MalformedCount,
    PaperRecord,
    RQRecord,
    SkipRecord,
    SourceWindow,
    month_of,
)

LATEST = "latest"
UNDATED = "undated"


class RollingError(ValueError):
    """A rolling build or publish that cannot go ahead; the message says why and what to do."""


@dataclass
class PublishedRelease:
    """The rows and build record of one published version, read back into their records."""

    version: Version
    info: ReleaseInfo
    rqs: list[RQRecord]
    papers: list[PaperRecord]
    cited_papers: list[CitedPaper]
    instances: list[EvaluationInstance]
    manifest: BuildManifest | None = None
    skips: list[SkipRecord] = field(default_factory=list)
    manual_sample: list[str] = field(default_factory=list)
    manual_sample_info: dict[str, Any] = field(default_factory=dict)

    def newest_paper(self) -> datetime | None:
        """The latest first-version time of its papers (UTC); None when none has a date."""
        times = [p.paper.published for p in self.papers if p.paper.published is not None]
        return (
            max((t.astimezone(timezone.utc) if t.tzinfo else t.replace(tzinfo=timezone.utc)) for t in times)
            if times
            else None
        )


# -- reading a release ---------------------------------------------------------


def release_target(dataset: str | Path) -> Target:
    """The repository ``dataset`` names: a local git repository (a folder) or a Hub dataset id."""
    local = Path(dataset)
    if local.exists():
        target = LocalGitTarget(local)
        if not (target.path / ".git").exists():
            raise RollingError(
                f"{local}: not a dataset repository (no .git); give the folder `rqbench publish --to` "
                "wrote, or a Hub id ORG/NAME"
            )
        return target
    if str(dataset).count("/") != 1:
        raise RollingError(f"dataset {dataset!r}: no such folder, and not a Hub id ORG/NAME")
    return HubTarget(str(dataset))


def resolve_version(target: Target, wanted: str) -> Version:
    """``latest`` (the newest release) or a tag/version that exists in ``target``."""
    versions = target.versions()
    if not versions:
        raise RollingError(f"{target.describe()} holds no release (no tag vX.Y.Z) to follow")
    if wanted == LATEST:
        return max(versions)
    version = Version.parse(wanted)
    if version not in versions:
        known = ", ".join(v.tag for v in sorted(versions))
        raise RollingError(f"{target.describe()} has no release {version.tag} (releases: {known})")
    return version


def _folder(target: Target, version: Version) -> Path:
    ref = target.path if isinstance(target, LocalGitTarget) else getattr(target, "repo_id", None)
    if ref is None:
        raise TargetError(f"{target.describe()}: cannot be read back")
    return materialize(ref, version.tag)[0]


def _rows(folder: Path, config: str) -> list[BaseModel]:
    """A config's ``test`` rows (every row: ``dev`` is a subset) validated into its record."""
    files = sorted((folder / "data" / config).glob("test-*.parquet"))
    if not files:
        raise RollingError(f"{folder}: no data/{config}/test-*.parquet")
    model = CONFIG_RECORDS[config]
    return [
        from_row(model, row, where=f"{f.relative_to(folder)} row {n}")
        for f in files
        for n, row in enumerate(pq.read_table(f).to_pylist(), 1)
    ]


def read_release(target: Target, version: Version) -> PublishedRelease:
    """Every row of ``version`` as records, with its release.json and, where published, its build record."""
    folder = _folder(target, version)
    where = f"{target.describe()}@{version.tag}"
    try:
        info = ReleaseInfo.model_validate_json((folder / RELEASE_FILE).read_text(encoding="utf-8"))
        rows = {config: _rows(folder, config) for config in CONFIG_RECORDS}
    except FileNotFoundError as exc:
        raise RollingError(f"{where}: not an RQ-Bench release ({exc.filename} is missing)") from exc
    except (ValidationError, RecordError) as exc:
        raise RollingError(f"{where}: {exc}") from exc
    build = folder / "build"
    manifest = None
    if (build / "manifest.json").is_file():
        manifest = BuildManifest.model_validate_json((build / "manifest.json").read_text(encoding="utf-8"))
    skips = read_jsonl(build / "skips.jsonl", SkipRecord) if (build / "skips.jsonl").is_file() else []
    sample, sample_info = read_manual_sample(build / "manual_validation_sample.json")
    return PublishedRelease(
        version,
        info,
        rows["rqs"],
        rows["papers"],
        rows["cited_papers"],  # type: ignore[arg-type]
        rows["instances"],
        manifest,
        skips,
        sample,
        sample_info,
    )  # type: ignore[arg-type]


def source_window(dataset: str | Path | None, since_release: str | None, month: str | None) -> SourceWindow:
    """The window of a rolling build: newer than the newest paper of ``since_release`` (a tag or ``latest``) of
    ``dataset``, and/or first posted in ``month``; RollingError when the release has no dated paper."""
    if since_release is None:
        return SourceWindow(month=month)
    if dataset is None:
        raise RollingError("--since-release needs --dataset: the repository the release lives in")
    target = release_target(dataset)
    release = read_release(target, resolve_version(target, since_release))
    after = release.newest_paper()
    if after is None:
        raise RollingError(
            f"{release.version.tag} in {target.describe()} has no paper with a first-version date, so "
            "'newer than its newest paper' means nothing; build a month with --window YYYY-MM"
        )
    return SourceWindow(
        since_release=release.version.tag,
        dataset=str(dataset),
        after=after,
        month=month,
        base_data_fingerprint=release.info.data_fingerprint,
    )


# -- what a release adds ----------------------------------------------------------


def additions(
    papers: Iterable[PaperRecord],
    rqs: Sequence[RQRecord],
    funnel: dict[str, Any],
    manifest: BuildManifest,
    extends: str | None,
) -> ReleaseAdditions:
    """The changelog's facts: the added papers and their RQs by first-version month (``undated`` without a date),
    and the build's papers removed per applied keep rule and RQs dropped per reason."""
    added = {p.paper.paper_id: p.paper.first_version()[0] for p in papers}
    month = {pid: month_of(d) if d else UNDATED for pid, d in added.items()}
    n_papers = Counter(month.values())
    n_rqs = Counter(month[r.paper_id] for r in rqs if r.paper_id in month)
    rules = {
        r["rule"]: int(r.get("removed_total", 0))
        for r in funnel.get("rules", [])
        if isinstance(r, dict) and "rule" in r and r.get("applied")
    }
    return ReleaseAdditions(
        extends=extends,
        months={m: {"papers": n_papers[m], "rqs": n_rqs.get(m, 0)} for m in sorted(n_papers)},
        removed_by_rule=rules,
        rqs_dropped=dict(sorted(manifest.dropped.items())),
    )


# -- the union a minor version publishes ---------------------------------------------


def _summed(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(set(a) | set(b))}


def _malformed(a: dict[str, MalformedCount], b: dict[str, MalformedCount]) -> dict[str, MalformedCount]:
    out: dict[str, MalformedCount] = {}
    for kind in sorted(set(a) | set(b)):
        x, y = a.get(kind, MalformedCount()), b.get(kind, MalformedCount())
        out[kind] = MalformedCount(items=x.items + y.items, rules=_summed(x.rules, y.rules))
    return out


def _union_counts(
    base: BuildManifest | None,
    new: BuildManifest,
    rqs: list[RQRecord],
    papers: list[PaperRecord],
    cited: list[CitedPaper],
    instances: list[EvaluationInstance],
    sample: list[str],
) -> dict[str, int]:
    """The two builds' counts added up, and every count a row set determines recounted on the union's rows."""
    counts = _summed(base.counts if base else {}, new.counts)
    levels = Counter(c.text_level.value for c in cited)
    sources = Counter(c.contributions_source or "none" for c in cited)
    verified = [r.verification for r in rqs if r.verification is not None]
    counts.update(
        papers=len(papers),
        rqs=len(rqs),
        subfields=len({r.subfield for r in rqs}),
        rq_citation_links=sum(len(r.cited_paper_ids) for r in rqs),
        unique_cited_papers=len(cited),
        cited_papers=len(cited),
        instances=len(instances),
        cited_full=levels.get("full", 0),
        cited_abstract=levels.get("abstract", 0),
        cited_title=levels.get("title", 0),
        cited_contributions_extracted=sources.get("extracted", 0),
        cited_contributions_abstract=sources.get("abstract", 0),
        verified=len(verified),
        verified_addressed=sum(1 for v in verified if v.addressed),
        manual_sample=len(sample),
    )
    return counts


def union_build(base: PublishedRelease, new: Build, root: Path) -> Build:
    """``base``'s rows plus ``new``'s, as one build whose record files are written to the empty folder ``root``.

    A cited paper both hold keeps ``base``'s row (what its instances were judged on); duplicate RQs or papers
    are left in for ``check_build`` to name. The manifest is the new build's run (stages, settings, inputs with
    ``base_release``) with the counts, drops and gate counts of both builds; skips and the manual-check
    samples are joined; ``funnel.json`` is the new window's.
    """
    cited = {c.paper_id: c for c in base.cited_papers}
    for c in new.cited_papers:
        cited.setdefault(c.paper_id, c)
    rqs, papers, instances = [*base.rqs, *new.rqs], [*base.papers, *new.papers], [*base.instances, *new.instances]
    cited_rows = sorted(cited.values(), key=lambda c: c.paper_id)
    sample = [*base.manual_sample, *(i for i in new.manual_sample if i not in set(base.manual_sample))]
    b = base.manifest
    manifest = new.manifest.model_copy(
        update={
            "build_id": content_hash({"base": base.info.build_id, "window": new.manifest.build_id}),
            "inputs": {
                **new.manifest.inputs,
                "base_release": {
                    "tag": base.version.tag,
                    "build_id": base.info.build_id,
                    "data_fingerprint": base.info.data_fingerprint,
                },
            },
            "counts": _union_counts(b, new.manifest, rqs, papers, cited_rows, instances, sample),
            "dropped": _summed(b.dropped if b else {}, new.manifest.dropped),
            "malformed": _malformed(b.malformed if b else {}, new.manifest.malformed),
        }
    )
    info = {
        **new.manual_sample_info,
        "joined": f"{base.version.tag}'s sample ({len(base.manual_sample)} ids) and "
        f"this window's ({len(sample) - len(base.manual_sample)} new ids)",
    }
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    write_atomic(root / "manifest.json", manifest.model_dump_json(indent=2) + "\n")
    write_atomic(root / "funnel.json", json.dumps(new.funnel, indent=2) + "\n")
    write_jsonl(root / "skips.jsonl", [*base.skips, *new.skips])
    write_atomic(root / "manual_validation_sample.json", json.dumps({**info, "rq_ids": sample}, indent=2) + "\n")
    return Build(
        root=root,
        rqs=rqs,
        papers=papers,
        cited_papers=cited_rows,
        instances=instances,
        manifest=manifest,
        funnel=new.funnel,
        skips=[*base.skips, *new.skips],
        manual_sample=sample,
        manual_sample_info=info,
    )
