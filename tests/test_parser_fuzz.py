"""Fuzzing the LaTeX parser, the bibliography reader and the unpacker: only named errors, bounded time.

Examples are few and small so the file runs in seconds; the hand-made
pathological inputs (deep nesting, megabyte lines, bombs) sit beside them.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rqbench.builder.archive import Budget, unpack_eprint
from rqbench.builder.bibliography import BibliographyError, parse_bbl_text, parse_bib_text
from rqbench.builder.latex_text import convert_body
from rqbench.builder.parse import PaperSkipped, parse_paper
from rqbench.records import ParsedPaper

FUZZ = settings(max_examples=40, deadline=5000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)

LATEX_TOKENS = [
    "\\section{",
    "\\subsection*{",
    "}",
    "{",
    "\\cite{",
    "\\citep[see][p.~2]{",
    "\\citet*{",
    "\\parencites(a)(b)[c]{",
    "k1",
    "k2,k3",
    "$",
    "$$",
    "\\[",
    "\\]",
    "\\(",
    "%",
    "\\%",
    "\n",
    "\n\n",
    "\\begin{figure}",
    "\\end{figure}",
    "\\begin{table}",
    "\\end{table}",
    "\\caption{",
    "\\begin{tabular}{lc}",
    "\\end{tabular}",
    "&",
    "\\\\",
    "\\footnote{",
    "\\input{",
    "\\include{",
    "main",
    "\\newcommand{\\x}[1]{\\cite{#1}}",
    "\\x{k4}",
    "\\x",
    "\\def\\y{\\y\\y}",
    "\\y",
    "\\verb|",
    "|",
    "\\begin{verbatim}",
    "\\end{verbatim}",
    "\\iffalse",
    "\\fi",
    "\\else",
    "\\newif\\ifz",
    "\\ifz",
    "\\begin{abstract}",
    "\\end{abstract}",
    "\\item",
    "[",
    "]",
    "\\'",
    '\\"',
    "Word. ",
    "Another sentence here. ",
    "e.g. ",
    "et al. ",
    "\\emph{",
    "\\textbf{",
    "~",
    "#1",
    "^",
    "_",
    "\\",
    "\\begin{itemize}",
    "\\end{itemize}",
    "\\label{x}",
    "\\ref{x}",
    "\\url{http://a%b}",
    "\ue000",
    "\x00",
    "\u00e9",
    "\\begin{document}",
    "\\end{document}",
    "\\bibliography{r}",
    "\\begin{thebibliography}{9}",
    "\\bibitem{k1}",
    "\\end{thebibliography}",
    "\\appendix",
    "\\paragraph{",
    "\\begin{equation}",
    "\\end{equation}",
]
latex_text = st.lists(st.sampled_from(LATEX_TOKENS), max_size=120).map("".join)

BIB_TOKENS = [
    "@article{",
    "@inproceedings{",
    "@string{",
    "@comment{",
    "@preamble{",
    "}",
    "{",
    ",",
    "=",
    '"',
    "#",
    "key1",
    "key2",
    "title",
    "author",
    " and ",
    "year",
    "2020",
    "eprint",
    "2301.00001",
    "doi",
    "10.1000/x",
    "journal",
    "arXiv preprint arXiv:1234.5678",
    "crossref",
    '\\"o',
    "%",
    "\n",
    " ",
    "others",
    "\x00",
    "\ufffd",
    "@",
]
bib_text = st.lists(st.sampled_from(BIB_TOKENS), max_size=80).map("".join)

BBL_TOKENS = [
    "\\begin{thebibliography}{9}",
    "\\end{thebibliography}",
    "\\bibitem",
    "[",
    "]",
    "{",
    "}",
    "key",
    "A. Author",
    " and ",
    "\\newblock ",
    "{\\em Venue}",
    "``Title,''",
    "2019",
    "\\entry{k}{article}{}{}",
    "\\endentry",
    "\\field{title}{",
    "\\name{author}{1}{}{",
    "{{hash=1}{family={F}, given={G}}}",
    "\\verb{doi}\n",
    "\\verb 10.1/x\n",
    "\\endverb",
    "\\list{publisher}{1}{",
    "%",
    "\n",
    "\\APACrefauthors",
    "arXiv:2101.00001",
]
bbl_text = st.lists(st.sampled_from(BBL_TOKENS), max_size=80).map("".join)


def _paper_folder(base: Path, main: bytes, bib: bytes | None = None) -> Path:
    folder = Path(tempfile.mkdtemp(dir=base))
    (folder / "main.tex").write_bytes(main)
    (folder / "main.tex").with_name("r.bib").write_bytes(bib if bib is not None else b"@article{k1, title={T}}")
    return folder


def _parse_or_skip(folder: Path) -> None:
    start = time.monotonic()
    try:
        result = parse_paper(folder, "2401.00001")
        assert isinstance(result, ParsedPaper)
    except PaperSkipped as skip:
        assert skip.reason and skip.reason.replace("_", "").isalnum()
    assert time.monotonic() - start < 5


@FUZZ
@given(body=latex_text)
def test_fuzz_latex_body(tmp_path_factory, body):
    base = tmp_path_factory.mktemp("fuzz")
    doc = "\\documentclass{article}\n\\begin{document}\n" + body + "\n\\bibliography{r}\n\\end{document}\n"
    _parse_or_skip(_paper_folder(base, doc.encode("utf-8", "surrogatepass")))


@FUZZ
@given(body=latex_text)
def test_fuzz_convert_body_directly(body):
    doc = convert_body(body)
    for sec in doc.sections:
        assert all(isinstance(s, str) for s in sec.sentences)


@FUZZ
@given(raw=st.binary(max_size=2000))
def test_fuzz_invalid_bytes_as_main_file(tmp_path_factory, raw):
    base = tmp_path_factory.mktemp("bytes")
    _parse_or_skip(_paper_folder(base, b"\\documentclass{article}\\begin{document}" + raw + b"\\end{document}"))


@FUZZ
@given(text=bib_text)
def test_fuzz_bib_reader(text):
    try:
        entries, warnings = parse_bib_text(text, "fuzz.bib")
    except BibliographyError:
        return
    assert all(e.key for e in entries) and all(isinstance(w, str) for w in warnings)


@FUZZ
@given(text=bbl_text)
def test_fuzz_bbl_reader(text):
    for e in parse_bbl_text(text):
        assert e.origin == "bbl" and e.key


@FUZZ
@given(raw=st.binary(max_size=3000))
def test_fuzz_bib_bytes_in_paper(tmp_path_factory, raw):
    base = tmp_path_factory.mktemp("bib")
    _parse_or_skip(
        _paper_folder(base, b"\\documentclass{article}\\begin{document}\\cite{k1}\\bibliography{r}\\end{document}", raw)
    )


member_names = st.lists(
    st.lists(st.sampled_from(["a", "b", ".", "..", "/", "\\", "c.tex"]), min_size=1, max_size=8).map("".join),
    min_size=1,
    max_size=6,
)


@settings(max_examples=30, deadline=5000, derandomize=True)
@given(names=member_names)
def test_fuzz_tar_member_names_never_escape(tmp_path_factory, names):
    # the archive unpacks seven levels below a root of its own and a member name climbs at most four (``../`` is two
    # of its eight parts), so anything written outside base lands under root, which is small to list (pytest's whole
    # temporary folder, listed before and after each example, grew with the session: 19.5 s in a whole-suite run)
    root = tmp_path_factory.mktemp("tar")
    base = root.joinpath("l1", "l2", "l3", "l4", "l5")
    base.mkdir(parents=True)
    blob = base / "blob"
    with tarfile.open(blob, "w:gz") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 3
            tar.addfile(info, io.BytesIO(b"abc"))
    outside_before = set(root.rglob("*"))
    try:
        folder = unpack_eprint(blob, base / "work" / "src")
        assert folder.resolve().is_relative_to((base / "work" / "src").resolve())
    except PaperSkipped as skip:
        assert skip.reason in ("unsafe_archive", "corrupt_archive", "empty_eprint", "unsupported_eprint")
    created = {p for p in set(root.rglob("*")) - outside_before}
    assert all(p.resolve().is_relative_to(base.resolve()) for p in created)


# --------------------------------------------------------------------------
# hand-made pathological inputs
# --------------------------------------------------------------------------


def timed(fn, limit: float):
    start = time.monotonic()
    result = fn()
    assert time.monotonic() - start < limit
    return result


@pytest.mark.parametrize(
    "body",
    [
        "{" * 50_000 + "x" + "}" * 50_000,
        "\\textbf{" * 5_000 + "deep" + "}" * 5_000,
        "\\footnote{" * 3_000 + "note" + "}" * 3_000,
        "\\caption{" * 2_000 + "c" + "}" * 2_000,
        "\\begin{itemize}" * 3_000 + "\\item x" + "\\end{itemize}" * 3_000,
    ],
    ids=["bare-braces", "textbf", "footnote", "caption", "itemize"],
)
def test_deep_nesting_is_bounded(body):
    doc = timed(lambda: convert_body("\\section{S}" + body + " \\cite{k}."), 10)
    assert [c.keys for c in doc.cites] == [["k"]]


@pytest.mark.parametrize(
    "line",
    ["x" * 1_000_000, "word " * 200_000, "\\textbf{x} \\cite{k} " * 50_000, "$" * 1_000_001],
    ids=["one-token", "no-punctuation", "commands", "dollars"],
)
def test_megabyte_line_is_bounded(line):
    timed(lambda: convert_body("\\section{S}\n" + line), 15)


def test_long_prose_paragraph_is_bounded():
    doc = timed(lambda: convert_body("\\section{S}\n" + "A sentence in the paper here. " * 4000), 15)
    assert len(doc.sections[0].sentences) == 4000


def test_unbalanced_braces_deep_in_input_is_named(tmp_path):
    folder = _paper_folder(
        tmp_path, b"\\documentclass{article}\\begin{document}\\cite{k1}" + b"{" * 10_000 + b"\\end{document}"
    )
    with pytest.raises(PaperSkipped) as e:
        parse_paper(folder, "2401.00001")
    assert e.value.reason == "unbalanced_braces"


def test_tar_bomb_of_many_members(tmp_path):
    blob = tmp_path / "blob"
    with tarfile.open(blob, "w:gz") as tar:
        for i in range(2_000):
            info = tarfile.TarInfo(f"d/{i}.tex")
            tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(PaperSkipped) as e:
        unpack_eprint(blob, tmp_path / "src", budget=Budget(max_members=500))
    assert e.value.reason == "archive_over_budget"
