"""citations: every cite command form becomes contexts; per-key frequency and sections."""

from __future__ import annotations

import pytest

from rqbench.builder.citations import citation_contexts, cited_works
from rqbench.builder.cite_syntax import CITE_COMMANDS, parse_cite_args
from rqbench.builder.latex_macros import collect_macros, expand_macros
from rqbench.builder.latex_text import convert_body
from rqbench.records import BibEntry


def contexts_of(body: str, extra=frozenset()):
    return citation_contexts(convert_body(body, extra))


@pytest.mark.parametrize("command", sorted(CITE_COMMANDS))
def test_every_known_command_with_notes_and_star(command):
    ctx = contexts_of(f"\\section{{S}}\nFirst. As shown \\{command}*[see][p.~3]{{k1, k2}} here. Last.")
    assert [(c.key, c.command) for c in ctx] == [("k1", command), ("k2", command)]
    assert ctx[0].citing_sentence == "As shown [see @k1; @k2, p. 3] here."
    assert ctx[0].before == ["First."] and ctx[0].after == ["Last."]


@pytest.mark.parametrize(
    "call, keys, pre, post",
    [
        ("\\cite{a}", ["a"], "", ""),
        ("\\citep[Ch.~2]{a,b}", ["a", "b"], "", "Ch.~2"),
        ("\\citep[e.g.][]{a}", ["a"], "e.g.", ""),
        ("\\textcite[][12]{a}", ["a"], "", "12"),
        ("\\citet*{a}", ["a"], "", ""),
        ("\\parencites(see)()[ch.~1]{a}[3]{b,c}", ["a", "b", "c"], "see", "ch.~1; 3"),
        ("\\cite { a ,a, b }", ["a", "b"], "", ""),
        ("\\autocite[{a [b] c}]{k}", ["k"], "", "{a [b] c}"),
    ],
)
def test_parse_cite_args(call, keys, pre, post):
    name = call[1:].split("[")[0].split("{")[0].split("(")[0].split("*")[0].strip()
    got = parse_cite_args(call, 1 + len(name), len(call), name)
    assert got is not None
    assert got[0].keys == keys
    assert got[0].prenote == pre
    assert got[0].postnote == post


def test_custom_macros_and_declared_cite_commands():
    preamble = "\\newcommand{\\mycite}[1]{\\citep{#1}}\\newcommand{\\refpaper}{\\citet{base}}"
    macros, _ = collect_macros(preamble)
    body, _ = expand_macros("\\section{S}\nWe extend \\refpaper. Also \\mycite{x,y}. And \\mine{z}.", macros)
    ctx = contexts_of(body, {"mine"})
    assert [(c.key, c.command) for c in ctx] == [("base", "citet"), ("x", "citep"), ("y", "citep"), ("z", "mine")]


def test_nocite_and_malformed_keys_are_not_contexts():
    doc = convert_body("\\section{S}\n\\nocite{all} Text \\cite{good, bad key} end.")
    ctx = citation_contexts(doc)
    assert [c.key for c in ctx] == ["good"]
    assert any("malformed_cite_key" in w for w in doc.warnings)


def test_context_window_is_three_sentences_within_section():
    words = "zero one two three four five six seven eight nine".split()
    sents = " ".join(f"Sentence {w} is here." for w in words)
    body = f"\\section{{A}}\nOther section.\n\\section{{B}}\n{sents} Cited \\cite{{k}} here. {sents}"
    (ctx,) = contexts_of(body)
    assert ctx.section == "B"
    assert ctx.before == ["Sentence seven is here.", "Sentence eight is here.", "Sentence nine is here."]
    assert ctx.after == ["Sentence zero is here.", "Sentence one is here.", "Sentence two is here."]


def test_context_at_section_start_has_no_before():
    (ctx,) = contexts_of("\\section{A}\nOne. Two.\n\\section{B}\n\\citet{k} start it. Then more.")
    assert ctx.before == [] and ctx.after == ["Then more."]


def test_cited_works_frequency_sections_and_bib():
    body = (
        "\\section{Intro}\nA \\cite{x}. B \\cite{x,y}.\n\\section{Method}\nC \\citep{x}.\n"
        "\\begin{table}\\begin{tabular}{l}Base \\cite{z} & 1\\\\\\end{tabular}\\caption{Res.}\\end{table}"
    )
    ctx = contexts_of(body)
    works = cited_works(ctx, [BibEntry(key="x", title="X paper")])
    by_key = {w.key: w for w in works}
    assert [w.key for w in works] == ["x", "y", "z"]
    assert by_key["x"].frequency == 3 and by_key["x"].sections == ["Intro", "Method"]
    assert by_key["x"].bib.title == "X paper" and by_key["y"].bib is None
    assert by_key["z"].contexts[0].citing_sentence == "Base [@z] | 1"
    assert by_key["z"].contexts[0].after == ["Res."]


def test_citation_in_caption_is_a_normal_context():
    (ctx,) = contexts_of(
        "\\section{R}\n\\begin{figure}\\includegraphics{a}\\caption{Adapted from \\citet{k}.}\\end{figure}"
    )
    assert ctx.citing_sentence == "Adapted from [@k]." and ctx.section == "R"


def test_citation_in_a_heading_reads_the_heading_and_the_first_sentences():
    (ctx,) = contexts_of(
        "\\section{Metrics}\n\\subsection{GLEU~\\citep{napoles}}\nGLEU counts n-grams. It is old. It works. Fourth."
    )
    assert ctx.section == "GLEU"
    assert ctx.citing_sentence == "GLEU [@napoles]"
    assert ctx.after == ["GLEU counts n-grams.", "It is old.", "It works."]
