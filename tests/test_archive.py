"""archive: e-print kinds by magic bytes, and refusal of unsafe or oversized archives."""

from __future__ import annotations

import gzip
import io
import random
import tarfile
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
    assert skip_reason(blob, tmp_path / "src", budget=Budget(max_bytes=1024 * 1024, max_file_bytes=1024 * 1024)) == "archive_over_budget"


def test_gzip_single_file_bomb(tmp_path):
    blob = tmp_path / "bomb"
    blob.write_bytes(gzip.compress(b"\\documentclass{article} " + b" " * (8 * 1024 * 1024)))
    assert skip_reason(blob, tmp_path / "src", budget=Budget(max_bytes=1024 * 1024, max_file_bytes=1024 * 1024)) == "archive_over_budget"


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
