"""The SQLite file behind every LLM call: a response cache and an append-only call log.

Responses are stored as JSON text, keyed by a content hash of what changes the
output (see ``cache_key``). Each finished call is committed at once, so a crash
loses nothing already paid for. Schema changes are named, append-only
migrations recorded in ``_migrations``. A write the disk refuses (full, an I/O
error) is a ``CallLogError`` naming the file, so a run stops there instead of
paying for replies it could not keep.
"""

from __future__ import annotations

import errno
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = []


def migration(fn: Callable[[sqlite3.Connection], None]) -> Callable[[sqlite3.Connection], None]:
    MIGRATIONS.append((fn.__name__, fn))
    return fn


@migration
def m001_responses_and_calls(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE responses (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            step TEXT NOT NULL,
            request TEXT NOT NULL,
            text TEXT NOT NULL,
            tokens_in INTEGER,
            tokens_out INTEGER,
            cost_usd REAL,
            created REAL NOT NULL
        )"""
    )
    db.execute(
        """CREATE TABLE calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            ts REAL NOT NULL,
            run_id TEXT,
            step TEXT NOT NULL,
            model TEXT NOT NULL,
            key TEXT NOT NULL,
            cache TEXT NOT NULL CHECK (cache IN ('hit', 'miss')),
            status TEXT NOT NULL,
            attempt INTEGER NOT NULL DEFAULT 1,
            tokens_in INTEGER,
            tokens_out INTEGER,
            cost_usd REAL,
            latency_s REAL,
            error TEXT
        )"""
    )
    db.execute("CREATE INDEX calls_by_model_step ON calls (model, step)")


@migration
def m002_cached_input_tokens(db: sqlite3.Connection) -> None:
    """Input tokens the provider served from its prompt-prefix cache (read) or stored in it (write)."""
    for table in ("responses", "calls"):
        db.execute(f"ALTER TABLE {table} ADD COLUMN tokens_cached INTEGER")
        db.execute(f"ALTER TABLE {table} ADD COLUMN tokens_cache_write INTEGER")


@migration
def m003_batches(db: sqlite3.Connection) -> None:
    """Batches sent to a provider's batch endpoint, the cache keys each holds, and which log rows came by batch."""
    db.execute(
        """CREATE TABLE batches (
            local_id TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            provider TEXT NOT NULL,
            litellm_model TEXT NOT NULL,
            api_base TEXT,
            run_id TEXT,
            state TEXT NOT NULL CHECK (state IN ('new', 'uploaded', 'submitted', 'collected')),
            file_id TEXT,
            batch_id TEXT,
            provider_status TEXT,
            n_requests INTEGER NOT NULL,
            created REAL NOT NULL,
            updated REAL NOT NULL
        )"""
    )
    db.execute(
        """CREATE TABLE batch_requests (
            local_id TEXT NOT NULL REFERENCES batches (local_id),
            key TEXT NOT NULL,
            model TEXT NOT NULL,
            step TEXT NOT NULL,
            body TEXT NOT NULL,
            request TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
            error TEXT,
            PRIMARY KEY (local_id, key)
        )"""
    )
    db.execute("CREATE INDEX batch_requests_by_key ON batch_requests (key)")
    db.execute("ALTER TABLE calls ADD COLUMN batch_id TEXT")


@migration
def m004_response_finish_reason(db: sqlite3.Connection) -> None:
    """Why the provider stopped ("stop", "length", ...): a reply cut by the budget replays as cut."""
    db.execute("ALTER TABLE responses ADD COLUMN finish_reason TEXT")


@migration
def m005_response_provider_model(db: sqlite3.Connection) -> None:
    """The model version the provider said answered (its reply's ``model`` field): a bundle names it."""
    db.execute("ALTER TABLE responses ADD COLUMN provider_model TEXT")


class CallLogError(OSError):
    """The call log could not be written: ``errno`` is ENOSPC for a full disk, else EIO; the message names
    the file and what was being written."""

    @classmethod
    def from_sqlite(cls, path: Path, what: str, exc: sqlite3.Error) -> CallLogError:
        full = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "full" in str(exc)
        return cls(errno.ENOSPC if full else errno.EIO, f"the call log {path} could not {what} ({exc})")


