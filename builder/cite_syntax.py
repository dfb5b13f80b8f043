"""Citation commands as LaTeX writes them: which ones exist, how their arguments read, how a call renders.

Covers plain LaTeX (``\\cite``), natbib (``\\citep``, ``\\citet``, ``\\citealp``,
``\\citeauthor``... and capitalised forms), biblatex (``\\autocite``,
``\\parencite``, ``\\textcite``, ``\\footcite``, multi-cites like
``\\parencites[see][3]{a}{b}``), apacite and ACL's ``\\citeposs``, starred
forms, and pre/post notes. User macros that wrap a cite are expanded before
this module sees the text (``latex_source``); biblatex's
``\\DeclareCiteCommand`` names are passed in as extra commands.
``\\nocite`` is not a citation: it puts a key in the bibliography without
citing it anywhere, so it has no context.

The LaTeX converter (``latex_text``) reads cites with this module; what a
paper says per cited key is ``citations``, which reads the converter's output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_BASE_COMMANDS = """
cite citep citet citealp citealt citeauthor citeyear citeyearpar citenum citeposs citealtposs
citefullauthor citetalias citepalias shortcite shortciteA shortciteNP citeA citeNP citeyearNP citeauthorNP
autocite parencite textcite footcite footcitetext smartcite supercite fullcite footfullcite
citetitle citedate citeurl
Cite Citep Citet Citealp Citealt Citeauthor Autocite Parencite Textcite Footcite Smartcite Citeposs
"""
# biblatex multi-cite commands: several (pre)(post)[pre][post]{keys} groups
_MULTI_COMMANDS = "cites parencites textcites autocites footcites smartcites supercites Cites Parencites Textcites Autocites Footcites Smartcites"

CITE_COMMANDS = frozenset(_BASE_COMMANDS.split())
MULTI_CITE_COMMANDS = frozenset(_MULTI_COMMANDS.split())
NOT_CITATIONS = frozenset({"nocite", "citestyle", "citetext"})

# A key is what BibTeX accepts: no blanks, braces, commas, quotes, percent or hash.
_KEY_RE = re.compile(r"^[^\s{}(),\"'%#~\\]+$")


def is_cite_command(name: str, extra: frozenset[str] | set[str] = frozenset()) -> bool:
    """True for a citation command name (without backslash or star)."""
    return name in CITE_COMMANDS or name in MULTI_CITE_COMMANDS or name in extra


@dataclass
class CiteCall:
    """One citation command as written: ``\\citep[see][p.~3]{a,b}``."""

    index: int
    command: str
    keys: list[str]
    prenote: str = ""
    postnote: str = ""
    bad_keys: list[str] = field(default_factory=list)


def _skip_blanks(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos] in " \t\n":
        pos += 1
    return pos


def _group(text: str, pos: int, end: int, open_c: str, close_c: str) -> tuple[str, int] | None:
    """A bracketed group starting at pos (nesting of the same bracket allowed); (inside, after)."""
    if pos >= end or text[pos] != open_c:
        return None
    depth = 0
    i = pos
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return text[pos + 1 : i], i + 1
        elif open_c == "[" and c == "{":
            # braces inside an option protect a ']' ; walk over the braced group
            inner = _group(text, i, end, "{", "}")
            if inner is None:
                return None
            i = inner[1]
            continue
        i += 1
    return None


def _groups(text: str, pos: int, end: int, open_c: str, close_c: str, most: int = 2) -> tuple[list[str], int]:
    """Up to ``most`` bracketed groups in a row, blanks allowed between; (their insides, position after the last)."""
    found: list[str] = []
    for _ in range(most):
        g = _group(text, _skip_blanks(text, pos, end), end, open_c, close_c)
        if g is None:
            break
        found.append(g[0])
        pos = g[1]
    return found, pos


def split_keys(raw: str) -> tuple[list[str], list[str]]:
    """Keys of one argument, in order and without repeats; (good, malformed)."""
    good: list[str] = []
    bad: list[str] = []
    for part in raw.split(","):
        key = part.strip()
        if not key:
            continue
        if _KEY_RE.match(key):
            if key not in good:
                good.append(key)
        else:
            bad.append(key)
    return good, bad


def parse_cite_args(text: str, pos: int, end: int, command: str) -> tuple[CiteCall, int] | None:
    """Read the arguments of a cite command whose name ends at pos; (call, position after) or None.

    The index of the returned call is 0; the caller numbers it.
    """
    multi = command in MULTI_CITE_COMMANDS
    cur = pos
    if cur < end and text[cur] == "*":
        cur += 1
    keys: list[str] = []
    bad: list[str] = []
    paren: list[str] = []  # a multi-cite's global (pre)(post)
    group_notes: list[list[str]] = []
    if multi:
        paren, cur = _groups(text, cur, end, "(", ")")
    groups = 0
    while True:
        opts, probe = _groups(text, cur, end, "[", "]")
        save = _skip_blanks(text, probe, end)
        g = _group(text, save, end, "{", "}")
        if g is None:
            break
        good, malformed = split_keys(g[0])
        keys += [k for k in good if k not in keys]
        bad += malformed
        group_notes.append(opts)
        cur = g[1]
        groups += 1
        if not multi:
            break
    if groups == 0:
        return None
    if multi:
        pre = paren[0] if paren else ""
        posts = paren[1:2] + [opts[-1] for opts in group_notes if opts]
        post = "; ".join(p.strip() for p in posts if p.strip())
    else:
        opts = group_notes[0]
        pre, post = (("", opts[0]) if len(opts) == 1 else (opts[0], opts[1])) if opts else ("", "")
    return CiteCall(index=0, command=command, keys=keys, prenote=pre.strip(), postnote=post.strip(), bad_keys=bad), cur


def render_cite(call: CiteCall) -> str:
    """How a citation reads in plain text: pandoc style, ``[see @a; @b, p. 3]``."""
    inner = "; ".join("@" + k for k in call.keys)
    if call.prenote:
        inner = call.prenote + " " + inner
    if call.postnote:
        inner = inner + ", " + call.postnote
    return "[" + inner + "]"
