"""The upload flow: checks in order, every problem listed, then a pending request (or one held for review).

Order: sign-in (on the Hub), a name that can be stored, an attempts limit, file
type, size cap, account age, the submission validator (every problem with its
line and field, within a time budget), one accepted submission per user per 24
hours, then duplicates by content hash (anyone's) and by model name: a model
name belongs to the account that first submitted it (another account needs a
distinct name), and the owner may reuse it only once the earlier request failed.

Identity: on the Hub the user is the signed-in account, so the daily limit and
name ownership hold per account. Offline there is no sign-in: the user is the
name typed in the form, unverified, so anyone can type another name and get
around both; the Submit tab says so.

Both forms of a submission are accepted: the single file (the metadata record
on line 1, then the entries), or a submission folder's two files uploaded
together (``metadata.json`` and ``submission.jsonl``, what ``rqbench generate``
writes), which are checked as the folder they came from and stored packed into
the single-file form. Problems are worded for the page: a partial submission
names the "Allow a partial submission" box, not a command-line flag.

A submission whose RQs the manipulation screen flagged (``report.flagged``: a
claim, markup, another language) is queued with status ``review`` and the
reasons; the worker leaves it until a maintainer approves it
(``rqbench worker --approve ID``) or rejects it (``--reject ID``).

The raw upload goes to the private submissions store; the request, also
private, keeps the metadata (the contact included) and what the worker needs.
Scores are never read from an upload: the worker recomputes them.
"""

from __future__ import annotations

import logging
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rqbench.evaluate.generate.submission_files import ENTRIES_FILE, METADATA_FILE
from rqbench.records import SubmissionMetadata, dataset_label
from rqbench.space.records import SubmissionRequest, utcnow
from rqbench.space.safety import AttemptLimiter, confusable_key, name_problem, printable, redact
from rqbench.space.stores import SpaceStores

log = logging.getLogger(__name__)

ALLOWED_SUFFIXES = (".jsonl", ".json")
# The page's checkbox, named by every problem a refused partial submission gets there.
PARTIAL_BOX = "Allow a partial submission"
PARTIAL_REMEDY_PAGE = f'a partial submission needs the "{PARTIAL_BOX}" box ticked'
FOLDER_FILES = (METADATA_FILE, ENTRIES_FILE)  # a submission folder's two files


@dataclass(frozen=True)
class SubmitPolicy:
    """The Space's limits; the Hub deployment sets ``require_sign_in``."""

    max_bytes: int = 8 * 1024 * 1024
    min_account_age_days: int = 7
    per_user_per_day: int = 1
    require_sign_in: bool = False
    allow_partial: bool = False
    attempts_per_hour: int = 20
    # Validation is linear: the slowest hostile upload measured (1,434 lines of five 590-character attack
    # wordings, every RQ screened) took 4.6 s of CPU (docs/space.md). The budget stops a slower run.
    validation_budget_s: float = 60.0
    max_name_chars: int = 80
    # Hub model ids run to 96 characters a part; a longer name pushes the queue's columns off the page.
    max_model_name_chars: int = 100


@dataclass(frozen=True)
class Submitter:
    """Who uploads: a Hub user (signed in) or the local name offline."""

    username: str
    signed_in: bool = False
    account_created: datetime | None = None


@dataclass(frozen=True)
class BenchmarkTarget:
    """The dataset revision submissions are checked against."""

    repo: str  # where the worker reads it again (a path or a Hub id): kept in the request, never shown on a page
    revision: str
    rq_ids: tuple[str, ...]
    name: str = ""  # its public name (a Hub id, local/<folder>, build/<folder>); the repo when not given
    version: str | None = None  # the release's tag, where it has one

    @property
    def label(self) -> str:
        """How pages name it: ``local/rq-bench-sample@v0.1.0 (6460bbe8731c)``, never a path on the host's disk."""
        return dataset_label(self.name or self.repo, self.revision, self.version)


@dataclass(frozen=True)
class Upload:
    """What was uploaded, as one submission: the single file, or a folder's two files gathered into a folder."""

    path: Path
    folder_form: bool


