"""The worker: takes requests one at a time, judges them, writes results, updates the status.

Restart-safe by construction: a request left ``running`` by a crash is taken up
again before any pending one, and the LLM layer's cache means a resumed run
pays for no call twice; results files have fixed paths, so a rerun overwrites
rather than duplicates. A judge that fails marks its request failed with the
reason, and the worker goes on with the next one. One worker per store is the
supported set-up (the Space runs exactly one, in a background thread).

A request the manipulation screen flagged waits with status ``review``: the
worker neither judges nor publishes it until a maintainer approves it
(``approve``, ``rqbench worker --approve ID``), which sends it back to
``pending``; ``reject`` fails it with the maintainer's note. Results files are
public and never carry the submitter's contact (``ResultsFile`` drops it).

A worker made with ``trial=N`` (``rqbench worker --instances N``) tries each
request on its first N instances: the results are published as a trial, and the
request's status is left as it was, so the full run is still to come.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rqbench.llm.client import ProviderUnreachable
from rqbench.llm.config import public_label
from rqbench.records import ResultsFile
from rqbench.space.records import SubmissionRequest, utcnow
from rqbench.space.safety import public_results, redact
from rqbench.space.stores import SpaceStores, StoreError, Unreadable

log = logging.getLogger(__name__)

# (request, path of the raw submission on disk) -> the results files to publish
JudgeRun = Callable[[SubmissionRequest, Path], list[ResultsFile]]


class RequestFailed(RuntimeError):
    """A request that cannot finish, with a reason fit to show the submitter."""


def _instance_scored(inst) -> bool:
    return any(c.novelty is not None or c.narrowness for c in inst.candidates) or inst.overlap is not None


def check_results(results: Sequence[ResultsFile]) -> list[str]:
    """Reasons a request should fail: no results at all, or a judge that scored nothing."""
    if not results:
        return ["judging produced no results files"]
    reasons = []
    for r in results:
        if r.instances and not any(_instance_scored(i) for i in r.instances):
            failures = sorted({f for i in r.instances for f in i.failures})
            detail = "; ".join(failures[:3]) or "no instance was scored"
            label = public_results(r).judge.label
            reasons.append(f"judge {label} ({r.judge.setting}) scored no instance: {detail}")
    return reasons


@dataclass
class WorkerReport:
    request_id: str
    status: str
    reason: str = ""


def queued(requests: Sequence[SubmissionRequest]) -> list[SubmissionRequest]:
    """The requests a worker will judge, in the order it takes them: those a crash left running (resumed), then
    the pending ones, oldest first (``requests`` as ``RequestsStore.all`` gives them, oldest first)."""
    return [r for status in ("running", "pending") for r in requests if r.status == status]


class Worker:
    """Drains the requests store; ``run_once`` handles at most one request.

    Within one pass (``new_pass``; ``run`` starts one per poll, and a fresh worker is one pass) a request
    whose outcome could not be stored, or a request file that cannot be read, is reported once and then
    passed over, so a full disk or one damaged file never stalls the rest of the queue.
    """

    def __init__(
        self,
        stores: SpaceStores,
        judge: JudgeRun,
        *,
        work_dir: Path,
        worker_id: str | None = None,
        max_attempts: int = 3,
        trial: int | None = None,
    ):
        self.stores, self.judge = stores, judge
        self.work_dir = Path(work_dir)
        self.worker_id = worker_id or uuid.uuid4().hex[:8]
        self.max_attempts = max_attempts
        self.trial = trial  # ``judge`` judges the first N instances only: see ``trial_run``
        self._passed: set[str] = set()  # request ids and request-file paths reported without a stored outcome

    def new_pass(self) -> None:
        """Take up again what this pass passed over (the next poll: the disk may have room again)."""
        self._passed.clear()

    def next_request(self) -> SubmissionRequest | Unreadable | None:
        """An unreadable request file first (reported, never judged), then the queue in ``queued`` order: a
        request a crash left running (resumed), then the oldest pending one."""
        reqs, damaged = self.stores.requests.load()
        for bad in damaged:
            if bad.path not in self._passed:
                return bad
        return next((r for r in queued(reqs) if r.request_id not in self._passed), None)

    def _save(self, req: SubmissionRequest, **changes) -> SubmissionRequest:
        req = req.model_copy(update={**changes, "updated_at": utcnow()})
        SubmissionRequest.model_validate(req.model_dump())  # a bad status change fails here, not in a reader
        self.stores.requests.put(req)
        return req

    def _unrecorded(self, req: SubmissionRequest, what: str, exc: BaseException) -> WorkerReport:
        """The request store could not take this request's new status: say so by name, leave the stored
        request as it was (taken up again on a later pass), and go on with the queue."""
        self._passed.add(req.request_id)
        reason = redact(
            f"{what}; the request store {self.stores.requests.repo.name} could not record it "
            f"({storage_problem(exc)}), so the request stays {req.status} and is taken up again on "
            "the next pass"
        )[:1000]
        log.error("request %s: %s", req.request_id, reason)
        return WorkerReport(req.request_id, req.status, reason)

    def _judge_unreachable(self, req: SubmissionRequest, stored: list[str], exc: ProviderUnreachable) -> WorkerReport:
        """A judge no connection can be made to is this worker's outage, not the submission's fault: the request
        goes back to pending (taken up again on a later pass), and the reason names the judge by its public label,
        never by its address."""
        self._passed.add(req.request_id)
        reason = redact(
            f"judge {public_label(exc.model)} cannot be reached (no connection could be made), so the "
            f"request stays pending and is taken up again on a later pass{self._withdraw(req, stored)}"
        )[:1000]
        log.error("request %s: %s", req.request_id, reason)
        try:
            req = self._save(req, status="pending", reason=reason, worker="")
        except OSError as exc2:
            return self._unrecorded(req, "not judged", exc2)
        return WorkerReport(req.request_id, req.status, req.reason)

    def _unreadable(self, bad: Unreadable) -> WorkerReport:
        self._passed.add(bad.path)
        reason = redact(
            f"the request file cannot be read, so it is not judged: {bad.problem}; it is left as it "
            "is for a maintainer to repair or remove"
        )[:1000]
        log.error("request file %s: %s", bad.path, reason)
        return WorkerReport(Path(bad.path).stem, "failed", reason)

    def _publish(self, results: Sequence[ResultsFile], stored: list[str]) -> None:
        """Write each results file under its public label; ``stored`` collects the paths written."""
        for r in results:
            public = public_results(r)
            path = self.stores.results.path_for(public)
            try:
                self.stores.results.put(public)
            except OSError as exc:
                raise RequestFailed(
                    f"results file {path} could not be written to {self.stores.results.repo.name} "
                    f"({storage_problem(exc)})"
                ) from exc
            stored.append(path)

    def _withdraw(self, req: SubmissionRequest, stored: list[str]) -> str:
        """Remove what a failed attempt published, so a failed request shows no half set of results."""
        if not stored:
            return ""
        try:
            self.stores.results.repo.delete(stored, f"withdraw results of failed request {req.request_id}")
        except Exception as exc:  # the failure is still recorded; the reason says what is left behind
            log.error("request %s: could not withdraw %s: %s", req.request_id, stored, exc)
            return f"; {len(stored)} results file(s) written before the failure could not be withdrawn"
        return f"; the {len(stored)} results file(s) written before the failure were withdrawn"

    def process(self, req: SubmissionRequest | Unreadable) -> WorkerReport:
        if isinstance(req, Unreadable):
            return self._unreadable(req)
        if req.held_for_review:  # flagged and never approved: back to the review queue, nothing judged
            try:
                req = self._save(req, status="review", worker="")
            except OSError as exc:
                return self._unrecorded(req, "held for review", exc)
            log.warning("request %s is flagged and not approved; left for review", req.request_id)
            return WorkerReport(req.request_id, req.status, "held for review")
        if self.trial is not None:
            return self.trial_run(req)
        resumed = req.status == "running"
        if req.attempts >= self.max_attempts:
            reason = f"gave up after {req.attempts} attempts (the worker stopped while judging each time)"
            try:
                req = self._save(req, status="failed", reason=reason, worker="")
            except OSError as exc:
                return self._unrecorded(req, reason, exc)
            return WorkerReport(req.request_id, req.status, req.reason)
        try:
            req = self._save(
                req,
                status="running",
                started_at=req.started_at or utcnow(),
                attempts=req.attempts + 1,
                worker=self.worker_id,
                reason="",
            )
        except OSError as exc:
            return self._unrecorded(req, "not started", exc)
        log.info("%s request %s (%s)", "resuming" if resumed else "starting", req.request_id, req.metadata.model)
        stored: list[str] = []
        try:
            self._judge_and_publish(req, stored)
        except ProviderUnreachable as exc:
            return self._judge_unreachable(req, stored, exc)
        except Exception as exc:  # any failure ends this request, with its reason, and never the worker
            if isinstance(exc, RequestFailed):
                reason = str(exc)
            elif isinstance(exc, OSError):
                reason = f"{type(exc).__name__}: {storage_problem(exc)}"
            else:
                reason = f"{type(exc).__name__}: {exc}"
            reason = redact(reason + self._withdraw(req, stored))[:1000]
            log.warning("request %s failed: %s", req.request_id, reason)
            try:
                req = self._save(req, status="failed", reason=reason, worker="")
            except OSError as exc2:
                return self._unrecorded(req, f"failed: {reason}", exc2)
            return WorkerReport(req.request_id, req.status, req.reason)
        try:
            req = self._save(req, status="finished", results_files=stored, worker="")
        except OSError as exc:
            return self._unrecorded(req, f"judged ({len(stored)} results files written)", exc)
        log.info("request %s finished: %d results files", req.request_id, len(stored))
        return WorkerReport(req.request_id, req.status)

    def _judge_and_publish(self, req: SubmissionRequest, stored: list[str]) -> list[ResultsFile]:
        """Judge the request's raw submission and publish its results files (``stored`` collects their paths)."""
        raw = self.stores.submissions.get(req.submission_file)
        if raw is None:
            raise RequestFailed(f"the raw submission {req.submission_file} is missing from the store")
        folder = self.work_dir / req.request_id
        folder.mkdir(parents=True, exist_ok=True)
        sub_path = folder / "submission.jsonl"
        sub_path.write_bytes(raw)
        results = self.judge(req, sub_path)
        reasons = check_results(results)
        if reasons:
            raise RequestFailed("; ".join(reasons))
        self._publish(results, stored)
        return results

    def trial_run(self, req: SubmissionRequest) -> WorkerReport:
        """A trial of a request (``rqbench worker --instances N``): its first N instances judged and published as
        a trial (its own results files, marked, never ranked beside full runs), and nothing else changed: the
        request keeps its status and attempts, so a later full run judges it whole. Reported once per pass."""
        self._passed.add(req.request_id)
        stored: list[str] = []
        try:
            results = self._judge_and_publish(req, stored)
        except Exception as exc:  # a trial that fails says why, withdraws what it published, and changes nothing
            reason = str(exc) if isinstance(exc, RequestFailed) else f"{type(exc).__name__}: {exc}"
            reason = redact(f"trial failed: {reason}{self._withdraw(req, stored)}; the request stays {req.status}")
            log.warning("request %s: %s", req.request_id, reason)
            return WorkerReport(req.request_id, req.status, reason[:1000])
        expected = max((r.instances_expected for r in results), default=0)
        taken = min(self.trial, expected)
        what = "the whole revision" if taken >= expected else f"the first {taken} of {expected} instances"
        reason = (
            f"trial: {what} judged, {len(stored)} results file(s) published as a trial; the request stays {req.status}"
        )
        log.info("request %s: %s", req.request_id, reason)
        return WorkerReport(req.request_id, req.status, reason)

    def run_once(self) -> WorkerReport | None:
        req = self.next_request()
        return None if req is None else self.process(req)

    def run(self, *, interval_s: float, stop: threading.Event, drain: bool = True) -> None:
        """Poll every ``interval_s`` seconds until ``stop`` is set; ``drain`` handles all waiting requests per poll."""
        while not stop.is_set():
            self.new_pass()
            try:
                while self.run_once() is not None and drain and not stop.is_set():
                    pass
            except Exception:  # a store outage must not end the background thread; the next poll retries
                log.exception("worker poll failed; retrying in %.0fs", interval_s)
            stop.wait(interval_s)


