"""A paper's LaTeX as one text: the main file found, inputs inlined, comments gone, user macros expanded.

Stage 3 reads arXiv sources as authors left them: several candidate roots,
``\\input`` with or without extensions, files that do not exist, comment
blocks, ``\\newif`` switches and private macros wrapped around ``\\cite``.
This module turns that folder into a single string that the text converter
(``latex_text``) can walk without knowing about files. Everything is bounded
(input depth, file size, expansion passes) so a hostile source cannot hang a
worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from rqbench.builder.latex_macros import Macro, collect_macros, expand_macros
from rqbench.builder.latex_verbatim import VERBATIM_ENV_PATTERN, split_verbatim
from rqbench.builder.paper_skip import PaperSkipped

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_TOTAL_CHARS = 40 * 1024 * 1024
MAX_INPUT_DEPTH = 16
MAX_CANDIDATE_FILES = 400

# Characters the converter uses as in-band markers; stripped from every input.
_PRIVATE_RE = re.compile("[\ue000-\ue0ff]")


@dataclass
class LatexSource:
    """One paper's LaTeX, merged into a single comment-free text."""

    folder: Path
    main_file: str
    text: str
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    macros: dict[str, Macro] = field(default_factory=dict)
    bib_resources: list[str] = field(default_factory=list)
    cite_commands: set[str] = field(default_factory=set)  # declared with \\DeclareCiteCommand


# --------------------------------------------------------------------------
# Reading files
# --------------------------------------------------------------------------


def looks_binary(data: bytes) -> bool:
    """NUL bytes or many control characters in the first 64 KiB: not a text file."""
    head = data[:65536]
    if b"\x00" in head:
        return True
    if not head:
        return False
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    return controls > len(head) * 0.01


def decode_tex(data: bytes) -> str:
    """UTF-8 when it decodes, else Latin-1 (older arXiv sources); marker characters removed."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return _PRIVATE_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def read_tex(path: Path, *, reason_binary: str = "binary_main_file") -> str:
    """A .tex file as text; PaperSkipped for a binary or oversized file."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise PaperSkipped("file_too_large", f"{path.name}: {size} bytes, over {MAX_FILE_BYTES}")
        data = path.read_bytes()
    except OSError as exc:
        raise PaperSkipped("unreadable_file", f"{path.name}: {exc}") from exc
    if looks_binary(data):
        raise PaperSkipped(reason_binary, f"{path.name} is not a text file")
    return decode_tex(data)


# --------------------------------------------------------------------------
# Comments, verbatim regions and conditionals
# --------------------------------------------------------------------------

_LINE_TOKEN_RE = re.compile(
    r"\\\\|\\%|\\(?:verb|lstinline)\*?(?P<d>[^a-zA-Z\s*{])|\\url\{[^}\n]*\}|\\href\{[^}\n]*\}"
    r"|\\begin\{(?P<env>" + VERBATIM_ENV_PATTERN + r")\*?\}|%"
)


def strip_comments(text: str) -> str:
    """Drop ``%`` comments (and the line end they eat) but keep ``\\%``, verbatim text and URLs.

    ``\\begin{comment}`` blocks are removed whole. As in TeX, a comment also eats
    the newline and the next line's leading blanks, so ``a%\\n  b`` reads ``ab``.
    """
    out: list[str] = []
    lines = text.split("\n")
    verbatim_end: str | None = None  # the \end{...} we are waiting for
    drop_block = False
    join_next = False
    for line in lines:
        if join_next:
            line = line.lstrip(" \t")
        join_next = False
        if verbatim_end is not None:
            idx = line.find(verbatim_end)
            if idx < 0:
                if not drop_block:
                    out.append(line + "\n")
                continue
            head, line = line[: idx + len(verbatim_end)], line[idx + len(verbatim_end) :]
            if not drop_block:
                out.append(head)
            verbatim_end, drop_block = None, False
        kept, cut, pending_env = _strip_line(line)
        if pending_env is not None:
            env, start = pending_env
            verbatim_end = "\\end{" + env + "}"
            drop_block = env.rstrip("*") == "comment"
            rest = kept[start:]
            kept = kept[:start]
            if not drop_block:
                kept += rest
            # the environment may close on the same line
            idx = rest.find(verbatim_end)
            if idx >= 0:
                if drop_block:
                    kept += _strip_line(rest[idx + len(verbatim_end) :])[0]
                verbatim_end, drop_block = None, False
                out.append(kept + "\n")
                continue
            out.append(kept + "\n")
            continue
        if cut:
            out.append(kept)
            join_next = True
        else:
            out.append(kept + "\n")
    result = "".join(out)
    if result.endswith("\n") and not text.endswith("\n"):
        result = result[:-1]
    return result


