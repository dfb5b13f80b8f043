"""Where the Space keeps requests, results, raw submissions and human judgments.

Two backends behind one small file interface (``FileRepo``): a local folder
(the offline default, under ``rqbench.paths.space_store_dir()``) and Hugging
Face dataset repositories reached through ``huggingface_hub.HfApi``, as Hub
leaderboards do. The typed stores on top are written once, so both backends
run the same code and the same tests. Raw uploads go to a private repository;
only results (scores) go to the public one.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError
from rqbench.space.records import HumanJudgment, Skip, SubmissionRequest

from rqbench import paths
from rqbench.io import RecordError, write_atomic
from rqbench.records import JudgeBoardFile, ResultsFile

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)


class StoreError(RuntimeError):
    """A stored file could not be read as the record it should hold."""


class FileRepo(Protocol):
    """The only operations the typed stores need from a backend."""

    name: str

    def read(self, path: str) -> bytes | None: ...

    def write(self, path: str, data: bytes, message: str) -> None: ...

    def list(self, prefix: str = "") -> list[str]: ...

    def delete(self, paths: Iterable[str], message: str) -> int: ...


def _check_path(path: str) -> str:
    """Store paths are relative, forward-slashed and never climb out of the store."""
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
        raise ValueError(f"store path {path!r} is not a plain relative path")
    return path


class LocalRepo:
    """A folder laid out like the Hub dataset repository it stands in for."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.name = str(self.root)

    def _file(self, path: str) -> Path:
        return self.root / _check_path(path)

    def read(self, path: str) -> bytes | None:
        f = self._file(path)
        return f.read_bytes() if f.is_file() else None

    def write(self, path: str, data: bytes, message: str) -> None:
        write_atomic(self._file(path), data)  # readers see the old or the new file, never half of one

    def list(self, prefix: str = "") -> list[str]:
        base = self.root / prefix if prefix else self.root
        if not base.exists():
            return []
        out = []
        for f in base.rglob("*"):
            if f.is_file() and not f.name.startswith("."):
                out.append(f.relative_to(self.root).as_posix())
        return sorted(out)

    def delete(self, paths: Iterable[str], message: str) -> int:
        n = 0
        for p in paths:
            f = self._file(p)
            if f.is_file():
                f.unlink()
                n += 1
        return n


class HubRepo:
    """A Hub dataset repository; every write is one commit with a message."""

    def __init__(self, api: Any, repo_id: str, *, private: bool, create: bool = True):
        self.api = api
        self.repo_id = repo_id
        self.name = f"hf://datasets/{repo_id}"
        self.private = private
        if create:
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)

    def read(self, path: str) -> bytes | None:
        from huggingface_hub.errors import EntryNotFoundError

        try:
            local = self.api.hf_hub_download(self.repo_id, _check_path(path), repo_type="dataset")
        except EntryNotFoundError:
            return None
        return Path(local).read_bytes()

    def write(self, path: str, data: bytes, message: str) -> None:
        self.api.upload_file(
            path_or_fileobj=data,
            path_in_repo=_check_path(path),
            repo_id=self.repo_id,
            repo_type="dataset",
            commit_message=message,
        )

    def list(self, prefix: str = "") -> list[str]:
        files = self.api.list_repo_files(self.repo_id, repo_type="dataset")
        return sorted(f for f in files if f.startswith(prefix) and not f.startswith(".") and f != "README.md")

    def delete(self, paths: Iterable[str], message: str) -> int:
        from huggingface_hub import CommitOperationDelete

        ops = [CommitOperationDelete(path_in_repo=_check_path(p)) for p in paths]
        if not ops:
            return 0
        self.api.create_commit(self.repo_id, ops, commit_message=message, repo_type="dataset")
        return len(ops)


def _dump(record: BaseModel) -> bytes:
    return (record.model_dump_json(indent=1) + "\n").encode("utf-8")


def _load(repo: FileRepo, path: str, model: type[M]) -> M | None:
    data = repo.read(path)
    return None if data is None else _parse(repo, path, data, model)


def _parse(repo: FileRepo, path: str, data: bytes, model: type[M]) -> M:
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise StoreError(str(RecordError.from_validation(exc, path=f"{repo.name}/{path}", kind=model.__name__))) from exc


def _safe_name(text: str) -> str:
    """A path component from a user or model name: letters, digits, '-', '_', '.' only."""
    out = "".join(c if c.isalnum() or c in "-_." else "_" for c in text.strip())
    return out.strip("._")[:80] or "unnamed"


