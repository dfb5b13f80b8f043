"""The submission format, its reader, and a validator that lists every problem in one pass.

Two equivalent layouts:
- one JSONL file: the first line is the metadata record
  (``rqbench.records.SubmissionMetadata``, ``"kind": "metadata"``), then one line
  per rq_id (``SubmissionEntry``: five RQs, optional gaps);
- a folder holding ``metadata.json`` (the metadata record) and
  ``submission.jsonl`` (the entry lines). Other files in it (the generation log)
  are ignored here.

Validation never stops at the first problem and never raises on bad input: it
returns a ``ValidationReport`` whose problems carry file, line and field. It is
built for hostile input. A path is read only if it is a regular file within the
byte cap (a FIFO, a device, a link to one, a folder where a file belongs are
named errors, never read); a line over ``MAX_LINE_BYTES``, JSON nested deeper
than ``MAX_JSON_DEPTH``, NaN or Infinity, NUL characters and lone surrogates
are named errors; every rule keeps at most ``max_problems_per_rule`` problems
and counts the rest, so the work and the report grow linearly with the input.

Every RQ of a line that could be judged passes the well-formedness gate
(``rqbench.wellformed``): each rule it breaks is an error of its own code,
``rq_<rule>`` (``rq_placeholder``, ``rq_json_debris``; ``rq_not_question`` for
not_a_question), capped per code like every problem; two RQs of a line that
differ only in case, spacing, quotes or end punctuation are ``rq_repeated``. The
gaps of such a line are notes, never judged: a malformed one is a warning
(``gap_<rule>``). The gate costs time linear in an RQ (under 0.1 ms for one of
600 characters), and lines refused for their rq_id are not gated.

The gate applies its submitted standard (``wellformed.Standard.submitted``): a
rule that refuses (not a question, or not safe to show) is an error; a rule
that goes to review (an echo of our own templates or reply fields, a list
label, a line break) is a warning of the same code, and the RQ is listed in the
report's ``flagged`` for review.

RQ text is untrusted (it goes into judge prompts), so every RQ of a line that
could be judged is screened (``rqbench.evaluate.generate.injection.screen``). Words
addressed to the evaluator (instructions about the scoring, words to the judge)
and hidden characters reject the submission: the judge prompt keeps every
word, and hidden characters make the shown text differ from the judged one.
Other hits are warnings, and every screened RQ with a hit is listed in the
report's ``flagged`` for review. Under ``injection="flag"`` nothing is rejected.

The submission hash is content-addressed: metadata without its ``date`` plus
the entries sorted by rq_id, so line order and whitespace do not change it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from rqbench import wellformed
from rqbench.evaluate.generate.injection import scan_for_injection, screen
from rqbench.evaluate.generate.submission_lines import JsonLine, decode_line, json_lines, pydantic_problems, read_file
from rqbench.evaluate.generate.validation_report import (
    DEFAULT_MAX_PROBLEMS_PER_RULE,
    PARTIAL_REMEDY_FLAG,
    Collector,
    Flagged,
    Problem,
    SubmissionInvalid,
    ValidationReport,
    shown,
)
from rqbench.hashing import content_hash
from rqbench.io import write_atomic
from rqbench.records import (
    MAX_LONG_TEXT,
    MAX_RQ_CHARS,
    WELLFORMED_PER_ITEM,
    SubmissionEntry,
    SubmissionMetadata,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_PROBLEMS_PER_RULE",
    "Flagged",
    "Problem",
    "QuestionCheck",
    "Submission",
    "SubmissionInvalid",
    "ValidationReport",
    "check_question",
    "load_submission",
    "scan_for_injection",
    "submission_hash",
    "single_file_text",
    "validate_submission",
    "write_single_file",
    "write_submission",
]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024  # 1,434 instances x 5 RQs of 600 chars is about 5 MB
MAX_RQ_ID_CHARS = 200
METADATA_FILE = "metadata.json"
ENTRIES_FILE = "submission.jsonl"
ENTRY_FIELDS = ("rq_id", "research_questions", "gaps", "failure")


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


# --------------------------------------------------------------------------
# the checks
# --------------------------------------------------------------------------


def _check_metadata(line: JsonLine, out: Collector) -> SubmissionMetadata | None:
    try:
        return SubmissionMetadata.model_validate(line.data)
    except ValidationError as exc:
        pydantic_problems(exc, out, line, None)
        return None


def _screen_question(
    text: str,
    line: JsonLine,
    out: Collector,
    field: str,
    rq_id: str | None,
    injection: str,
    held: Sequence[wellformed.Failure] = (),
) -> None:
    """Run the manipulation screen on one RQ: blocking hits are errors unless flagging, the rest warnings.

    ``held`` are the gate's failures that go to review: the RQ is listed for review with them too.
    """
    findings = screen(text)
    if not findings and not held:
        return
    blocking = any(f.blocks for f in findings)
    for f in findings:
        hard = f.blocks and injection == "reject"
        prefix = "looks like judge manipulation" if hard else "flagged for review"
        out.add(
            "injection",
            f"{prefix}: {f.reason} (at {f.excerpt!r})",
            line.file,
            line.number,
            field,
            rq_id,
            severity="error" if hard else "warning",
        )
    reasons = [f.reason for f in findings] + [f"{f.rule.value}: {f.message}" for f in held]
    rules = [f.rule for f in findings] + [f"gate:{f.rule.value}" for f in held]
    out.flag(
        Flagged(
            file=line.file,
            line=line.number,
            field=field,
            rq_id=shown(rq_id),
            reasons=reasons,
            rules=rules,
            blocking=blocking,
        )
    )


# The gate's rule names as problem codes, ``rq_<rule>``; not_a_question keeps the code it had before the gate.
_RQ_CODES = {"not_a_question": "rq_not_question"}


def _check_questions(qs: Any, line: JsonLine, out: Collector, rq_id: str | None, injection: str | None) -> bool:
    """Every rule on the five RQs (the gate and the screen too, unless ``injection`` is None: a line never judged).

    True when they are all fine.
    """
    before = out.n_errors
    if not isinstance(qs, list):
        out.add(
            "rqs",
            f"must be a list of five strings, got {type(qs).__name__}",
            line.file,
            line.number,
            "research_questions",
            rq_id,
        )
        return False
    if len(qs) != 5:
        out.add(
            "rq_count",
            f"has {len(qs)} research questions, expected exactly 5",
            line.file,
            line.number,
            "research_questions",
            rq_id,
        )
    seen: dict[str, int] = {}
    for i, q in enumerate(qs[:5]):
        field = f"research_questions[{i}]"
        if not isinstance(q, str):
            out.add("rq_type", f"must be a string, got {type(q).__name__}", line.file, line.number, field, rq_id)
            continue
        text = q.strip()
        if not text:
            out.add("rq_empty", "research question is empty", line.file, line.number, field, rq_id)
            continue
        if len(text) > MAX_RQ_CHARS:
            out.add(
                "rq_length",
                f"{len(text)} characters, over the limit of {MAX_RQ_CHARS}",
                line.file,
                line.number,
                field,
                rq_id,
            )
            continue  # the screen reads questions of a question's length
        if injection is not None:  # a line that will be judged (the others are refused by their rq_id)
            _judge_question(text, line, out, field, rq_id, injection)
        norm = wellformed.normalize_for_duplicates(text)
        if norm in seen:
            out.add(
                "rq_repeated",
                f"repeats research_questions[{seen[norm]}] but for case, spacing, quotes or end "
                "punctuation (the gate's duplicate rule)",
                line.file,
                line.number,
                field,
                rq_id,
            )
        else:
            seen[norm] = i
    return out.n_errors == before


def _judge_question(text: str, line: JsonLine, out: Collector, field: str, rq_id: str | None, injection: str) -> None:
    """The gate (its submitted standard) and the screen on one RQ that will be judged: errors, warnings, a review."""
    held: list[wellformed.Failure] = []
    for failure in wellformed.check(text, wellformed.Kind.research_question, wellformed.Standard.submitted):
        rule = failure.rule.value
        if failure.refuses:
            out.add(
                _RQ_CODES.get(rule, f"rq_{rule}"),
                f"not a well-formed research question (rule {rule}): {failure.message}",
                line.file,
                line.number,
                field,
                rq_id,
            )
        else:
            held.append(failure)
            out.add(
                _RQ_CODES.get(rule, f"rq_{rule}"),
                f"flagged for review (rule {rule}): {failure.message}",
                line.file,
                line.number,
                field,
                rq_id,
                severity="warning",
            )
    _screen_question(text, line, out, field, rq_id, injection, held)


@dataclass(frozen=True)
class QuestionCheck:
    """What ``rqbench validate`` says about one research question of a line that will be judged."""

    problems: list[Problem]
    flagged: Flagged | None

    @property
    def outcome(self) -> Literal["rejected", "review", "accepted"]:
        """rejected: an error; review: accepted but held for a maintainer (warnings, a review entry); else accepted."""
        if any(p.severity == "error" for p in self.problems):
            return "rejected"
        return "review" if self.problems or self.flagged else "accepted"


def check_question(text: str, injection: Literal["reject", "flag"] = "reject") -> QuestionCheck:
    """The checks ``validate_submission`` runs on one RQ of a line that will be judged, for that RQ alone."""
    out = Collector(per_rule=10**6)
    _judge_question(text.strip(), JsonLine("<question>", 1, None), out, "research_question", None, injection)
    return QuestionCheck(problems=out.problems, flagged=out.flagged[0] if out.flagged else None)


_RQ_ID_BAD = re.compile(r"[\x00-\x20\x7f-\x9f\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]")


def _check_rq_id(rq_id: Any, line: JsonLine, out: Collector) -> str | None:
    """The rq_id when it is a plausible id; else None with the problem recorded."""
    if not isinstance(rq_id, str) or not rq_id.strip():
        out.add("rq_id", "missing or not a non-empty string", line.file, line.number, "rq_id")
        return None
    if len(rq_id) > MAX_RQ_ID_CHARS:
        out.add(
            "rq_id",
            f"is {len(rq_id)} characters long; rq_ids look like 2501.00001_rq0",
            line.file,
            line.number,
            "rq_id",
            rq_id,
        )
        return None
    bad = _RQ_ID_BAD.search(rq_id)
    if bad:
        out.add(
            "rq_id",
            f"holds whitespace or an invisible character (U+{ord(bad.group(0)):04X}); rq_ids look like 2501.00001_rq0",
            line.file,
            line.number,
            "rq_id",
            rq_id,
        )
        return None
    return rq_id


def _check_entry(line: JsonLine, out: Collector, injection: str | None) -> SubmissionEntry | None:
    d = line.data
    before = out.n_errors
    rq_id = _check_rq_id(d.get("rq_id"), line, out)
    ok = rq_id is not None
    failure = d.get("failure")
    if failure is not None:
        if not isinstance(failure, str):
            out.add("field", "must be a string (the failure reason) or null", line.file, line.number, "failure", rq_id)
            ok = False
        elif d.get("research_questions"):
            out.add(
                "field",
                "a failed entry carries no research_questions",
                line.file,
                line.number,
                "research_questions",
                rq_id,
            )
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
    elif injection is not None:  # a line that will be judged: its gaps are notes, never judged, so only warned about
        for i, gap in enumerate(gaps):
            for failure in wellformed.check(gap, wellformed.Kind.gap):
                rule = failure.rule.value
                out.add(
                    f"gap_{rule}",
                    f"not a well-formed gap (rule {rule}): {failure.message}",
                    line.file,
                    line.number,
                    f"gaps[{i}]",
                    rq_id,
                    severity="warning",
                )
    try:  # the gate is applied above, per RQ with its code, and only to a line that will be judged
        entry = SubmissionEntry.model_validate(d, context=WELLFORMED_PER_ITEM)
    except ValidationError as exc:
        pydantic_problems(exc, out, line, rq_id, skip=ENTRY_FIELDS)
        if out.n_errors == before:
            out.add("field", "; ".join(e["msg"] for e in exc.errors()), line.file, line.number, None, rq_id)
        return None
    return entry if ok else None


def _read_metadata_file(meta_path: Path, out: Collector, max_bytes: int) -> list[JsonLine]:
    """metadata.json of the folder layout, read under the same rules as a JSONL line."""
    raw = read_file(meta_path, out, max_bytes)
    if raw is None:
        return []
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        out.refuse(str(meta_path), 1, "json", f"{METADATA_FILE} is empty; it must hold one JSON object")
        return []
    line = decode_line(raw.strip(b"\r\n\t "), str(meta_path), 1, out)
    return [line] if line is not None else []


def _gather_lines(path: Path, out: Collector, max_bytes: int) -> tuple[list[JsonLine], list[JsonLine]]:
    """(metadata lines, entry lines) of a folder or a single JSONL file."""
    if path.is_dir():
        meta_path, entries_path = path / METADATA_FILE, path / ENTRIES_FILE
        metas: list[JsonLine] = []
        if not meta_path.exists() and not meta_path.is_symlink():
            out.add("metadata", f"the folder has no {METADATA_FILE}", str(path))
        else:
            metas = _read_metadata_file(meta_path, out, max_bytes)
        if not entries_path.exists() and not entries_path.is_symlink():
            out.add("entries", f"the folder has no {ENTRIES_FILE}", str(path))
            return metas, []
        lines = json_lines(entries_path, out, max_bytes)
        for ln in lines:
            if ln.data.get("kind") == "metadata":
                out.add("metadata", f"metadata belongs in {METADATA_FILE}, not in the entry lines", ln.file, ln.number)
        return metas, [ln for ln in lines if ln.data.get("kind") != "metadata"]
    if not path.exists() and not path.is_symlink():
        out.add("missing", "no such file or folder", str(path))
        return [], []
    if path.name == METADATA_FILE:  # one half of the folder form, read as if it were the single-file form
        out.add(
            "metadata",
            f"this is the {METADATA_FILE} of a submission folder; give the folder ({path.parent}), "
            f"which holds it and {ENTRIES_FILE}, or the single-file form",
            str(path),
        )
        return [], []
    lines = json_lines(path, out, max_bytes)
    metas = [ln for ln in lines if ln.data.get("kind") == "metadata"]
    if not metas and lines and lines[0].number == 1 and _looks_like_metadata(lines[0].data):
        first = lines[0]
        kind = first.data.get("kind")
        said = "has no" if kind is None else f'has "kind": {shown(json.dumps(kind), 40)} instead of'
        out.add(
            "metadata",
            f'line 1 looks like the metadata record but {said} "kind": "metadata"; add it (the '
            "single-file form's first line is the metadata record, marked by that field)",
            first.file,
            1,
            "kind",
        )
        first.data = {**first.data, "kind": "metadata"}  # its other fields are still checked as metadata
        metas = [first]
    entries = [ln for ln in lines if ln.data.get("kind") != "metadata"]
    if not metas and out.first_refused.get(str(path)) == 1:
        out.add("metadata", "no usable metadata record: line 1 could not be read (its problem is listed)", str(path), 1)
    elif not metas and lines:
        beside = path.parent / METADATA_FILE
        folder = (
            f"; this file sits beside {METADATA_FILE}: give the folder ({path.parent}) instead"
            if path.name == ENTRIES_FILE and beside.is_file()
            else ""
        )
        out.add("metadata", f'no metadata record (a first line with "kind": "metadata"){folder}', str(path), 1)
    elif metas and lines and metas[0] is not lines[0]:
        out.add("metadata", "the metadata record must be the first line", metas[0].file, metas[0].number)
    return metas, entries


_METADATA_ONLY_FIELDS = frozenset(SubmissionMetadata.model_fields) - {"kind"} - set(ENTRY_FIELDS)


def _looks_like_metadata(data: dict[str, Any]) -> bool:
    """A line meant as the metadata record: no entry field, and a field only metadata has (model, provider...)."""
    return not any(k in data for k in ENTRY_FIELDS) and any(k in _METADATA_ONLY_FIELDS for k in data)


def validate_submission(
    path: str | Path,
    expected_rq_ids: Iterable[str] | None,
    *,
    allow_partial: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    injection: Literal["reject", "flag"] = "reject",
    max_problems_per_rule: int = DEFAULT_MAX_PROBLEMS_PER_RULE,
    time_budget_s: float | None = None,
    partial_remedy: str = PARTIAL_REMEDY_FLAG,
    judged_rq_ids: Iterable[str] | None = None,
) -> ValidationReport:
    """Check a submission folder or file against the dataset's rq_ids; every problem, in one pass.

    Linear in the input: each line is decoded and checked once, and each rule
    keeps its first ``max_problems_per_rule`` problems and counts the rest.
    Lines whose rq_id is unknown or repeated are rejected as such and their RQs
    are not screened (they will never be judged). With ``time_budget_s`` (a
    request handler's bound), checking stops at the first entry line past the
    budget with a ``time_budget`` error naming that line. ``partial_remedy`` is what a
    refused partial submission's problems say to do, worded for where they are read
    (the command line's flag by default; the Space names its checkbox).

    ``judged_rq_ids`` are the rq_ids a trial judges (the revision's first N, ``--limit N``;
    default: all of ``expected_rq_ids``). Every line is checked against the whole revision as
    always, but only a judged rq_id that is missing or failed makes the submission partial:
    the rest are not in the trial, and nothing is said about them.
    """
    path = Path(path)
    deadline = None if time_budget_s is None else time.monotonic() + time_budget_s
    out = Collector(max_problems_per_rule)
    metas, entry_lines = _gather_lines(path, out, max_bytes)
    metadata = None
    for i, ln in enumerate(metas):
        if i:
            out.add(
                "metadata", f"a second metadata record (the first is on line {metas[0].number})", ln.file, ln.number
            )
            continue
        metadata = _check_metadata(ln, out)
    expected = list(dict.fromkeys(expected_rq_ids)) if expected_rq_ids is not None else None
    known = set(expected) if expected is not None else None
    judged = expected if judged_rq_ids is None or expected is None else list(dict.fromkeys(judged_rq_ids))
    in_trial = set(judged) if judged is not None else None
    trial = len(judged) if judged is not None and expected is not None and len(judged) < len(expected) else None
    first_line: dict[str, int] = {}
    entries: list[SubmissionEntry] = []
    stopped = False
    for ln in entry_lines:
        if deadline is not None and time.monotonic() > deadline:
            out.add(
                "time_budget",
                f"validation stopped here: it took longer than {time_budget_s:g} s, so the file was "
                "not checked to the end",
                ln.file,
                ln.number,
            )
            stopped = True
            break
        raw_id = ln.data.get("rq_id")
        rq_id = raw_id if isinstance(raw_id, str) else None
        screened = rq_id is not None and rq_id not in first_line and (known is None or rq_id in known)
        entry = _check_entry(ln, out, injection if screened else None)
        if rq_id is None:
            continue
        if rq_id in first_line:
            out.add(
                "duplicate",
                f"duplicate line for this rq_id (first on line {first_line[rq_id]})",
                ln.file,
                ln.number,
                "rq_id",
                rq_id,
            )
            continue
        first_line[rq_id] = ln.number
        if known is not None and rq_id not in known:
            out.add("unknown_rq_id", "not an rq_id of this dataset revision", ln.file, ln.number, "rq_id", rq_id)
            continue
        if entry is not None:
            entries.append(entry)
    partial_severity: Literal["error", "warning"] = "warning" if allow_partial else "error"
    hint = "" if allow_partial else f" ({partial_remedy})"
    failed = [e for e in entries if e.failure is not None]
    for e in failed if in_trial is None else [e for e in failed if e.rq_id in in_trial]:
        out.add(
            "generation_failed",
            f"generation failed: {e.failure}{hint}",
            str(path),
            first_line[e.rq_id],
            "failure",
            e.rq_id,
            severity=partial_severity,
        )
    # lines past the stop were not read, and with no entry line read at all a listed problem already says why:
    # say nothing about the rq_ids they would have held
    if judged is not None and not stopped and (entry_lines or not out.n_errors):
        for rq_id in judged:
            if rq_id not in first_line:
                out.add(
                    "missing_rq_id",
                    f"no line for this rq_id{hint}",
                    str(path),
                    None,
                    "rq_id",
                    rq_id,
                    severity=partial_severity,
                )
    if metadata is None and not out.has("metadata") and not out.n_errors:
        out.add("metadata", "no metadata record", str(path))
    out.summarize(str(path))
    report = ValidationReport(
        path=str(path),
        problems=out.problems,
        suppressed=out.suppressed,
        error_count=out.n_errors,
        warning_count=out.n_warnings,
        flagged=out.flagged,
        flagged_count=out.n_flagged,
        metadata=metadata,
        entries=entries,
        expected=len(expected) if expected is not None else None,
        covered=sum(1 for e in entries if e.failure is None),
        failed=len(failed),
        trial=trial,
        trial_covered=None if trial is None else sum(1 for e in entries if e.failure is None and e.rq_id in in_trial),
        allow_partial=allow_partial,
    )
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
    judged_rq_ids: Iterable[str] | None = None,
) -> Submission:
    """A validated submission, or ``SubmissionInvalid`` carrying the full report (``judged_rq_ids``: a trial's,
    as ``validate_submission`` takes them)."""
    report = validate_submission(
        path,
        expected_rq_ids,
        allow_partial=allow_partial,
        max_bytes=max_bytes,
        injection=injection,
        judged_rq_ids=judged_rq_ids,
    )
    if not report.ok or report.metadata is None or report.submission_hash is None:
        raise SubmissionInvalid(report)
    return Submission(Path(path), report.metadata, {e.rq_id: e for e in report.entries}, report.submission_hash, report)


def single_file_text(metadata: SubmissionMetadata, entries: Iterable[SubmissionEntry]) -> str:
    """The single-file form of a submission: the metadata record (``"kind": "metadata"``) on line 1, then one
    entry per line. Packing a folder this way keeps its submission hash, which is computed from the records."""
    lines = [metadata.model_dump_json()] + [e.model_dump_json() for e in entries]
    return "\n".join(lines) + "\n"


def write_single_file(path: str | Path, metadata: SubmissionMetadata, entries: Iterable[SubmissionEntry]) -> Path:
    """Write the single-file form (what the Space takes) atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, single_file_text(metadata, entries))
    return path


def write_submission(folder: str | Path, metadata: SubmissionMetadata, entries: Iterable[SubmissionEntry]) -> Path:
    """Write the folder layout (metadata.json + submission.jsonl), each file atomically."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / METADATA_FILE, metadata.model_dump_json(indent=2) + "\n")
    lines = [e.model_dump_json(exclude_defaults=False) for e in entries]
    write_atomic(folder / ENTRIES_FILE, "\n".join(lines) + ("\n" if lines else ""))
    return folder
