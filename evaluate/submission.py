"""The submission format, its reader, and a validator that lists every problem in one pass.

Two equivalent layouts:
- one JSONL file: the first line is the metadata record
  (``rqbench.records.SubmissionMetadata``, ``"kind": "metadata"``), then one line
  per rq_id (``SubmissionEntry``: five RQs, optional gaps);
- a folder holding ``metadata.json`` (the metadata record) and
  ``submission.jsonl`` (the entry lines). Other files in it (the generation log)
  are ignored here.

Validation never stops at the first problem and never raises on bad input: it
returns a ``ValidationReport`` whose problems carry file, line and field. RQ
text is untrusted (it goes into judge prompts), so every RQ also passes the
injection scan (``scan_for_injection``); a hit rejects the submission, or is a
warning under ``injection="flag"``.

The submission hash is content-addressed: metadata without its ``date`` plus
the entries sorted by rq_id, so line order and whitespace do not change it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rqbench.evaluate.injection import scan_for_injection

from rqbench.hashing import content_hash
from rqbench.io import write_atomic
from rqbench.records import (
    MAX_LONG_TEXT,
    MAX_RQ_CHARS,
    SubmissionEntry,
    SubmissionMetadata,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Problem",
    "Submission",
    "SubmissionInvalid",
    "ValidationReport",
    "load_submission",
    "scan_for_injection",
    "submission_hash",
    "validate_submission",
    "write_submission",
]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024  # 1,434 instances x 5 RQs of 600 chars is about 5 MB
MIN_QUESTION_WORDS = 3
METADATA_FILE = "metadata.json"
ENTRIES_FILE = "submission.jsonl"
ENTRY_FIELDS = ("rq_id", "research_questions", "gaps", "failure")


class Problem(BaseModel):
    """One thing wrong with a submission, located as precisely as the input allows."""

    model_config = ConfigDict(extra="forbid")

    severity: Literal["error", "warning"] = "error"
    code: str
    message: str
    file: str
    line: int | None = None
    field: str | None = None
    rq_id: str | None = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line is not None else "")
        what = f" [{self.field}]" if self.field else ""
        ident = f" (rq_id {self.rq_id})" if self.rq_id else ""
        return f"{self.severity}: {where}{what}{ident}: {self.message}"


class ValidationReport(BaseModel):
    """Everything validation found, plus what parsed cleanly and the coverage."""

    path: str
    problems: list[Problem] = Field(default_factory=list)
    metadata: SubmissionMetadata | None = None
    entries: list[SubmissionEntry] = Field(default_factory=list)
    expected: int | None = Field(default=None, description="Instances in the dataset (None: not checked).")
    covered: int = Field(default=0, description="Expected rq_ids with five valid RQs.")
    failed: int = Field(default=0, description="Entries that record a generation failure.")
    allow_partial: bool = False
    submission_hash: str | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def coverage(self) -> float | None:
        return None if not self.expected else self.covered / self.expected

    def summary(self) -> str:
        cov = "" if self.expected is None else f", coverage {self.covered}/{self.expected} ({self.coverage:.1%})"
        verdict = "valid" if self.ok else "INVALID"
        return (
            f"{self.path}: {verdict}: {len(self.errors)} error(s), {len(self.warnings)} warning(s), "
            f"{len(self.entries)} entries{cov}" + (f", hash {self.submission_hash}" if self.submission_hash else "")
        )


class SubmissionInvalid(ValueError):
    """Raised by ``load_submission`` with the full report."""

    def __init__(self, report: ValidationReport):
        shown = "\n".join(str(p) for p in report.errors[:20])
        more = f"\n... and {len(report.errors) - 20} more" if len(report.errors) > 20 else ""
        super().__init__(f"{report.summary()}\n{shown}{more}")
        self.report = report


@dataclass(frozen=True)
class Submission:
    """A validated submission: what the judges read."""

    path: Path
    metadata: SubmissionMetadata
    entries: dict[str, SubmissionEntry]
    hash: str
    report: ValidationReport


def submission_hash(metadata: SubmissionMetadata, entries: Iterable[SubmissionEntry]) -> str:
    """Content hash: metadata without its date, entries sorted by rq_id."""
    meta = metadata.model_dump(mode="json", exclude={"date"})
    rows = sorted((e.model_dump(mode="json") for e in entries), key=lambda r: r["rq_id"])
    return content_hash({"metadata": meta, "entries": rows})


# --------------------------------------------------------------------------
# reading lines
# --------------------------------------------------------------------------


@dataclass
class _Line:
    file: str
    number: int
    data: Any


class _Collector:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, code: str, message: str, file: str, line: int | None = None, field: str | None = None,
            rq_id: str | None = None, severity: Literal["error", "warning"] = "error") -> None:  # fmt: skip
        self.problems.append(Problem(severity=severity, code=code, message=message, file=file, line=line,
                                     field=field, rq_id=rq_id))  # fmt: skip

    def errors_for(self, line: _Line) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error" and p.file == line.file and p.line == line.number]


def _json_lines(path: Path, out: _Collector, max_bytes: int) -> list[_Line]:
    """Decoded JSON lines of ``path``; every undecodable line becomes a problem."""
    name = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        out.add("unreadable", f"cannot read: {exc.strerror or exc}", name)
        return []
    if size > max_bytes:
        out.add("size", f"file is {size} bytes, over the limit of {max_bytes} bytes", name)
        return []
    try:
        raw = path.read_bytes()
    except OSError as exc:
        out.add("unreadable", f"cannot read: {exc.strerror or exc}", name)
        return []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        out.add("encoding", "file is UTF-16; submissions must be UTF-8", name, 1)
        return []
    lines: list[_Line] = []
    for n, chunk in enumerate(raw.split(b"\n"), 1):
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.add("encoding", f"not valid UTF-8 (byte {exc.start} of the line)", name, n)
            continue
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            out.add("json", f"not JSON ({msg})", name, n)
            continue
        if not isinstance(data, dict):
            out.add("json", f"a line must be a JSON object, got {type(data).__name__}", name, n)
            continue
        lines.append(_Line(name, n, data))
    return lines


def _pydantic_problems(exc: ValidationError, out: _Collector, line: _Line, rq_id: str | None,
                       skip: Sequence[str] = ()) -> None:  # fmt: skip
    for err in exc.errors():
        loc = err["loc"]
        if not loc or str(loc[0]) in skip:
            continue
        out.add("field", err["msg"], line.file, line.number, ".".join(str(x) for x in loc), rq_id)


# --------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------


def _check_metadata(line: _Line, out: _Collector) -> SubmissionMetadata | None:
    try:
        return SubmissionMetadata.model_validate(line.data)
    except ValidationError as exc:
        _pydantic_problems(exc, out, line, None)
        return None


def _check_questions(qs: Any, line: _Line, out: _Collector, rq_id: str | None, injection: str) -> bool:
    """Every rule on the five RQs; True when they are all fine."""
    before = len([p for p in out.problems if p.severity == "error"])
    if not isinstance(qs, list):
        out.add("rqs", f"must be a list of five strings, got {type(qs).__name__}", line.file, line.number,
                "research_questions", rq_id)  # fmt: skip
        return False
    if len(qs) != 5:
        out.add("rq_count", f"has {len(qs)} research questions, expected exactly 5", line.file, line.number,
                "research_questions", rq_id)  # fmt: skip
    seen: dict[str, int] = {}
    for i, q in enumerate(qs):
        field = f"research_questions[{i}]"
        if not isinstance(q, str):
            out.add("rq_type", f"must be a string, got {type(q).__name__}", line.file, line.number, field, rq_id)
            continue
        text = q.strip()
        if not text:
            out.add("rq_empty", "research question is empty", line.file, line.number, field, rq_id)
            continue
        if len(text) > MAX_RQ_CHARS:
            out.add("rq_length", f"{len(text)} characters, over the limit of {MAX_RQ_CHARS}", line.file,
                    line.number, field, rq_id)  # fmt: skip
        if not text.endswith("?") or len(text.split()) < MIN_QUESTION_WORDS:
            out.add("rq_not_question", f"not a question (must have {MIN_QUESTION_WORDS}+ words and end with '?')",
                    line.file, line.number, field, rq_id)  # fmt: skip
        norm = " ".join(text.lower().split())
        if norm in seen:
            out.add("rq_repeated", f"repeats research_questions[{seen[norm]}]", line.file, line.number, field, rq_id)
        else:
            seen[norm] = i
        for reason in scan_for_injection(text):
            out.add("injection", f"looks like judge manipulation: {reason}", line.file, line.number, field, rq_id,
                    severity="warning" if injection == "flag" else "error")  # fmt: skip
    return len([p for p in out.problems if p.severity == "error"]) == before


def _check_entry(line: _Line, out: _Collector, injection: str) -> SubmissionEntry | None:
    d = line.data
    rq_id = d.get("rq_id")
    ok = True
    if not isinstance(rq_id, str) or not rq_id.strip():
        out.add("rq_id", "missing or not a non-empty string", line.file, line.number, "rq_id")
        rq_id, ok = None, False
    failure = d.get("failure")
    if failure is not None:
        if not isinstance(failure, str):
            out.add("field", "must be a string (the failure reason) or null", line.file, line.number, "failure", rq_id)
            ok = False
        elif d.get("research_questions"):
            out.add("field", "a failed entry carries no research_questions", line.file, line.number,
                    "research_questions", rq_id)  # fmt: skip
            ok = False
    elif "research_questions" not in d:
        out.add("rqs", "missing", line.file, line.number, "research_questions", rq_id)
        ok = False
    else:
        ok = _check_questions(d["research_questions"], line, out, rq_id, injection) and ok
    gaps = d.get("gaps", [])
    if not isinstance(gaps, list) or not all(isinstance(g, str) for g in gaps):
        out.add("field", "must be a list of strings", line.file, line.number, "gaps", rq_id)
        ok = False
    elif any(len(g) > MAX_LONG_TEXT for g in gaps):
        out.add("field", f"a gap is over {MAX_LONG_TEXT} characters", line.file, line.number, "gaps", rq_id)
        ok = False
    try:
        entry = SubmissionEntry.model_validate(d)
    except ValidationError as exc:
        _pydantic_problems(exc, out, line, rq_id, skip=ENTRY_FIELDS)
        if not out.errors_for(line):
            out.add("field", "; ".join(e["msg"] for e in exc.errors()), line.file, line.number, None, rq_id)
        return None
    return entry if ok else None


def _gather_lines(path: Path, out: _Collector, max_bytes: int) -> tuple[list[_Line], list[_Line]]:
    """(metadata lines, entry lines) of a folder or a single JSONL file."""
    if path.is_dir():
        meta_path, entries_path = path / METADATA_FILE, path / ENTRIES_FILE
        metas: list[_Line] = []
        if not meta_path.exists():
            out.add("metadata", f"the folder has no {METADATA_FILE}", str(path))
        else:
            try:
                size = meta_path.stat().st_size
                if size > max_bytes:
                    out.add("size", f"file is {size} bytes, over the limit of {max_bytes} bytes", str(meta_path))
                else:
                    data = json.loads(meta_path.read_bytes().decode("utf-8"))
                    if isinstance(data, dict):
                        metas.append(_Line(str(meta_path), 1, data))
                    else:
                        out.add("json", "must hold one JSON object", str(meta_path), 1)
            except UnicodeDecodeError as exc:
                out.add("encoding", f"not valid UTF-8 (byte {exc.start})", str(meta_path), 1)
            except (json.JSONDecodeError, RecursionError) as exc:
                out.add("json", f"not JSON ({getattr(exc, 'msg', 'nested too deeply')})", str(meta_path), 1)
        if not entries_path.exists():
            out.add("entries", f"the folder has no {ENTRIES_FILE}", str(path))
            return metas, []
        lines = _json_lines(entries_path, out, max_bytes)
        for ln in lines:
            if ln.data.get("kind") == "metadata":
                out.add("metadata", f"metadata belongs in {METADATA_FILE}, not in the entry lines", ln.file, ln.number)
        return metas, [ln for ln in lines if ln.data.get("kind") != "metadata"]
    if not path.exists():
        out.add("missing", "no such file or folder", str(path))
        return [], []
    lines = _json_lines(path, out, max_bytes)
    metas = [ln for ln in lines if ln.data.get("kind") == "metadata"]
    entries = [ln for ln in lines if ln.data.get("kind") != "metadata"]
    if not metas and lines:
        out.add("metadata", 'no metadata record (a first line with "kind": "metadata")', str(path), 1)
    elif metas and lines and metas[0] is not lines[0]:
        out.add("metadata", "the metadata record must be the first line", metas[0].file, metas[0].number)
    return metas, entries


def validate_submission(
    path: str | Path,
    expected_rq_ids: Iterable[str] | None,
    *,
    allow_partial: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    injection: Literal["reject", "flag"] = "reject",
) -> ValidationReport:
    """Check a submission folder or file against the dataset's rq_ids; every problem, in one pass."""
    path = Path(path)
    out = _Collector()
    metas, entry_lines = _gather_lines(path, out, max_bytes)
    metadata = None
    for i, ln in enumerate(metas):
        if i:
            out.add("metadata", f"a second metadata record (the first is on line {metas[0].number})", ln.file, ln.number)
            continue
        metadata = _check_metadata(ln, out)
    expected = list(dict.fromkeys(expected_rq_ids)) if expected_rq_ids is not None else None
    known = set(expected) if expected is not None else None
    first_line: dict[str, int] = {}
    entries: list[SubmissionEntry] = []
    for ln in entry_lines:
        entry = _check_entry(ln, out, injection)
        rq_id = ln.data.get("rq_id") if isinstance(ln.data.get("rq_id"), str) else None
        if rq_id is None:
            continue
        if rq_id in first_line:
            out.add("duplicate", f"duplicate line for this rq_id (first on line {first_line[rq_id]})", ln.file,
                    ln.number, "rq_id", rq_id)  # fmt: skip
            continue
        first_line[rq_id] = ln.number
        if known is not None and rq_id not in known:
            out.add("unknown_rq_id", "not an rq_id of this dataset revision", ln.file, ln.number, "rq_id", rq_id)
            continue
        if entry is not None:
            entries.append(entry)
    partial_severity: Literal["error", "warning"] = "warning" if allow_partial else "error"
    hint = "" if allow_partial else " (a partial submission needs --allow-partial)"
    failed = [e for e in entries if e.failure is not None]
    for e in failed:
        out.add("generation_failed", f"generation failed: {e.failure}{hint}", str(path), first_line[e.rq_id],
                "failure", e.rq_id, severity=partial_severity)  # fmt: skip
    if expected is not None:
        for rq_id in expected:
            if rq_id not in first_line:
                out.add("missing_rq_id", f"no line for this rq_id{hint}", str(path), None, "rq_id", rq_id,
                        severity=partial_severity)  # fmt: skip
    report = ValidationReport(
        path=str(path),
        problems=out.problems,
        metadata=metadata,
        entries=entries,
        expected=len(expected) if expected is not None else None,
        covered=sum(1 for e in entries if e.failure is None),
        failed=len(failed),
        allow_partial=allow_partial,
    )
    if metadata is None and not any(p.code == "metadata" for p in out.problems) and not report.errors:
        report.problems.append(Problem(code="metadata", message="no metadata record", file=str(path)))
    if report.ok and metadata is not None:
        report.submission_hash = submission_hash(metadata, entries)
    return report


def load_submission(
    path: str | Path,
    expected_rq_ids: Iterable[str] | None,
    *,
    allow_partial: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    injection: Literal["reject", "flag"] = "reject",
) -> Submission:
    """A validated submission, or ``SubmissionInvalid`` carrying the full report."""
    report = validate_submission(path, expected_rq_ids, allow_partial=allow_partial, max_bytes=max_bytes,
                                 injection=injection)  # fmt: skip
    if not report.ok or report.metadata is None or report.submission_hash is None:
        raise SubmissionInvalid(report)
    return Submission(Path(path), report.metadata, {e.rq_id: e for e in report.entries}, report.submission_hash,
                      report)  # fmt: skip


def write_submission(folder: str | Path, metadata: SubmissionMetadata, entries: Iterable[SubmissionEntry]) -> Path:
    """Write the folder layout (metadata.json + submission.jsonl), each file atomically."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / METADATA_FILE, metadata.model_dump_json(indent=2) + "\n")
    lines = [e.model_dump_json(exclude_defaults=False) for e in entries]
    write_atomic(folder / ENTRIES_FILE, "\n".join(lines) + ("\n" if lines else ""))
    return folder
