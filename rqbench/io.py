"""File I/O primitives shared by the builder, the evaluation and the Space.

Three promises, kept here once:

- a file written with :func:`write_atomic` (or :func:`atomic_open`) is whole or
  absent: the bytes go to a hidden sibling, are fsynced, then ``os.replace``
  puts them in place, so a reader never sees half a file;
- a line added with :func:`append_line` is one ``write`` then an fsync, so a
  crash leaves whole lines and at worst a torn last one, which
  :func:`read_appended` cuts off;
- a record that does not fit its model is a :class:`RecordError` that names
  the file, the line, the record and the field;
- a file a user named is read by :func:`read_capped` only if it is a regular
  file within a byte cap: a link to ``/dev/zero``, a FIFO, a device or a
  folder is an :class:`UnreadableInput` naming what it is, never a read.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError

log = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)
E = TypeVar("E", bound="RecordError")

_NOT_SHOWN = object()  # the value of a field, when the message leaves it out


# --------------------------------------------------------------------------
# The error
# --------------------------------------------------------------------------


class RecordError(ValueError):
    """A record that does not fit: ``<file>:<line>: <record>: not a valid <kind>: field <f>: <problem>``.

    Every part but the problem is optional. Built from a pydantic error with
    :meth:`from_validation`, it names the first failing field and counts the
    rest; :meth:`problem_list` gives them all, one after another. A subclass
    may word the place and the field its own way (the two formats below),
    where its users know an older wording.
    """

    LINE_FORMAT: ClassVar[str] = "{path}:{line}"
    FIELD_FORMAT: ClassVar[str] = "field {field}"  # may also use {model}, the record's class name

    def __init__(
        self,
        problem: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        record: str | None = None,
        kind: str | None = None,
        field: str | None = None,
        given: Any = _NOT_SHOWN,
        more: int = 0,
        hint: str = "",
        model: str | None = None,
        problems: tuple[tuple[str, str], ...] = (),
    ):
        self.problem = problem
        self.path = path
        self.line = line
        self.record = record
        self.kind = kind
        self.field = field
        self.given = given
        self.more = more
        self.hint = hint
        self.model = model
        self.problems = problems or ((field or "", problem),)
        super().__init__(self.render())

    @classmethod
    def from_validation(
        cls: type[E],
        exc: ValidationError,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        record: str | None = None,
        kind: str | None = None,
        show_given: bool = False,
        hint: str = "",
    ) -> E:
        """The error for a pydantic failure: its first field named, the others counted."""
        errors = exc.errors()
        problems = tuple((".".join(str(x) for x in e["loc"]), e["msg"]) for e in errors)
        first = errors[0]
        return cls(
            first["msg"],
            path=path,
            line=line,
            record=record,
            kind=kind,
            field=problems[0][0] or None,
            given=first.get("input") if show_given else _NOT_SHOWN,
            more=len(errors) - 1,
            hint=hint,
            model=exc.title,
            problems=problems,
        )

    def render(self) -> str:
        where = "" if self.path is None else str(self.path)
        if where and self.line is not None:
            where = self.LINE_FORMAT.format(path=self.path, line=self.line)
        parts = [where, self.record or "", f"not a valid {self.kind}" if self.kind else ""]
        if self.field is not None:
            parts.append(self.FIELD_FORMAT.format(field=self.field, model=self.model))
            if self.given is not _NOT_SHOWN:
                parts.append(f"{self.given!r:.80}")
        text = ": ".join([p for p in parts if p] + [self.problem])
        if self.more:
            text += f" (and {self.more} more)"
        return text + self.hint

    def problem_list(self, limit: int) -> str:
        """Up to ``limit`` problems as ``field: problem; ...`` (``(root)`` for the record as a whole)."""
        return "; ".join(f"{f or '(root)'}: {msg}" for f, msg in self.problems[:limit])


# --------------------------------------------------------------------------
# Whole files, written atomically
# --------------------------------------------------------------------------


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """A file to write ``path`` through: it takes the place of ``path`` only if the block ends without error.

    ``mode`` is ``"w"`` (text, UTF-8) or ``"wb"``. The hidden sibling it writes
    first has a name of its own per call, so two writers never share one.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a new file: mode 'w' or 'wb', not {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write a whole file or nothing (text is written as UTF-8)."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)
    return Path(path)


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Rewrite ``path`` atomically with one record a line; the number of lines written."""
    lines = [r.model_dump_json() + "\n" for r in records]
    write_atomic(path, "".join(lines))
    return len(lines)


# --------------------------------------------------------------------------
# Appended lines
# --------------------------------------------------------------------------


def append_line(path: str | Path, line: str) -> None:
    """Add one line with a single ``write``, then fsync: a crash leaves whole lines or a torn last one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line if line.endswith("\n") else line + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_appended(path: str | Path, model: type[M], *, error: type[RecordError] = RecordError) -> list[M]:
    """The records of a file written by :func:`append_line`, in file order.

    A last line that does not fit and has no newline after it is a write a
    crash cut short: it is dropped from the file (with a warning). A bad line
    anywhere else is damage, and raises ``error``.
    """
    path = Path(path)
    if not path.exists():
        return []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    out: list[M] = []
    good_end = 0
    pos = 0
    for lineno, line in enumerate(lines, 1):
        end = pos + len(line) + 1
        if line.strip():
            try:
                out.append(model.model_validate_json(line))
            except ValidationError as exc:
                if lineno == len(lines) and not raw.endswith(b"\n"):
                    log.warning("%s: dropping a torn last line (an interrupted write)", path)
                    break
                raise error.from_validation(exc, path=path, line=lineno, kind=model.__name__) from exc
        pos = end
        good_end = min(end, len(raw))
    if good_end < len(raw):
        with open(path, "r+b") as fh:
            fh.truncate(good_end)
    return out


# --------------------------------------------------------------------------
# Reading JSON and JSONL
# --------------------------------------------------------------------------


def read_model(
    path: str | Path, model: type[M], *, kind: str | None = None, error: type[RecordError] = RecordError
) -> M:
    """A JSON file validated as ``model``; ``error`` says ``<file>: not a valid <kind>: field ...``."""
    try:
        return model.model_validate_json(Path(path).read_bytes())
    except ValidationError as exc:
        raise error.from_validation(exc, path=path, kind=kind or model.__name__) from exc


def read_json_lines(path: str | Path, *, error: type[RecordError] = RecordError) -> list[tuple[int, Any]]:
    """(line number, decoded JSON) for every non-blank line; a line that is not JSON raises ``error``."""
    path = Path(path)
    rows: list[tuple[int, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rows.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise error(f"not JSON ({exc.msg})", path=path, line=n) from exc
    return rows


def read_jsonl(
    path: str | Path,
    model: type[M],
    *,
    error: type[RecordError] = RecordError,
    label: Callable[[Any], str | None] | None = None,
    hint: str = "",
) -> list[M]:
    """Every non-blank line of a JSONL file validated as ``model``.

    A bad line raises ``error`` naming the file, the line, the field and, when
    ``label`` is given, the record (``label`` gets the line's JSON).
    """
    out: list[M] = []
    with Path(path).open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(model.model_validate_json(line))
            except ValidationError as exc:
                record = label(_json_or_none(line)) if label is not None else None
                raise error.from_validation(exc, path=path, line=n, record=record, hint=hint) from exc
    return out


def _json_or_none(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None


def id_label(key: str) -> Callable[[Any], str | None]:
    """A ``label`` for :func:`read_jsonl`: the line's ``key`` field, as ``key='value'``."""

    def label(data: Any) -> str | None:
        return f"{key}={data.get(key)!r}" if isinstance(data, dict) and key in data else None

    return label


# --------------------------------------------------------------------------
# Reading what a user named: regular files only, never past a byte cap
# --------------------------------------------------------------------------
# The kind and size come from ``stat``; the file is opened without blocking and
# checked again on the open descriptor (a swap between the look and the open is
# caught), and at most ``max_bytes + 1`` bytes are read.

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
        raise UnreadableInput(
            path, "not_a_file", f"is {describe_kind(st.st_mode)}{_via_link(path)}, not a regular file; nothing was read"
        )
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
            raise UnreadableInput(
                path, "not_a_file", "changed into something else while it was being opened; nothing was read"
            )
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
