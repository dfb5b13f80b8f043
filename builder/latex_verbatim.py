"""Verbatim regions, where LaTeX is text and not commands: verbatim-like environments, and ``\\verb`` or
``\\lstinline`` on one line. Input resolution and macro expansion leave them alone.
"""

from __future__ import annotations

import re

VERBATIM_ENVS = ("verbatim", "Verbatim", "BVerbatim", "lstlisting", "minted", "alltt", "comment", "filecontents")
VERBATIM_ENV_PATTERN = "|".join(VERBATIM_ENVS)

# A verbatim-like region: an environment, \verb|..| / \lstinline|..| on one line, or \url{..}.
_VERBATIM_RE = re.compile(
    r"\\begin\{(?P<env>" + VERBATIM_ENV_PATTERN + r")(?P<star>\*?)\}.*?(?:\\end\{(?P=env)(?P=star)\}|\Z)"
    r"|\\(?:verb|lstinline)\*?(?P<d>[^a-zA-Z\s*{])[^\n]*?(?:(?P=d)|$)",
    re.DOTALL | re.MULTILINE,
)


def verbatim_spans(text: str) -> list[tuple[int, int]]:
    """Where verbatim material sits, so input resolution and macro expansion leave it alone."""
    return [m.span() for m in _VERBATIM_RE.finditer(text)]


def split_verbatim(text: str) -> list[tuple[bool, str]]:
    """The text as alternating (is_verbatim, piece) segments."""
    pieces: list[tuple[bool, str]] = []
    pos = 0
    for start, end in verbatim_spans(text):
        if start > pos:
            pieces.append((False, text[pos:start]))
        pieces.append((True, text[start:end]))
        pos = end
    if pos < len(text):
        pieces.append((False, text[pos:]))
    return pieces