class RequestsStore:
    """Submission requests, one JSON file each, rewritten on every status change."""

    def __init__(self, repo: FileRepo):
        self.repo = repo

    @staticmethod
    def path_for(request_id: str) -> str:
        return f"requests/{_safe_name(request_id)}.json"

    def put(self, req: SubmissionRequest) -> None:
        self.repo.write(self.path_for(req.request_id), _dump(req), f"request {req.request_id}: {req.status}")

    def get(self, request_id: str) -> SubmissionRequest | None:
        return _load(self.repo, self.path_for(request_id), SubmissionRequest)

    def all(self) -> list[SubmissionRequest]:
        out = []
        for p in self.repo.list("requests/"):
            if p.endswith(".json"):
                req = _load(self.repo, p, SubmissionRequest)
                if req is not None:
                    out.append(req)
        return sorted(out, key=lambda r: (r.submitted_at, r.request_id))


class ResultsStore:
    """Public results files: the leaderboard is built from these and nothing else."""

    def __init__(self, repo: FileRepo, prefix: str = "results/"):
        self.repo = repo
        self.prefix = prefix

    @staticmethod
    def path_for(results: ResultsFile) -> str:
        short = results.submission_hash.removeprefix("b2:")[:16]
        return (
            f"results/{_safe_name(results.submission.model)}/{short}/"
            f"{_safe_name(results.judge.label)}__{results.judge.setting}.json"
        )

    def put(self, results: ResultsFile) -> str:
        path = self.path_for(results)
        self.repo.write(path, _dump(results), f"results {results.submission.model} / {results.judge.label}")
        return path

    def paths(self) -> list[str]:
        return [p for p in self.repo.list(self.prefix) if p.endswith(".json")]

    def load(self) -> tuple[list[ResultsFile], list[str]]:
        """Every readable results file, and a line per file that could not be read (never silently dropped).

        JSON files of another kind (reports, manifests) beside them are passed over.
        """
        good, problems = [], []
        for p in self.paths():
            data = self.repo.read(p)
            if data is None:
                continue
            try:
                kind = json.loads(data).get("kind")
            except (json.JSONDecodeError, AttributeError) as exc:
                problems.append(f"{self.repo.name}/{p}: not a JSON object ({exc})")
                continue
            if kind != "rqbench.results":
                continue
            try:
                good.append(_parse(self.repo, p, data, ResultsFile))
            except StoreError as exc:
                problems.append(str(exc))
        return good, problems


class JudgeBoardStore:
    """Judge-board results files (``rqbench judge-board``): public like results; the Judges tab reads them.

    Offline it is the folder ``rqbench judge-board`` writes (``RQB_HOME/judge-board``); on the Hub the
    ``judge-board/`` folder of the public results repository. The pool file beside them is passed over:
    the Space builds its pool live, from the study file and its own annotations.
    """

    def __init__(self, repo: FileRepo, prefix: str = ""):
        self.repo = repo
        self.prefix = prefix

    def put(self, board: JudgeBoardFile, name: str) -> str:
        """Store ``board`` as ``name`` (``judge_board_run.board_path``'s file name)."""
        path = self.prefix + _check_path(name)
        self.repo.write(path, _dump(board), f"judge board {board.judge.label}")
        return path

    def paths(self) -> list[str]:
        return [p for p in self.repo.list(self.prefix) if p.endswith(".json")]

    def load(self) -> tuple[list[JudgeBoardFile], list[str]]:
        """Every readable judge-board file, and a line per file that could not be read (never silently dropped)."""
        good, problems = [], []
        for p in self.paths():
            data = self.repo.read(p)
            if data is None:
                continue
            try:
                kind = json.loads(data).get("kind")
            except (json.JSONDecodeError, AttributeError) as exc:
                problems.append(f"{self.repo.name}/{p}: not a JSON object ({exc})")
                continue
            if kind != "rqbench.judge_board":
                continue
            try:
                good.append(_parse(self.repo, p, data, JudgeBoardFile))
            except StoreError as exc:
                problems.append(str(exc))
        return good, problems


class SubmissionsStore:
    """Raw uploads, addressed by content hash; private on the Hub."""

    def __init__(self, repo: FileRepo):
        self.repo = repo

    @staticmethod
    def path_for(submission_hash: str, user: str) -> str:
        return f"submissions/{_safe_name(user)}/{submission_hash.removeprefix('b2:')}.jsonl"

    def put(self, submission_hash: str, user: str, data: bytes) -> str:
        path = self.path_for(submission_hash, user)
        self.repo.write(path, data, f"submission {submission_hash} from {user}")
        return path

    def get(self, path: str) -> bytes | None:
        return self.repo.read(path)


