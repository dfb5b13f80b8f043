"""Load a benchmark for generation and judging, from wherever it lives.

A reference ``ref`` may be:
- a local build folder (``OUT/`` with ``records/*.jsonl`` from ``rqbench build``);
- a published dataset repository on disk (a git repo with ``data/<config>/*.parquet``),
  read at a tag through ``rqbench.dataset_card.repo.materialize``;
- a plain folder with ``data/<config>/*.parquet`` (an exported tree);
- a Hugging Face Hub dataset id (``org/name``), also through ``materialize``.
The default is the locally published sample (``rqbench.paths.sample_dataset_dir()``).

A benchmark has a public name that results files, reports and pages carry
(``Benchmark.name``): the Hub id, or ``local/<folder>`` for a published
repository on disk and ``build/<folder>`` for a build folder, so that nothing
shared names a path on someone's disk; ``Benchmark.version`` is the release's
tag where it has one. A local name given as ``ref`` is looked up under
``RQB_HOME`` (``datasets/<folder>``, ``builds/<folder>``).

Every row is validated against the pydantic record of its config; a bad row is
an error naming the file, the row and the field.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from rqbench import paths
from rqbench.hashing import content_hash
from rqbench.io import RecordError, read_json_lines
from rqbench.records import CitedPaper, EvaluationInstance

M = TypeVar("M", bound=BaseModel)
log = logging.getLogger(__name__)


class DatasetError(RecordError):
    """A benchmark that cannot be found or has a bad record."""


LOCAL_NAMES = {"local/": "datasets", "build/": "builds"}  # a local name's prefix -> its folder under RQB_HOME


def local_name(folder: Path, *, build: bool = False) -> str:
    """The public name of a dataset folder on disk: ``local/<folder>`` or ``build/<folder>``, never its path."""
    return ("build/" if build else "local/") + folder.name


def resolve_local_name(ref: str) -> Path | None:
    """Where a local name (``local/x``, ``build/x``) lives under RQB_HOME; None for anything else."""
    for prefix, sub in LOCAL_NAMES.items():
        if ref.startswith(prefix) and ref.count("/") == 1:
            return paths.home() / sub / ref.removeprefix(prefix)
    return None


@dataclass
class Benchmark:
    """The evaluation view of one dataset revision."""

    instances: list[EvaluationInstance]
    papers: dict[str, CitedPaper]
    repo: str  # where it was read from (a path or a Hub id): for reading it again, never published
    revision: str
    subfields: list[str] = field(default_factory=list)
    name: str = ""  # the public name results and pages carry (see the module docstring); the repo when not given
    version: str | None = None  # the release's tag, where the source has one
    # every rq_id of the revision, in dataset order; ``instances`` are its first ones in a trial (``subset``)
    revision_rq_ids: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.repo
        if not self.revision_rq_ids:
            self.revision_rq_ids = [i.rq_id for i in self.instances]
        if not self.subfields:
            self.subfields = sorted({i.subfield for i in self.instances})
        missing = sorted({p for i in self.instances for p in i.background_paper_ids if p not in self.papers})
        if missing:
            raise DatasetError(
                f"{self.repo}@{self.revision}: instances name background papers absent from cited_papers: "
                f"{missing[:10]}{' ...' if len(missing) > 10 else ''}"
            )

    @property
    def rq_ids(self) -> list[str]:
        return [i.rq_id for i in self.instances]

    def instance(self, rq_id: str) -> EvaluationInstance:
        for inst in self.instances:
            if inst.rq_id == rq_id:
                return inst
        raise KeyError(rq_id)

    def background(self, inst: EvaluationInstance) -> list[CitedPaper]:
        return [self.papers[p] for p in inst.background_paper_ids]

    @property
    def instances_expected(self) -> int:
        """Instances in the dataset revision: what coverage is counted against, in a trial too."""
        return len(self.revision_rq_ids)

    @property
    def trial(self) -> int | None:
        """N when this is a trial of the revision's first N instances (``--limit N``); None for the whole revision."""
        n = len(self.instances)
        return n if n < self.instances_expected else None

    def subset(self, limit: int | None) -> Benchmark:
        """A trial: the revision's first ``limit`` instances in dataset order, still counted against the whole
        revision (``instances_expected``); the same object when ``limit`` is None or covers every instance."""
        if limit is None or limit >= len(self.instances):
            return self
        if limit < 1:
            raise ValueError(f"a trial takes at least one instance (--limit {limit})")
        return replace(self, instances=self.instances[:limit], revision_rq_ids=list(self.revision_rq_ids))


