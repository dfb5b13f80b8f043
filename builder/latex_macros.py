"""User macros: ``\\newcommand``, ``\\def``, ``\\let`` and cite declarations collected from a source and expanded,
bounded in body size and passes so that a recursive or exploding macro cannot hang a worker; brace and bracket
matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rqbench.builder.latex_verbatim import split_verbatim

MAX_MACRO_BODY = 2000

MAX_EXPANSION_PASSES = 6


@dataclass(frozen=True)
class Macro:
    """A user macro simple enough to expand textually: ``\\name`` with up to nine arguments."""

    name: str
    nargs: int
    body: str
    default: str | None = None  # first argument is optional with this default


_NEWCMD_RE = re.compile(
    r"\\(?P<kind>newcommand|renewcommand|providecommand|DeclareRobustCommand|newrobustcmd|renewrobustcmd)\*?\s*"
    r"(?:\{\s*\\(?P<n1>[a-zA-Z]+)\s*\}|\\(?P<n2>[a-zA-Z]+))\s*"
)

_DEF_RE = re.compile(r"\\(?:def|gdef|edef|xdef)\s*\\(?P<name>[a-zA-Z]+)(?P<params>(?:#\d)*)\s*\{")

_LET_RE = re.compile(r"\\let\s*\\(?P<name>[a-zA-Z]+)\s*=?\s*\\(?P<target>[a-zA-Z]+)")

_DECLARE_CITE_RE = re.compile(r"\\DeclareCiteCommand\*?\s*\{\s*\\([a-zA-Z]+)\s*\}")

# Commands whose meaning the converter relies on; a user redefinition is not expanded.
PROTECTED_NAMES = frozenset(
    "begin end section subsection subsubsection chapter paragraph subparagraph part item caption footnote "
    "label ref input include documentclass usepackage newcommand renewcommand def let bibliography "
    "addbibresource emph textbf textit cite".split()
)


def match_brace(text: str, open_pos: int) -> int:
    """Offset just past the ``}`` that closes the ``{`` at open_pos; -1 if it never closes."""
    depth = 0
    i = open_pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def match_bracket(text: str, open_pos: int) -> int:
    """Offset past the ``]`` closing the ``[`` at open_pos, skipping braced groups; -1 if none."""
    i = open_pos + 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            j = match_brace(text, i)
            if j < 0:
                return -1
            i = j
            continue
        if c == "]":
            return i + 1
        if c == "\n" and text.startswith("\n", i + 1):
            return -1  # an option never runs over a paragraph break
        i += 1
    return -1


def collect_macros(text: str) -> tuple[dict[str, Macro], set[str]]:
    """Simple user macros (textual bodies, at most nine arguments) and biblatex-declared cite commands."""
    macros: dict[str, Macro] = {}
    for m in _NEWCMD_RE.finditer(text):
        name = m.group("n1") or m.group("n2")
        pos = m.end()
        nargs = 0
        default = None
        am = re.match(r"\[\s*(\d)\s*\]\s*", text[pos:])
        if am:
            nargs = int(am.group(1))
            pos += am.end()
            if text.startswith("[", pos):
                end = match_bracket(text, pos)
                if end < 0:
                    continue
                default = text[pos + 1 : end - 1]
                pos = end
                while pos < len(text) and text[pos] in " \t\n":
                    pos += 1
        if not text.startswith("{", pos):
            continue
        end = match_brace(text, pos)
        if end < 0:
            continue
        body = text[pos + 1 : end - 1]
        if m.group("kind") == "providecommand" and name in macros:
            continue
        _add_macro(macros, Macro(name=name, nargs=nargs, body=body, default=default))
    for m in _DEF_RE.finditer(text):
        params = m.group("params")
        nums = [int(c) for c in params[1::2]]
        if nums != list(range(1, len(nums) + 1)):
            continue
        end = match_brace(text, m.end() - 1)
        if end < 0:
            continue
        _add_macro(macros, Macro(name=m.group("name"), nargs=len(nums), body=text[m.end() : end - 1]))
    for m in _LET_RE.finditer(text):
        if m.group("name") != m.group("target"):
            _add_macro(macros, Macro(name=m.group("name"), nargs=0, body="\\" + m.group("target")))
    declared_cites = {m.group(1) for m in _DECLARE_CITE_RE.finditer(text)}
    for name in declared_cites:
        macros.pop(name, None)
    return macros, declared_cites


def _add_macro(macros: dict[str, Macro], macro: Macro) -> None:
    if macro.name in PROTECTED_NAMES or "@" in macro.body or len(macro.body) > MAX_MACRO_BODY:
        return
    if re.search(
        r"\\(?:newcommand|renewcommand|def|gdef|edef|let|newenvironment|makeatletter|csname)(?![a-zA-Z])", macro.body
    ):
        return
    if macro.body.strip() == "\\" + macro.name or macro.body.strip() in ("\\relax", ""):
        # \let\x\relax and empty bodies expand to nothing worth keeping
        macros[macro.name] = Macro(name=macro.name, nargs=macro.nargs, body="", default=macro.default)
        return
    macros[macro.name] = macro


def _read_macro_arg(text: str, pos: int) -> tuple[str, int] | None:
    """One undelimited TeX argument at pos: a braced group or a single token."""
    n = len(text)
    while pos < n and text[pos] in " \t\n":
        pos += 1
    if pos >= n:
        return None
    if text[pos] == "{":
        end = match_brace(text, pos)
        if end < 0:
            return None
        return text[pos + 1 : end - 1], end
    if text[pos] == "}":
        return None
    if text[pos] == "\\":
        m = re.match(r"\\(?:[a-zA-Z@]+|.)", text[pos:], re.DOTALL)
        tok = m.group(0) if m else "\\"
        return tok, pos + len(tok)
    return text[pos], pos + 1


def _substitute(body: str, args: list[str]) -> str:
    def repl(m: re.Match) -> str:
        if m.group(0) == "##":
            return "#"
        k = int(m.group(0)[1:])
        return args[k - 1] if k <= len(args) else ""

    return re.sub(r"##|#[1-9]", repl, body)


def expand_macros(text: str, macros: dict[str, Macro], *, budget: int | None = None) -> tuple[str, bool]:
    """Expand user macros outside verbatim material; (text, hit_limit).

    Bounded: at most MAX_EXPANSION_PASSES passes and a total size budget, so a
    macro that calls itself grows the text a little and then stops.
    """
    if not macros:
        return text, False
    limit = budget if budget is not None else 4 * len(text) + 1_000_000
    names = "|".join(re.escape(n) for n in sorted(macros, key=len, reverse=True))
    token_re = re.compile(r"\\\\|\\(" + names + r")(?![a-zA-Z@])")
    for _ in range(MAX_EXPANSION_PASSES):
        changed = False
        pieces: list[str] = []
        for is_verb, piece in split_verbatim(text):
            if is_verb:
                pieces.append(piece)
                continue
            out: list[str] = []
            pos = 0
            for m in token_re.finditer(piece):
                if m.start() < pos or m.group(1) is None:
                    continue
                macro = macros[m.group(1)]
                cur = m.end()
                args: list[str] = []
                ok = True
                wanted = macro.nargs
                if macro.default is not None and wanted:
                    if piece.startswith("[", cur):
                        end = match_bracket(piece, cur)
                        if end < 0:
                            ok = False
                        else:
                            args.append(piece[cur + 1 : end - 1])
                            cur = end
                    else:
                        args.append(macro.default)
                while ok and len(args) < wanted:
                    got = _read_macro_arg(piece, cur)
                    if got is None:
                        ok = False
                        break
                    args.append(got[0])
                    cur = got[1]
                if not ok:
                    continue
                out.append(piece[pos : m.start()])
                body = _substitute(macro.body, args)
                # a control word swallows the blanks after it; keep words apart
                if macro.nargs == 0 and cur < len(piece) and piece[cur] in " \t" and body and body[-1].isalnum():
                    body += " "
                out.append(body)
                pos = cur
                changed = True
            out.append(piece[pos:])
            pieces.append("".join(out))
        new_text = "".join(pieces)
        if len(new_text) > limit:
            return text, True
        text = new_text
        if not changed:
            return text, False
    return text, any(m.group(1) for m in token_re.finditer(text))