def gather_upload(files: Sequence[Path], work: Path) -> tuple[Upload | None, list[str]]:
    """One file is the single-file form; two are a submission folder's ``metadata.json`` and ``submission.jsonl``,
    copied into ``work`` under those names so the validator reads them as the folder. Anything else: why not.
    A single file is copied into ``work`` too, so the validator sees nothing the uploader did not send."""
    names = [f.name for f in files]
    meta_name, entries_name = FOLDER_FILES
    work.mkdir(parents=True, exist_ok=True)
    if len(files) == 1:
        if names[0] == meta_name:
            return None, [
                f"{meta_name} is half of a submission folder: upload it together with {entries_name} "
                "(select both files), or upload the single-file form"
            ]
        shutil.copyfile(files[0], work / names[0])
        return Upload(work / names[0], folder_form=False), []
    if len(files) == 2:
        metas = [f for f in files if f.name == meta_name] or [f for f in files if f.suffix.lower() == ".json"]
        entries = [f for f in files if f not in metas]
        if len(metas) == 1 and len(entries) == 1:
            shutil.copyfile(metas[0], work / meta_name)
            shutil.copyfile(entries[0], work / entries_name)
            return Upload(work, folder_form=True), []
    return None, [
        f"{len(files)} files uploaded ({', '.join(names)}); upload one file (the single-file form) or a "
        f"submission folder's two files together ({meta_name} and {entries_name})"
    ]


def upload_paths(upload: str | Path | Sequence[str | Path] | None) -> list[Path]:
    """The page's upload (one path, a list of them, or nothing) as a list of paths."""
    if upload is None:
        return []
    if isinstance(upload, (str, Path)):
        return [Path(upload)]
    return [Path(p) for p in upload]


@dataclass
class SubmitOutcome:
    accepted: bool
    errors: list[str] = field(default_factory=list)
    request: SubmissionRequest | None = None
    warnings: list[str] = field(default_factory=list)

    def message(self) -> str:
        """What the submitter reads: always plain text a page can carry (no lone surrogates)."""
        if self.accepted and self.request is not None:
            r = self.request
            if r.status == "review":
                text = (
                    f"Held for review: request {r.request_id} for {r.metadata.model} ({r.instances} instances). "
                    f"The manipulation screen flagged {r.flagged_count} research question(s); a maintainer "
                    "reviews them before anything is judged or published."
                )
            else:
                partial = ", a partial submission: its coverage is shown beside every score" if r.partial else ""
                text = (
                    f"Queued: request {r.request_id} for {r.metadata.model} ({r.instances} instances{partial}), "
                    f"status {r.status}. The worker recomputes every score."
                )
            if self.warnings:
                text += f"\nWarnings ({len(self.warnings)}):\n" + "\n".join(f"- {w}" for w in self.warnings)
            return printable(text)
        return printable(f"Rejected ({len(self.errors)} problem(s)):\n" + "\n".join(f"- {e}" for e in self.errors))

    def summary(self) -> dict[str, Any]:
        """The outcome as data, for a client of the Space's API (``rqbench submit --space``): the same text as the
        page's, plus the request id and status to follow."""
        r = self.request if self.accepted else None
        return {
            "accepted": self.accepted,
            "request_id": r.request_id if r else None,
            "status": r.status if r else None,
            "model": printable(r.metadata.model) if r else None,
            "instances": r.instances if r else None,
            "errors": [printable(e) for e in self.errors],
            "warnings": [printable(w) for w in self.warnings],
            "message": self.message(),
        }


def account_created_at(api: Any, username: str) -> datetime | None:
    """When a Hub account was made, from the user overview (``createdAt``); None if the Hub does not say."""
    user = api.get_user_overview(username)
    raw = getattr(user, "createdAt", None) or getattr(user, "created_at", None)
    if raw is None:
        return None
    if not isinstance(raw, datetime):
        raw = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    return raw if raw.tzinfo else raw.replace(tzinfo=timezone.utc)