def _validated(model: type[M], rows: Iterable[dict[str, Any]], where: str, key: str) -> list[M]:
    out: list[M] = []
    for n, row in enumerate(rows, 1):
        try:
            out.append(model.model_validate(row))
        except ValidationError as exc:
            ident = row.get(key) if isinstance(row, dict) else None
            raise DatasetError.from_validation(exc, path=where, record=f"row {n} ({key}={ident!r})") from exc
    return out


def _read_jsonl(path: Path) -> list[Any]:
    return [row for _, row in read_json_lines(path, error=DatasetError)]


def _load_build(root: Path) -> Benchmark:
    rec = root / "records" if (root / "records").is_dir() else root
    files = {name: rec / f"{name}.jsonl" for name in ("instances", "cited_papers")}
    for f in files.values():
        if not f.exists():
            raise DatasetError(f"{root}: build folder has no {f.relative_to(root)} (run 'rqbench build' first)")
    instances = _validated(EvaluationInstance, _read_jsonl(files["instances"]), str(files["instances"]), "rq_id")
    papers = _validated(CitedPaper, _read_jsonl(files["cited_papers"]), str(files["cited_papers"]), "paper_id")
    manifest = root / "manifest.json"
    if manifest.exists():
        revision = "build:" + str(json.loads(manifest.read_text(encoding="utf-8")).get("build_id", "unknown"))
    else:
        revision = "build:" + content_hash([i.model_dump(mode="json") for i in instances])[3:15]
    return Benchmark(instances, {p.paper_id: p for p in papers}, str(root), revision, name=local_name(root, build=True))


def config_rows(root: Path, config: str, split: str) -> tuple[list[dict[str, Any]], str]:
    """The rows of one config's split in a release tree, and where they were read (for errors)."""
    import datasets

    if not (root / "data" / config).is_dir():
        raise DatasetError(f"{root}: no data/{config}/ folder (is this an RQ-Bench dataset repository?)")
    cache = paths.home() / "cache" / "datasets"
    if (root / "README.md").exists():  # the card's YAML declares the configs
        dd = datasets.load_dataset(str(root), config, cache_dir=str(cache))
    else:  # an exported tree without a card: splits from the file names (<split>-*.parquet)
        files: dict[str, list[str]] = {}
        for f in sorted((root / "data" / config).glob("*.parquet")):
            files.setdefault(f.name.split("-", 1)[0].split(".", 1)[0], []).append(str(f))
        if not files:
            raise DatasetError(f"{root}/data/{config}: no parquet files")
        dd = datasets.load_dataset("parquet", data_files=files, cache_dir=str(cache))
    names = list(dd.keys())
    chosen = split if split in dd else (names[0] if len(names) == 1 else None)
    if chosen is None:
        raise DatasetError(f"{root}: config {config!r} has splits {names}, none named {split!r}")
    return [dict(r) for r in dd[chosen]], f"{root}/data/{config} [{chosen}]"


def _load_parquet_tree(root: Path, repo: str, revision: str, split: str, name: str) -> Benchmark:
    inst_rows, inst_where = config_rows(root, "instances", split)
    paper_rows, paper_where = config_rows(root, "cited_papers", split)
    instances = _validated(EvaluationInstance, inst_rows, inst_where, "rq_id")
    papers = _validated(CitedPaper, paper_rows, paper_where, "paper_id")
    return Benchmark(instances, {p.paper_id: p for p in papers}, repo, revision, name=name, version=_release_tag(root))


def _release_tag(root: Path) -> str | None:
    """The tag ``release.json`` records for a release tree; None for a tree without one."""
    try:
        tag = json.loads((root / "release.json").read_text(encoding="utf-8")).get("tag")
    except (OSError, ValueError, AttributeError):
        return None
    return tag if isinstance(tag, str) else None


def _materialize(repo: str | Path, revision: str | None) -> tuple[Path, str]:
    try:
        from rqbench.dataset_card.repo import TargetError, materialize
    except ImportError as exc:
        raise DatasetError(
            f"cannot read dataset repository {repo}: rqbench.dataset_card.repo is unavailable ({exc})"
        ) from exc
    try:
        folder, resolved = materialize(repo, revision)
    except TargetError as exc:  # an unknown revision (with the tags there are), a folder that cannot be pinned
        raise DatasetError(f"{exc}; --revision takes a tag of the repository, or leave it out for the latest") from exc
    except Exception as exc:
        named = hub_error(str(repo), revision, exc)
        if named is None:
            raise
        raise named from exc
    # record the tag the user asked for; without one, the commit it resolved to
    return Path(folder), revision or resolved or "unpinned"


