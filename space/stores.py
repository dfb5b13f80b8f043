"""Where the Space keeps requests, results, raw submissions and human judgments.

Two backends behind one small file interface (``FileRepo``): a local folder
(the offline default, under ``rqbench.paths.space_store_dir()``) and Hugging
Face dataset repositories, made through ``huggingface_hub.HfApi`` and read and
written with git (``GitRepo``), as Hub leaderboards keep theirs. Every write
to a shared repository is one commit; one refused because another writer
pushed first is retried on top of theirs, so two Space replicas, or a Space
and its worker, never lose each other's files. The typed stores on top are
written once, so both backends run the same code and the same tests. Raw
uploads go to a private repository; only results (scores) go to the public one.
"""

from __future__ import annotations

import json
import logging
import os
import random
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, get_args

from pydantic import BaseModel, ValidationError

from rqbench import paths
from rqbench.hashing import content_hash
from rqbench.io import RecordError, write_atomic
from rqbench.records import JudgeBoardFile, JudgeSpec, ResultsFile
from rqbench.space.records import HumanJudgment, Skip, SubmissionRequest

log = logging.getLogger(__name__)

RESULT_SETTINGS: tuple[str, ...] = get_args(JudgeSpec.model_fields["setting"].annotation)

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class StoreError(RuntimeError):
    """A stored file could not be read as the record it should hold."""


@dataclass(frozen=True)
class Unreadable:
    """A stored file that could not be read as its record: its path in the store and why, for a page or a log."""

    path: str
    problem: str

    def __str__(self) -> str:
        return self.problem


class FileRepo(Protocol):
    """The only operations the typed stores need from a backend."""

    name: str

    def read(self, path: str) -> bytes | None: ...

    def write(self, path: str, data: bytes, message: str) -> None: ...

    def list(self, prefix: str = "") -> list[str]: ...

    def stamps(self, prefix: str = "") -> dict[str, str]:
        """``list``'s files, each with a token that changes whenever the file may have changed."""
        ...

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
        return list(self.stamps(prefix))

    def stamps(self, prefix: str = "") -> dict[str, str]:
        """Every file under ``prefix`` (hidden ones aside), sorted, with its modification time, size and inode: a
        write replaces the file (``write_atomic``), so a new inode too. One ``stat`` a file, no read."""
        base = self.root / prefix if prefix else self.root
        out = {}
        for folder, _, names in os.walk(base):
            rel = Path(folder).relative_to(self.root).as_posix()
            for name in names:
                if name.startswith("."):
                    continue
                try:
                    st = os.stat(os.path.join(folder, name))
                except FileNotFoundError:  # removed while listed
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                out[name if rel == "." else f"{rel}/{name}"] = f"{st.st_mtime_ns}-{st.st_size}-{st.st_ino}"
        return dict(sorted(out.items()))

    def delete(self, paths: Iterable[str], message: str) -> int:
        n = 0
        for p in paths:
            f = self._file(p)
            if f.is_file():
                f.unlink()
                n += 1
        return n


class StoreWriteError(RuntimeError):
    """A write a shared store did not take after every retry (the remote kept refusing, or is unreachable)."""