def _problem_line(p: Any, *, name_file: bool = False) -> str:
    """``line N, field F (rq_id R): message``: the upload's temporary path means nothing to the uploader, but
    with two files uploaded (``name_file``) the file's own name says which of them the line is in."""
    where = []
    if name_file and getattr(p, "file", None) and Path(p.file).name in FOLDER_FILES:
        where.append(Path(p.file).name)
    if getattr(p, "line", None) is not None:
        where.append(f"line {p.line}")
    if getattr(p, "field", None):
        where.append(f"field {p.field}")
    if getattr(p, "rq_id", None):
        where.append(f"rq_id {p.rq_id}")
    prefix = ", ".join(where)
    return f"{prefix}: {p.message}" if prefix else str(p.message)


def _flag_line(f: Any) -> str:
    """``line N, field F (rq_id R): reasons`` for one flagged RQ (no file path: the upload's is temporary)."""
    where = [f"line {f.line}", f"field {f.field}"] + ([f"rq_id {f.rq_id}"] if f.rq_id else [])
    return f"{', '.join(where)}: {'; '.join(f.reasons)}"


MAX_FLAGS_KEPT = 20


def model_key(name: str) -> str:
    """The form under which two model names are the same name: folded by Unicode's confusables table and
    case (``safety.confusable_key``: Cyrillic 'А' reads as 'A', 'Mode1' as 'Model'), and every run of
    characters other than letters and digits read as one space ("Org/Model-X" = "org model x")."""
    folded = confusable_key(name)
    return " ".join(re.split(r"[\W_]+", folded)).strip() or folded.strip()


def _validation_lines(report: Any, *, name_file: bool = False) -> list[str]:
    """One line per validation error (warnings do not block a submission)."""
    return [_problem_line(p, name_file=name_file) for p in report.errors]


Validator = Callable[..., Any]


def _default_validator(
    path: Path,
    expected: Sequence[str],
    *,
    allow_partial: bool,
    max_bytes: int,
    time_budget_s: float | None = None,
    partial_remedy: str = PARTIAL_REMEDY_PAGE,
) -> Any:
    from rqbench.evaluate.generate.submission_files import validate_submission

    return validate_submission(
        path,
        list(expected),
        allow_partial=allow_partial,
        max_bytes=max_bytes,
        time_budget_s=time_budget_s,
        partial_remedy=partial_remedy,
    )


def _stored_bytes(upload: Upload, report: Any) -> bytes:
    """What goes to the submissions store: the single file as uploaded, a folder packed into the single-file form
    (the form the worker reads; packing keeps the submission hash)."""
    if not upload.folder_form:
        return upload.path.read_bytes()
    from rqbench.evaluate.generate.submission_files import single_file_text

    return single_file_text(report.metadata, report.entries).encode("utf-8")


