"""Reading a submission's lines as hostile input: a regular file under a byte cap, lines under their own cap, JSON
with no NaN, no deep nesting, no NUL character and no lone surrogate; each refusal is a problem with its place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from rqbench.evaluate.generate.validation_report import Collector, shown
from rqbench.io import UnreadableInput, read_capped

MAX_LINE_BYTES = 1024 * 1024  # a line holds five RQs of 600 characters and ten gaps of 1,000: ~20 KB
MAX_JSON_DEPTH = 16  # an entry is 2 levels deep; parameters need a few more, never hundreds


@dataclass
class JsonLine:
    """One decoded line of a submission file, with where it came from."""

    file: str
    number: int
    data: Any


def _field_name(path: tuple[str, ...]) -> str | None:
    """('research_questions', '[2]') -> 'research_questions[2]'; ('parameters', 'a') -> 'parameters.a'."""
    out = ""
    for part in path:
        out += part if part.startswith("[") or not out else "." + part
    return out or None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_values(data: Any, out: Collector, file: str, line: int) -> bool:
    """Walk a decoded line once: depth, lone surrogates and NUL characters in any key or string; True when clean."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(data, ())]
    ok = True
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_JSON_DEPTH:
            out.add(
                "nesting",
                f"nested more than {MAX_JSON_DEPTH} levels deep (at {shown(_field_name(path), 80)})",
                file,
                line,
                path[0],
            )
            return False
        if isinstance(value, dict):
            for key, v in value.items():
                ok = _check_text(str(key), out, file, line, (*path, str(key))) and ok
                stack.append((v, (*path, str(key))))
        elif isinstance(value, list):
            stack.extend((v, (*path, f"[{i}]")) for i, v in enumerate(value))
        elif isinstance(value, str):
            ok = _check_text(value, out, file, line, path) and ok
    return ok


# Only a line with one of these can hold a lone surrogate or a NUL character once decoded.
_SUSPECT_ESCAPE = re.compile(r"\\u(?:[dD][89a-fA-F]|0000)")


def _needs_walk(text: str) -> bool:
    """Whether a line could break the depth, surrogate or NUL rules; most lines are 2 levels and plain text."""
    return text.count("{") + text.count("[") > MAX_JSON_DEPTH or ("\\u" in text and bool(_SUSPECT_ESCAPE.search(text)))


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_text(text: str, out: Collector, file: str, line: int, path: tuple[str, ...]) -> bool:
    bad = _SURROGATE.search(text)
    if bad:
        out.add(
            "encoding",
            f"holds a lone surrogate (U+{ord(bad.group(0)):04X}, written as a \\u escape), which is not Unicode text",
            file,
            line,
            _field_name(path),
        )
        return False
    if "\x00" in text:
        out.add("encoding", "holds a NUL character (\\u0000)", file, line, _field_name(path))
        return False
    return True


def decode_line(chunk: bytes, name: str, n: int, out: Collector) -> JsonLine | None:
    """One physical line as a JSON object, or None with the problem recorded."""
    if len(chunk) > MAX_LINE_BYTES:
        out.refuse(
            name, n, "line_size", f"line is {len(chunk)} bytes, over the limit of {MAX_LINE_BYTES} bytes per line"
        )
        return None
    nul = chunk.find(b"\x00")
    if nul >= 0:
        out.refuse(name, n, "encoding", f"a NUL byte at byte {nul} of the line (binary data, not JSON text)")
        return None
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        out.refuse(name, n, "encoding", f"not valid UTF-8 (byte {exc.start} of the line)")
        return None
    if not text.strip():
        return None
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        out.refuse(name, n, "json", f"not JSON ({exc.msg} at character {exc.pos})")
        return None
    except RecursionError:
        out.refuse(name, n, "nesting", f"nested far more than {MAX_JSON_DEPTH} levels deep")
        return None
    except ValueError as exc:  # NaN/Infinity, integers of thousands of digits
        out.refuse(name, n, "json", f"not JSON ({exc})")
        return None
    if not isinstance(data, dict):
        out.refuse(name, n, "json", f"a line must be a JSON object, got {type(data).__name__}")
        return None
    if _needs_walk(text) and not _check_values(data, out, name, n):
        out.first_refused.setdefault(name, n)
        return None
    return JsonLine(name, n, data)


def read_file(path: Path, out: Collector, max_bytes: int) -> bytes | None:
    """The bytes of a regular file within the cap, or None with the problem recorded (nothing else is read)."""
    try:
        return read_capped(path, max_bytes)
    except UnreadableInput as exc:
        out.add(exc.code, exc.detail, str(path))
        return None


def json_lines(path: Path, out: Collector, max_bytes: int) -> list[JsonLine]:
    """Decoded JSON lines of ``path``; every undecodable line becomes a problem."""
    name = str(path)
    raw = read_file(path, out, max_bytes)
    if raw is None:
        return []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        out.add("encoding", "file is UTF-16; submissions must be UTF-8", name, 1)
        return []
    lines: list[JsonLine] = []
    start, n = 0, 0
    while start <= len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        n += 1
        line = decode_line(raw[start:end], name, n, out)
        if line is not None:
            lines.append(line)
        start = end + 1
    return lines


def pydantic_problems(
    exc: ValidationError, out: Collector, line: JsonLine, rq_id: str | None, skip: Sequence[str] = ()
) -> None:
    for err in exc.errors():
        loc = err["loc"]
        if not loc or str(loc[0]) in skip:
            continue
        out.add("field", err["msg"], line.file, line.number, ".".join(str(x) for x in loc), rq_id)
