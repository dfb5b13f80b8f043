"""Inputs for builder tests: a --papers folder of fixture papers, a --cited-sources folder, and the replies.

``reply_for`` is the tests' one scripted responder (``scripted_replies.reply``),
under the name the builder tests call it by.
"""

from __future__ import annotations

from pathlib import Path

from scripted_replies import reply as reply_for

__all__ = ["CITED_TEX", "make_cited_sources", "make_papers", "reply_for"]

# A small paper of our own, used as a cited paper's full text (arXiv id 2410.10781 is cited by a fixture).
CITED_TEX = r"""\documentclass{article}
\title{When Attention Sink Emerges in Language Models}
\begin{document}
\maketitle
\begin{abstract}
We study when attention sinks appear during pre-training of small language models.
\end{abstract}
\section{Introduction}
Attention sinks are tokens that receive a large share of attention mass regardless of their meaning.
We measure how often they appear across training steps, model sizes and data orders, and we relate
their emergence to the softmax normalisation used inside attention heads.
\section{Findings}
Sinks appear once the optimisation has reduced the loss enough; replacing softmax with a sigmoid
attention without normalisation removes them in our runs, while the loss stays comparable.
\end{document}
"""


def make_papers(root: Path, fixtures: Path, names: list[str]) -> Path:
    """A --papers folder of symlinks to some fixture papers (the fixtures stay where they are)."""
    root.mkdir(parents=True, exist_ok=True)
    for n in names:
        (root / n).symlink_to(fixtures / "latex" / n, target_is_directory=True)
    return root


def make_cited_sources(root: Path) -> Path:
    """A --cited-sources folder holding one cited paper's LaTeX (written by us, not a fixture copy)."""
    d = root / "2410.10781"
    d.mkdir(parents=True)
    (d / "main.tex").write_text(CITED_TEX, encoding="utf-8")
    return root