def storage_problem(exc: BaseException) -> str:
    """An I/O error in words, without the hidden temporary file it hit (``No space left on device``)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


class ReviewError(ValueError):
    """A review decision that cannot apply: no such request, or one that is not waiting for review."""


def _for_review(stores: SpaceStores, request_id: str) -> SubmissionRequest:
    try:
        req = stores.requests.get(request_id)
    except StoreError as exc:
        raise ReviewError(f"request {request_id} cannot be read: {exc}") from exc
    if req is None:
        raise ReviewError(f"no request {request_id!r} in {stores.backend}")
    if req.status != "review":
        raise ReviewError(f"request {request_id} is {req.status!r}, not waiting for review")
    return req


_DECISIONS = {"approval": ("an approval", "approved"), "rejection": ("a rejection", "rejected")}


def _decide(stores: SpaceStores, request_id: str, by: str, note: str, kind: str, **update: object) -> SubmissionRequest:
    """Record a maintainer's review decision on a request that waits for review; ``update`` sets its outcome."""
    named, done = _DECISIONS[kind]
    if not by.strip():
        raise ReviewError(f"{named} names the maintainer who gives it")
    req = _for_review(stores, request_id)
    now = utcnow()
    review = {"reviewed_by": by, "reviewed_at": now, "review_note": note, "updated_at": now}
    req = req.model_copy(update={**update, **review})
    stores.requests.put(SubmissionRequest.model_validate(req.model_dump()))
    log.info("request %s %s by %s", request_id, done, by)
    return req


