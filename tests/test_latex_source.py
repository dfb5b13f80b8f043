"""latex_source: main-file choice, input inlining, comments, switches and user macros."""

from __future__ import annotations

from pathlib import Path

import pytest

from rqbench.builder.latex_macros import collect_macros, expand_macros
from rqbench.builder.latex_source import (
    find_main_file,
    load_source,
    resolve_conditionals,
    strip_comments,
    switch_states,
)
from rqbench.builder.paper_skip import PaperSkipped


def write(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        p = folder / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return folder


DOC = "\\documentclass{article}\n\\begin{document}\n%s\n\\end{document}\n"


def test_comments_stripped_but_escaped_percent_kept():
    src = "50\\% of runs % a comment\nnext line\nab%\n   cd\n"
    out = strip_comments(src)
    assert "50\\% of runs" in out
    assert "comment" not in out
    assert "abcd" in out  # a comment eats the line end and the next line's indent
    assert "next line" in out


def test_comments_kept_inside_verbatim_verb_and_url():
    src = "\\verb|50%| stays\n\\url{http://x.org/a%20b} ok\n\\begin{verbatim}\n% literal\n\\end{verbatim}\nx % gone\n"
    out = strip_comments(src)
    assert "\\verb|50%| stays" in out
    assert "a%20b} ok" in out
    assert "% literal" in out
    assert "gone" not in out


def test_comment_environment_removed():
    out = strip_comments("a\n\\begin{comment}\nsecret \\cite{x}\n\\end{comment}\nb\n")
    assert "secret" not in out and "a" in out and "b" in out


def test_escaped_backslash_before_percent_is_a_comment():
    assert strip_comments("line\\\\% cut here\n").startswith("line\\\\")
    assert "cut" not in strip_comments("line\\\\% cut here\n")


def test_main_file_choice_on_fixtures(fixtures_dir):
    latex = fixtures_dir / "latex"
    assert find_main_file(latex / "attention-sink-gpt2").name == "acl_latex.tex"
    assert find_main_file(latex / "llm-stylometry").name == "main.tex"
    assert find_main_file(latex / "themis-ml-fairness-mit").relative_to(latex / "themis-ml-fairness-mit") == Path(
        "main.tex"
    )
    assert find_main_file(latex / "hypertools-arxiv-bblonly").relative_to(latex / "hypertools-arxiv-bblonly") == Path(
        "arXiv/main.tex"
    )
    assert find_main_file(latex / "neurips2024-beta-dpo").name == "neurips_2024.tex"


def test_main_file_is_not_one_that_another_inputs(tmp_path):
    write(
        tmp_path,
        {
            "aaa.tex": DOC % "\\input{zzz}",
            "zzz.tex": DOC % "a standalone-compilable chapter with a lot more text " * 50,
        },
    )
    assert find_main_file(tmp_path).name == "aaa.tex"


def test_inputs_nested_relative_and_without_extension(tmp_path):
    write(
        tmp_path,
        {
            "main.tex": DOC % "Start. \\input{sections/intro} \\include{appendix} \\input sections/bare.tex End.",
            "sections/intro.tex": "Intro text. \\input{sections/deeper}",
            "sections/deeper.tex": "Deeper text.",
            "sections/bare.tex": "Bare input.",
            "appendix.tex": "Appendix text.\n\\endinput\nnever read",
        },
    )
    src = load_source(tmp_path)
    for piece in ("Intro text.", "Deeper text.", "Bare input.", "Appendix text."):
        assert piece in src.text
    assert "never read" not in src.text
    assert src.files == ["main.tex", "sections/intro.tex", "sections/deeper.tex", "appendix.tex", "sections/bare.tex"]
    assert src.warnings == []


def test_subfile_keeps_only_its_body_and_resolves_beside_itself(tmp_path):
    write(
        tmp_path,
        {
            "main.tex": "\\documentclass{article}\n\\usepackage{subfiles}\n\\begin{document}\n\\subfile{parts/one}\n\\end{document}\n",
            "parts/one.tex": "\\documentclass[../main.tex]{subfiles}\n\\begin{document}\nPart one. \\input{two}\n\\end{document}\n",
            "parts/two.tex": "Part two beside it.",
        },
    )
    src = load_source(tmp_path)
    assert "Part one." in src.text and "Part two beside it." in src.text
    assert src.text.count("\\documentclass") == 1


def test_missing_input_cycle_and_escape_are_warnings(tmp_path):
    write(
        tmp_path,
        {
            "main.tex": DOC % "A \\input{nothere} B \\input{loop} C \\input{../../etc/passwd} D",
            "loop.tex": "looping \\input{loop}",
        },
    )
    src = load_source(tmp_path)
    assert any(w.startswith("missing_input: \\input{nothere}") for w in src.warnings)
    assert any(w.startswith("input_cycle") for w in src.warnings)
    assert any("../../etc/passwd" in w for w in src.warnings)
    assert src.text.count("looping") == 1


def test_binary_input_is_a_warning_binary_main_a_skip(tmp_path):
    write(tmp_path, {"main.tex": DOC % "\\input{fig}", "fig.tex": b"\x00\x01\x02binary"})
    assert any(w.startswith("binary_input") for w in load_source(tmp_path).warnings)
    other = tmp_path / "b"
    write(other, {"main.tex": b"\x89PNG\r\n\x1a\n\x00\x00\x00"})
    with pytest.raises(PaperSkipped) as e:
        load_source(other)
    assert e.value.reason == "binary_main_file"


def test_no_tex_and_no_root(tmp_path):
    with pytest.raises(PaperSkipped) as e:
        load_source(tmp_path)
    assert e.value.reason == "no_tex_file"
    write(tmp_path, {"notes.tex": "just a fragment"})
    with pytest.raises(PaperSkipped) as e:
        load_source(tmp_path)
    assert e.value.reason == "no_main_file"


def test_unbalanced_braces_name_file_and_line(tmp_path):
    write(tmp_path, {"main.tex": DOC % "\\input{sec}", "sec.tex": "ok\n\\textbf{never closed\nmore\n"})
    with pytest.raises(PaperSkipped) as e:
        load_source(tmp_path)
    assert e.value.reason == "unbalanced_braces"
    assert "sec.tex line 2" in e.value.detail


def test_newif_switches_and_iffalse():
    text = "\\newif\\ifdraft\n\\draftfalse\n\\newif\\iffinal\\finaltrue\nA \\ifdraft DRAFT \\else FINAL \\fi B \\iffalse hidden \\ifx\\a\\b x\\fi \\fi C \\iffinal yes\\fi"
    out = resolve_conditionals(
        text.replace("\\newif\\ifdraft", "").replace("\\newif\\iffinal", ""), switch_states(text)
    )
    assert "FINAL" in out and "DRAFT" not in out
    assert "hidden" not in out and "C" in out and "yes" in out


def test_macros_with_arguments_defaults_and_def():
    text = (
        "\\newcommand{\\mycite}[1]{\\citep{#1}}\n\\newcommand\\pair[2][left]{#1/#2}\n"
        "\\def\\twice#1{#1#1}\n\\newcommand{\\etal}{\\emph{et al.}}\n\\let\\oldcite\\citet\n"
    )
    macros, _ = collect_macros(text)
    out, hit = expand_macros("\\mycite{k1} \\pair{b} \\pair[a]{b} \\twice{x} Smith \\etal said \\oldcite{k2}", macros)
    assert not hit
    assert "\\citep{k1}" in out and "left/b" in out and "a/b" in out and "xx" in out
    assert "\\emph{et al.}" in out and "\\citet{k2}" in out


def test_recursive_macro_expansion_is_bounded():
    macros, _ = collect_macros("\\newcommand{\\boom}{\\boom\\boom}")
    out, hit = expand_macros("x \\boom y", macros)
    assert hit and len(out) < 10_000


def test_declare_cite_command_recorded(tmp_path):
    write(
        tmp_path,
        {
            "main.tex": "\\documentclass{article}\n\\DeclareCiteCommand{\\mycitation}{}{}{}{}\n\\begin{document}\nx\n\\end{document}\n"
        },
    )
    assert load_source(tmp_path).cite_commands == {"mycitation"}


def test_bib_resources_outside_verbatim(fixtures_dir):
    src = load_source(fixtures_dir / "latex" / "acl-template")
    assert src.bib_resources == ["custom.bib"]  # \bibliography{anthology,custom} inside verbatim is not one
    src = load_source(fixtures_dir / "latex" / "neurips2026-llm-judge-biblatex")
    assert src.bib_resources == ["references.bib"]
