"""Gradio's front-end files served from memory (``rqbench.space.static_assets.KeptAssets``): read once, gzipped
once, cacheable for a year when the name carries a content hash, revalidated otherwise; anything else goes to
Gradio."""

from __future__ import annotations

import gzip

from asgi_get import asgi_get

from rqbench.space.static_assets import IMMUTABLE, REVALIDATE, KeptAssets

SCRIPT = b"export const answer = 42;\n" * 400


def _gradio(calls: list[str]):
    async def app(scope, receive, send):
        calls.append(scope["path"])
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"gradio"})

    return app


def test_a_hashed_file_is_read_once_gzipped_once_and_cacheable_for_a_year(tmp_path):
    (tmp_path / "index-DphvyggB.js").write_bytes(SCRIPT)
    calls: list[str] = []
    kept = KeptAssets(_gradio(calls), root=tmp_path)
    status, headers, body = asgi_get(kept, "/assets/index-DphvyggB.js")
    assert status == 200 and body == SCRIPT and headers[b"cache-control"] == IMMUTABLE
    assert headers[b"content-type"] == b"application/javascript" and b"content-encoding" not in headers
    (tmp_path / "index-DphvyggB.js").unlink()  # served from memory from now on
    status, zipped, body = asgi_get(kept, "/assets/index-DphvyggB.js", {b"accept-encoding": b"gzip, br"})
    assert status == 200 and zipped[b"content-encoding"] == b"gzip" and gzip.decompress(body) == SCRIPT
    assert len(body) < len(SCRIPT) / 10 and zipped[b"etag"] != headers[b"etag"]
    assert asgi_get(kept, "/assets/index-DphvyggB.js", {b"if-none-match": headers[b"etag"]})[0] == 304
    assert calls == []  # Gradio was never asked


def test_an_unhashed_file_is_revalidated_and_what_is_not_a_kept_file_goes_to_gradio(tmp_path):
    (tmp_path / "theme.css").write_bytes(b"body { color: black }")
    (tmp_path / "fonts").mkdir()
    (tmp_path.parent / "secret.txt").write_text("not an asset")
    calls: list[str] = []
    kept = KeptAssets(_gradio(calls), root=tmp_path)
    status, headers, _ = asgi_get(kept, "/assets/theme.css")
    assert status == 200 and headers[b"cache-control"] == REVALIDATE and headers[b"content-type"] == b"text/css"
    for path in ("/assets/../secret.txt", "/assets/fonts", "/assets/missing-AAAAAAAA.js", "/config"):
        assert asgi_get(kept, path)[0] == 299, path
    assert asgi_get(kept, "/assets/theme.css", {b"range": b"bytes=0-3"})[0] == 299  # ranges: Gradio's
    assert calls == [
        "/assets/../secret.txt",
        "/assets/fonts",
        "/assets/missing-AAAAAAAA.js",
        "/config",
        "/assets/theme.css",
    ]
