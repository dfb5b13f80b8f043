"""What validating a submission reports: each problem with its file, line and field, the RQs flagged for review,
and the collector that keeps a few problems per rule and counts the rest, so the report grows linearly with the input.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rqbench.records import SubmissionEntry, SubmissionMetadata

DEFAULT_MAX_PROBLEMS_PER_RULE = 20
MAX_SHOWN_CHARS = 120  # of an rq_id or field name quoted back in a problem

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ud800-\udfff]")


def shown(text: str | None, limit: int = MAX_SHOWN_CHARS) -> str | None:
    """Text from the input made safe to print: escapes for controls, bidi marks and surrogates, and cut."""
    if text is None:
        return None
    cut = text[:limit]
    safe = _UNPRINTABLE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), cut)
    if not safe.isprintable():
        safe = cut.encode("unicode_escape").decode("ascii")
    return safe + ("..." if len(text) > limit else "")


MAX_FLAGGED_LISTED = 200
# How a partial submission is allowed where the report is read: a command-line flag here, a checkbox on the Space.
PARTIAL_REMEDY_FLAG = "a partial submission needs --allow-partial"


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


class Flagged(BaseModel):
    """One RQ the manipulation screen flagged, for a reviewer: where it is and every reason."""

    model_config = ConfigDict(extra="forbid")

    file: str
    line: int
    field: str
    rq_id: str | None = None
    reasons: list[str]
    rules: list[str]
    blocking: bool = Field(description="True when a reason is one that rejects the submission by default.")

    def __str__(self) -> str:
        ident = f" (rq_id {self.rq_id})" if self.rq_id else ""
        return f"flagged: {self.file}:{self.line} [{self.field}]{ident}: {'; '.join(self.reasons)}"


class ValidationReport(BaseModel):
    """Everything validation found, plus what parsed cleanly and the coverage.

    ``problems`` keeps the first ``max_problems_per_rule`` problems of each rule
    (code); ``suppressed`` counts the rest per code, and ``error_count`` and
    ``warning_count`` count all of them.
    """

    path: str
    problems: list[Problem] = Field(default_factory=list)
    suppressed: dict[str, int] = Field(default_factory=dict, description="Problems per code not listed.")
    error_count: int = 0
    warning_count: int = 0
    flagged: list[Flagged] = Field(default_factory=list, description="RQs the manipulation screen flagged.")
    flagged_count: int = Field(default=0, description="All flagged RQs (flagged lists the first 200).")
    metadata: SubmissionMetadata | None = None
    entries: list[SubmissionEntry] = Field(default_factory=list)
    expected: int | None = Field(default=None, description="Instances in the dataset (None: not checked).")
    covered: int = Field(default=0, description="Expected rq_ids with five valid RQs.")
    failed: int = Field(default=0, description="Entries that record a generation failure.")
    trial: int | None = Field(
        default=None,
        description="A trial's instances (the revision's first N, --limit N): "
        "only they must be present; None when every rq_id of the revision is judged.",
    )
    trial_covered: int | None = Field(default=None, description="The trial's rq_ids with five valid RQs.")
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
        return not self.errors and not self.error_count

    @property
    def coverage(self) -> float | None:
        return None if not self.expected else self.covered / self.expected

    def summary(self) -> str:
        cov = "" if self.expected is None else f", coverage {self.covered}/{self.expected} ({self.coverage:.1%})"
        verdict = "valid" if self.ok else "INVALID"
        errors = max(self.error_count, len(self.errors))
        warnings = max(self.warning_count, len(self.warnings))
        flagged = f", {self.flagged_count} RQ(s) flagged for review" if self.flagged_count else ""
        trial = (
            f", trial of the first {self.trial}: {self.trial_covered}/{self.trial} with five RQs"
            if self.trial is not None
            else ""
        )
        return (
            f"{self.path}: {verdict}: {errors} error(s), {warnings} warning(s), "
            f"{len(self.entries)} entries{cov}{trial}{flagged}"
            + (f", hash {self.submission_hash}" if self.submission_hash else "")
        )


class SubmissionInvalid(ValueError):
    """Raised by ``load_submission`` with the full report."""

    def __init__(self, report: ValidationReport):
        shown = "\n".join(str(p) for p in report.errors[:20])
        total = max(report.error_count, len(report.errors))
        more = f"\n... and {total - min(20, len(report.errors))} more" if total > 20 else ""
        super().__init__(f"{report.summary()}\n{shown}{more}")
        self.report = report


class Collector:
    """Problems as they are found: at most ``per_rule`` kept per code and severity, the rest counted; flagged RQs.

    The cap is per severity too, so warnings of a rule never hide its errors.
    """

    def __init__(self, per_rule: int = DEFAULT_MAX_PROBLEMS_PER_RULE) -> None:
        if per_rule < 1:
            raise ValueError(f"max_problems_per_rule must be at least 1, got {per_rule}")
        self.per_rule = per_rule
        self.problems: list[Problem] = []
        self.kept: Counter[tuple[str, str]] = Counter()  # (code, severity) -> problems listed
        self.hidden: Counter[tuple[str, str]] = Counter()  # (code, severity) -> problems counted, not listed
        self.n_errors = 0
        self.n_warnings = 0
        self.flagged: list[Flagged] = []
        self.n_flagged = 0
        self.first_refused: dict[str, int] = {}  # file -> its first line that could not be read

    def refuse(self, file: str, line: int, code: str, message: str) -> None:
        """A line that cannot be read at all (size, bytes, JSON): the problem, and the line remembered."""
        self.first_refused.setdefault(file, line)
        self.add(code, message, file, line)

    def add(
        self,
        code: str,
        message: str,
        file: str,
        line: int | None = None,
        field: str | None = None,
        rq_id: str | None = None,
        severity: Literal["error", "warning"] = "error",
    ) -> None:
        if severity == "error":
            self.n_errors += 1
        else:
            self.n_warnings += 1
        key = (code, severity)
        if self.kept[key] >= self.per_rule:
            self.hidden[key] += 1
            return
        self.kept[key] += 1
        self.problems.append(
            Problem(
                severity=severity,
                code=code,
                message=shown(message, 1000) or "",
                file=file,
                line=line,
                field=shown(field),
                rq_id=shown(rq_id),
            )
        )

    def flag(self, item: Flagged) -> None:
        self.n_flagged += 1
        if len(self.flagged) < MAX_FLAGGED_LISTED:
            self.flagged.append(item)

    @property
    def suppressed(self) -> dict[str, int]:
        """Problems counted but not listed, per code."""
        out: Counter[str] = Counter()
        for (code, _), n in self.hidden.items():
            out[code] += n
        return dict(out)

    def has(self, code: str) -> bool:
        return any(k == code for k, _ in self.kept)

    def summarize(self, path: str) -> None:
        """One closing problem per rule and severity that was cut, saying how many more there were."""
        for (code, severity), n in sorted(self.hidden.items()):
            self.problems.append(
                Problem(
                    severity=severity,
                    code=code,
                    file=path,
                    message=f"... and {n} more problem(s) of this kind, not listed (the first "
                    f"{self.per_rule} are; max_problems_per_rule / --max-problems "
                    "raises the limit)",
                )
            )
