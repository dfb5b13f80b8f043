"""archive: e-print kinds by magic bytes, and refusal of unsafe or oversized archives."""

from __future__ import annotations

import gzip
import io
import random
import resource
import tarfile
import time
import tracemalloc
from pathlib import Path

import pytest

from rqbench.builder.archive import Budget, sniff, unpack_eprint
from rqbench.builder.paper_skip import PaperSkipped
from rqbench.builder.parse import parse_paper

TEX = b"\\documentclass{article}\n\\begin{document}\n\\section{Intro}\nText \\cite{k}.\n\\bibliography{refs}\n\\end{document}\n"
BIB = b"@article{k, title={A Title}, year={2020}}\n"


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tar.addfile(m)
            else:
                name, data = m
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def skip_reason(blob: Path, dest: Path, **kw) -> str:
    with pytest.raises(PaperSkipped) as e:
        unpack_eprint(blob, dest, **kw)
    assert not dest.exists() and not dest.with_name(dest.name + ".partial").exists()
    return e.value.reason


def test_tar_gz_of_a_folder_parses(tmp_path):
    blob = make_tar(tmp_path / "2401.00001", [("main.tex", TEX), ("refs.bib", BIB), ("figs/a.txt", b"x")])
    folder = unpack_eprint(blob, tmp_path / "src")
    assert (folder / "main.tex").read_bytes() == TEX and (folder / "figs" / "a.txt").is_file()
    parsed = parse_paper(folder, "2401.00001")
    assert parsed.cited_works[0].bib.title == "A Title"


def test_single_top_folder_is_returned(tmp_path):
    blob = make_tar(tmp_path / "b", [("paper/main.tex", TEX), ("paper/refs.bib", BIB)])
    assert unpack_eprint(blob, tmp_path / "src") == tmp_path / "src" / "paper"


def test_plain_tar(tmp_path):
    blob = make_tar(tmp_path / "b", [("main.tex", TEX)], mode="w")
    assert sniff(blob.read_bytes()[:1024]) == "tar"
    assert (unpack_eprint(blob, tmp_path / "src") / "main.tex").is_file()


def test_single_gzipped_tex_keeps_header_name(tmp_path):
    blob = tmp_path / "2401.00002"
    with open(blob, "wb") as raw:
        with gzip.GzipFile(filename="paper.tex", mode="wb", fileobj=raw) as g:
            g.write(TEX)
    folder = unpack_eprint(blob, tmp_path / "src")
    assert [p.name for p in folder.iterdir() if not p.name.startswith(".")] == ["paper.tex"]


def test_pdf_only_and_gzipped_pdf(tmp_path):
    pdf = tmp_path / "p"
    pdf.write_bytes(b"%PDF-1.5\n%binary\x00\x01")
    assert skip_reason(pdf, tmp_path / "d1") == "pdf_only"
    gz = tmp_path / "g"
    gz.write_bytes(gzip.compress(b"%PDF-1.4\n" + b"\x00" * 100))
    assert skip_reason(gz, tmp_path / "d2") == "pdf_only"


def test_empty_unknown_and_corrupt(tmp_path):
    empty = tmp_path / "e"
    empty.write_bytes(b"")
    assert skip_reason(empty, tmp_path / "d1") == "empty_eprint"
    zipf = tmp_path / "z"
    zipf.write_bytes(b"PK\x03\x04" + b"\x00" * 50)
    assert skip_reason(zipf, tmp_path / "d2") == "unsupported_eprint"
    broken = tmp_path / "c"
    payload = TEX + bytes(random.Random(0).randrange(97, 123) for _ in range(50_000))
    whole = gzip.compress(make_tar(tmp_path / "t", [("main.tex", payload)], mode="w").read_bytes())
    broken.write_bytes(whole[: len(whole) // 2])
    assert skip_reason(broken, tmp_path / "d3") == "corrupt_archive"


@pytest.mark.parametrize("name", ["../evil.tex", "/etc/evil.tex", "a/../../evil.tex", "..\\evil.tex"])
def test_path_traversal_refused(tmp_path, name):
    blob = make_tar(tmp_path / "b", [("main.tex", TEX), (name, b"owned")])
    assert skip_reason(blob, tmp_path / "work" / "src") == "unsafe_archive"
    assert not (tmp_path / "evil.tex").exists() and not (tmp_path / "work" / "evil.tex").exists()


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE])
def test_links_and_devices_refused(tmp_path, kind):
    info = tarfile.TarInfo("link.tex")
    info.type = kind
    info.linkname = "/etc/passwd"
    blob = make_tar(tmp_path / "b", [("main.tex", TEX), info])
    assert skip_reason(blob, tmp_path / "src") == "unsafe_archive"