LOCAL_COPY_HINT = (
    "use a local copy instead: --dataset DIR, a published dataset repository (what 'rqbench publish "
    "--to DIR' writes, or a clone of the Hub repository made where the network is) or a build folder; "
    "without --dataset the offline sample is used ('rqbench setup-sample' makes it)"
)


def hub_error(repo: str, revision: str | None, exc: BaseException) -> DatasetError | None:
    """A Hub download's failure as a named DatasetError (None: not one of the Hub's), saying what to do about it."""
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    at = f" at revision {revision!r}" if revision else ""
    if isinstance(exc, (LocalEntryNotFoundError, OfflineModeIsEnabled)):
        from huggingface_hub import constants

        why = (
            "HF_HUB_OFFLINE is set"
            if constants.HF_HUB_OFFLINE
            else str(exc).splitlines()[0].removeprefix("Got: ") or type(exc).__name__
        )
        return DatasetError(
            f"dataset {repo}: the Hugging Face Hub cannot be reached ({why}), and no copy of it{at} "
            f"is cached on this machine; {LOCAL_COPY_HINT}"
        )
    if isinstance(exc, RevisionNotFoundError):
        return DatasetError(
            f"dataset {repo}: revision {revision!r} not found on the Hub (tags: "
            f"{_hub_tags(repo)}); --revision takes one of them, or leave it out for the latest"
        )
    if isinstance(exc, RepositoryNotFoundError):
        return DatasetError(
            f"dataset {repo}: no such dataset repository on the Hugging Face Hub, or it is private or "
            "gated (set HF_TOKEN to read one your account may see)"
        )
    if isinstance(exc, HfHubHTTPError):
        return DatasetError(f"dataset {repo}{at}: the Hugging Face Hub refused the download ({exc})")
    return None


def _hub_tags(repo: str) -> str:
    """The tags of a Hub dataset repository, for an error message ('unknown' when they cannot be read either)."""
    from huggingface_hub import HfApi

    try:
        refs = HfApi().list_repo_refs(repo, repo_type="dataset")
    except Exception as exc:  # the message is already an error's; a second failure only makes the list unknown
        log.debug("cannot list the tags of %s: %s", repo, exc)
        return "unknown"
    return ", ".join(sorted(t.name for t in refs.tags)) or "none"


def load_benchmark(ref: str | Path | None = None, revision: str | None = None, *, split: str = "test") -> Benchmark:
    """The benchmark at ``ref`` (see the module docstring), at ``revision`` where the source is versioned."""
    if ref is None:
        ref = paths.sample_dataset_dir()
        if not Path(ref).exists():
            raise DatasetError(
                f"no dataset given and the offline sample {ref} does not exist; run 'rqbench setup-sample' "
                "or pass --dataset (a build folder, a dataset repository, or a Hub id)"
            )
    p = Path(ref)
    if not p.exists() and (found := resolve_local_name(str(ref))) is not None:
        if not found.exists():
            raise DatasetError(
                f"dataset {ref!r} is a local name, and {found} does not exist: pass the folder itself (--dataset DIR)"
            )
        p = found
    if p.exists():
        p = p.resolve()
        if (p / "records").is_dir() or (p / "instances.jsonl").exists():
            if revision and not revision.startswith("build:"):
                raise DatasetError(f"{p} is a build folder; it has no revisions (drop --revision)")
            bench = _load_build(p)
            if revision and revision != bench.revision:  # a request queued against this build, since rebuilt
                raise DatasetError(f"{p} now holds {bench.revision}, not {revision}: the build changed since")
            return bench
        if (p / ".git").exists():
            folder, resolved = _materialize(p, revision)
            return _load_parquet_tree(Path(folder), str(p), resolved, split, local_name(p))
        if (p / "data").is_dir():
            if revision and revision != "folder":
                raise DatasetError(f"{p} is a plain folder, not a repository; it has no revisions (drop --revision)")
            return _load_parquet_tree(p, str(p), "folder", split, local_name(p))
        raise DatasetError(f"{p}: neither a build folder (records/*.jsonl) nor a dataset repository (data/<config>/)")
    ref = str(ref)
    if ref.count("/") != 1 or ref.startswith((".", "/")):
        raise DatasetError(f"dataset {ref!r}: no such folder, and not a Hub id of the form org/name")
    folder, resolved = _materialize(ref, revision)
    return _load_parquet_tree(Path(folder), ref, resolved, split, ref)
