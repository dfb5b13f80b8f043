"""The OpenAI files and batches endpoints of the scripted server, for offline tests of batch mode.

Implemented as OpenAI documents them and as litellm's OpenAI client calls them:
``POST /v1/files`` (multipart upload, ``purpose=batch``), ``GET /v1/files/{id}``,
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``,
``GET /v1/batches`` (list) and ``POST /v1/batches/{id}/cancel``. A batch moves one
status a retrieve (``validating`` -> ``in_progress`` -> ``finalizing`` ->
``completed``); ``hold`` keeps every batch ``in_progress``, so a test can kill a
client between submit and collect. Each line is answered by the server's own
responder and usage rules, or failed by ``line_error`` into the error file;
``executed`` counts how often each ``custom_id`` was run (and so billed).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from email.parser import BytesParser
from email.policy import default as email_policy
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from rqbench.testing.scripted_server import ScriptedServer

BATCH_PATHS = ("/v1/files", "/v1/batches")
STATUS_STEPS = ("validating", "in_progress", "finalizing", "completed")

LineError = Callable[[dict[str, Any]], "tuple[int | None, str] | None"]


def _json(status: int, obj: Any) -> tuple[int, bytes]:
    return status, json.dumps(obj).encode()


def _error(status: int, message: str) -> tuple[int, bytes]:
    return _json(status, {"error": {"message": message, "type": "invalid_request_error"}})


class ScriptedBatches:
    """Files and batches held in memory for one ``ScriptedServer``."""

    def __init__(self, server: "ScriptedServer"):
        self.server = server
        self.files: dict[str, dict[str, Any]] = {}
        self.content: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []  # batch ids in creation order
        self.executed: Counter[str] = Counter()  # custom_id -> times run
        self.hold = False
        self.end_status = "completed"  # or "expired": lines not yet run are dropped, as a provider does
        self.line_error: LineError | None = None
        self._lock = threading.Lock()

    # -- routing -----------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        parts = urlsplit(path)
        segs = [s for s in parts.path.split("/") if s][1:]  # drop "v1"
        with self._lock:
            if segs == ["files"] and method == "POST":
                return self._upload(headers, body)
            if len(segs) == 2 and segs[0] == "files" and method == "GET":
                f = self.files.get(segs[1])
                return _json(200, f) if f else _error(404, f"no file {segs[1]}")
            if len(segs) == 3 and segs[0] == "files" and segs[2] == "content" and method == "GET":
                data = self.content.get(segs[1])
                return (200, data) if data is not None else _error(404, f"no file {segs[1]}")
            if segs == ["batches"] and method == "POST":
                return self._create(json.loads(body or b"{}"))
            if segs == ["batches"] and method == "GET":
                limit = int(parse_qs(parts.query).get("limit", ["20"])[0])
                data = [self.batches[b] for b in reversed(self.created)][:limit]
                return _json(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "has_more": False,
                        "first_id": data[0]["id"] if data else None,
                        "last_id": data[-1]["id"] if data else None,
                    },
                )
            if len(segs) == 2 and segs[0] == "batches" and method == "GET":
                b = self.batches.get(segs[1])
                return _json(200, self._advance(b)) if b else _error(404, f"no batch {segs[1]}")
            if len(segs) == 3 and segs[0] == "batches" and segs[2] == "cancel" and method == "POST":
                b = self.batches.get(segs[1])
                if not b:
                    return _error(404, f"no batch {segs[1]}")
                b["status"] = "cancelled"
                return _json(200, b)
        return _error(404, f"no route {method} {path}")

    # -- files -------------------------------------------------------------------
    def _upload(self, headers: dict[str, str], body: bytes) -> tuple[int, bytes]:
        ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
        msg = BytesParser(policy=email_policy).parsebytes(f"Content-Type: {ctype}\r\n\r\n".encode() + body)
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            fields[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
        if "file" not in fields:
            return _error(400, "multipart upload without a 'file' field")
        purpose = fields.get("purpose", (None, b""))[1].decode()
        return _json(200, self._store(fields["file"][0] or "upload.jsonl", purpose, fields["file"][1]))

    def _store(self, filename: str, purpose: str, data: bytes) -> dict[str, Any]:
        fid = f"file-{len(self.files) + 1:04d}"
        self.files[fid] = {
            "id": fid,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.content[fid] = data
        return self.files[fid]

    # -- batches -----------------------------------------------------------------
    def _create(self, req: dict[str, Any]) -> tuple[int, bytes]:
        fid = req.get("input_file_id")
        if fid not in self.content:
            return _error(400, f"input_file_id {fid!r} not found")
        if req.get("endpoint") != "/v1/chat/completions":
            return _error(400, f"unsupported endpoint {req.get('endpoint')!r}")
        bid = f"batch_{len(self.created) + 1:04d}"
        n = len([x for x in self.content[fid].splitlines() if x.strip()])
        self.batches[bid] = {
            "id": bid,
            "object": "batch",
            "endpoint": req["endpoint"],
            "errors": None,
            "input_file_id": fid,
            "completion_window": req.get("completion_window", "24h"),
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(time.time()),
            "request_counts": {"total": n, "completed": 0, "failed": 0},
            "metadata": req.get("metadata") or {},
        }
        self.created.append(bid)
        return _json(200, self.batches[bid])

    def _advance(self, b: dict[str, Any]) -> dict[str, Any]:
        """One step of the status progression per retrieve (none while ``hold``)."""
        status = b["status"]
        if status not in STATUS_STEPS or status == "completed":
            return b
        nxt = STATUS_STEPS[STATUS_STEPS.index(status) + 1]
        if self.hold and nxt != "in_progress":
            return b
        if nxt == "finalizing":
            self._run(b)
        if nxt == "completed" and self.end_status != "completed":
            nxt = self.end_status
        b["status"] = nxt
        return b

    def _run(self, b: dict[str, Any]) -> None:
        """Answer every line: an output file of replies, an error file of failed lines."""
        out, err = [], []
        lines = [json.loads(x) for x in self.content[b["input_file_id"]].splitlines() if x.strip()]
        if self.end_status == "expired":
            lines = lines[: len(lines) // 2]  # an expired batch returns only what it finished
        for i, line in enumerate(lines):
            rid = f"batch_req_{b['id']}_{i}"
            failure = self.line_error(line) if self.line_error else None
            if failure is not None:
                status, message = failure
                if status is None:
                    err.append(
                        {
                            "id": rid,
                            "custom_id": line["custom_id"],
                            "response": None,
                            "error": {"code": "scripted_line_error", "message": message},
                        }
                    )
                else:
                    err.append(
                        {
                            "id": rid,
                            "custom_id": line["custom_id"],
                            "error": None,
                            "response": {
                                "status_code": status,
                                "request_id": rid,
                                "body": {"error": {"message": message, "type": "scripted"}},
                            },
                        }
                    )
                continue
            self.executed[line["custom_id"]] += 1
            from rqbench.llm.batch import split_custom_id

            body = self.server.complete_line(line["body"], split_custom_id(line["custom_id"])[1])
            out.append(
                {
                    "id": rid,
                    "custom_id": line["custom_id"],
                    "error": None,
                    "response": {"status_code": 200, "request_id": rid, "body": body},
                }
            )
        b["request_counts"] = {"total": b["request_counts"]["total"], "completed": len(out), "failed": len(err)}
        if out:
            b["output_file_id"] = self._store(
                f"{b['id']}_output.jsonl", "batch_output", "".join(json.dumps(x) + "\n" for x in out).encode()
            )["id"]
        if err:
            b["error_file_id"] = self._store(
                f"{b['id']}_errors.jsonl", "batch_output", "".join(json.dumps(x) + "\n" for x in err).encode()
            )["id"]
