"""Gradio's own scripts and stylesheets served from memory, compressed once, cacheable by the browser for a year.

A page open fetches about 90 files under ``/assets/`` (the front end Gradio ships). Gradio answers each from disk
and gzips it again for every request, with no ``Cache-Control``: under a crowd that is most of a page open's cost
on the server, and a browser asks for every file again on its next visit. ``KeptAssets``, an ASGI middleware in
front of Gradio, keeps each file the first time it is asked for (its bytes, its gzip form made once, an ETag) and
answers later requests from memory. Files whose names carry a content hash (``index-DphvyggB.js``, as Gradio's
build names them) may be kept by browsers for a year unasked (``immutable``): a new Gradio ships new names. Any
other file is revalidated (``no-cache`` with its ETag). Ranges, HEAD and paths outside the assets folder go to
Gradio as before.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from rqbench.space.baked import takes_gzip

PREFIX = "/assets/"
# Vite's content-hashed names: a base, a dash, eight URL-safe characters, the extension
HASHED = re.compile(r"-[A-Za-z0-9_-]{8}\.(?:js|css|mjs|woff2?|ttf|svg|png|wasm)$")
IMMUTABLE = b"public, max-age=31536000, immutable"
REVALIDATE = b"no-cache"
# compressing these gains nothing
PACKED_ALREADY = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".woff", ".woff2", ".ico")


class KeptAssets:
    """ASGI middleware answering ``GET /assets/<file>`` from memory (``root``: Gradio's assets folder)."""

    def __init__(self, app: Any, root: Path | None = None):
        if root is None:
            from gradio.routes import BUILD_PATH_LIB

            root = Path(BUILD_PATH_LIB)
        self.app, self.root = app, Path(root).resolve()
        # path -> (content type, cache control, ETag, bytes, gzip bytes or None)
        self._kept: dict[str, tuple[bytes, bytes, bytes, bytes, bytes | None]] = {}

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if not (scope["type"] == "http" and scope["method"] == "GET" and scope["path"].startswith(PREFIX)):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        if b"range" in headers:
            await self.app(scope, receive, send)
            return
        name = scope["path"][len(PREFIX) :]
        kept = self._kept.get(name)
        if kept is None:
            kept = await anyio.to_thread.run_sync(self._read, name)
            if kept is None:  # not a file of the folder: Gradio answers (and nothing is kept for a made-up name)
                await self.app(scope, receive, send)
                return
            self._kept[name] = kept  # at most the folder's files, each once
        await self._send(headers, send, *kept)

    def _read(self, name: str) -> tuple[bytes, bytes, bytes, bytes, bytes | None] | None:
        """The file's answer, or None when ``name`` is not a file under the assets folder (Gradio answers it)."""
        path = (self.root / name).resolve()
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        body = path.read_bytes()
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if kind in ("text/javascript", "application/javascript"):
            kind = "application/javascript"  # what Gradio sends
        packed = None if path.suffix in PACKED_ALREADY else gzip.compress(body, compresslevel=6, mtime=0)
        if packed is not None and len(packed) >= len(body):
            packed = None
        etag = f'"{hashlib.sha256(body).hexdigest()[:32]}"'.encode()
        cache = IMMUTABLE if HASHED.search(path.name) else REVALIDATE
        return kind.encode(), cache, etag, body, packed

    @staticmethod
    async def _send(
        asked: dict, send: Callable, kind: bytes, cache: bytes, etag: bytes, body: bytes, packed: bytes | None
    ) -> None:
        vary = [(b"vary", b"accept-encoding")] if packed is not None else []
        if packed is not None and takes_gzip(asked.get(b"accept-encoding", b"")):
            etag, body = etag[:-1] + b'-gzip"', packed
            encoding = [(b"content-encoding", b"gzip")]
        else:
            encoding = []
        common = [(b"etag", etag), (b"cache-control", cache), *vary]
        tags = [t.strip() for t in asked.get(b"if-none-match", b"").split(b",") if t.strip()]
        if etag in tags or b"*" in tags:
            await send({"type": "http.response.start", "status": 304, "headers": common})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [(b"content-type", kind), *common, *encoding, (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
