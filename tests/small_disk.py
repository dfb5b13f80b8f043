"""A small disk for the storage-fault tests: a real tmpfs of a few hundred KiB where this machine lets a test
mount one (root, and mounting allowed), else the same fault injected at the two places that write: the
stores' atomic file writes raise ENOSPC, and SQLite's page limit makes the call log full (SQLITE_FULL)."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from pathlib import Path

import pytest


class SmallDisk:
    """``root`` is the disk; ``fill()`` takes its last free byte, ``free()`` gives the room back."""

    def __init__(self, root: Path, size_kib: int, monkeypatch: pytest.MonkeyPatch):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.mounted = _mount_tmpfs(root, size_kib)
        self.full = False
        self._call_stores: list = []
        if not self.mounted:
            import rqbench.space.stores as stores_module

            real = stores_module.write_atomic

            def write_atomic(path, data):
                if self.full and Path(path).resolve().is_relative_to(self.root.resolve()):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
                return real(path, data)

            monkeypatch.setattr(stores_module, "write_atomic", write_atomic)

    @property
    def kind(self) -> str:
        return "tmpfs" if self.mounted else "injected ENOSPC"

    def watch(self, call_store) -> None:
        """A call log on this disk (only needed where the fault is injected)."""
        self._call_stores.append(call_store)

    def fill(self) -> None:
        self.full = True
        if self.mounted:
            try:
                with open(self.root / ".filler", "ab") as fh:
                    while True:
                        fh.write(b"\0" * 4096)
                        fh.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
        for store in self._call_stores:  # SQLite refuses to grow past its current pages: SQLITE_FULL
            with store._lock:
                pages = store._db.execute("PRAGMA page_count").fetchone()[0]
                store._db.execute(f"PRAGMA max_page_count = {pages}")

    def free(self) -> None:
        self.full = False
        (self.root / ".filler").unlink(missing_ok=True)
        for store in self._call_stores:
            with store._lock:
                store._db.execute("PRAGMA max_page_count = 1073741823")

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.root)], check=False, capture_output=True)


def _mount_tmpfs(root: Path, size_kib: int) -> bool:
    if os.environ.get("RQB_TEST_NO_TMPFS") or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_kib}k,mode=0755", "tmpfs", str(root)], capture_output=True
    )
    return done.returncode == 0


@pytest.fixture
def small_disk(tmp_path, monkeypatch):
    disk = SmallDisk(tmp_path / "small-disk", 4096, monkeypatch)
    yield disk
    disk.close()