def test_archive_bomb_stops_at_budget(tmp_path):
    blob = tmp_path / "bomb"
    with tarfile.open(blob, "w:gz") as tar:
        info = tarfile.TarInfo("zeros.tex")
        info.size = 20 * 1024 * 1024
        tar.addfile(info, io.BytesIO(b"\x00" * info.size))
    assert blob.stat().st_size < 100_000
    assert (
        skip_reason(blob, tmp_path / "src", budget=Budget(max_bytes=1024 * 1024, max_file_bytes=1024 * 1024))
        == "archive_over_budget"
    )


def test_gzip_single_file_bomb(tmp_path):
    blob = tmp_path / "bomb"
    blob.write_bytes(gzip.compress(b"\\documentclass{article} " + b" " * (8 * 1024 * 1024)))
    assert (
        skip_reason(blob, tmp_path / "src", budget=Budget(max_bytes=1024 * 1024, max_file_bytes=1024 * 1024))
        == "archive_over_budget"
    )


def test_too_many_members(tmp_path):
    blob = make_tar(tmp_path / "b", [(f"f{i}.tex", b"x") for i in range(30)])
    assert skip_reason(blob, tmp_path / "src", budget=Budget(max_members=10)) == "archive_over_budget"


def test_finished_folder_is_reused_and_partial_is_replaced(tmp_path):
    blob = make_tar(tmp_path / "b", [("main.tex", TEX)])
    dest = tmp_path / "src"
    (tmp_path / "src.partial").mkdir()
    (tmp_path / "src.partial" / "junk").write_text("from a crash")
    folder = unpack_eprint(blob, dest)
    assert not (tmp_path / "src.partial").exists()
    (folder / "main.tex").write_bytes(b"edited")
    assert unpack_eprint(blob, dest) == folder and (folder / "main.tex").read_bytes() == b"edited"


# --------------------------------------------------------------------------
# crafted headers: metadata counts against the budget before it is read
# --------------------------------------------------------------------------

HUGE_HEADER = 300 * 1024 * 1024
_ZEROS_MEMBER = gzip.compress(bytes(1 << 20), compresslevel=9)  # one gzip member: 1 MiB of zeros in ~1 KB