class GitRepo:
    """A dataset repository reached with git: a local clone, every write one commit pushed to the remote.

    Several writers share the remote (two Space replicas, a Space and its worker). A push the remote
    refuses because another writer's commit landed first is retried on top of theirs: fetch, reset to the
    remote's head, reapply this write (a whole file written or removed), push again, with a growing,
    jittered pause, up to ``max_attempts`` times. A push cut off half-way is checked against the remote
    after a fetch: if the commit landed, the write is done; if not, it is retried. So no writer loses
    another's file, and a write either lands whole or raises ``StoreWriteError`` naming the file.

    Reads come from the clone, brought up to the remote's head when it is older than ``fetch_after_s``.
    Processes that share a clone folder take turns (a lock file); threads of one process, a lock.
    """

    def __init__(
        self,
        remote: str,
        clone_dir: str | Path,
        *,
        name: str | None = None,
        branch: str = "main",
        max_attempts: int = 8,
        fetch_after_s: float = 2.0,
        auth_header: str | None = None,
        sleep: Any = time.sleep,
    ):
        self.remote = remote
        self.clone_dir = Path(clone_dir)
        self.name = name or remote
        self.branch = branch
        self.max_attempts = max_attempts
        self.fetch_after_s = fetch_after_s
        self.sleep = sleep
        self._env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
        if auth_header:  # passed through the environment: never on a command line, in a URL or in an error
            self._env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="http.extraHeader", GIT_CONFIG_VALUE_0=auth_header)
        self._thread_lock = threading.Lock()
        self._fetched_at = float("-inf")
        with self._locked():
            self._open()

    # -- git -------------------------------------------------------------------
    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["git", "-C", str(self.clone_dir), *args], env=self._env, capture_output=True, text=True, timeout=300
        )
        if check and done.returncode != 0:
            raise StoreWriteError(f"{self.name}: git {args[0]} failed: {done.stderr.strip()[-500:]}")
        return done

    @contextmanager
    def _locked(self) -> Iterator[None]:
        import fcntl

        self.clone_dir.parent.mkdir(parents=True, exist_ok=True)
        with self._thread_lock, open(self.clone_dir.parent / f".{self.clone_dir.name}.lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    def _open(self) -> None:
        """Clone the remote once (an empty remote gives an empty clone), then follow it."""
        if not (self.clone_dir / ".git").is_dir():
            self.clone_dir.mkdir(parents=True, exist_ok=True)
            self._git("init", "-q", "-b", self.branch)
            self._git("remote", "add", "origin", self.remote)
        self._git("config", "user.name", "rqbench-space")
        self._git("config", "user.email", "rqbench-space@localhost")
        self._sync()

    def _remote_head(self) -> str | None:
        """Fetch; the remote branch's commit, or None while the remote has no commit yet."""
        done = self._git("fetch", "-q", "origin", self.branch, check=False)
        self._fetched_at = time.monotonic()
        if done.returncode != 0:
            if "couldn't find remote ref" in done.stderr or "could not find remote ref" in done.stderr.lower():
                return None
            raise StoreWriteError(f"{self.name}: cannot fetch from the remote: {done.stderr.strip()[-500:]}")
        return self._git("rev-parse", "FETCH_HEAD").stdout.strip()

    def _sync(self) -> str | None:
        """The clone set to the remote's head (anything local and unpushed is dropped: writes push or retry)."""
        head = self._remote_head()
        if head is not None:
            self._git("reset", "-q", "--hard", head)
            self._git("clean", "-q", "-f", "-d")
        return head

    def _fresh(self) -> None:
        if time.monotonic() - self._fetched_at >= self.fetch_after_s:
            self._sync()

    def _commit_and_push(self, apply: Any, message: str, what: str) -> None:
        """Apply a change to a clone at the remote's head, commit, push; on refusal fetch, reapply, retry."""
        last = ""
        for attempt in range(1, self.max_attempts + 1):
            self._sync()
            apply()
            self._git("add", "-A")
            if self._git("diff", "--cached", "--quiet", check=False).returncode == 0:
                return  # the remote already holds exactly this
            self._git("commit", "-q", "-m", message)
            mine = self._git("rev-parse", "HEAD").stdout.strip()
            pushed = self._git("push", "-q", "origin", f"HEAD:refs/heads/{self.branch}", check=False)
            if pushed.returncode == 0:
                return
            last = _push_refusal(pushed.stderr)
            head = self._remote_head()  # cut off after the remote took it?
            if head is not None and self._git("merge-base", "--is-ancestor", mine, head, check=False).returncode == 0:
                return
            log.info("%s: push of %s refused (attempt %d): %s", self.name, what, attempt, last)
            self.sleep(min(5.0, 0.05 * 2 ** (attempt - 1)) * (0.5 + random.random()))
        raise StoreWriteError(f"{self.name}: {what} could not be pushed after {self.max_attempts} attempts ({last})")

    # -- FileRepo --------------------------------------------------------------
    def read(self, path: str) -> bytes | None:
        f = self.clone_dir / _check_path(path)
        with self._locked():
            self._fresh()
            return f.read_bytes() if f.is_file() else None

    def write(self, path: str, data: bytes, message: str) -> None:
        target = self.clone_dir / _check_path(path)

        def apply() -> None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

        with self._locked():
            self._commit_and_push(apply, message, path)

    def list(self, prefix: str = "") -> list[str]:
        return list(self.stamps(prefix))

    def stamps(self, prefix: str = "") -> dict[str, str]:
        """The tracked files under ``prefix`` (hidden ones and the card aside), sorted, each with its blob id."""
        with self._locked():
            self._fresh()
            lines = self._git("ls-files", "-s", "-z").stdout.split("\0")
        out = {}
        for line in lines:  # "<mode> <blob> <stage>\t<path>"
            meta, _, f = line.partition("\t")
            if f and f.startswith(prefix) and not f.rsplit("/", 1)[-1].startswith(".") and f != "README.md":
                out[f] = meta.split(" ")[1]
        return dict(sorted(out.items()))

    def delete(self, paths: Iterable[str], message: str) -> int:
        wanted = [_check_path(p) for p in paths]
        if not wanted:
            return 0
        gone: list[str] = []

        def apply() -> None:
            gone.clear()
            for p in wanted:
                f = self.clone_dir / p
                if f.is_file():
                    f.unlink()
                    gone.append(p)

        with self._locked():
            self._commit_and_push(apply, message, f"deleting {len(wanted)} file(s)")
        return len(gone)


def _push_refusal(stderr: str) -> str:
    """What the remote said when it refused a push (its own lines, then git's verdict), in one short line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith(("remote:", "!", "fatal:"))] or lines[-2:]
    return "; ".join(said)[-400:]


class HubRepo(GitRepo):
    """A Hub dataset repository, made (private or public) through ``HfApi`` and then read and written with git
    over its URL (``{api.endpoint}/datasets/{repo_id}``), so concurrent writers retry instead of losing writes."""

    def __init__(
        self, api: Any, repo_id: str, *, private: bool, clone_root: str | Path, create: bool = True, **git_options: Any
    ):
        if create:
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        self.api, self.repo_id, self.private = api, repo_id, private
        endpoint = str(getattr(api, "endpoint", None) or "https://huggingface.co").rstrip("/")
        token = getattr(api, "token", None)
        header = f"Authorization: Bearer {token}" if token and endpoint.startswith("http") else None
        super().__init__(
            f"{endpoint}/datasets/{repo_id}",
            Path(clone_root) / repo_id,
            name=f"hf://datasets/{repo_id}",
            auth_header=header,
            **git_options,
        )


def _dump(record: BaseModel) -> bytes:
    return (record.model_dump_json(indent=1) + "\n").encode("utf-8")


def _load(repo: FileRepo, path: str, model: type[M]) -> M | None:
    data = repo.read(path)
    return None if data is None else _parse(repo, path, data, model)


def _parse(repo: FileRepo, path: str, data: bytes, model: type[M]) -> M:
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise StoreError(
            str(RecordError.from_validation(exc, path=f"{repo.name}/{path}", kind=model.__name__))
        ) from exc


def _json_stamps(repo: FileRepo, prefix: str) -> dict[str, str]:
    """The JSON files under ``prefix``, each with its stamp (``FileRepo.stamps``): what a look at a store sees."""
    return {p: s for p, s in repo.stamps(prefix).items() if p.endswith(".json")}


class ParsedFiles(Generic[T]):
    """What each stored file last parsed to, kept while the file's stamp (``FileRepo.stamps``) is unchanged.

    A page load looks at a store of a thousand files often: listing them with their stamps is one ``stat`` a
    file, reading and validating them all took seconds. So only new and changed files are read again; a file
    whose read failed (``parse`` says not to keep it) is tried again on the next look. The values are shared
    between callers, who copy a record before changing it (``model_copy``).
    """

    def __init__(self) -> None:
        self._seen: dict[str, tuple[str, T]] = {}
        self._lock = threading.Lock()

    def each(self, stamps: dict[str, str], parse: Callable[[str], tuple[T, bool]]) -> list[T]:
        """A value per path of ``stamps``, in its order: the kept one while its stamp is the same, else ``parse``'s
        (value, whether to keep it)."""
        with self._lock:
            seen = self._seen
        out, kept = [], {}
        for path, stamp in stamps.items():
            hit = seen.get(path)
            if hit is not None and hit[0] == stamp:
                kept[path] = hit
                out.append(hit[1])
                continue
            value, keep = parse(path)
            if keep:
                kept[path] = (stamp, value)
            out.append(value)
        with self._lock:
            self._seen = kept  # files gone from the listing are forgotten
        return out


def _safe_name(text: str) -> str:
    """A path component from a user or model name: letters, digits, '-', '_', '.' only.

    A name longer than 80 such characters is cut and ends with a hash of the whole name, so two long
    names that share their first 80 characters (two configurations of one judge served at the same
    address) never share a path and overwrite each other.
    """
    out = "".join(c if c.isalnum() or c in "-_." else "_" for c in text.strip()).strip("._")
    if len(out) > 80:
        out = out[:69] + "-" + content_hash(text)[3:13]
    return out or "unnamed"


class RequestsStore:
    """Submission requests, one JSON file each, rewritten on every status change."""

    def __init__(self, repo: FileRepo):
        self.repo = repo
        self._parsed: ParsedFiles[SubmissionRequest | Unreadable | None] = ParsedFiles()

    @staticmethod
    def path_for(request_id: str) -> str:
        return f"requests/{_safe_name(request_id)}.json"

    def put(self, req: SubmissionRequest) -> None:
        self.repo.write(self.path_for(req.request_id), _dump(req), f"request {req.request_id}: {req.status}")

    def get(self, request_id: str) -> SubmissionRequest | None:
        return _load(self.repo, self.path_for(request_id), SubmissionRequest)

    def load(self) -> tuple[list[SubmissionRequest], list[Unreadable]]:
        """Every readable request, oldest first, and each request file that could not be read (never dropped
        silently: one damaged file must not take the queue, the page or the worker down with it)."""
        found = self._parsed.each(_json_stamps(self.repo, "requests/"), self._read_one)
        out = [r for r in found if isinstance(r, SubmissionRequest)]
        problems = [r for r in found if isinstance(r, Unreadable)]
        return sorted(out, key=lambda r: (r.submitted_at, r.request_id)), problems

    def _read_one(self, p: str) -> tuple[SubmissionRequest | Unreadable | None, bool]:
        try:
            return _load(self.repo, p, SubmissionRequest), True
        except StoreError as exc:
            return Unreadable(p, str(exc)), True
        except OSError as exc:  # a file the disk cannot give back is named, like a damaged one, and read again
            return Unreadable(p, f"{self.repo.name}/{p}: cannot be read ({exc.strerror or exc})"), False

    def all(self) -> list[SubmissionRequest]:
        """The readable requests, oldest first; ``load`` also names the unreadable ones."""
        return self.load()[0]


class ResultsStore:
    """Public results files: the leaderboard is built from these and nothing else."""

    def __init__(self, repo: FileRepo, prefix: str = "results/"):
        self.repo = repo
        self.prefix = prefix
        self._parsed: ParsedFiles[ResultsFile | str | None] = ParsedFiles()

    @staticmethod
    def path_for(results: ResultsFile) -> str:
        """``results/<model>/<hash16>/<judge>__<setting>.json``; a trial's under ``.../trial-<N>/``, so a trial and
        the full run of one submission never overwrite each other."""
        short = results.submission_hash.removeprefix("b2:")[:16]
        run = f"trial-{results.trial}/" if results.trial is not None else ""
        return (
            f"results/{_safe_name(results.submission.model)}/{short}/{run}"
            f"{_safe_name(results.judge.label)}__{results.judge.setting}.json"
        )

    def put(self, results: ResultsFile) -> str:
        path = self.path_for(results)
        self.repo.write(path, _dump(results), f"results {results.submission.model} / {results.judge.label}")
        return path

    def paths(self) -> list[str]:
        return list(self.stamps())

    def stamps(self) -> dict[str, str]:
        return _json_stamps(self.repo, self.prefix)

    @staticmethod
    def named_as_results(path: str) -> bool:
        """Whether a file's name says it holds results (``…__<setting>.json``, as the worker and
        ``rqbench judge`` name them): such a file must be a whole results file, whatever it holds now."""
        return path.endswith(tuple(f"__{s}.json" for s in RESULT_SETTINGS))

    def load(self) -> tuple[list[ResultsFile], list[str]]:
        """Every readable results file, and a line per file that could not be read (never silently dropped).

        A file named as a results file, or one that says it is one (its ``kind``), must parse as one:
        emptied to ``{}``, truncated or hand-edited, it is listed with its path and field. JSON files of
        another kind (reports, manifests) beside them are passed over.
        """
        found = self._parsed.each(self.stamps(), self._read_one)  # unchanged files are not read again
        return [r for r in found if isinstance(r, ResultsFile)], [r for r in found if isinstance(r, str)]

    def _read_one(self, p: str) -> tuple[ResultsFile | str | None, bool]:
        """A file's results, or the line that says why it cannot be read, or None for another kind of file; and
        whether that outcome holds until the file changes (a failed read does not)."""
        where = f"{self.repo.name}/{p}"
        try:
            data = self.repo.read(p)
        except OSError as exc:
            return f"{where}: cannot be read ({exc.strerror or exc})", False
        if data is None:
            return None, False
        named = self.named_as_results(p)
        try:
            decoded = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return f"{where}: not JSON: cut short or damaged ({exc})", True
        kind = decoded.get("kind") if isinstance(decoded, dict) else None
        if kind != "rqbench.results" and not named:
            return None, True
        if not isinstance(decoded, dict) or not decoded:
            return f"{where}: empty or not a JSON object where a results file should be", True
        try:
            return _parse(self.repo, p, data, ResultsFile), True
        except StoreError as exc:
            return str(exc), True


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
        # one cache per (prefix, record type) read: each look forgets the files its listing no longer holds
        self._parsed_under: dict[tuple[str, type], ParsedFiles[Any]] = {}

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
        """Every record under ``prefix``; files unchanged since the last look under it are not read again."""
        parsed = self._parsed_under.setdefault((prefix, model), ParsedFiles())
        found = parsed.each(_json_stamps(self.repo, prefix), lambda p: (_load(self.repo, p, model), True))
        return [r for r in found if r is not None]

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
        return cls(
            RequestsStore(repo),
            results,
            SubmissionsStore(repo),
            AnnotationsStore(repo),
            backend=f"local folder {base}",
            judge_board=JudgeBoardStore(board),
        )

    @classmethod
    def hub(
        cls, api: Any, owner: str, *, prefix: str = "rq-bench", clone_root: str | Path | None = None, **git_options: Any
    ) -> SpaceStores:
        """Dataset repos ``owner/prefix-{requests,results,submissions,annotations}``; only results are public.
        Each is cloned under ``clone_root`` (default ``RQB_HOME/space-clones``) and written with git."""
        root = Path(clone_root) if clone_root else paths.home() / "space-clones"

        def repo(kind: str, private: bool) -> HubRepo:
            return HubRepo(api, f"{owner}/{prefix}-{kind}", private=private, clone_root=root, **git_options)

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
