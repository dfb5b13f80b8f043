"""The builder's stage framework: resumable, record-in record-out stages over JSONL files.

A stage has a name, the stages it reads (the first drives its items, the others
are joined by item id), a pure function from one item to output records, and a
fingerprint of the settings that change its output (model, prompt-set hash,
budgets). Its outputs live in ``OUT/stages/<name>/items.jsonl``, one line per
finished item, each line written with a single ``write`` and fsynced. The done
set is the set of (item id, input hash) pairs already in the file, so:

- a crash mid-stage loses at most the item being written (a torn last line is
  cut off on the next load) and the rerun resumes at the next unfinished item;
- a rerun of a finished stage does nothing;
- an item whose input changed (an upstream rerun, another model or prompt set)
  is redone, and only that item.

When a stage finishes, the file is compacted to the current items in input
order (tmp file + ``os.replace``), so readers always see a whole file.

Three kinds of stage: ``whole`` (one function over all inputs: sourcing,
filtering, the final tables), ``cpu`` (per item, in a process pool with
``--workers N``), ``llm`` (per item, async with bounded concurrency, every call
through ``rqbench.llm.LLM``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from rqbench.hashing import content_hash
from rqbench.io import RecordError, append_line, read_appended, write_jsonl
from rqbench.records import GateDrop, Record, SkipRecord

log = logging.getLogger(__name__)

WHOLE = "*"  # the one item id of a whole stage

Item = dict[str, Any]  # input stage name -> that stage's record (a list of records for whole stages)
StageKind = Literal["whole", "cpu", "llm"]


class ItemSkipped(Exception):
    """Raised by a stage function for an item it cannot use; recorded as a named skip.

    ``dropped``: the texts the well-formedness gate refused, when they are why the item is skipped.
    """

    def __init__(self, reason: str, detail: str = "", *, retryable: bool = False, dropped: Sequence[GateDrop] = ()):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail, self.retryable, self.dropped = reason, detail, retryable, list(dropped)


class StageFileError(RecordError):
    """A stored stage file is damaged somewhere other than a torn last line.

    Its place reads ``<file>, line <n>``, the wording the stage files always had.
    """

    LINE_FORMAT = "{path}, line {line}"


class StoredItem(Record):
    """One line of ``items.jsonl``: what one item produced, or why it was skipped."""

    item_id: str
    input_hash: str
    status: Literal["ok", "skipped"]
    records: list[dict[str, Any]] = Field(default_factory=list)
    skip: SkipRecord | None = None
    seconds: float = 0.0
    finished_at: datetime


@dataclass(frozen=True)
class Stage:
    """A step of the build. ``fn`` is pure: ``fn(item) -> list[records]`` (async ``fn(item, llm)`` for llm stages)."""

    name: str
    inputs: tuple[str, ...]
    output: type[BaseModel]
    fn: Callable[..., Any]
    kind: StageKind = "cpu"
    fingerprint: dict[str, Any] = field(default_factory=dict)
    key: Callable[[BaseModel], str] = field(default=lambda r: r.arxiv_id)  # type: ignore[attr-defined]


@dataclass
class StageReport:
    """What one run of a stage did: counts for the manifest and the progress line."""

    stage: str
    items_in: int = 0
    already_done: int = 0
    processed: int = 0
    items_out: int = 0
    skipped: int = 0
    retryable: int = 0
    seconds: float = 0.0
    dry_run_pending: int = 0


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _dump(record: Any) -> Any:
    if isinstance(record, BaseModel):
        return record.model_dump(mode="json")
    if isinstance(record, list):
        return [_dump(r) for r in record]
    return record


def input_hash(item: Item, fingerprint: dict[str, Any]) -> str:
    """The hash that decides whether an item is done: its inputs plus the stage's settings."""
    return content_hash({"item": {k: _dump(v) for k, v in sorted(item.items())}, "settings": fingerprint})


class StageStore:
    """``OUT/stages/<name>/``: the append-only item file and the stage's run log."""

    def __init__(self, out_dir: Path, name: str):
        self.dir = Path(out_dir) / "stages" / name
        self.items_path = self.dir / "items.jsonl"
        self.runs_path = self.dir / "runs.jsonl"
        self.name = name

    def exists(self) -> bool:
        return self.items_path.exists()

    def load(self) -> dict[str, StoredItem]:
        """Item id -> its latest stored line; a torn final line (a crash mid-write) is cut off."""
        return {stored.item_id: stored for stored in read_appended(self.items_path, StoredItem, error=StageFileError)}

    def append(self, stored: StoredItem) -> None:
        """One line, one write, flushed and fsynced: a crash leaves whole lines or a torn last one."""
        append_line(self.items_path, stored.model_dump_json())

    def compact(self, order: Sequence[str]) -> None:
        """Rewrite the file with only the current items, in input order (tmp + rename)."""
        current = self.load()
        write_jsonl(self.items_path, [current[i] for i in order if i in current])

    def clear(self) -> None:
        if self.items_path.exists():
            self.items_path.unlink()

    def records(self, model: type[BaseModel]) -> list[BaseModel]:
        """The stage's output records, in stored order, validated against ``model``."""
        out: list[BaseModel] = []
        for stored in self.load().values():
            for i, rec in enumerate(stored.records):
                try:
                    out.append(model.model_validate(rec))
                except ValidationError as exc:
                    raise StageFileError.from_validation(
                        exc, path=self.items_path, kind=model.__name__, record=f"item {stored.item_id!r}, record {i}"
                    ) from exc
        return out

    def skips(self) -> list[SkipRecord]:
        return [s.skip for s in self.load().values() if s.skip is not None]

    def log_run(self, entry: dict[str, Any]) -> None:
        append_line(self.runs_path, json.dumps(entry, default=str))

    def runs(self) -> list[dict[str, Any]]:
        if not self.runs_path.exists():
            return []
        out = []
        for line in self.runs_path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    log.warning("%s: ignoring a torn run-log line", self.runs_path)
        return out