class SubmitFlow:
    """Turns an uploaded file into a pending request, or a list of every reason it cannot be one."""

    def __init__(
        self,
        stores: SpaceStores,
        target: BenchmarkTarget,
        policy: SubmitPolicy = SubmitPolicy(),
        *,
        validator: Validator = _default_validator,
        clock: Callable[[], datetime] = utcnow,
    ):
        self.stores, self.target, self.policy = stores, target, policy
        self.validator = validator
        self.clock = clock
        self.attempts = AttemptLimiter(policy.attempts_per_hour, 3600.0)

    # -- the checks, each returning its problems ------------------------------
    def _file_problems(self, path: Path) -> list[str]:
        if path.suffix.lower() not in ALLOWED_SUFFIXES:
            return [f"file type {path.suffix or '(none)'!r} not accepted; upload a .jsonl file (or .json lines)"]
        size = path.stat().st_size
        if size > self.policy.max_bytes:
            return [f"file is {size:,} bytes, over the limit of {self.policy.max_bytes:,}"]
        if size == 0:
            return ["file is empty"]
        with path.open("rb") as fh:
            head = fh.read(64 * 1024)
        if b"\x00" in head:
            return ["file is binary (it contains NUL bytes); upload UTF-8 JSON Lines"]
        return []

    def _name_problems(self, who: Submitter) -> list[str]:
        """The user name is stored and shown: it must be plain text of a sensible length."""
        if not who.username.strip():
            return ["type a name first"]
        why = name_problem(who.username, what="name you typed", max_chars=self.policy.max_name_chars)
        return [why] if why else []

    def _account_problems(self, who: Submitter, now: datetime) -> list[str]:
        if not self.policy.require_sign_in:
            return []
        if not who.signed_in:
            return ["sign in with Hugging Face to submit"]
        if who.account_created is None:
            return ["could not confirm the age of your Hugging Face account; try again later"]
        age = now - who.account_created
        if age < timedelta(days=self.policy.min_account_age_days):
            days = self.policy.min_account_age_days
            return [f"accounts must be at least {days} days old to submit (yours is {age.days} days old)"]
        return []

    def _queue_problems(self, who: Submitter, meta: SubmissionMetadata, digest: str, now: datetime) -> list[str]:
        problems = []
        mine = [r for r in self.stores.requests.all() if r.user == who.username]
        recent = [r for r in mine if now - r.submitted_at < timedelta(days=1)]
        if len(recent) >= self.policy.per_user_per_day:
            nxt = min(r.submitted_at for r in recent) + timedelta(days=1)
            per = "per Hugging Face account" if self.policy.require_sign_in else "per typed name, unverified offline"
            problems.append(
                f"limit of {self.policy.per_user_per_day} submission(s) per user per day reached ({per}); "
                f"next one from {nxt:%Y-%m-%d %H:%M} UTC"
            )
        everyone = self.stores.requests.all()  # oldest first
        for r in everyone:
            if r.submission_hash == digest:
                problems.append(f"this exact file was already submitted (request {r.request_id}, status {r.status})")
                break
        key = model_key(meta.model)
        owner = next((r for r in everyone if model_key(r.metadata.model) == key), None)
        if owner is not None and owner.user != who.username:
            problems.append(
                f"model name {meta.model!r} belongs to another account, which submitted it first (request "
                f"{owner.request_id}); choose a distinct model name, for example one that names your organisation"
            )
            return problems
        for r in mine:
            if model_key(r.metadata.model) == key and r.status != "failed":
                problems.append(
                    f"you already submitted model {meta.model!r} (request {r.request_id}, status {r.status}); "
                    "use a different model name for a different configuration"
                )
                break
        return problems

    # -- the flow ---------------------------------------------------------------
    def submit(
        self, upload: str | Path | Sequence[str | Path] | None, who: Submitter, *, allow_partial: bool = False
    ) -> SubmitOutcome:
        """Check an upload (the single file, or a folder's two files) and queue it; ``allow_partial`` is the
        page's "Allow a partial submission" box (the policy may allow partial submissions for everyone)."""
        with tempfile.TemporaryDirectory(prefix="rqbench-upload-") as work:
            return self._submit(upload_paths(upload), who, allow_partial or self.policy.allow_partial, Path(work))

    def _submit(self, files: list[Path], who: Submitter, allow_partial: bool, work: Path) -> SubmitOutcome:
        now = self.clock()
        if not files:
            return SubmitOutcome(
                False,
                [
                    "choose a file to upload: the single-file form, or a submission folder's "
                    "metadata.json and submission.jsonl together"
                ],
            )
        problems = self._account_problems(who, now) or self._name_problems(who)
        if problems:
            return SubmitOutcome(False, problems)
        if not self.attempts.allow(who.username):
            wait = self.attempts.retry_in(who.username)
            return SubmitOutcome(False, [f"too many upload attempts; try again in {wait / 60:.0f} minutes"])
        problems = [f"{f.name}: {p}" if len(files) > 1 else p for f in files for p in self._file_problems(f)]
        total = sum(f.stat().st_size for f in files)
        if not problems and total > self.policy.max_bytes:
            problems = [f"the files are {total:,} bytes together, over the limit of {self.policy.max_bytes:,}"]
        if problems:
            return SubmitOutcome(False, problems)
        upload, problems = gather_upload(files, work / "upload")
        if upload is None:
            return SubmitOutcome(False, problems)
        try:
            report = self.validator(
                upload.path,
                self.target.rq_ids,
                allow_partial=allow_partial,
                max_bytes=self.policy.max_bytes,
                time_budget_s=self.policy.validation_budget_s,
                partial_remedy=PARTIAL_REMEDY_PAGE,
            )
        except Exception as exc:  # the validator must report, not raise; say so plainly if it does
            log.exception("validator raised on %s", upload.path.name)
            return SubmitOutcome(False, [f"the validator failed on this file: {redact(type(exc).__name__)}"])
        problems = _validation_lines(report, name_file=upload.folder_form)
        meta: SubmissionMetadata | None = getattr(report, "metadata", None)
        if meta is None and not problems:
            problems.append("line 1: the metadata line is missing")
        if meta is None and not upload.folder_form:
            problems.append(
                "the single-file form opens with the metadata record; a submission folder's files "
                "(metadata.json and submission.jsonl) are uploaded together, both selected at once"
            )
        if problems:
            return SubmitOutcome(False, problems)
        assert meta is not None
        why = name_problem(meta.model, what="model name", max_chars=self.policy.max_model_name_chars)
        if why:
            return SubmitOutcome(False, [f"line 1, field model: {why}"])
        digest = report.submission_hash
        problems = self._queue_problems(who, meta, digest, now)
        if problems:
            return SubmitOutcome(False, problems)
        raw = _stored_bytes(upload, report)
        stored = self.stores.submissions.put(digest, who.username, raw)
        flagged = list(getattr(report, "flagged", []) or [])
        n_flagged = max(int(getattr(report, "flagged_count", 0) or 0), len(flagged))
        req = SubmissionRequest(
            request_id=digest.removeprefix("b2:")[:16],
            user=who.username,
            submission_hash=digest,
            metadata=meta.model_copy(update={"date": meta.date or now}),
            submission_file=stored,
            dataset_repo=self.target.repo,
            dataset_revision=self.target.revision,
            instances=report.covered,
            partial=report.expected is not None and report.covered < report.expected,
            status="review" if n_flagged else "pending",
            submitted_at=now,
            updated_at=now,
            flags=[_flag_line(f) for f in flagged[:MAX_FLAGS_KEPT]],
            flagged_count=n_flagged,
        )
        self.stores.requests.put(req)
        log.info(
            "%s request %s (%s) from %s",
            "held for review" if n_flagged else "queued",
            req.request_id,
            meta.model,
            who.username,
        )
        return SubmitOutcome(True, [], req, warnings=[_problem_line(p) for p in report.warnings])