def _strip_line(line: str) -> tuple[str, bool, tuple[str, int] | None]:
    """One line without its comment: (text, was_cut, (verbatim env opened, its offset) or None)."""
    pos = 0
    while True:
        m = _LINE_TOKEN_RE.search(line, pos)
        if m is None:
            return line, False, None
        tok = m.group(0)
        if tok == "%":
            return line[: m.start()], True, None
        if m.group("d") is not None:
            end = line.find(m.group("d"), m.end())
            pos = len(line) if end < 0 else end + 1
            continue
        if m.group("env") is not None:
            env = m.group(0)[len("\\begin{") : -1]
            return line, False, (env, m.start())
        pos = m.end()


_COND_TOKEN_RE = re.compile(r"\\(if[a-zA-Z@]*|else|fi|or)(?![a-zA-Z@])")
# etoolbox/ifthen commands that take arguments and never meet a \fi
_NOT_TEX_IFS = frozenset(
    "iff ifthenelse ifstrequal ifstrempty ifdefstring ifbool ifcsdef ifdef ifundef ifblank iftoggle "
    "ifdefempty ifdefmacro ifnumcomp ifdimcomp ifcsundef ifnumequal ifboolexpr ifpackageloaded "
    "ifclassloaded ifpdf@ ".split()
)


def switch_states(text: str) -> dict[str, bool]:
    """``\\newif\\ifX`` switches and the value the source last sets them to (default false)."""
    states: dict[str, bool] = {}
    for m in re.finditer(r"\\newif\s*\\if([a-zA-Z@]+)", text):
        states[m.group(1)] = False
    if states:
        names = "|".join(re.escape(n) for n in sorted(states, key=len, reverse=True))
        for m in re.finditer(r"\\(" + names + r")(true|false)(?![a-zA-Z@])", text):
            states[m.group(1)] = m.group(2) == "true"
    return states


def resolve_conditionals(text: str, switches: dict[str, bool]) -> str:
    """Keep the live branch of ``\\iffalse``/``\\iftrue`` and known ``\\newif`` switches.

    Other TeX conditionals (``\\ifx``, ``\\ifnum``...) are kept as they are but
    counted, so their ``\\fi`` does not close ours. A missing ``\\fi`` keeps the
    rest of the text as the live branch says.
    """
    out: list[str] = []
    pos = 0
    # stack of (kind, live_now): kind is "known" or "other"
    stack: list[list] = []
    live = True  # is the current point kept?

    def outer_live() -> bool:
        return all(frame[1] for frame in stack[:-1]) if stack else True

    for m in _COND_TOKEN_RE.finditer(text):
        name = m.group(1)
        if name.startswith("if") and name in _NOT_TEX_IFS:
            continue
        if live:
            out.append(text[pos : m.start()])
        pos = m.end()
        if name.startswith("if"):
            flag = name[2:]
            if name == "iffalse":
                value: bool | None = False
            elif name == "iftrue":
                value = True
            elif flag in switches:
                value = switches[flag]
            else:
                value = None
            if value is None:
                stack.append(["other", live])
                if live:
                    out.append(m.group(0))
            else:
                stack.append(["known", live and value])
                live = live and value
        elif name in ("else", "or"):
            if stack and stack[-1][0] == "known" and name == "else":
                frame = stack[-1]
                parent_live = outer_live()
                frame[1] = parent_live and not frame[1]
                live = frame[1]
            elif live:
                out.append(m.group(0))
        else:  # fi
            if stack:
                frame = stack.pop()
                if frame[0] == "known":
                    live = all(f[1] for f in stack) if stack else True
                elif live:
                    out.append(m.group(0))
            elif live:
                out.append(m.group(0))
    if live:
        out.append(text[pos:])
    return "".join(out)