# --------------------------------------------------------------------------
# Items: the driving input's records joined with the side inputs by id
# --------------------------------------------------------------------------


def build_items(stage: Stage, inputs: dict[str, list[BaseModel]]) -> list[tuple[str, Item]]:
    """(item id, item) pairs in the driving input's order; an id missing from a side input is left out."""
    if stage.kind == "whole":
        return [(WHOLE, {name: list(inputs.get(name, [])) for name in stage.inputs})]
    driver, *sides = stage.inputs
    by_side = {s: {stage.key(r): r for r in inputs.get(s, [])} for s in sides}
    items: list[tuple[str, Item]] = []
    seen: set[str] = set()
    for rec in inputs.get(driver, []):
        item_id = stage.key(rec)
        if item_id in seen:
            raise StageFileError(f"stage {stage.name!r}: input {driver!r} has the item id {item_id!r} twice")
        seen.add(item_id)
        item: Item = {driver: rec}
        if all(item_id in by_side[s] for s in sides):
            for s in sides:
                item[s] = by_side[s][item_id]
            items.append((item_id, item))
    return items


def _finish(stage: Stage, item_id: str, h: str, result: list[BaseModel] | ItemSkipped, seconds: float) -> StoredItem:
    if isinstance(result, ItemSkipped):
        skip = SkipRecord(
            stage=stage.name, item_id=item_id, reason=result.reason, detail=result.detail[:2000], dropped=result.dropped
        )
        return StoredItem(
            item_id=item_id, input_hash=h, status="skipped", skip=skip, seconds=seconds, finished_at=_now()
        )
    for r in result:
        if not isinstance(r, stage.output):
            raise TypeError(f"stage {stage.name!r} returned a {type(r).__name__}, expected {stage.output.__name__}")
    return StoredItem(
        item_id=item_id,
        input_hash=h,
        status="ok",
        records=[r.model_dump(mode="json") for r in result],
        seconds=seconds,
        finished_at=_now(),
    )


def _call_cpu(fn: Callable[[Item], list[BaseModel]], item: Item) -> tuple[list[BaseModel] | ItemSkipped, float]:
    """Runs in a worker process (or inline): the item's records, or its skip."""
    t0 = time.monotonic()
    try:
        return fn(item), time.monotonic() - t0
    except ItemSkipped as skip:
        return skip, time.monotonic() - t0


def _progress(total: int, desc: str, enabled: bool) -> Any:
    from rqbench.progress import progress_bar

    return progress_bar(total=total, desc=desc, enabled=enabled, unit="item", leave=False, dynamic_ncols=True)


def run_stage(
    stage: Stage,
    out_dir: Path,
    inputs: dict[str, list[BaseModel]],
    *,
    llm: Any = None,
    workers: int = 1,
    concurrency: int = 4,
    progress: bool = True,
    only: set[str] | None = None,
    redo: bool = False,
    executor: Literal["local", "ray"] = "local",
) -> StageReport:
    """Run ``stage`` over its unfinished items, appending each result as it finishes.

    ``only`` restricts the run to a subset of item ids; ``redo`` ignores the done set
    (a ``--stage NAME`` rerun). ``executor="ray"`` runs a cpu stage on Ray Data.
    """
    t0 = time.monotonic()
    store = StageStore(out_dir, stage.name)
    items = build_items(stage, inputs)
    done = {} if redo else store.load()
    report = StageReport(stage=stage.name, items_in=len(items))
    pending: list[tuple[str, str, Item]] = []
    for item_id, item in items:
        h = input_hash(item, stage.fingerprint)
        prev = done.get(item_id)
        if prev is not None and prev.input_hash == h:
            report.already_done += 1
        elif only is None or item_id in only:
            pending.append((item_id, h, item))
    bar = _progress(len(pending), stage.name, progress and bool(pending))

    def record(item_id: str, h: str, result: list[BaseModel] | ItemSkipped, seconds: float) -> None:
        bar.update(1)
        if isinstance(result, ItemSkipped) and result.retryable:
            report.retryable += 1  # not stored: a rerun tries it again
            log.warning("stage %s, item %s: %s (will be retried on the next run)", stage.name, item_id, result)
            return
        store.append(_finish(stage, item_id, h, result, seconds))
        report.processed += 1

    try:
        if stage.kind == "llm":
            asyncio.run(_run_llm_items(stage, pending, llm, concurrency, record, report))
        elif executor == "ray" and pending:
            for item_id, h, result in run_ray(stage, pending):
                record(item_id, h, result, 0.0)
        elif workers > 1 and len(pending) > 1:
            _run_pool(stage, pending, workers, record)
        else:
            for item_id, h, item in pending:
                result, seconds = _call_cpu(stage.fn, item)
                record(item_id, h, result, seconds)
    finally:
        bar.close()
    if not report.dry_run_pending:
        store.compact([i for i, _ in items])
    final = store.load()
    for item_id, _ in items:
        stored = final.get(item_id)
        if stored is None:
            continue
        if stored.status == "skipped":
            report.skipped += 1
        else:
            report.items_out += len(stored.records)
    report.seconds = time.monotonic() - t0
    return report


