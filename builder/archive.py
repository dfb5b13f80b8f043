"""Safe unpacking of arXiv e-print blobs into a paper folder.

arXiv serves a paper's source as one of: a gzipped tar of the folder, a
single gzipped .tex file, a plain tar, or (for PDF-only submissions) a PDF.
The kind is told by magic bytes, not by the name. Unpacking writes every file
itself (never ``tarfile.extract``) and refuses what could escape or exhaust
the machine: absolute paths, ``..``, links and device files, sparse files,
members that collide with each other or with the unpacker's own marker, more
members or more bytes than the budget (archive bombs). A refused blob is a
PaperSkipped with a named reason; a finished folder is reused on the next run.

Header metadata counts too. ``tarfile`` reads a GNU long name or a pax header
into memory whole when it reaches it, so a 300 KB gzip holding a 300 MB pax
header would cost 300 MB (and more in copies) before any budget applied.
``_prescan_tar`` therefore walks the raw 512-byte headers first, reading data
only in bounded chunks to skip it, and refuses an oversized metadata header,
a declared size over the budget, or too many members before ``tarfile`` sees
the stream; the metadata bytes it saw are charged to the byte budget.
"""

from __future__ import annotations

import gzip
import os
import re
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
    max_header_bytes: int = 1024 * 1024  # one GNU long name or pax header (a path is at most a few KB)


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


# Header types whose data is metadata for the next member, read whole by tarfile.
_METADATA_TYPES = {
    tarfile.GNUTYPE_LONGNAME: "GNU long name",
    tarfile.GNUTYPE_LONGLINK: "GNU long link name",
    tarfile.XHDTYPE: "pax header",
    tarfile.XGLTYPE: "pax global header",
    tarfile.SOLARIS_XHDTYPE: "Solaris extended header",
}


def _read_up_to(f, n: int) -> bytes:
    """Exactly n bytes unless the stream ends first (gzip reads may return less)."""
    parts, got = [], 0
    while got < n:
        chunk = f.read(min(CHUNK, n - got))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _skip(f, n: int) -> bool:
    """Read and drop n bytes in bounded chunks; False when the stream ends first."""
    while n > 0:
        chunk = f.read(min(CHUNK, n))
        if not chunk:
            return False
        n -= len(chunk)
    return True


_PAX_RECORD = re.compile(rb"(\d+) ([^=]+)=")


def _pax_records(buf: bytes) -> dict[str, bytes] | None:
    """The ``"<len> key=value\\n"`` records of a pax header, parsed as tarfile parses them; None where it would fail."""
    records: dict[str, bytes] = {}
    pos = 0
    while (m := _PAX_RECORD.match(buf, pos)) is not None:
        length = int(m.group(1))
        if length == 0:
            return None
        records[m.group(2).decode("utf-8", "replace")] = buf[m.end(2) + 1 : m.start(1) + length - 1]
        pos += length
    return records


def _pax_size(value: bytes | None) -> int | None:
    """A pax ``size`` record as tarfile reads it (int(), 0 when unreadable)."""
    if value is None:
        return None
    try:
        return int(value.decode("utf-8", "replace"))
    except ValueError:
        return 0