def approve(stores: SpaceStores, request_id: str, *, by: str, note: str = "") -> SubmissionRequest:
    """A maintainer read the flagged RQs and lets the request be judged and published: back to pending."""
    return _decide(stores, request_id, by, note, "approval", status="pending")


def reject(stores: SpaceStores, request_id: str, *, by: str, note: str = "") -> SubmissionRequest:
    """A maintainer read the flagged RQs and refuses the request: failed, with the note as its reason."""
    reason = "rejected in review" + (f": {note}" if note else " (flagged research questions)")
    return _decide(stores, request_id, by, note, "rejection", status="failed", reason=reason[:1000])


def evaluate_judge(
    judges: Sequence[str],
    settings: Sequence[str],
    *,
    llm=None,
    dataset: str | None = None,
    loader: Callable[[str, str], object] | None = None,
    seed: int = 0,
    orderings: int = 1,
    allow_partial: bool = False,
    progress: bool = False,
    instances: int | None = None,
) -> JudgeRun:
    """The production ``JudgeRun``: load the request's dataset revision and run evaluate's judges on it.

    ``dataset`` overrides where the benchmark is read from (a build folder or a
    dataset repo); ``loader(repo, revision)`` replaces ``load_benchmark`` outright.
    ``instances`` makes it a trial of the revision's first N instances (``Benchmark.subset``).
    """

    def run(req: SubmissionRequest, sub_path: Path) -> list[ResultsFile]:
        from rqbench.evaluate.benchmark.source import load_benchmark
        from rqbench.evaluate.generate.submission_files import load_submission
        from rqbench.evaluate.judge.run import judge_submission
        from rqbench.llm import LLM

        if loader is not None:
            bench = loader(req.dataset_repo, req.dataset_revision)
        else:
            bench = load_benchmark(dataset or req.dataset_repo, revision=None if dataset else req.dataset_revision)
        bench = bench.subset(instances)
        submission = load_submission(
            sub_path, bench.revision_rq_ids, judged_rq_ids=bench.rq_ids, allow_partial=allow_partial or req.partial
        )
        paths = judge_submission(
            bench,
            submission,
            list(judges),
            list(settings),
            llm=llm or LLM(),
            seed=seed,
            orderings=orderings,
            out_dir=sub_path.parent / "results",
            progress=progress,
        )
        return [ResultsFile.model_validate_json(Path(p).read_text(encoding="utf-8")) for p in paths]

    return run