def _run_pool(stage: Stage, pending: list[tuple[str, str, Item]], workers: int, record: Callable[..., None]) -> None:
    """Process-pool execution of a cpu stage; results are stored as they complete."""
    ctx = multiprocessing.get_context("spawn")  # no fork of a process that holds threads and sockets
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {pool.submit(_call_cpu, stage.fn, item): (item_id, h) for item_id, h, item in pending}
        remaining = set(futures)
        try:
            while remaining:
                finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                for fut in finished:
                    item_id, h = futures[fut]
                    result, seconds = fut.result()
                    record(item_id, h, result, seconds)
        except BaseException:
            for fut in remaining:
                fut.cancel()
            raise


async def _run_llm_items(
    stage: Stage,
    pending: list[tuple[str, str, Item]],
    llm: Any,
    concurrency: int,
    record: Callable[..., None],
    report: StageReport,
) -> None:
    """Items of an llm stage, ``concurrency`` at a time; the LLM layer bounds calls per model."""
    from rqbench.llm import DryRun, LLMCallFailed

    sem = asyncio.Semaphore(max(1, concurrency))
    fn: Callable[[Item, Any], Awaitable[list[BaseModel]]] = stage.fn

    async def one(item_id: str, h: str, item: Item) -> None:
        async with sem:
            t0 = time.monotonic()
            try:
                result: list[BaseModel] | ItemSkipped = await fn(item, llm)
            except DryRun:
                report.dry_run_pending += 1
                return
            except ItemSkipped as skip:
                result = skip
            except LLMCallFailed as exc:
                # a reply the model could not get right is a named skip; a dead endpoint is retried next run
                from rqbench.builder.llm_stage import is_permanent

                result = ItemSkipped(f"llm_{exc.reason}", exc.detail, retryable=not is_permanent(exc))
            record(item_id, h, result, time.monotonic() - t0)

    tasks = [asyncio.create_task(one(*p)) for p in pending]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def gather_calls(calls: Sequence[Awaitable[Any]]) -> list[Any]:
    """Await every call of one item; in a dry run every call is counted before ``DryRun`` propagates.

    Returns each call's result or its ``LLMCallFailed``; any other error is raised.
    """
    from rqbench.llm import DryRun, LLMCallFailed

    results = await asyncio.gather(*calls, return_exceptions=True)
    dry = False
    for r in results:
        if isinstance(r, DryRun):
            dry = True
        elif isinstance(r, BaseException) and not isinstance(r, LLMCallFailed):
            raise r
    if dry:
        raise DryRun("dry run")
    return list(results)


def run_ray(stage: Stage, pending: list[tuple[str, str, Item]]) -> list[tuple[str, str, list[BaseModel] | ItemSkipped]]:
    """The same cpu stage function on Ray Data (optional; ``pip install 'ray[data]'``).

    Items travel pickled in a bytes column; results come back as JSON and are
    re-validated here, in input order, ready for ``StageStore.append``. Meant for
    the parsing stages on a cluster; the local process pool is the default.
    """
    import pickle

    import ray  # optional dependency: imported only here

    if not ray.is_initialized():
        ray.init(ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
    fn = stage.fn
    rows = [{"item_id": i, "input_hash": h, "item": pickle.dumps(item)} for i, h, item in pending]

    def apply(row: dict[str, Any]) -> dict[str, Any]:
        result, _ = _call_cpu(fn, pickle.loads(row["item"]))
        if isinstance(result, ItemSkipped):
            payload = {"skip": [result.reason, result.detail]}
        else:
            payload = {"records": [r.model_dump(mode="json") for r in result]}
        return {"item_id": row["item_id"], "input_hash": row["input_hash"], "result": json.dumps(payload)}

    by_id = {r["item_id"]: json.loads(r["result"]) for r in ray.data.from_items(rows).map(apply).take_all()}
    results: list[tuple[str, str, list[BaseModel] | ItemSkipped]] = []
    for item_id, h, _ in pending:
        payload = by_id[item_id]
        if "skip" in payload:
            results.append((item_id, h, ItemSkipped(*payload["skip"])))
        else:
            results.append((item_id, h, [stage.output.model_validate(x) for x in payload["records"]]))
    return results