# --------------------------------------------------------------------------
# Braces
# --------------------------------------------------------------------------


def first_unbalanced_brace(text: str) -> int | None:
    """Offset of the first ``}`` without an opener or the first ``{`` never closed; None if balanced.

    Escaped braces and verbatim material do not count.
    """
    stack: list[int] = []
    for is_verb, piece_start, piece in _pieces_with_offsets(text):
        if is_verb:
            continue
        for m in re.finditer(r"\\.|[{}]", piece, re.DOTALL):
            tok = m.group(0)
            if tok == "{":
                stack.append(piece_start + m.start())
            elif tok == "}":
                if not stack:
                    return piece_start + m.start()
                stack.pop()
    return stack[0] if stack else None


def _pieces_with_offsets(text: str):
    pos = 0
    for is_verb, piece in split_verbatim(text):
        yield is_verb, pos, piece
        pos += len(piece)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# --------------------------------------------------------------------------
# Finding the main file
# --------------------------------------------------------------------------

_DOCCLASS_RE = re.compile(r"\\documentclass\s*(?:\[[^\]]*\])?\s*\{\s*\{?([^{}]*)\}?\s*\}")
_BEGIN_DOC_RE = re.compile(r"\\begin\s*\{document\}")
_INPUT_RE = re.compile(
    r"\\(?P<cmd>input|include|subfile|InputIfFileExists)(?![a-zA-Z@])\s*(?:\{(?P<name>[^{}\n]*)\}|(?P<bare>[^\s{}\\%]+))"
    r"|\\(?P<icmd>import|subimport|inputfrom|subinputfrom|includefrom|subincludefrom)\*?\s*\{(?P<dir>[^{}\n]*)\}\s*\{(?P<iname>[^{}\n]*)\}"
)
_CITE_COUNT_RE = re.compile(r"\\[a-zA-Z]*cite[a-zA-Z]*\*?\s*[\[{]")
_BIB_RE = re.compile(r"\\(?:bibliography|addbibresource|addglobalbib|printbibliography|begin\{thebibliography\})")
_MAIN_NAMES = ("main", "ms", "paper", "article", "manuscript")


def _tex_candidates(folder: Path) -> list[Path]:
    found: list[Path] = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if len(rel.parts) > 5 or any(p.startswith(".") or p == "__MACOSX" for p in rel.parts):
            continue
        if path.suffix.lower() in (".tex", ".ltx", ".latex") and path.is_file() and not path.is_symlink():
            found.append(path)
            if len(found) >= MAX_CANDIDATE_FILES:
                break
    return found


def find_main_file(folder: Path) -> Path:
    """The root .tex: has ``\\documentclass`` and ``\\begin{document}`` and no other candidate inputs it.

    Ties go to the shallowest file, then one that declares a bibliography, then
    a conventional name (main.tex, ms.tex...), then the most citations, then size.
    """
    files = _tex_candidates(folder)
    if not files:
        raise PaperSkipped("no_tex_file", f"no .tex file under {folder.name}")
    texts: dict[Path, str] = {}
    binary: list[str] = []
    for path in files:
        try:
            texts[path] = strip_comments(read_tex(path))
        except PaperSkipped as skip:
            if skip.reason == "binary_main_file":
                binary.append(str(path.relative_to(folder)))
    roots = [p for p, t in texts.items() if _DOCCLASS_RE.search(t) and _BEGIN_DOC_RE.search(t)]
    roots = [
        p for p in roots if _DOCCLASS_RE.search(texts[p]).group(1).strip() not in ("subfiles", "standalone")
    ] or roots
    if not roots:
        roots = [p for p, t in texts.items() if _BEGIN_DOC_RE.search(t)]
    if not roots:
        if binary and not texts:
            raise PaperSkipped("binary_main_file", f"every .tex file is binary: {', '.join(binary[:5])}")
        raise PaperSkipped("no_main_file", f"no .tex file under {folder.name} has \\begin{{document}}")
    included: set[Path] = set()
    for path, text in texts.items():
        for m in _INPUT_RE.finditer(text):
            name = (m.group("name") or m.group("bare") or m.group("iname") or "").strip()
            base = path.parent / (m.group("dir") or "")
            for cand in (base / name, base / (name + ".tex"), folder / name, folder / (name + ".tex")):
                if cand in texts and cand != path:
                    included.add(cand)

    def score(p: Path):
        t = texts[p]
        rel = p.relative_to(folder)
        return (
            p not in included,
            -len(rel.parts),
            bool(_BIB_RE.search(t)),
            p.stem.lower() in _MAIN_NAMES,
            len(_CITE_COUNT_RE.findall(t)),
            len(t),
        )

    return max(roots, key=score)


