"""latex_text: sections, floats, math, footnotes, accents and sentence splitting."""

from __future__ import annotations

from rqbench.builder.latex_text import convert_body, latex_to_plain, split_sentences, to_section_texts, to_sections

BODY = r"""
\documentclass{article}
\begin{document}
\title{Ignored title}
\maketitle
\begin{abstract}
We study things. They matter.
\end{abstract}
\section{Introduction}\label{sec:intro}
Large models work well.\footnote{See the appendix.} We ask why. Prior work is cited~\citep{a}.
\subsection*{Scope and Limits}
The loss is $L = \sum_i x_i$ and
\begin{equation}
  y = f(x)
\end{equation}
holds for all inputs. See Table~\ref{tab:x}.
\begin{table}[t]
  \centering
  \begin{tabular}{lc}
  Method & Score \\
  BERT \citep{devlin} & 85.3 \\
  Ours & 90.1 \\
  \end{tabular}
  \caption{Results on the \emph{dev} set.}
\end{table}
\subsubsection{Deeper}
Caf\'e na\"ive G\"odel \c{c}a and \textbf{bold \textit{nested}} words --- with dashes.
\paragraph{Run-in} A paragraph heading.
\section{Related Work}
Text here.
\end{document}
"""


def sections_of(body: str):
    return to_sections(convert_body(body))


def test_sections_names_levels_order():
    secs = sections_of(BODY)
    assert [(s.name, s.level) for s in secs] == [
        ("Abstract", 0),
        ("Introduction", 1),
        ("Scope and Limits", 2),
        ("Deeper", 3),
        ("Related Work", 1),
    ]
    assert [s.index for s in secs] == list(range(5))
    assert secs[0].text == "We study things. They matter."


def test_math_and_refs_become_placeholders():
    scope = sections_of(BODY)[2]
    assert "The loss is [MATH] and [MATH] holds for all inputs." in scope.text
    assert "Table [REF]" in scope.text
    assert "\\" not in scope.text and "$" not in scope.text


def test_float_body_dropped_caption_kept():
    scope = sections_of(BODY)[2].text
    assert "Results on the dev set." in scope
    assert "85.3" not in scope and "Method" not in scope


def test_footnote_moves_to_paragraph_end_and_citations_render():
    intro = sections_of(BODY)[1].text
    assert intro == "Large models work well. We ask why. Prior work is cited [@a]. See the appendix."


def test_accents_formatting_and_typography():
    deeper = sections_of(BODY)[3].text
    assert "Café naïve Gödel ça and bold nested words — with dashes." in deeper
    assert "Run-in. A paragraph heading." in deeper


def test_float_row_citation_kept_aside():
    doc = convert_body(BODY)
    scope = doc.sections[2]
    assert len(scope.float_rows) == 1
    assert scope.float_rows[0].text.startswith("BERT ")
    assert "85.3" in scope.float_rows[0].text
    assert scope.float_rows[0].caption == ["Results on the dev set."]


def test_section_texts_drop_empty_sections():
    texts = to_section_texts(convert_body(r"\section{A}\section{B} text"))
    assert [t.section for t in texts] == ["B"]


def test_no_document_environment_reads_whole_text():
    secs = sections_of(r"Loose text. \section{Only} Body.")
    assert [s.name for s in secs] == ["Front matter", "Only"]


def test_sentence_splitter_handles_abbreviations():
    sents = split_sentences("We follow Smith et al. in this. E.g. the model works, i.e. it converges. Fig. 2 shows it.")
    assert sents == ["We follow Smith et al. in this.", "E.g. the model works, i.e. it converges.", "Fig. 2 shows it."]


def test_overlong_paragraph_is_split_in_chunks():
    para = "This is one sentence. " * 2000
    sents = split_sentences(para)
    assert len(sents) == 2000


def test_latex_to_plain_for_bib_strings():
    assert (
        latex_to_plain(r"{BERT}: Pre-training of Deep {B}idirectional \emph{Transformers}")
        == "BERT: Pre-training of Deep Bidirectional Transformers"
    )
    assert latex_to_plain(r"M{\"u}ller and Ca{\~n}ete \& Co") == "Müller and Cañete & Co"


def test_latex_to_plain_renders_short_inline_math_as_symbols_for_titles():
    """One renderer for titles and bib strings: sourcing's fragment renderer (merged here) read a title's short
    inline math as its symbols; the converter keeps that as ``math="symbols"`` and its own tables win where the
    two read a formula differently."""
    title = r"$n$-gram \textit{F}-score\thanks{Work done at X.} \\ for $\alpha$ \& more"
    assert " ".join(latex_to_plain(title, math="symbols").split()) == "n-gram F-score for α & more"
    assert latex_to_plain(r"$\beta$-DPO", math="symbols") == "β-DPO"
    assert latex_to_plain(r"$\beta$-DPO") == "[MATH] -DPO"  # body text and bib fields: a formula is [MATH]
    # where the two copies differed (the old fragment renderer's reading in the comment): the converter's is kept
    assert latex_to_plain(r"$2\times$ faster", math="symbols") == "2× faster"  # was "2 faster"
    assert latex_to_plain(r"$\leq 5$", math="symbols") == "≤ 5"  # was "5"
    assert latex_to_plain(r"$A\&B$", math="symbols") == "A&B"  # was "A B"
    assert latex_to_plain(r"$10\,000$", math="symbols") == "10 000"  # was "10,000"
    assert latex_to_plain(r"$\{x\}$", math="symbols") == "{x}"  # was "x"
    # a long formula stays a formula, display math too
    assert latex_to_plain("$" + "x" * 41 + "$", math="symbols").strip() == "[MATH]"
    assert latex_to_plain("$$x$$", math="symbols").strip() == "[MATH]"


def test_verbatim_content_is_literal_and_not_cited():
    doc = convert_body(
        "\\section{S}\nUse \\verb|\\cite{x}| like \\citep{y}.\n\\begin{verbatim}\n\\citet{z}\n\\end{verbatim}\n"
    )
    assert [c.keys for c in doc.cites] == [["y"]]
    text = to_sections(doc)[0].text
    assert "\\cite{x}" in text and "\\citet{z}" in text