def header_block(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(format=tarfile.GNU_FORMAT)


def gzip_with_huge_metadata(path: Path, kind: bytes, after: bytes = b"") -> Path:
    """A gzip (multi-member, as gzip allows) whose tar stream opens with a 300 MiB metadata header.

    The file stays a few hundred KB and is written in a moment: the zeros are one
    small compressed member repeated, never 300 MiB in memory.
    """
    with open(path, "wb") as f:
        f.write(gzip.compress(header_block("././@LongLink", kind, HUGE_HEADER)))
        for _ in range(HUGE_HEADER >> 20):
            f.write(_ZEROS_MEMBER)
        f.write(gzip.compress(after + bytes(1024)))
    return path


def peak_python_memory(fn) -> int:
    """Peak bytes Python allocated while fn ran (tarfile's header buffers are Python bytes)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "kind",
    [tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK],
    ids=["pax", "pax-global", "gnu-longname", "gnu-longlink"],
)
def test_huge_metadata_header_in_a_small_gzip_is_refused_before_it_is_read(tmp_path, kind):
    blob = gzip_with_huge_metadata(tmp_path / "2401.00009", kind)
    assert blob.stat().st_size < 400_000
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    reasons = []
    peak = peak_python_memory(lambda: reasons.append(skip_reason(blob, tmp_path / "src")))
    assert reasons == ["archive_over_budget"]
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes"
    assert time.monotonic() - start < 5
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before < 64 * 1024  # KiB on Linux


def test_huge_pax_header_in_a_sparse_plain_tar_is_refused(tmp_path):
    blob = tmp_path / "b"
    with open(blob, "wb") as f:
        f.write(header_block("././@PaxHeader", tarfile.XHDTYPE, HUGE_HEADER))
        f.truncate(512 + HUGE_HEADER + 1024)  # a hole: nothing written, nothing stored
    caught = []

    def unpack() -> None:
        with pytest.raises(PaperSkipped, match="pax header of 314572800 bytes") as e:
            unpack_eprint(blob, tmp_path / "src")
        caught.append(e.value.reason)

    assert peak_python_memory(unpack) < 4 * 1024 * 1024
    assert caught == ["archive_over_budget"]


def test_header_metadata_counts_against_the_byte_budget(tmp_path):
    long = "part/" * 600 + "main.tex"  # stored as a GNU long name (and as a pax path) of ~3 KB
    for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        blob = tmp_path / f"b{fmt}"
        with tarfile.open(blob, "w:gz", format=fmt) as tar:
            info = tarfile.TarInfo(long)
            info.size = len(TEX)
            tar.addfile(info, io.BytesIO(TEX))
        assert skip_reason(blob, tmp_path / f"s{fmt}", budget=Budget(max_bytes=2000)) == "archive_over_budget"
        assert skip_reason(blob, tmp_path / f"h{fmt}", budget=Budget(max_header_bytes=1000)) == "archive_over_budget"
        unpack_eprint(blob, tmp_path / f"ok{fmt}")  # the default budget takes it
        assert (tmp_path / f"ok{fmt}" / long).read_bytes() == TEX


def test_pax_long_names_within_budget_unpack(tmp_path):
    name = "sections/" + "é" * 60 + "/" + "x" * 150 + ".tex"  # non-ASCII and over 100 bytes: needs pax records
    blob = tmp_path / "b"
    with tarfile.open(blob, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for n, data in (("main.tex", TEX), (name, b"\\section{S}")):
            info = tarfile.TarInfo(n)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    folder = unpack_eprint(blob, tmp_path / "src")
    assert (folder / name).read_bytes() == b"\\section{S}"


def test_a_pax_size_record_is_followed_as_tarfile_follows_it(tmp_path):
    """A pax 'size' overrides the ustar size field; the pre-scan must walk the stream the same way."""
    data = b"\\section{From pax}"
    records = b"%d size=%d\n" % (len(" size=\n") + len(str(len(data))) + 2, len(data))
    assert int(records.split(b" ")[0]) == len(records)
    stream = (
        header_block("././@PaxHeader", tarfile.XHDTYPE, len(records))
        + records.ljust(512, b"\0")
        + header_block("inner.tex", tarfile.REGTYPE, 0)
        + data.ljust(512, b"\0")
        + header_block("main.tex", tarfile.REGTYPE, len(TEX))
        + TEX.ljust(512 * 2, b"\0")
        + bytes(1024)
    )
    blob = tmp_path / "b"
    blob.write_bytes(gzip.compress(stream))
    folder = unpack_eprint(blob, tmp_path / "src")
    assert (folder / "inner.tex").read_bytes() == data and (folder / "main.tex").read_bytes() == TEX


@pytest.mark.parametrize(
    "members",
    [
        [("main.tex", TEX), (".rqbench-unpacked/", None)],
        [("main.tex", TEX), (".rqbench-unpacked", b"forged marker")],
        [("main.tex", TEX), (".rqbench-unpacked/x.tex", b"x")],
    ],
    ids=["marker-as-folder", "marker-as-file", "inside-marker"],
)
def test_a_member_named_like_the_marker_is_a_named_skip(tmp_path, members):
    entries = []
    for name, data in members:
        if data is None:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            entries.append(info)
        else:
            entries.append((name, data))
    blob = make_tar(tmp_path / "b", entries)
    with pytest.raises(PaperSkipped, match="marker") as e:
        unpack_eprint(blob, tmp_path / "src")
    assert e.value.reason == "unsafe_archive"
    assert not (tmp_path / "src").exists() and not (tmp_path / "src.partial").exists()


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


@pytest.mark.parametrize(
    "members,needle",
    [
        ([("main.tex", TEX), ("figs", b"a file"), ("figs/a.tex", b"x")], "needs a folder 'figs'"),
        ([("main.tex", TEX), ("figs", b"a file"), _dir("figs")], "needs a folder 'figs'"),
        ([("main.tex", TEX), _dir("figs"), ("figs", b"a file")], "is a file where an earlier member made a folder"),
    ],
    ids=["file-then-nested", "file-then-folder", "folder-then-file"],
)
def test_members_colliding_with_folders_are_named_skips(tmp_path, members, needle):
    blob = make_tar(tmp_path / "b", members)
    with pytest.raises(PaperSkipped, match=needle) as e:
        unpack_eprint(blob, tmp_path / "src")
    assert e.value.reason == "unsafe_archive"


def test_sparse_members_are_refused(tmp_path):
    info = tarfile.TarInfo("main.tex")
    info.type = tarfile.GNUTYPE_SPARSE
    blob = tmp_path / "b"
    blob.write_bytes(gzip.compress(info.tobuf(format=tarfile.GNU_FORMAT) + bytes(1024)))
    assert skip_reason(blob, tmp_path / "src") == "unsafe_archive"
    pax = b"27 GNU.sparse.major=1\n27 GNU.sparse.minor=0\n"
    blob2 = tmp_path / "b2"
    blob2.write_bytes(
        gzip.compress(
            header_block("././@PaxHeader", tarfile.XHDTYPE, len(pax))
            + pax.ljust(512, b"\0")
            + header_block("main.tex", tarfile.REGTYPE, 0)
            + bytes(1024)
        )
    )
    assert skip_reason(blob2, tmp_path / "src2") == "unsafe_archive"