# --------------------------------------------------------------------------
# Inlining \input / \include / \subfile
# --------------------------------------------------------------------------


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _document_body(text: str) -> str:
    """A subfile is a whole document: keep what lies between its begin and end."""
    m = _BEGIN_DOC_RE.search(text)
    if not m:
        return text
    end = text.find("\\end{document}", m.end())
    return text[m.end() : end if end >= 0 else len(text)]


def _truncate_endinput(text: str) -> str:
    m = re.search(r"\\endinput(?![a-zA-Z@])", text)
    return text[: m.start()] if m else text


class _Inliner:
    """Recursive ``\\input`` resolution with cycle, depth and size guards."""

    def __init__(self, folder: Path, main_dir: Path) -> None:
        self.folder = folder
        self.main_dir = main_dir
        self.files: list[str] = []
        self.warnings: list[str] = []
        self.unbalanced: list[str] = []
        self.total = 0

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.folder))
        except ValueError:
            return str(path)

    def locate(self, name: str, including: Path, subdir: str | None, relative_to_includer: bool) -> Path | None:
        name = name.strip().strip('"')
        if not name:
            return None
        bases: list[Path] = []
        if subdir is not None:
            bases.append((including.parent if relative_to_includer else self.main_dir) / subdir.strip())
        else:
            if relative_to_includer:
                bases.append(including.parent)
            bases += [self.main_dir, including.parent, self.folder]
        for base in bases:
            for cand in (base / name, base / (name + ".tex")):
                if cand.is_file() and _inside(cand, self.folder):
                    return cand
        return None

    def load(self, path: Path, stack: tuple[Path, ...]) -> str:
        text = strip_comments(read_tex(path, reason_binary="binary_main_file" if not stack else "binary_input"))
        self.files.append(self.rel(path))
        self.total += len(text)
        if self.total > MAX_TOTAL_CHARS:
            raise PaperSkipped(
                "source_too_large", f"inlined sources pass {MAX_TOTAL_CHARS} characters at {self.rel(path)}"
            )
        bad = first_unbalanced_brace(text)
        if bad is not None:
            self.unbalanced.append(f"{self.rel(path)} line {line_of(text, bad)}")
        if stack:
            text = _truncate_endinput(text)
        return self.expand(text, path, stack + (path,))

    def expand(self, text: str, path: Path, stack: tuple[Path, ...]) -> str:
        out: list[str] = []
        for is_verb, piece in split_verbatim(text):
            if is_verb:
                out.append(piece)
                continue
            pos = 0
            for m in _INPUT_RE.finditer(piece):
                out.append(piece[pos : m.start()])
                pos = m.end()
                out.append(self.inline(m, path, stack))
            out.append(piece[pos:])
        return "".join(out)

    def inline(self, m: re.Match, path: Path, stack: tuple[Path, ...]) -> str:
        cmd = m.group("cmd") or m.group("icmd")
        name = m.group("name") if m.group("name") is not None else (m.group("bare") or m.group("iname") or "")
        subdir = m.group("dir")
        if cmd == "input" and m.group("bare") and name.lower().endswith((".sty", ".cls")):
            return ""
        target = self.locate(
            name, path, subdir, relative_to_includer=cmd in ("subfile", "subimport", "subinputfrom", "subincludefrom")
        )
        if target is None:
            self.warnings.append(
                f"missing_input: \\{cmd}{{{name}}} in {self.rel(path)} names no file in the paper folder"
            )
            return " "
        if target in stack:
            self.warnings.append(f"input_cycle: {self.rel(path)} inputs {self.rel(target)} again")
            return " "
        if len(stack) >= MAX_INPUT_DEPTH:
            self.warnings.append(f"input_too_deep: {self.rel(target)} is {len(stack)} inputs deep, not inlined")
            return " "
        if target.suffix.lower() in (".sty", ".cls", ".bst"):
            return " "
        try:
            body = self.load(target, stack)
        except PaperSkipped as skip:
            if skip.reason in ("binary_input", "unreadable_file", "file_too_large"):
                self.warnings.append(f"{skip.reason}: {skip.detail} (\\{cmd} in {self.rel(path)}), not inlined")
                return " "
            raise
        if cmd == "subfile" or _DOCCLASS_RE.search(body):
            body = _document_body(body)
        sep = "\n\\clearpage\n" if cmd in ("include", "includefrom", "subincludefrom") else "\n"
        return sep + body + sep


