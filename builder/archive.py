"""Safe unpacking of arXiv e-print blobs into a paper folder.

arXiv serves a paper's source as one of: a gzipped tar of the folder, a
single gzipped .tex file, a plain tar, or (for PDF-only submissions) a PDF.
The kind is told by magic bytes, not by the name. Unpacking writes every file
itself (never ``tarfile.extract``) and refuses what could escape or exhaust
the machine: absolute paths, ``..``, links and device files, more members or
more bytes than the budget (archive bombs). A refused blob is a PaperSkipped
with a named reason; a finished folder is reused on the next run.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rqbench.builder.latex_source import looks_binary
from rqbench.builder.paper_skip import PaperSkipped

CHUNK = 1 << 16


@dataclass(frozen=True)
class Budget:
    """Limits one e-print may not pass."""

    max_bytes: int = 512 * 1024 * 1024
    max_members: int = 5000
    max_file_bytes: int = 256 * 1024 * 1024


DEFAULT_BUDGET = Budget()
_DONE_MARK = ".rqbench-unpacked"


def sniff(head: bytes) -> str:
    """The blob's kind from its first bytes: gzip, pdf, tar, zip, empty or text/unknown."""
    if not head:
        return "empty"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.lstrip()[:5] == b"%PDF-":
        return "pdf"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    if head.startswith((b"BZh", b"\xfd7zXZ")):
        return "other_compression"
    return "unknown" if looks_binary(head) else "text"


def _safe_member_path(name: str) -> PurePosixPath:
    p = PurePosixPath(name.replace("\\", "/"))
    parts = [x for x in p.parts if x not in ("", ".")]
    if p.is_absolute() or any(x == ".." for x in parts) or not parts:
        raise PaperSkipped("unsafe_archive", f"member {name!r} would be written outside the paper folder")
    return PurePosixPath(*parts)


def _copy_limited(src, dst_path: Path, limit: int, counter: list[int], budget: Budget, name: str) -> None:
    """Stream src into a new file, stopping at the per-file and total budgets."""
    written = 0
    fd = os.open(dst_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = src.read(CHUNK)
            if not chunk:
                break
            written += len(chunk)
            counter[0] += len(chunk)
            if written > limit:
                raise PaperSkipped("archive_over_budget", f"{name} unpacks to more than {limit} bytes")
            if counter[0] > budget.max_bytes:
                raise PaperSkipped("archive_over_budget", f"the e-print unpacks to more than {budget.max_bytes} bytes")
            out.write(chunk)


def _extract_tar(fileobj, dest: Path, budget: Budget) -> None:
    counter = [0]
    members = 0
    try:
        with tarfile.open(fileobj=fileobj, mode="r|*") as tar:
            for member in tar:
                members += 1
                if members > budget.max_members:
                    raise PaperSkipped("archive_over_budget", f"more than {budget.max_members} members")
                rel = _safe_member_path(member.name)
                if member.issym() or member.islnk():
                    raise PaperSkipped("unsafe_archive", f"member {member.name!r} is a link")
                if not (member.isfile() or member.isdir()):
                    raise PaperSkipped("unsafe_archive", f"member {member.name!r} is a device or special file")
                target = dest.joinpath(*rel.parts)
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if member.size > budget.max_file_bytes:
                    raise PaperSkipped("archive_over_budget", f"{member.name} declares {member.size} bytes")
                target.parent.mkdir(parents=True, exist_ok=True)
                if target.exists():
                    target.unlink()  # a later copy of the same name wins, as tar does
                src = tar.extractfile(member)
                if src is None:
                    continue
                _copy_limited(src, target, budget.max_file_bytes, counter, budget, member.name)
    except PaperSkipped:
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError, gzip.BadGzipFile) as exc:
        raise PaperSkipped("corrupt_archive", f"{type(exc).__name__}: {exc}") from exc