def _prescan_tar(open_stream, budget: Budget) -> int:
    """Check every raw tar header against the budget before tarfile reads the stream; the metadata bytes seen.

    Mirrors how tarfile walks a stream: a header block, then its data rounded
    up to 512 bytes (regular and unknown types only), the size taken from a
    preceding pax header when it sets one. Where tarfile would stop (a bad
    checksum, the end marker, a truncated stream), the scan stops too and
    leaves the error to tarfile.
    """
    meta_bytes = members = meta_headers = declared = 0
    global_pax: dict[str, bytes] = {}
    pending_size: int | None = None
    with open_stream() as f:
        while True:
            block = _read_up_to(f, tarfile.BLOCKSIZE)
            try:
                info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
            except tarfile.HeaderError:
                return meta_bytes
            if info.size < 0:
                raise PaperSkipped("corrupt_archive", f"member {info.name!r} declares a negative size")
            padded = -(-info.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
            if info.type in _METADATA_TYPES:
                what = _METADATA_TYPES[info.type]
                meta_headers += 1
                if meta_headers > budget.max_members:
                    raise PaperSkipped("archive_over_budget", f"more than {budget.max_members} metadata headers")
                if info.size > budget.max_header_bytes:
                    raise PaperSkipped(
                        "archive_over_budget",
                        f"a {what} of {info.size} bytes, over the limit of "
                        f"{budget.max_header_bytes} bytes for one header",
                    )
                meta_bytes += info.size
                if meta_bytes > budget.max_bytes:
                    raise PaperSkipped("archive_over_budget", f"the e-print's headers pass {budget.max_bytes} bytes")
                buf = _read_up_to(f, padded)
                if info.type in (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE):
                    records = _pax_records(buf)  # tarfile parses the padded block
                    if records is None:
                        return meta_bytes
                    if any(k.startswith("GNU.sparse") for k in records):
                        raise PaperSkipped("unsafe_archive", "a pax header describes a sparse file")
                    if info.type == tarfile.XGLTYPE:
                        global_pax.update(records)
                    else:
                        pending_size = _pax_size({**global_pax, **records}.get("size"))
                continue
            if info.type == tarfile.GNUTYPE_SPARSE:
                raise PaperSkipped("unsafe_archive", f"member {info.name!r} is a sparse file")
            members += 1
            if members > budget.max_members:
                raise PaperSkipped("archive_over_budget", f"more than {budget.max_members} members")
            size = info.size if pending_size is None else pending_size
            pending_size = None
            if size < 0:
                raise PaperSkipped("corrupt_archive", f"member {info.name!r} declares a negative size")
            if not (info.isreg() or info.type not in tarfile.SUPPORTED_TYPES):
                continue
            if size > budget.max_file_bytes:
                raise PaperSkipped("archive_over_budget", f"{info.name} declares {size} bytes")
            declared += size
            if declared + meta_bytes > budget.max_bytes:
                raise PaperSkipped("archive_over_budget", f"the e-print unpacks to more than {budget.max_bytes} bytes")
            if not _skip(f, -(-size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE):
                return meta_bytes


def _make_folders(dest: Path, parts: tuple[str, ...], name: str) -> Path:
    """dest/parts as folders; an earlier member's file in the way is a named refusal, not an OSError."""
    here = dest
    for part in parts:
        here = here / part
        if here.is_dir():
            continue
        if here.exists():
            raise PaperSkipped(
                "unsafe_archive", f"member {name!r} needs a folder {part!r} where an earlier member wrote a file"
            )
        here.mkdir()
    return here


def _extract_tar(open_stream, dest: Path, budget: Budget) -> None:
    members = 0
    try:
        counter = [_prescan_tar(open_stream, budget)]
        with open_stream() as fileobj, tarfile.open(fileobj=fileobj, mode="r|*") as tar:
            for member in tar:
                members += 1
                if members > budget.max_members:
                    raise PaperSkipped("archive_over_budget", f"more than {budget.max_members} members")
                rel = _safe_member_path(member.name)
                if rel.parts[0] == _DONE_MARK:
                    raise PaperSkipped(
                        "unsafe_archive",
                        f"member {member.name!r} takes the name of the unpacker's own marker {_DONE_MARK!r}",
                    )
                if member.issym() or member.islnk():
                    raise PaperSkipped("unsafe_archive", f"member {member.name!r} is a link")
                if not (member.isfile() or member.isdir()):
                    raise PaperSkipped("unsafe_archive", f"member {member.name!r} is a device or special file")
                if member.isdir():
                    _make_folders(dest, rel.parts, member.name)
                    continue
                if member.size > budget.max_file_bytes:
                    raise PaperSkipped("archive_over_budget", f"{member.name} declares {member.size} bytes")
                target = _make_folders(dest, rel.parts[:-1], member.name) / rel.parts[-1]
                if target.is_dir():
                    raise PaperSkipped(
                        "unsafe_archive", f"member {member.name!r} is a file where an earlier member made a folder"
                    )
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
            _extract_tar(lambda: gzip.open(blob_path, "rb"), tmp, budget)
            return
        if inner == "pdf":
            raise PaperSkipped("pdf_only", f"{blob_path.name} is a gzipped PDF: no LaTeX source")
        if inner == "text":
            try:
                with gzip.open(blob_path, "rb") as g:
                    _copy_limited(
                        g, tmp / _single_file_name(blob_path), budget.max_file_bytes, [0], budget, blob_path.name
                    )
            except (OSError, EOFError, zlib.error) as exc:
                raise PaperSkipped("corrupt_archive", f"gzip: {type(exc).__name__}: {exc}") from exc
            return
        if inner == "empty":
            raise PaperSkipped("empty_eprint", f"{blob_path.name} holds an empty file")
        raise PaperSkipped("unsupported_eprint", f"{blob_path.name} is gzip of an unknown format")
    if kind == "tar":
        _extract_tar(lambda: open(blob_path, "rb"), tmp, budget)
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