class AnnotationsStore:
    """Human judgments and skips, one file each, so appending never rewrites another's work."""

    def __init__(self, repo: FileRepo):
        self.repo = repo

    def append(self, judgment: HumanJudgment) -> str:
        path = f"annotations/{_safe_name(judgment.annotator)}/{judgment.judgment_id}.json"
        self.repo.write(path, _dump(judgment), f"judgment {judgment.judgment_id}")
        return path

    def skip(self, skip: Skip) -> str:
        stamp = skip.created_at.strftime("%Y%m%dT%H%M%S%f")
        path = f"skips/{_safe_name(skip.annotator)}/{stamp}_{_safe_name(skip.rq_id)}.json"
        self.repo.write(path, _dump(skip), f"skip by {skip.annotator}")
        return path

    def _read_all(self, prefix: str, model: type[M]) -> list[M]:
        out = []
        for p in self.repo.list(prefix):
            if p.endswith(".json"):
                r = _load(self.repo, p, model)
                if r is not None:
                    out.append(r)
        return out

    def judgments(self, annotator: str | None = None) -> list[HumanJudgment]:
        prefix = f"annotations/{_safe_name(annotator)}/" if annotator else "annotations/"
        return sorted(self._read_all(prefix, HumanJudgment), key=lambda j: (j.created_at, j.judgment_id))

    def skips(self, annotator: str | None = None) -> list[Skip]:
        prefix = f"skips/{_safe_name(annotator)}/" if annotator else "skips/"
        return self._read_all(prefix, Skip)

    def export(self, annotator: str) -> bytes:
        """An annotator's own judgments as JSON Lines."""
        return b"".join(j.model_dump_json().encode("utf-8") + b"\n" for j in self.judgments(annotator))

    def delete_annotator(self, annotator: str) -> int:
        """Remove every judgment and skip of one annotator; returns how many judgments went."""
        name = _safe_name(annotator)
        judged = self.repo.list(f"annotations/{name}/")
        self.repo.delete(judged + self.repo.list(f"skips/{name}/"), f"delete judgments of {annotator}")
        return len(judged)


@dataclass
class SpaceStores:
    """The stores a Space needs, from one backend."""

    requests: RequestsStore
    results: ResultsStore
    submissions: SubmissionsStore
    annotations: AnnotationsStore
    backend: str
    judge_board: JudgeBoardStore | None = None  # None: the Space shows the paper's reference rows only

    @classmethod
    def local(cls, root: str | Path | None = None, results_root: str | Path | None = None) -> SpaceStores:
        """One folder (default ``space_store_dir()``) with requests/, results/, submissions/, annotations/,
        judge-board/.

        With neither folder given, results are read from and written to ``paths.results_dir()``,
        where ``rqbench evaluate`` and ``rqbench judge`` put theirs, and the judge board from
        ``paths.judge_board_dir()``, where ``rqbench judge-board`` puts it, so every offline command
        meets the same Space.
        """
        base = Path(root) if root else paths.space_store_dir()
        if root is None and results_root is None:
            results_root = paths.results_dir()
        repo = LocalRepo(base)
        results = ResultsStore(LocalRepo(results_root), prefix="") if results_root else ResultsStore(repo)
        board = LocalRepo(paths.judge_board_dir() if root is None else base / "judge-board")
        return cls(RequestsStore(repo), results, SubmissionsStore(repo), AnnotationsStore(repo),
                   backend=f"local folder {base}", judge_board=JudgeBoardStore(board))  # fmt: skip

    @classmethod
    def hub(cls, api: Any, owner: str, *, prefix: str = "rq-bench") -> SpaceStores:
        """Dataset repos ``owner/prefix-{requests,results,submissions,annotations}``; only results are public."""

        def repo(kind: str, private: bool) -> HubRepo:
            return HubRepo(api, f"{owner}/{prefix}-{kind}", private=private)

        public = repo("results", False)
        return cls(
            RequestsStore(repo("requests", True)),
            ResultsStore(public),
            SubmissionsStore(repo("submissions", True)),
            AnnotationsStore(repo("annotations", True)),
            backend=f"Hub datasets {owner}/{prefix}-*",
            judge_board=JudgeBoardStore(public, prefix="judge-board/"),
        )

    @classmethod
    def from_env(cls, root: str | Path | None = None, results_root: str | Path | None = None) -> SpaceStores:
        """Hub stores when ``RQB_SPACE_OWNER`` and ``HF_TOKEN`` are set (a Space's secrets), else the local folder."""
        owner = os.environ.get("RQB_SPACE_OWNER")
        if owner and os.environ.get("HF_TOKEN") and root is None:
            from huggingface_hub import HfApi

            return cls.hub(HfApi(token=os.environ["HF_TOKEN"]), owner)
        return cls.local(root, results_root)
