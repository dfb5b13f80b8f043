"""The one retry loop of ``PoliteClient`` (``_retried``), seen through both of its callers: ``request`` and
``download`` retry and fail alike (they held two copies of the loop)."""

from __future__ import annotations

import httpx
import pytest

from rqbench.builder.http import HttpError, PoliteClient


def _client(answers: list, sleeps: list[float], **kw) -> PoliteClient:
    """A client whose transport gives ``answers`` in turn: a status (with a Retry-After of 2 s for 429) or an
    exception to raise."""

    def handle(request: httpx.Request) -> httpx.Response:
        got = answers.pop(0)
        if isinstance(got, Exception):
            raise got
        headers = {"Retry-After": "2"} if got == 429 else {}
        return httpx.Response(got, headers=headers, content=b"body %d" % got)

    return PoliteClient(
        base_url="http://api.test", transport=httpx.MockTransport(handle), sleep=sleeps.append, backoff_s=1.0, **kw
    )


@pytest.mark.parametrize("call", ["request", "download"])
def test_both_callers_retry_statuses_and_dropped_connections_then_succeed(call, tmp_path):
    sleeps: list[float] = []
    answers = [503, 429, httpx.ReadError("dropped"), 200]
    client = _client(answers, sleeps)
    client.responses = 1  # a host that has answered before: a transport error is worth a retry
    if call == "request":
        assert client.request("GET", "/x").content == b"body 200"
    else:
        client.download("/x", tmp_path / "blob")
        assert (tmp_path / "blob").read_bytes() == b"body 200"
    assert sleeps == [1.0, 2.0, 4.0]  # backoff, Retry-After, backoff
    assert client.requests_sent == 4 and not answers


@pytest.mark.parametrize(
    ("call", "words"), [("request", "unexpected status after 3 tries"), ("download", "download failed")]
)
def test_both_callers_give_up_after_max_retries_with_their_own_words(call, words, tmp_path):
    sleeps: list[float] = []
    client = _client([503, 503, 503], sleeps, max_retries=2)
    with pytest.raises(HttpError) as err:
        client.request("GET", "/x") if call == "request" else client.download("/x", tmp_path / "blob")
    assert err.value.status == 503 and words in str(err.value) and len(sleeps) == 2
    assert not (tmp_path / "blob").exists()


def test_a_status_not_retried_fails_at_once():
    sleeps: list[float] = []
    client = _client([404], sleeps)
    with pytest.raises(HttpError, match="unexpected status") as err:
        client.request("GET", "/x")
    assert err.value.status == 404 and sleeps == [] and "after" not in str(err.value)