# --------------------------------------------------------------------------
# Macros
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Bibliography declarations
# --------------------------------------------------------------------------


def bib_resources(text: str) -> list[str]:
    """The .bib names the source declares, in order, without duplicates (``.bib`` added)."""
    text = "".join(piece for is_verb, piece in split_verbatim(text) if not is_verb)
    names: list[str] = []
    for m in re.finditer(r"\\(?:bibliography|nobibliography)\s*\{([^{}]*)\}", text):
        for part in m.group(1).split(","):
            part = part.strip()
            if part:
                names.append(part if part.lower().endswith(".bib") else part + ".bib")
    for m in re.finditer(r"\\(?:addbibresource|addglobalbib|addsectionbib)\s*(?:\[[^\]]*\])?\s*\{([^{}]*)\}", text):
        part = m.group(1).strip()
        if part:
            names.append(part)
    seen: set[str] = set()
    return [n for n in names if not (n in seen or seen.add(n))]


# --------------------------------------------------------------------------
# The whole step
# --------------------------------------------------------------------------


def load_source(folder: Path, main_file: str | None = None) -> LatexSource:
    """Find the root, inline its inputs, resolve switches and expand user macros.

    PaperSkipped for no root file, a binary root, or braces that do not balance
    (TeX would not have compiled it; the detail names the file and line). A
    missing ``\\input`` file is only a warning: the rest of the paper still reads.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise PaperSkipped("no_tex_file", f"{folder} is not a folder")
    if main_file is not None:
        main = folder / main_file
        if not main.is_file() or not _inside(main, folder):
            raise PaperSkipped("no_tex_file", f"{main_file} is not a file in {folder.name}")
    else:
        main = find_main_file(folder)
    inliner = _Inliner(folder, main.parent)
    text = inliner.load(main, ())
    warnings = list(inliner.warnings)
    bad = first_unbalanced_brace(text)
    if bad is not None:
        where = "; ".join(inliner.unbalanced[:3]) or f"{inliner.rel(main)} (merged text line {line_of(text, bad)})"
        raise PaperSkipped("unbalanced_braces", f"braces do not balance in {where}")
    switches = switch_states(text)
    text = resolve_conditionals(re.sub(r"\\newif\s*\\if[a-zA-Z@]+", "", text), switches)
    macros, declared_cites = collect_macros(text)
    begin = _BEGIN_DOC_RE.search(text)
    if begin is not None:
        preamble, body = text[: begin.end()], text[begin.end() :]
        body, hit = expand_macros(body, macros)
        text = preamble + body
        if hit:
            warnings.append("macro_expansion_limit: user macros expand without end; expansion stopped")
    return LatexSource(
        folder=folder,
        main_file=inliner.rel(main),
        text=text,
        files=inliner.files,
        warnings=warnings,
        macros=macros,
        bib_resources=bib_resources(text),
        cite_commands=declared_cites,
    )