@dataclass(frozen=True)
class CachedResponse:
    key: str
    text: str
    tokens_in: int | None
    tokens_out: int | None
    cost_usd: float | None
    finish_reason: str | None = None


@dataclass(frozen=True)
class Spent:
    """What one request that delivered an answer cost: dollars (None where unpriced), seconds, tokens."""

    cost_usd: float | None
    latency_s: float | None
    tokens_in: int | None
    tokens_out: int | None
    run_id: str | None = None


@dataclass(frozen=True)
class RecordedFailure:
    """A request that failed in transport, as the call log has it: never answered, so never cached."""

    step: str
    model: str
    reason: str
    detail: str


class CallStore:
    """One SQLite database shared by the threads of a process (WAL, one lock)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.OperationalError as exc:
            raise CallLogError.from_sqlite(self.path, "be opened", exc) from exc
        self._migrate()

    @contextmanager
    def _writing(self, what: str) -> Iterator[None]:
        """The lock, around a write whose refusal by the disk becomes a ``CallLogError`` saying ``what``."""
        with self._lock:
            try:
                yield
            except sqlite3.OperationalError as exc:  # disk full, I/O error, read-only file system, locked
                raise CallLogError.from_sqlite(self.path, what, exc) from exc

    def _migrate(self) -> None:
        with self._writing("record its schema"):
            self._db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied REAL)")
            done = {r[0] for r in self._db.execute("SELECT name FROM _migrations")}
            for name, fn in MIGRATIONS:
                if name in done:
                    continue
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    # another process may have applied it while we waited for the lock
                    if not self._db.execute("SELECT 1 FROM _migrations WHERE name=?", (name,)).fetchone():
                        fn(self._db)
                        self._db.execute("INSERT INTO _migrations VALUES (?, ?)", (name, time.time()))
                    self._db.execute("COMMIT")
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- cache -------------------------------------------------------------
    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            row = self._db.execute(
                "SELECT key, text, tokens_in, tokens_out, cost_usd, finish_reason FROM responses WHERE key=?", (key,)
            ).fetchone()
        return CachedResponse(*row) if row else None

    def put(
        self,
        key: str,
        *,
        model: str,
        step: str,
        request: dict[str, Any],
        text: str,
        tokens_in: int | None,
        tokens_out: int | None,
        cost_usd: float | None,
        tokens_cached: int | None = None,
        tokens_cache_write: int | None = None,
        finish_reason: str | None = None,
        provider_model: str | None = None,
    ) -> None:
        with self._writing("cache a reply (it was received and paid for, but is not kept)"):
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, step, request, text, tokens_in, tokens_out, cost_usd,"
                " created, tokens_cached, tokens_cache_write, finish_reason, provider_model)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model,
                    step,
                    json.dumps(request),
                    text,
                    tokens_in,
                    tokens_out,
                    cost_usd,
                    time.time(),
                    tokens_cached,
                    tokens_cache_write,
                    finish_reason,
                    provider_model,
                ),
            )

    def stored(self, key: str) -> dict[str, Any] | None:
        """Everything the cache holds for one key (request, reply, tokens, cost, provider's model), or None."""
        with self._lock:
            cur = self._db.execute(
                "SELECT key, model, step, request, text, tokens_in, tokens_out, cost_usd, tokens_cached,"
                " tokens_cache_write, finish_reason, provider_model FROM responses WHERE key=?",
                (key,),
            )
            row = cur.fetchone()
            cols = [c[0] for c in cur.description]
        if row is None:
            return None
        out = dict(zip(cols, row))
        out["request"] = json.loads(out["request"])
        return out

    def recorded_failure(self, key: str) -> RecordedFailure | None:
        """The last transport failure the log recorded for a key, as ``LLMCallFailed`` carried it, or None.
        A cached reply for the key outranks it (the caller looks there first)."""
        with self._lock:
            row = self._db.execute(
                "SELECT step, model, status, error FROM calls WHERE key=? AND cache='miss' AND status LIKE 'error:%'"
                " ORDER BY id DESC LIMIT 1",
                (key,),
            ).fetchone()
        return None if row is None else RecordedFailure(row[0], row[1], row[2].removeprefix("error:"), row[3] or "")

    def forget(self, key: str) -> None:
        with self._writing("drop a cached reply"):
            self._db.execute("DELETE FROM responses WHERE key=?", (key,))

    # -- log ---------------------------------------------------------------
    def log(
        self,
        *,
        step: str,
        model: str,
        key: str,
        cache: str,
        status: str,
        run_id: str | None = None,
        attempt: int = 1,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        cost_usd: float | None = None,
        latency_s: float | None = None,
        error: str | None = None,
        tokens_cached: int | None = None,
        tokens_cache_write: int | None = None,
        batch_id: str | None = None,
    ) -> None:
        with self._writing("log a call"):
            self._db.execute(
                "INSERT INTO calls (ts, run_id, step, model, key, cache, status, attempt, tokens_in, tokens_out,"
                " cost_usd, latency_s, error, tokens_cached, tokens_cache_write, batch_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    run_id,
                    step,
                    model,
                    key,
                    cache,
                    status,
                    attempt,
                    tokens_in,
                    tokens_out,
                    cost_usd,
                    latency_s,
                    error,
                    tokens_cached,
                    tokens_cache_write,
                    batch_id,
                ),
            )

    def spent(self, keys: list[str]) -> dict[str, Spent]:
        """Per cache key, what its answer cost when it was sent: the log's last request that delivered it.

        A key answered from the cache in this run and paid for in an earlier one is found all the
        same; a key the log never saw sent (a cache copied from elsewhere) is absent.
        """
        out: dict[str, Spent] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = (
                    "SELECT key, cost_usd, latency_s, tokens_in, tokens_out, run_id FROM calls WHERE cache='miss' AND"
                    f" status IN ('ok', 'truncated') AND key IN ({','.join('?' * len(chunk))}) ORDER BY id"
                )
                for key, cost, latency, t_in, t_out, run_id in self._db.execute(q, chunk):
                    out[key] = Spent(cost, latency, t_in, t_out, run_id)
        return out

    def summary(self, *, run_id: str | None = None, since: float | None = None) -> list[dict[str, Any]]:
        """Per (model, step): requests sent, cache hits, failures, tokens, cost, latency.

        ``tokens_in`` counts every input token sent; ``tokens_in_cached`` the part the
        provider read from its prompt-prefix cache (billed at its cache rate), and
        ``tokens_in_billed`` the rest (billed in full, cache writes included).
        """
        where, args = [], []
        if run_id:
            where.append("run_id = ?")
            args.append(run_id)
        if since is not None:
            where.append("ts >= ?")
            args.append(since)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        q = f"""SELECT model, step,
                   SUM(cache='miss') AS requests,
                   SUM(cache='hit') AS cache_hits,
                   SUM(cache='miss' AND batch_id IS NOT NULL) AS by_batch,
                   SUM(status NOT IN ('ok')) AS failures,
                   COALESCE(SUM(tokens_in) FILTER (WHERE cache='miss'), 0) AS tokens_in,
                   COALESCE(SUM(tokens_in - COALESCE(tokens_cached, 0)) FILTER (WHERE cache='miss'), 0)
                       AS tokens_in_billed,
                   COALESCE(SUM(tokens_cached) FILTER (WHERE cache='miss'), 0) AS tokens_in_cached,
                   COALESCE(SUM(tokens_out) FILTER (WHERE cache='miss'), 0) AS tokens_out,
                   SUM(cost_usd) FILTER (WHERE cache='miss') AS cost_usd,
                   COALESCE(SUM(cost_usd IS NULL AND status IN ('ok', 'truncated')) FILTER (WHERE cache='miss'), 0)
                       AS unpriced,
                   AVG(latency_s) FILTER (WHERE cache='miss') AS mean_latency_s
               FROM calls {clause} GROUP BY model, step ORDER BY model, step"""
        with self._lock:
            cur = self._db.execute(q, args)
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, row)) for row in cur.fetchall()]

    def runs(self, *, since: float | None = None) -> list[dict[str, Any]]:
        """Per run id, newest first: when it started and ended, requests sent, cache hits, failures, cost, models.

        What a job printed as its run id (``LLM.run_note``) can be found here afterwards."""
        clause, args = ("WHERE ts >= ?", [since]) if since is not None else ("", [])
        q = f"""SELECT run_id, MIN(ts) AS first_ts, MAX(ts) AS last_ts,
                   SUM(cache='miss') AS requests, SUM(cache='hit') AS cache_hits,
                   SUM(status NOT IN ('ok')) AS failures,
                   SUM(cost_usd) FILTER (WHERE cache='miss') AS cost_usd
               FROM calls {clause} GROUP BY run_id ORDER BY MIN(ts) DESC"""
        with self._lock:
            cur = self._db.execute(q, args)
            cols = [c[0] for c in cur.description]
            rows = [dict(zip(cols, row)) for row in cur.fetchall()]
            models: dict[str | None, list[str]] = {}
            for run_id, model in self._db.execute(
                f"SELECT DISTINCT run_id, model FROM calls {clause} ORDER BY model", args
            ):
                models.setdefault(run_id, []).append(model)
        for r in rows:  # a model spec may hold commas (name@key=value,...): listed with "; "
            r["models"] = "; ".join(models.get(r["run_id"], []))
        return rows

    def count_requests(self, *, run_id: str | None = None, since: float | None = None) -> int:
        return int(sum(r["requests"] or 0 for r in self.summary(run_id=run_id, since=since)))

    # -- batches -----------------------------------------------------------
    def batch_create(
        self,
        local_id: str,
        *,
        model: str,
        provider: str,
        litellm_model: str,
        api_base: str | None,
        run_id: str,
        requests: list[tuple[str, str, str, str, str]],
    ) -> None:
        """A new batch and its (key, model, step, body, request) rows, in one transaction."""
        now = time.time()
        with self._writing("record a batch"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO batches (local_id, model, provider, litellm_model, api_base, run_id, state, n_requests,"
                    " created, updated) VALUES (?, ?, ?, ?, ?, ?, 'new', ?, ?, ?)",
                    (local_id, model, provider, litellm_model, api_base, run_id, len(requests), now, now),
                )
                self._db.executemany(
                    "INSERT INTO batch_requests (local_id, key, model, step, body, request) VALUES (?, ?, ?, ?, ?, ?)",
                    [(local_id, *r) for r in requests],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def batch_update(self, local_id: str, **fields: Any) -> None:
        allowed = {"state", "file_id", "batch_id", "provider_status"}
        if not fields or set(fields) - allowed:
            raise ValueError(f"batch_update: fields must be among {sorted(allowed)}, got {sorted(fields)}")
        cols = ", ".join(f"{k} = ?" for k in fields)
        with self._writing("update a batch"):
            self._db.execute(
                f"UPDATE batches SET {cols}, updated = ? WHERE local_id = ?", (*fields.values(), time.time(), local_id)
            )

    def batch(self, local_id: str) -> dict[str, Any]:
        with self._lock:
            cur = self._db.execute("SELECT * FROM batches WHERE local_id = ?", (local_id,))
            row = cur.fetchone()
            if row is None:
                raise KeyError(f"no batch {local_id!r} in {self.path}")
            return dict(zip([c[0] for c in cur.description], row))

    def batches(self) -> list[dict[str, Any]]:
        with self._lock:
            cur = self._db.execute("SELECT * FROM batches ORDER BY created")
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]

    def batch_requests(self, local_id: str) -> list[dict[str, Any]]:
        with self._lock:
            cur = self._db.execute("SELECT * FROM batch_requests WHERE local_id = ? ORDER BY rowid", (local_id,))
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, r)) for r in cur.fetchall()]

    def batch_request_done(self, local_id: str, key: str, state: str, error: str | None) -> None:
        with self._writing("record a batch request"):
            self._db.execute(
                "UPDATE batch_requests SET state = ?, error = ? WHERE local_id = ? AND key = ?",
                (state, error, local_id, key),
            )

    def open_batch_keys(self) -> dict[str, str]:
        """Cache key -> local batch id, for every key held by a batch not yet collected."""
        with self._lock:
            rows = self._db.execute(
                "SELECT r.key, r.local_id FROM batch_requests r JOIN batches b USING (local_id)"
                " WHERE b.state != 'collected'"
            ).fetchall()
        return dict(rows)
