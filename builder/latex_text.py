"""LaTeX body to structure: sections in order, plain text, math as [MATH], sentences, citation markers.

One left-to-right walk over the merged source (see ``latex_source``). Groups
are not parsed into a tree: a command that keeps its argument (``\\emph``)
simply vanishes and its braces become a bare group, so nesting depth costs
nothing. Commands whose arguments must be cut out (``\\label``, floats, math)
use brace matching. Citations, headings and footnotes travel through the text
as private-use marker characters and are turned into records at the end; a
citation reads ``[@key]`` (pandoc style) in the final text.

Floats (figures, tables, algorithms) lose their bodies but keep captions;
a citation inside a table row is kept as a "float row" so baselines listed in
tables still count.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from rqbench.builder.cite_syntax import CiteCall, is_cite_command, parse_cite_args, render_cite
from rqbench.builder.latex_macros import match_brace, match_bracket
from rqbench.builder.latex_vocabulary import (
    ACCENTS,
    CODE_ENVS,
    DROP,
    DROP_ENVS,
    ENV_ARGS,
    ESCAPES,
    FLOAT_ENVS,
    GREEK,
    MATH_ENVS,
    MAX_SYMBOL_MATH_CHARS,
    REF_COMMANDS,
    RUN_IN_HEADS,
    SECTION_LEVELS,
    SKIP_THEN_TEXT,
    SYMBOLS,
    TABULAR_ENVS,
    VERBATIM_TEXT_ENVS,
)
from rqbench.records import Section, SectionText

FRONT_MATTER = "Front matter"  # the section name of the text before the first heading (title block, authors)
MATH = "[MATH]"
REF = "[REF]"
CODE = "[CODE]"
MAX_DEPTH = 40
MAX_SPLIT_CHARS = 1500  # pysbd is superlinear in its input; ~12 us/char at this size

# in-band markers (latex_source strips these characters from every input)
CITE_OPEN, CITE_CLOSE = "\ue000", "\ue001"
HEAD_OPEN, HEAD_CLOSE = "\ue002", "\ue003"
FN_OPEN, FN_CLOSE = "\ue004", "\ue005"
_CITE_MARK_RE = re.compile(CITE_OPEN + r"(\d+)" + CITE_CLOSE)
_HEAD_RE = re.compile(HEAD_OPEN + r"(\d)([*=])([^" + HEAD_CLOSE + r"]*)" + HEAD_CLOSE)  # '*' marks a synthetic section
_MARKERS_RE = re.compile("[\ue000-\ue0ff]")


@dataclass
class FloatRow:
    """A citing line outside the running text: a table row (with its float's caption sentences)
    or a section heading (with the section's first sentences)."""

    text: str
    caption: list[str] = field(default_factory=list)


@dataclass
class SectionBlock:
    index: int
    name: str
    level: int
    sentences: list[str]  # with citation markers
    paragraphs: list[list[int]] = field(default_factory=list)  # sentence indices per paragraph
    float_rows: list[FloatRow] = field(default_factory=list)
    synthetic: bool = False


@dataclass
class Document:
    """A converted body: sections with sentences, and the citation calls the markers point to."""

    sections: list[SectionBlock]
    cites: list[CiteCall]
    bibliography_env: list[str] = field(default_factory=list)  # raw thebibliography bodies
    warnings: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------
# Tokens (the command tables are builder/latex_vocabulary.py)
# --------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\\(?:[a-zA-Z@]+\*?|.)|[{}$~&#^_]|\\\Z", re.DOTALL)
_CMD_IN_RANGE_RE = re.compile(r"\\([a-zA-Z@]+)(\*?)")
_ROW_SPLIT_RE = re.compile(r"\\\\|\\tabularnewline(?![a-zA-Z])|\n\s*\n")
_TYPO = [("---", "—"), ("--", "–"), ("``", "“"), ("''", "”"), ("<<", "«"), (">>", "»")]


# --------------------------------------------------------------------------
# The converter
# --------------------------------------------------------------------------


class _Converter:
    """A single pass over the body; state is per document, so it is safe in worker processes."""

    def __init__(
        self,
        text: str,
        cite_extra: frozenset[str] | set[str] = frozenset(),
        *,
        collect: bool = True,
        math_symbols: bool = False,
    ) -> None:
        self.t = text
        self.cite_extra = frozenset(cite_extra)
        self.cites: list[CiteCall] = []
        self.rows: list[tuple[int, FloatRow]] = []
        self.bib_envs: list[str] = []
        self.warnings: list[str] = []
        self.heads = 0
        self.collect = collect  # False: plain-string mode (bib fields), no headings
        self.math_symbols = math_symbols  # True: short inline math as its symbols, not [MATH]
        self.in_math = False
        self.in_row = False
        self.cell_sep = " "

    # --- helpers over the source --------------------------------------
    def skip_blanks(self, i: int, end: int) -> int:
        t = self.t
        while i < end and t[i] in " \t\n":
            i += 1
        return i

    def skip_options(self, i: int, end: int, *, max_n: int = 3, adjacent: bool = False) -> int:
        for _ in range(max_n):
            j = i if adjacent else self.skip_blanks(i, end)
            if j < end and self.t[j] == "[":
                k = match_bracket(self.t, j)
                if k < 0 or k > end:
                    return i
                i = k
            else:
                return i
        return i

    def brace_arg(self, i: int, end: int) -> tuple[int, int, int] | None:
        """(content_start, content_end, after) of the braced argument at i, or a single token."""
        j = self.skip_blanks(i, end)
        if j >= end:
            return None
        c = self.t[j]
        if c == "{":
            k = match_brace(self.t, j)
            if k < 0 or k > end:
                return None
            return j + 1, k - 1, k
        if c == "}":
            return None
        if c == "\\":
            m = _TOKEN_RE.match(self.t, j)
            k = m.end() if m else j + 1
            return j, k, k
        return j, j + 1, j + 1

    def env_end(self, name: str, i: int, end: int) -> tuple[int, int]:
        """(body_end, after) of \\end{name} matching a \\begin{name} whose body starts at i."""
        pat = re.compile(r"\\(begin|end)\s*\{" + re.escape(name) + r"\}")
        depth = 1
        for m in pat.finditer(self.t, i, end):
            depth += 1 if m.group(1) == "begin" else -1
            if depth == 0:
                return m.start(), m.end()
        self.warnings.append(f"unclosed_environment: \\begin{{{name}}} has no \\end{{{name}}}")
        return end, end

    def sub(self, start: int, end: int, depth: int) -> str:
        if depth > MAX_DEPTH:
            return re.sub(r"\\[a-zA-Z@]+|[{}\\$]", " ", self.t[start:end])
        return self.run(start, end, depth + 1)

    # --- the walk ------------------------------------------------------
    def run(self, start: int, end: int, depth: int = 0) -> str:
        t = self.t
        out: list[str] = []
        closers: list[str] = []
        i = start
        while i < end:
            m = _TOKEN_RE.search(t, i, end)
            if m is None:
                out.append(t[i:end])
                break
            out.append(t[i : m.start()])
            tok = m.group(0)
            i = m.end()
            if tok == "{":
                closers.append("")
            elif tok == "}":
                if closers:
                    out.append(closers.pop())
            elif tok == "$":
                i = self.inline_math(m.start(), end, out, depth)
            elif tok == "~":
                out.append(" ")
            elif tok == "&":
                out.append(self.cell_sep)
            elif tok in ("#", "^", "_"):
                continue
            else:
                i = self.command(tok, i, end, out, closers, depth)
        return "".join(out)

    def inline_math(self, pos: int, end: int, out: list[str], depth: int) -> int:
        t = self.t
        display = t.startswith("$$", pos)
        opener = "$$" if display else "$"
        j = pos + len(opener)
        limit = min(end, j + 20000)
        while j < limit:
            c = t[j]
            if c == "\\":
                j += 2
                continue
            if t.startswith(opener, j):
                body = pos + len(opener)
                if self.math_symbols and not display and 0 < j - body <= MAX_SYMBOL_MATH_CHARS:
                    out.append(self.math_as_symbols(body, j, depth))
                else:
                    out.append(" " + MATH + " ")
                return j + len(opener)
            if c == "\n" and not display and t.startswith("\n", j + 1):
                break
            j += 1
        return pos + len(opener)  # unclosed: drop the dollar and read on

    def math_as_symbols(self, start: int, end: int, depth: int) -> str:
        """A short formula as the text it reads as: Greek letters kept, other commands as in text."""
        self.in_math = True
        try:
            return self.sub(start, end, depth)
        finally:
            self.in_math = False

    def command(self, tok: str, i: int, end: int, out: list[str], closers: list[str], depth: int) -> int:
        """Read the command ``tok`` (its arguments start at i) into ``out``; the position after what it consumed.

        The order of the checks is the order of precedence: a name in several tables
        (``item`` is also a symbol, ``setlength`` is dropped before it is skipped).
        """
        if len(tok) == 1 or tok == "\\":
            return i
        name = tok[1:]
        if not (name[0].isalpha() or name[0] == "@"):
            return self.control_symbol(name, i, end, out)
        star = name.endswith("*")
        base = name.rstrip("*")
        if self.in_math and base in GREEK:
            out.append(GREEK[base])
            return i
        if base in ACCENTS and len(base) == 1:
            return self.accent(base, i, end, out)
        if is_cite_command(base, self.cite_extra):
            return self.cite(base, star, i, end, out)
        if base in SECTION_LEVELS and self.collect and not self.in_row:
            return self.heading(base, i, end, out, depth)
        handler = _NAMED_COMMANDS.get(base)
        if handler is not None:
            return handler(self, base, i, end, out, depth)
        if base in SYMBOLS:
            out.append(SYMBOLS[base])
            return i
        if base in DROP:
            return self.dropped(base, i, end)
        if base in SKIP_THEN_TEXT:
            return self.skipped_then_text(base, i, end)
        # unknown command: drop its name and any options glued to it, keep brace arguments as text
        return self.skip_options(i, end, max_n=2, adjacent=True)

    # --- one handler per kind of command ---------------------------------
    def control_symbol(self, c: str, i: int, end: int, out: list[str]) -> int:
        """``\\(`` / ``\\[`` math, an accent, ``\\\\`` (a line break) or an escaped character."""
        t = self.t
        if c == "(" or c == "[":
            closing = "\\)" if c == "(" else "\\]"
            k = t.find(closing, i, end)
            out.append(" " + MATH + " ")
            return end if k < 0 else k + 2
        if c in ACCENTS:
            return self.accent(c, i, end, out)
        if c == "\\":
            j = self.skip_options(i, end, max_n=1, adjacent=True)
            out.append(" ")
            return j
        out.append(ESCAPES.get(c, ""))
        return i

    def cite(self, base: str, star: bool, i: int, end: int, out: list[str]) -> int:
        """A citation: recorded in ``self.cites`` and marked in the text by its index."""
        t = self.t
        got = parse_cite_args(t, i - (1 if star else 0), end, base)
        if got is None:
            return i
        call, after = got
        if not call.keys:
            if call.bad_keys:
                self.warnings.append(f"malformed_cite_key: \\{base}{{{', '.join(call.bad_keys)}}}")
            return after
        if call.bad_keys:
            self.warnings.append(f"malformed_cite_key: {', '.join(call.bad_keys)} in \\{base}")
        call.index = len(self.cites)
        call.prenote, call.postnote = latex_to_plain(call.prenote), latex_to_plain(call.postnote)
        self.cites.append(call)
        out.append(CITE_OPEN + str(call.index) + CITE_CLOSE)
        return after

    def heading(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        """A sectioning command, marked as a heading of its level."""
        t = self.t
        j = self.skip_options(i, end, max_n=1)
        arg = self.brace_arg(j, end)
        if arg is None or t[arg[0] - 1] != "{":
            return j  # \section used as a value (\titlespacing\section...), not a heading
        title = self.sub(arg[0], arg[1], depth)
        out.append(f"{HEAD_OPEN}{SECTION_LEVELS[base]}={title}{HEAD_CLOSE}")
        self.heads += 1
        return arg[2]

    def run_in_head(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        """``\\paragraph{Title}``: a new paragraph opening with the title as a sentence."""
        j = self.skip_options(i, end, max_n=1)
        arg = self.brace_arg(j, end)
        if arg is None:
            return j
        title = self.sub(arg[0], arg[1], depth).strip()
        if title and title[-1] not in ".:?!":
            title += "."
        out.append("\n\n" + title + " ")
        return arg[2]

    def begin(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        return self.begin_env(i, end, out, depth)

    def end_env(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        """``\\end{env}`` of an environment read inline: a paragraph break (the abstract's end: the front matter)."""
        t = self.t
        arg = self.brace_arg(i, end)
        if arg is None:
            return i
        env = t[arg[0] : arg[1]].strip()
        if env == "abstract" and self.collect and not self.in_row:
            out.append(f"{HEAD_OPEN}0*{FRONT_MATTER}{HEAD_CLOSE}")
            self.heads += 1
        elif env not in ("document",):
            out.append("\n\n")
        return arg[2]

    def footnote(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        j = self.skip_options(i, end, max_n=1)
        arg = self.brace_arg(j, end)
        if arg is None:
            return j
        body = self.sub(arg[0], arg[1], depth)
        out.append(FN_OPEN + body + FN_CLOSE if self.collect and not self.in_row else " " + body + " ")
        return arg[2]

    def caption(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        j = self.skip_options(i, end, max_n=1)
        if base == "captionof":
            a = self.brace_arg(j, end)
            j = a[2] if a else j
            j = self.skip_options(j, end, max_n=1)
        arg = self.brace_arg(j, end)
        if arg is None:
            return j
        out.append("\n\n" + self.sub(arg[0], arg[1], depth) + "\n\n")
        return arg[2]

    def etoc_depth_tag(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        m = re.compile(r"\.toc\s*\{[^{}]*\}").match(self.t, i, end)
        return m.end() if m else i

    def ref(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        arg = self.brace_arg(i, end)
        out.append(REF)
        return arg[2] if arg else i

    def url(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        arg = self.brace_arg(i, end)
        if arg is None:
            return i
        out.append(self.t[arg[0] : arg[1]])
        return arg[2]

    def verbatim(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        t = self.t
        j = i
        if j < end:
            d = t[j]
            k = t.find(d, j + 1, end)
            if k < 0:
                return end
            out.append(t[j + 1 : k])
            return k + 1
        return i

    def item(self, base: str, i: int, end: int, out: list[str], depth: int) -> int:
        t = self.t
        j = self.skip_blanks(i, end)
        if j < end and t[j] == "[":
            k = match_bracket(t, j)
            if 0 < k <= end:
                out.append("\n\n" + self.sub(j + 1, k - 1, depth) + " ")
                return k
        out.append("\n\n")
        return i

    def dropped(self, base: str, i: int, end: int) -> int:
        """A command of ``DROP``: its options and its brace arguments go."""
        j = self.skip_options(i, end, max_n=2, adjacent=False)
        for _ in range(DROP[base]):
            arg = self.brace_arg(j, end)
            if arg is None:
                break
            j = self.skip_options(arg[2], end, max_n=1, adjacent=True)
        return j

    def skipped_then_text(self, base: str, i: int, end: int) -> int:
        """A command of ``SKIP_THEN_TEXT``: its first arguments go, the next stays as a bare group."""
        j = self.skip_options(i, end, max_n=2)
        for _ in range(SKIP_THEN_TEXT[base]):
            arg = self.brace_arg(j, end)
            if arg is None:
                return j
            j = self.skip_options(arg[2], end, max_n=2)
        return j  # the text argument stays as a bare group

    def accent(self, c: str, i: int, end: int, out: list[str]) -> int:
        arg = (
            self.brace_arg(i, end)
            if i < end and (self.t[i] == "{" or c.isalpha())
            else ((i, i + 1, i + 1) if i < end and self.t[i] not in " \n\\}" else None)
        )
        if arg is None:
            return i
        base = self.t[arg[0] : arg[1]]
        base = SYMBOLS.get(base[1:], base) if base.startswith("\\") else base
        base = base.strip("{}")
        if not base:
            return arg[2]
        out.append(unicodedata.normalize("NFC", base[0] + ACCENTS[c] + base[1:]))
        return arg[2]

    def begin_env(self, i: int, end: int, out: list[str], depth: int) -> int:
        t = self.t
        arg = self.brace_arg(i, end)
        if arg is None:
            return i
        env = t[arg[0] : arg[1]].strip()
        j = arg[2]
        if self.in_row:  # inside a table row: environments are scaffolding, their arguments are not text
            return self.skip_env_args(env, j, end)
        if env == "abstract":
            if self.collect:
                out.append(f"{HEAD_OPEN}0*Abstract{HEAD_CLOSE}")
                self.heads += 1
            return j
        if env == "document":
            return j
        if env in MATH_ENVS:
            _, after = self.env_end(env, j, end)
            out.append(" " + MATH + " ")
            return after
        if env in VERBATIM_TEXT_ENVS:
            body_end, after = self.env_end(env, j, end)
            out.append("\n\n" + t[j:body_end].strip("\n") + "\n\n")
            return after
        if env in CODE_ENVS:
            _, after = self.env_end(env, j, end)
            out.append(" " + CODE + " ")
            return after
        if env in DROP_ENVS or env.startswith("tikz"):
            body_end, after = self.env_end(env, j, end)
            if env == "thebibliography":
                self.bib_envs.append(t[j:body_end])
            return after
        if env in FLOAT_ENVS or env in TABULAR_ENVS:
            body_end, after = self.env_end(env, j, end)
            self.float_body(env, j, body_end, out, depth)
            return after
        # a kept environment: drop its options and known arguments, read the body
        out.append("\n\n")
        return self.skip_env_args(env, j, end)

    def skip_env_args(self, env: str, j: int, end: int) -> int:
        j = self.skip_options(j, end, max_n=2, adjacent=True)
        for _ in range(ENV_ARGS.get(env, 0)):
            a = self.brace_arg(j, end)
            if a is None:
                break
            j = self.skip_options(a[2], end, max_n=1, adjacent=True)
        return j

    def float_body(self, env: str, start: int, end: int, out: list[str], depth: int) -> None:
        """Captions become paragraphs where the float stood; citing rows are kept aside."""
        t = self.t
        captions: list[tuple[int, int]] = []
        caption_texts: list[str] = []
        for m in re.finditer(r"\\(caption|captionof|subcaption)(?![a-zA-Z@])\*?", t[start:end]):
            s = start + m.end()
            if any(a <= start + m.start() < b for a, b in captions):
                continue
            j = self.skip_options(s, end, max_n=1)
            if m.group(1) == "captionof":
                a = self.brace_arg(j, end)
                j = self.skip_options(a[2], end, max_n=1) if a else j
            arg = self.brace_arg(j, end)
            if arg is None or t[arg[0] - 1] != "{":
                continue
            captions.append((start + m.start(), arg[2]))
            text = self.sub(arg[0], arg[1], depth)
            caption_texts.append(text)
            out.append("\n\n" + text + "\n\n")
        row_ranges: list[tuple[int, int]] = []
        for m in _CMD_IN_RANGE_RE.finditer(t, start, end):
            if not is_cite_command(m.group(1), self.cite_extra):
                continue
            if any(a <= m.start() < b for a, b in captions) or any(a <= m.start() < b for a, b in row_ranges):
                continue
            rs, re_ = start, end
            for sep in _ROW_SPLIT_RE.finditer(t, start, end):
                if sep.end() <= m.start():
                    rs = sep.end()
                elif sep.start() >= m.end():
                    re_ = sep.start()
                    break
            row_ranges.append((rs, re_))
        if not row_ranges or not self.collect:
            return
        cap_sentences = [s for c in caption_texts for s in split_sentences(_clean_spaces(c))]
        saved = (self.in_row, self.cell_sep)
        self.in_row, self.cell_sep = True, " | "
        try:
            for rs, re_ in row_ranges:
                row = re.sub(r"(?:\s*\|\s*)+", " | ", _clean_spaces(self.sub(rs, re_, depth))).strip(" |")
                if _CITE_MARK_RE.search(row):
                    self.rows.append((self.heads, FloatRow(text=row, caption=cap_sentences)))
        finally:
            self.in_row, self.cell_sep = saved


# Commands read by a handler of their own, by name; ``_Converter.command`` checks this after the Greek letters,
# accents, citations and headings and before SYMBOLS, DROP and SKIP_THEN_TEXT.
_NAMED_COMMANDS: dict[str, Callable[[_Converter, str, int, int, list[str], int], int]] = {
    **dict.fromkeys(RUN_IN_HEADS, _Converter.run_in_head),
    "begin": _Converter.begin,
    "end": _Converter.end_env,
    **dict.fromkeys(("footnote", "footnotetext", "tablefootnote"), _Converter.footnote),
    **dict.fromkeys(("caption", "captionof", "subcaption"), _Converter.caption),
    "etocdepthtag": _Converter.etoc_depth_tag,
    **dict.fromkeys(REF_COMMANDS, _Converter.ref),
    **dict.fromkeys(("url", "path", "nolinkurl"), _Converter.url),
    **dict.fromkeys(("verb", "lstinline"), _Converter.verbatim),
    "item": _Converter.item,
}


# --------------------------------------------------------------------------
# Sentences and sections
# --------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def _clean_spaces(s: str) -> str:
    return re.sub(r"[ \t\n\u00a0]+", " ", s).strip()


def _typography(s: str) -> str:
    for a, b in _TYPO:
        s = s.replace(a, b)
    return s


_CUT_RE = re.compile(
    r"(?<!\bal)(?<!\bet)(?<!\be\.g)(?<!\bi\.e)(?<!\bFig)(?<!\bEq)(?<!\bvs)(?<!\bcf)(?<!\bSec)[.?!]\s+(?=[A-Z\[(\"“])"
)


def _chunks(text: str, size: int) -> list[str]:
    """Cut an overlong paragraph at sentence-looking boundaries so the splitter stays fast."""
    if len(text) <= size:
        return [text]
    parts: list[str] = []
    while len(text) > size:
        cut = -1
        for m in _CUT_RE.finditer(text, 0, size):
            cut = m.end()
        if cut < size // 4:
            cut = text.rfind(" ", 0, size) + 1
        if cut < size // 4:
            cut = size
        parts.append(text[:cut])
        text = text[cut:]
    if text:
        parts.append(text)
    return parts


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of one paragraph (pysbd), whitespace-normalised, empties dropped."""
    paragraph = paragraph.strip()
    if not paragraph:
        return []
    seg = _segmenter()
    out: list[str] = []
    for chunk in _chunks(paragraph, MAX_SPLIT_CHARS):
        pieces = seg.segment(chunk) if re.search(r"[.?!;:]", chunk) else [chunk]  # no stop, one sentence
        for s in pieces:
            s = s.strip()
            if s and _MARKERS_RE.sub("", s).strip(" .,;:") or _CITE_MARK_RE.search(s or ""):
                out.append(s)
    return out


def find_cites(sentence: str) -> list[int]:
    """Indices of the citation calls marked in a sentence, in order."""
    return [int(m.group(1)) for m in _CITE_MARK_RE.finditer(sentence)]


def render_sentence(sentence: str, cites: list[CiteCall]) -> str:
    """Markers to final text: citations as ``[@key]``, stray markers removed."""

    def repl(m: re.Match) -> str:
        k = int(m.group(1))
        return render_cite(cites[k]) if k < len(cites) else ""

    return _clean_spaces(_MARKERS_RE.sub("", _CITE_MARK_RE.sub(repl, sentence)))


def _paragraph_sentences(raw: str) -> list[list[str]]:
    """Paragraphs of a section, footnotes moved to the end of the paragraph that calls them."""
    result: list[list[str]] = []
    for para in re.split(r"\n[ \t]*\n", raw):
        notes: list[str] = []

        def pull(m: re.Match, notes: list[str] = notes) -> str:
            notes.append(m.group(1))
            return " "

        main = re.sub(FN_OPEN + r"([^" + FN_OPEN + FN_CLOSE + r"]*)" + FN_CLOSE, pull, para)
        main = main.replace(FN_OPEN, " ").replace(FN_CLOSE, " ")
        sentences = split_sentences(_typography(_clean_spaces(main)))
        for note in notes:
            sentences += split_sentences(_typography(_clean_spaces(note)))
        if sentences:
            result.append(sentences)
    return result


def _section_name(raw: str) -> str:
    name = _clean_spaces(_MARKERS_RE.sub("", _CITE_MARK_RE.sub("", raw)))
    name = _typography(name).strip().rstrip(".")
    return name or "Untitled"


def convert_body(text: str, cite_extra: frozenset[str] | set[str] = frozenset()) -> Document:
    """The document body (from ``\\begin{document}``, or the whole text if there is none) as structure."""
    m = re.search(r"\\begin\s*\{document\}", text)
    start = m.end() if m else 0
    e = text.find("\\end{document}", start)
    end = e if e >= 0 else len(text)
    conv = _Converter(text, cite_extra)
    marked = conv.run(start, end)
    pieces = _HEAD_RE.split(marked)
    # pieces: [front, level, star, name, content, level, star, name, content, ...]
    raw_sections: list[tuple[int, str, str, bool]] = [(0, FRONT_MATTER, pieces[0], True)]
    for k in range(1, len(pieces) - 3, 4):
        raw_sections.append((int(pieces[k]), pieces[k + 2], pieces[k + 3], pieces[k + 1] == "*"))
    rows_by_head: dict[int, list[FloatRow]] = {}
    for head_index, row in conv.rows:
        rows_by_head.setdefault(head_index, []).append(row)
    sections: list[SectionBlock] = []
    for head_index, (level, name, content, synthetic) in enumerate(raw_sections):
        paras = _paragraph_sentences(content)
        rows = rows_by_head.get(head_index, [])
        if synthetic and not paras and not rows:
            continue
        sentences: list[str] = []
        spans: list[list[int]] = []
        for p in paras:
            spans.append(list(range(len(sentences), len(sentences) + len(p))))
            sentences += p
        if _CITE_MARK_RE.search(name):  # \subsection{GLEU~\citep{...}}: the heading is the citing line
            rows = [FloatRow(text=_typography(_clean_spaces(name)), caption=sentences[:3])] + rows
        sections.append(
            SectionBlock(
                index=len(sections),
                name=_section_name(name),
                level=level,
                sentences=sentences,
                paragraphs=spans,
                float_rows=rows,
                synthetic=synthetic,
            )
        )
    return Document(sections=sections, cites=conv.cites, bibliography_env=conv.bib_envs, warnings=conv.warnings)


def section_text(block: SectionBlock, cites: list[CiteCall]) -> str:
    """A section's plain text: paragraphs separated by blank lines, citations as ``[@key]``."""
    return "\n\n".join(" ".join(render_sentence(block.sentences[i], cites) for i in para) for para in block.paragraphs)


def to_sections(doc: Document) -> list[Section]:
    return [Section(index=b.index, name=b.name, level=b.level, text=section_text(b, doc.cites)) for b in doc.sections]


def to_section_texts(doc: Document) -> list[SectionText]:
    """Section-wise body text, the shape cited papers are stored in (empty sections left out)."""
    out: list[SectionText] = []
    for b in doc.sections:
        text = section_text(b, doc.cites)
        if text.strip():
            out.append(SectionText(section=b.name, text=text))
    return out


def latex_to_plain(s: str, *, math: Literal["placeholder", "symbols"] = "placeholder") -> str:
    """A short LaTeX string (a title, a name) as plain text: accents resolved, braces and commands gone.

    Inline math is ``[MATH]`` as in body text; with ``math="symbols"`` a short one (up to
    ``MAX_SYMBOL_MATH_CHARS``) is the symbols it reads as, so a title's ``$\\beta$-DPO`` reads "β-DPO".
    """
    if not s:
        return ""
    s = re.sub("[\ue000-\ue0ff]", "", s)
    conv = _Converter(s, collect=False, math_symbols=math == "symbols")
    text = conv.run(0, len(s))
    return _typography(render_sentence(text, conv.cites))
