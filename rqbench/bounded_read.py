"""Reading a file a user named without trusting what it is: regular files only, never past a byte cap.

A path handed to a job (a submission, an id list) may be a symlink to
``/dev/zero`` (an endless read), a FIFO (a read that never returns), a device,
a folder, or a file far larger than anything valid. ``read_capped`` looks
before it reads: the kind and the size come from ``stat``, the file is opened
without blocking and checked again on the open descriptor (so a swap between
the look and the open is caught), and at most ``max_bytes + 1`` bytes are read.
Every refusal is an ``UnreadableInput`` whose message names the path and what
it is, and whose ``code`` a validator can report.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["UnreadableInput", "describe_kind", "read_capped"]

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UnreadableInput(ValueError):
    """A path that is not a readable regular file within the cap; ``code`` says which way it failed."""

    def __init__(self, path: str | Path, code: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = str(path)
        self.code = code  # "missing" | "not_a_file" | "size" | "unreadable"
        self.detail = message


def describe_kind(mode: int) -> str:
    """'a FIFO (named pipe)', 'a character device', ... for a stat mode that is not a regular file."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _via_link(path: Path) -> str:
    try:
        return f" (a symbolic link to {os.readlink(path)})" if path.is_symlink() else ""
    except OSError:  # the link vanished or cannot be read: the main message still says what the path is
        return ""


def read_capped(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, if it has at most ``max_bytes``; else ``UnreadableInput``."""
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        via = _via_link(path)
        raise UnreadableInput(path, "missing", f"no such file{via}") from None
    except OSError as exc:
        raise UnreadableInput(path, "unreadable", f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableInput(path, "not_a_file", f"is {describe_kind(st.st_mode)}{_via_link(path)}, "
                              "not a regular file; nothing was read")  # fmt: skip
    if st.st_size > max_bytes:
        raise UnreadableInput(path, "size", f"file is {st.st_size} bytes, over the limit of {max_bytes} bytes")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnreadableInput(path, "unreadable", f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb", buffering=0) as f:
        now = os.fstat(f.fileno())
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise UnreadableInput(path, "not_a_file", "changed into something else while it was being opened; "
                                  "nothing was read")  # fmt: skip
        parts: list[bytes] = []
        got = 0
        while got <= max_bytes:
            chunk = f.read(min(1 << 20, max_bytes + 1 - got))
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
    if got > max_bytes:
        raise UnreadableInput(path, "size", f"file grew past the limit of {max_bytes} bytes while it was read")
    return b"".join(parts)