def _gzip_inner_kind(blob_path: Path) -> str:
    try:
        with gzip.open(blob_path, "rb") as g:
            head = g.read(1024)
    except (OSError, EOFError, zlib.error) as exc:
        raise PaperSkipped("corrupt_archive", f"gzip: {type(exc).__name__}: {exc}") from exc
    return sniff(head)


def _single_file_name(blob_path: Path) -> str:
    """A single gzipped source is the root .tex; keep its name from the gzip header when sane."""
    with open(blob_path, "rb") as f:
        header = f.read(10)
        if len(header) == 10 and header[3] & 0x08:  # FNAME flag
            if header[3] & 0x04:  # FEXTRA
                xlen = int.from_bytes(f.read(2), "little")
                f.read(xlen)
            raw = bytearray()
            while len(raw) < 255:
                b = f.read(1)
                if not b or b == b"\x00":
                    break
                raw += b
            name = raw.decode("latin-1", "replace")
            base = PurePosixPath(name.replace("\\", "/")).name
            if base and base not in (".", "..") and base.lower().endswith(".tex"):
                return base
    return "main.tex"


def _unpack_into(blob_path: Path, tmp: Path, budget: Budget) -> None:
    with open(blob_path, "rb") as f:
        head = f.read(1024)
    kind = sniff(head)
    if kind == "empty":
        raise PaperSkipped("empty_eprint", f"{blob_path.name} is empty")
    if kind == "pdf":
        raise PaperSkipped("pdf_only", f"{blob_path.name} is a PDF: the authors submitted no LaTeX source")
    if kind == "gzip":
        inner = _gzip_inner_kind(blob_path)
        if inner == "tar":
            with open(blob_path, "rb") as f:
                _extract_tar(f, tmp, budget)
            return
        if inner == "pdf":
            raise PaperSkipped("pdf_only", f"{blob_path.name} is a gzipped PDF: no LaTeX source")
        if inner == "text":
            try:
                with gzip.open(blob_path, "rb") as g:
                    _copy_limited(g, tmp / _single_file_name(blob_path), budget.max_file_bytes, [0], budget, blob_path.name)
            except (OSError, EOFError, zlib.error) as exc:
                raise PaperSkipped("corrupt_archive", f"gzip: {type(exc).__name__}: {exc}") from exc
            return
        if inner == "empty":
            raise PaperSkipped("empty_eprint", f"{blob_path.name} holds an empty file")
        raise PaperSkipped("unsupported_eprint", f"{blob_path.name} is gzip of an unknown format")
    if kind == "tar":
        with open(blob_path, "rb") as f:
            _extract_tar(f, tmp, budget)
        return
    if kind == "text":
        with open(blob_path, "rb") as f:
            _copy_limited(f, tmp / "main.tex", budget.max_file_bytes, [0], budget, blob_path.name)
        return
    raise PaperSkipped("unsupported_eprint", f"{blob_path.name} is {kind}, not a tar, gzip or TeX file")


def unpack_eprint(blob_path: Path, dest: Path, *, budget: Budget = DEFAULT_BUDGET) -> Path:
    """Unpack an arXiv e-print into dest; the folder holding the sources, or PaperSkipped.

    Writes to ``<dest>.partial`` and renames when complete, so a crash leaves no
    half folder and a rerun finds a finished dest and returns it unchanged. A
    tar whose only entry is one folder returns that folder.
    """
    blob_path, dest = Path(blob_path), Path(dest)
    if (dest / _DONE_MARK).is_file():
        return _source_root(dest)
    if dest.exists():
        shutil.rmtree(dest)
    tmp = dest.with_name(dest.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        _unpack_into(blob_path, tmp, budget)
        (tmp / _DONE_MARK).write_text(blob_path.name + "\n")
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _source_root(dest)


def _source_root(dest: Path) -> Path:
    entries = [p for p in dest.iterdir() if p.name != _DONE_MARK]
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    return dest
