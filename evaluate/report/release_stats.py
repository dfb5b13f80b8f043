"""The statistics of the dataset revision a set of results was judged on: the paper's Tables 1 and 13.

Every results file names its dataset (``dataset_repo``) and revision
(``dataset_revision``), as ``rqbench.evaluate.benchmark.source.load_benchmark`` recorded
them. This module reads that revision back, all four configs plus the build's
manifest and manual-check sample, and computes its statistics with the same
function the dataset card uses (``rqbench.dataset_card.stats.compute_stats``),
so the report's Table 1 and the card cannot disagree.

What a revision can be, and how it is read:
- a published dataset repository on disk (a git repository) at a tag or commit;
- a plain folder with ``data/<config>/`` (revision ``folder``);
- a build folder (revision ``build:<build_id>``; it must still hold that build);
- a Hub id (``org/name``), which needs the network.
Anything that cannot be read is a ``ReleaseUnavailable`` naming the dataset,
the revision and the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rqbench.dataset_card.features import CONFIG_RECORDS, from_row
from rqbench.dataset_card.stats import DatasetStats, build_stats, compute_stats
from rqbench.io import RecordError
from rqbench.records import BuildManifest, ResultsFile

MANIFEST = "build/manifest.json"
MANUAL_SAMPLE = "build/manual_validation_sample.json"


class ReleaseUnavailable(RuntimeError):
    """A dataset revision that cannot be read here; the message names it and says why."""


def judged_revisions(results: Iterable[ResultsFile]) -> list[tuple[str, str]]:
    """The distinct (dataset repo, revision) pairs the results were judged on, in a stable order."""
    return sorted({(r.dataset_repo, r.dataset_revision) for r in results})


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReleaseUnavailable(f"{path}: cannot be read as JSON ({exc})") from exc


def _stats_of_tree(root: Path, split: str = "test") -> DatasetStats:
    """Statistics of a release tree (``data/<config>/``, ``build/manifest.json``)."""
    from rqbench.evaluate.benchmark.source import config_rows

    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise ReleaseUnavailable(f"{root}: no {MANIFEST}, which holds the RQs dropped; not an RQ-Bench release")
    try:
        manifest = BuildManifest.model_validate(_json(manifest_path))
    except ValidationError as exc:
        raise ReleaseUnavailable(f"{manifest_path}: not a build manifest ({exc.errors()[0]['msg']})") from exc
    records: dict[str, list[Any]] = {}
    for config, model in CONFIG_RECORDS.items():
        rows, where = config_rows(root, config, split)
        records[config] = [from_row(model, row, where=f"{where} row {n}") for n, row in enumerate(rows, 1)]
    sample: Any = _json(root / MANUAL_SAMPLE) if (root / MANUAL_SAMPLE).is_file() else {}
    ids = sample.get("rq_ids", []) if isinstance(sample, dict) else sample
    protocol = {k: v for k, v in sample.items() if k != "rq_ids"} if isinstance(sample, dict) else {}
    return compute_stats(
        records["rqs"], records["papers"], records["cited_papers"], records["instances"], manifest, ids, protocol
    )


def _stats_of_build(root: Path, revision: str) -> DatasetStats:
    from rqbench.dataset_card.build_folder import load_build

    build = load_build(root)
    if revision != f"build:{build.manifest.build_id}":
        raise ReleaseUnavailable(
            f"{root} now holds build:{build.manifest.build_id}, not the {revision} the results were judged on"
        )
    return build_stats(build)


def release_stats(repo: str, revision: str) -> DatasetStats:
    """The statistics of ``repo`` at ``revision``; ``ReleaseUnavailable`` when it cannot be read here."""
    from rqbench.dataset_card.repo import TargetError, materialize
    from rqbench.evaluate.benchmark.source import DatasetError, resolve_local_name

    where = f"dataset {repo}@{revision}"
    try:
        local = Path(repo)
        named = resolve_local_name(repo)
        if not local.exists() and named is not None:
            if not named.exists():
                raise ReleaseUnavailable(f"a local dataset, looked for at {named}, which does not exist")
            local = named
        if local.exists():
            if (local / "records").is_dir():
                return _stats_of_build(local, revision)
            if (local / ".git").exists():
                folder, _ = materialize(local, revision)
                return _stats_of_tree(Path(folder))
            if (local / "data").is_dir():
                return _stats_of_tree(local)
            raise ReleaseUnavailable(f"{repo}: neither a dataset repository, a data folder nor a build folder")
        if revision.startswith("build:") or revision == "folder":
            raise ReleaseUnavailable(f"the folder {repo} is gone")
        try:
            folder, _ = materialize(repo, revision)  # a Hub id: online only
        except TargetError:
            raise
        except Exception as exc:  # the Hub client's errors (offline mode, no network, no such repo), by name
            raise ReleaseUnavailable(f"the Hub copy cannot be fetched: {type(exc).__name__}: {exc}"[:800]) from exc
        return _stats_of_tree(Path(folder))
    except ReleaseUnavailable as exc:
        raise ReleaseUnavailable(f"{where}: {exc}") from exc
    except (TargetError, DatasetError, RecordError, OSError) as exc:
        raise ReleaseUnavailable(f"{where}: {type(exc).__name__}: {exc}"[:1000]) from exc
