"""Where releases go: a local git repository or a Hugging Face dataset repo, behind one interface.

Both targets receive the same staged tree and do the same three things: one
commit holding every file of the release (and deleting files of the release
folders that the new release no longer has), then a tag ``vX.Y.Z`` on that
commit. Readers use ``materialize(repo, revision)`` to get a folder that
``datasets.load_dataset`` can read, pinned to a tag or commit.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
import tarfile
import uuid
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from rqbench import paths
from rqbench.dataset_card.release import is_managed, tree_files
from rqbench.dataset_card.versions import Version
from rqbench.hashing import content_hash

log = logging.getLogger(__name__)

_GIT_IDENTITY = [
    "-c",
    "user.name=rqbench",
    "-c",
    "user.email=rqbench@localhost",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "tag.gpgsign=false",
]


class TargetError(RuntimeError):
    """A repository that cannot be read or written as asked."""


class Target(ABC):
    """A dataset repository that holds versions as tags."""

    kind: str

    @abstractmethod
    def describe(self) -> str:
        """How messages name this repository."""

    @abstractmethod
    def tags(self) -> dict[str, str]:
        """Every tag name and the commit it points at."""

    @abstractmethod
    def read_text(self, path: str, revision: str | None = None) -> str | None:
        """A file at a revision (None: the newest commit); None when it does not exist."""

    @abstractmethod
    def list_files(self, revision: str | None = None) -> list[str]:
        """Every file path at a revision ([] for an empty repository)."""

    @abstractmethod
    def _commit_and_tag(self, tree: Path, adds: list[str], deletes: list[str], tag: str, message: str) -> str:
        """Write one commit of ``adds`` (from ``tree``) and ``deletes``, tag it, return its id."""

    def versions(self) -> dict[Version, str]:
        """Release versions (tags vX.Y.Z) and their commits."""
        out = {}
        for name, commit in self.tags().items():
            v = Version.from_tag(name)
            if v is not None:
                out[v] = commit
        return out

    def publish_tree(self, tree: Path, version: Version, message: str) -> str:
        """One commit with every file of ``tree``, deleting release files it lacks; then tag ``vX.Y.Z``."""
        adds = tree_files(tree)
        current = set(self.list_files())
        deletes = sorted(p for p in current if is_managed(p) and p not in set(adds))
        return self._commit_and_tag(tree, adds, deletes, version.tag, message)


# -- a git repository on disk -------------------------------------------------


class LocalGitTarget(Target):
    """A git repository with a work tree; commits and tags through the git CLI.

    The folder is its own repository (``DIR/.git``), never a parent's: a folder
    inside the project checkout must not be committed to the project.
    """

    kind = "local"

    def __init__(self, path: str | Path):
        self.path = Path(path).resolve()

    def describe(self) -> str:
        return str(self.path)

    def _is_repo(self) -> bool:
        return (self.path / ".git").exists()

    def _git(self, *args: str, check: bool = True, input: bytes | None = None) -> subprocess.CompletedProcess:
        env = dict(os.environ, GIT_DIR=str(self.path / ".git"), GIT_WORK_TREE=str(self.path))
        proc = subprocess.run(["git", *_GIT_IDENTITY, *args], cwd=self.path, env=env, capture_output=True, input=input)
        if check and proc.returncode != 0:
            raise TargetError(
                f"{self.path}: git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}"
            )
        return proc

    def _has_commits(self) -> bool:
        return self._is_repo() and self._git("rev-parse", "--verify", "-q", "HEAD", check=False).returncode == 0

    def check_usable(self) -> None:
        """Refuse, before any work, a path that ``ensure`` could not make a repository of: TargetError with why."""
        if self.path.exists() and not self.path.is_dir():
            raise TargetError(
                f"{self.path}: is a file, not a folder; --to needs a git repository, or a new or "
                "empty folder to create one in"
            )
        ancestor = self.path.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise TargetError(f"{self.path}: cannot be created, because {ancestor} is a file, not a folder")
        if self.path.is_dir() and not self._is_repo() and any(self.path.iterdir()):
            raise TargetError(
                f"{self.path}: exists, is not empty and is not a git repository; refusing to use it "
                "(give a git repository, or a new or empty folder)"
            )

    def ensure(self) -> None:
        """Create the repository if the folder is absent or empty; refuse any other folder."""
        if self._is_repo():
            return
        self.check_usable()
        self.path.mkdir(parents=True, exist_ok=True)
        self._git("init", "-q")
        self._git("symbolic-ref", "HEAD", "refs/heads/main")

    def tags(self) -> dict[str, str]:
        if not self._has_commits():
            return {}
        out = self._git("for-each-ref", "--format=%(refname:short) %(*objectname) %(objectname)", "refs/tags").stdout
        tags = {}
        for line in out.decode().splitlines():
            name, peeled, obj = (line.split(" ") + ["", ""])[:3]
            tags[name] = peeled or obj  # annotated tags peel to their commit
        return tags

    def resolve(self, revision: str | None) -> str:
        """A revision (tag, branch, commit; None = HEAD) as a full commit id."""
        if not self._has_commits():
            raise TargetError(f"{self.path}: the repository has no commits yet")
        rev = revision or "HEAD"
        proc = self._git("rev-parse", "--verify", "-q", f"{rev}^{{commit}}", check=False)
        if proc.returncode != 0:
            known = ", ".join(sorted(self.tags())) or "none"
            raise TargetError(f"{self.path}: revision {rev!r} not found (tags: {known})")
        return proc.stdout.decode().strip()

    def read_text(self, path: str, revision: str | None = None) -> str | None:
        if not self._has_commits():
            return None
        commit = self.resolve(revision)
        proc = self._git("show", f"{commit}:{path}", check=False)
        return proc.stdout.decode("utf-8") if proc.returncode == 0 else None

    def list_files(self, revision: str | None = None) -> list[str]:
        if not self._has_commits():
            return []
        commit = self.resolve(revision)
        return self._git("ls-tree", "-r", "--name-only", commit).stdout.decode().splitlines()

    def _commit_and_tag(self, tree: Path, adds: list[str], deletes: list[str], tag: str, message: str) -> str:
        self.ensure()
        dirty = self._git("status", "--porcelain").stdout.decode().strip()
        if dirty:
            raise TargetError(
                f"{self.path}: the work tree has uncommitted changes; commit or discard them first:\n{dirty}"
            )
        for p in deletes:
            self._git("rm", "-q", "--", p)
        for p in adds:
            dest = self.path / p
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(tree / p, dest)
        self._git("add", "--", *adds)
        self._git("commit", "-q", "--allow-empty", "-m", message)
        commit = self.resolve("HEAD")
        self._git("tag", "-a", tag, "-m", message, commit)
        return commit

    def export(self, revision: str | None, dest_root: Path) -> tuple[Path, str]:
        """The files of a revision, exported once into ``dest_root/<commit>`` (immutable, reused)."""
        commit = self.resolve(revision)
        final = dest_root / commit
        if (final / ".rqbench-complete").is_file():
            return final, commit
        tmp = dest_root / f".tmp-{commit}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir(parents=True)
        try:
            data = self._git("archive", "--format=tar", commit).stdout
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(tmp, filter="data")
            (tmp / ".rqbench-complete").write_text(commit + "\n", encoding="utf-8")
            if final.exists():  # a half-made folder from a crash: replace it
                shutil.rmtree(final)
            tmp.rename(final)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        return final, commit


# -- a Hugging Face dataset repository ----------------------------------------


class HubTarget(Target):
    """A dataset repo on the Hub, written through ``huggingface_hub.HfApi`` (one commit, one tag per release)."""

    kind = "hub"

    def __init__(self, repo_id: str, api: Any = None, *, token: str | None = None, private: bool | None = None):
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        self.repo_id, self.api, self.private = repo_id, api, private

    def describe(self) -> str:
        return f"hf://datasets/{self.repo_id}"

    def _refs(self) -> Any | None:
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            return self.api.list_repo_refs(self.repo_id, repo_type="dataset")
        except RepositoryNotFoundError:
            return None

    def tags(self) -> dict[str, str]:
        refs = self._refs()
        return {t.name: t.target_commit for t in refs.tags} if refs else {}

    def _head(self) -> str | None:
        refs = self._refs()
        if not refs:
            return None
        for b in refs.branches:
            if b.name == "main":
                return b.target_commit
        return None

    def read_text(self, path: str, revision: str | None = None) -> str | None:
        from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError

        try:
            local = self.api.hf_hub_download(self.repo_id, path, repo_type="dataset", revision=revision)
        except (EntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError):
            return None
        return Path(local).read_text(encoding="utf-8")

    def list_files(self, revision: str | None = None) -> list[str]:
        from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

        try:
            return list(self.api.list_repo_files(self.repo_id, repo_type="dataset", revision=revision))
        except (RepositoryNotFoundError, RevisionNotFoundError):
            return []

    def _commit_and_tag(self, tree: Path, adds: list[str], deletes: list[str], tag: str, message: str) -> str:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        self.api.create_repo(self.repo_id, repo_type="dataset", exist_ok=True, private=self.private)
        operations = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(tree / p)) for p in adds]
        operations += [CommitOperationDelete(path_in_repo=p) for p in deletes]
        info = self.api.create_commit(
            self.repo_id,
            operations=operations,
            commit_message=message,
            repo_type="dataset",
            parent_commit=self._head(),  # refuse if someone pushed since we read the repository
        )
        self.api.create_tag(self.repo_id, tag=tag, tag_message=message, revision=info.oid, repo_type="dataset")
        return info.oid


def target_for(repo: str, to: str | Path | None = None, *, api: Any = None) -> Target:
    """``--to DIR`` (a local repository) when given, else the Hub repo ``repo``."""
    if to is not None:
        target = LocalGitTarget(to)
        target.check_usable()
        return target
    if "/" not in repo or Path(repo).exists():
        raise TargetError(f"--repo {repo!r} is not a Hub id ORG/NAME; use --to DIR for a local repository")
    return HubTarget(repo, api=api)


def materialize(repo: str | Path, revision: str | None = None) -> tuple[Path, str | None]:
    """A folder ``load_dataset`` can read, pinned to ``revision``, and the commit it resolved to.

    A local git repository: the revision's files are exported (``git archive``)
    into ``RQB_HOME/cache/datasets/<name>-<hash>/<commit>`` once. A plain local
    folder: itself, resolved revision None (no pinning possible). A Hub id:
    ``snapshot_download(repo_type="dataset")``, whose folder name is the commit.
    """
    local = Path(repo)
    if local.exists():
        local = local.resolve()
        if (local / ".git").exists():
            cache = paths.home() / "cache" / "datasets" / f"{local.name}-{content_hash(str(local))[3:11]}"
            return LocalGitTarget(local).export(revision, cache)
        if revision is not None:
            raise TargetError(f"{local}: not a git repository, so revision {revision!r} cannot be pinned")
        return local, None
    if isinstance(repo, Path) or repo.count("/") != 1:
        raise TargetError(f"{repo}: no such folder, and not a Hub dataset id ORG/NAME")
    from huggingface_hub import snapshot_download

    folder = Path(snapshot_download(repo_id=str(repo), repo_type="dataset", revision=revision))
    return folder, folder.name