STATUS_SHOWN = {"review": "flagged for review"}


def _shown_reason(r: SubmissionRequest) -> str:
    """A failure's reason, or for a flagged request the screen's reasons (how many, then the first few)."""
    if r.status != "review":
        return r.reason
    more = f" (+{r.flagged_count - len(r.flags)} more)" if r.flagged_count > len(r.flags) else ""
    return f"{r.flagged_count} RQ(s) flagged: " + " | ".join(r.flags[:5]) + more


def requests_table(stores: SpaceStores, user: str | None = None) -> list[list[str]]:
    """Rows for the Submit tab's queue from the requests store as it is now (``requests_rows``)."""
    return requests_rows(stores.requests.all(), user)


def requests_rows(requests: Iterable[SubmissionRequest], user: str | None = None) -> list[list[str]]:
    """Rows for the Submit tab's queue: newest first, the failure or review reason shown as text.

    Only what may be public: never the submitter's contact, which stays in the (private) request.
    """
    rows = []
    for r in sorted(requests, key=lambda r: r.submitted_at, reverse=True):
        if user is not None and r.user != user:
            continue
        cells = (
            r.request_id,
            r.metadata.model,
            r.user,
            STATUS_SHOWN.get(r.status, r.status),
            _shown_reason(r),
            f"{r.submitted_at:%Y-%m-%d %H:%M}",
        )
        rows.append([printable(x) for x in cells])
    return rows


REQUEST_COLUMNS = ["request", "model", "user", "status", "reason", "submitted (UTC)"]
