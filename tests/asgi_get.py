"""One GET through an ASGI app in process, for the tests of the Space's middlewares (``FreshPage``, ``KeptAssets``)."""

from __future__ import annotations

import asyncio


def asgi_get(app, path: str = "/", headers: dict[bytes, bytes] | None = None, query: bytes = b"") -> tuple:
    """(status, headers, body) of one GET through an ASGI app."""
    sent: list[dict] = []
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "query_string": query,
        "scheme": "http",
        "root_path": "",
        "headers": list((headers or {b"host": b"a.example"}).items()),
    }

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], dict(sent[0].get("headers", [])), b"".join(m.get("body", b"") for m in sent[1:])
