"""The Semantic Scholar Graph API: batch paper lookup, single papers, references, citations, search.

The filtering stage needs citation counts, venues and external ids for many
thousands of arXiv papers, so the batch endpoint (at most 500 ids a request) does
the heavy lifting; a missing id comes back as ``None`` in its place. An API key is
optional (``S2_API_KEY``, sent as ``x-api-key``; never logged or shown). Without
a key the shared pool is rate limited hard, so 429 answers are expected and are
retried with backoff, honouring ``Retry-After``.

Settings (constructor arguments, else environment, else the public defaults):
``RQB_S2_API_URL``, ``S2_API_KEY``, ``RQB_S2_INTERVAL_S`` (1 s: the rate of an
introductory key).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rqbench.builder.http import ApiClient, HttpError
from rqbench.io import RecordError

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.semanticscholar.org/graph/v1"
DEFAULT_INTERVAL_S = 1.0
BATCH_LIMIT = 500  # the API's ceiling on ids per batch request

# What the filtering stage and the cited-work lookup read.
PAPER_FIELDS: tuple[str, ...] = (
    "paperId",
    "externalIds",
    "title",
    "year",
    "venue",
    "publicationVenue",
    "publicationTypes",
    "journal",
    "citationCount",
    "influentialCitationCount",
)
EDGE_FIELDS: tuple[str, ...] = ("contexts", "intents", "isInfluential", "paperId", "title", "externalIds")


class S2Error(RuntimeError):
    """Semantic Scholar refused a request or sent a reply we cannot read."""


class _S2Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class S2Venue(_S2Model):
    id: str | None = None
    name: str | None = None
    type: str | None = Field(default=None, description="conference, journal, ... (often absent).")
    alternate_names: list[str] = Field(default_factory=list)

    @field_validator("alternate_names", mode="before")
    @classmethod
    def _none_list(cls, v: Any) -> Any:
        return v or []


class S2Journal(_S2Model):
    name: str | None = None
    volume: str | None = None
    pages: str | None = None


class S2Paper(_S2Model):
    """The facts of one paper that RQ-Bench uses; unknown fields of the reply are ignored."""

    paper_id: str | None = Field(
        default=None, alias="paperId", description="None for a reference S2 could not resolve."
    )
    corpus_id: int | None = Field(default=None, alias="corpusId")
    title: str | None = None
    abstract: str | None = None
    year: int | None = None
    venue: str | None = None
    publication_venue: S2Venue | None = Field(default=None, alias="publicationVenue")
    publication_types: list[str] = Field(default_factory=list, alias="publicationTypes")
    journal: S2Journal | None = None
    citation_count: int | None = Field(default=None, alias="citationCount")
    influential_citation_count: int | None = Field(default=None, alias="influentialCitationCount")
    external_ids: dict[str, str] = Field(default_factory=dict, alias="externalIds")
    authors: list[str] = Field(default_factory=list)

    @field_validator("publication_types", mode="before")
    @classmethod
    def _types(cls, v: Any) -> Any:
        return v or []

    @field_validator("external_ids", mode="before")
    @classmethod
    def _ids(cls, v: Any) -> Any:
        if not v:
            return {}
        if not isinstance(v, dict):
            raise ValueError(f"externalIds must be an object, got {type(v).__name__}")
        return {str(k): str(x) for k, x in v.items() if x is not None}

    @field_validator("authors", mode="before")
    @classmethod
    def _authors(cls, v: Any) -> Any:
        if not v:
            return []
        return [a.get("name") if isinstance(a, dict) else a for a in v if (a.get("name") if isinstance(a, dict) else a)]

    @property
    def arxiv_id(self) -> str | None:
        return self.external_ids.get("ArXiv")


class S2ContextIntent(_S2Model):
    context: str
    intents: list[str] = Field(default_factory=list)

    @field_validator("intents", mode="before")
    @classmethod
    def _none_list(cls, v: Any) -> Any:
        return v or []


class S2Edge(_S2Model):
    """One citation edge: the other paper plus how it is cited (contexts, intents, influence)."""

    paper: S2Paper | None = None
    contexts: list[str] = Field(default_factory=list)
    intents: list[str] = Field(default_factory=list)
    is_influential: bool | None = Field(default=None, alias="isInfluential")
    contexts_with_intent: list[S2ContextIntent] = Field(default_factory=list, alias="contextsWithIntent")

    @field_validator("contexts", "intents", "contexts_with_intent", mode="before")
    @classmethod
    def _none_list(cls, v: Any) -> Any:
        return v or []


def arxiv_ref(arxiv_id: str) -> str:
    """The Graph API's id form for an arXiv paper."""
    return f"ARXIV:{arxiv_id}"


def parse_paper(obj: Any, where: str) -> S2Paper | None:
    """One paper object (or null) as an S2Paper; S2Error naming ``where`` and the field when it does not fit."""
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise S2Error(f"{where}: expected a paper object, got {type(obj).__name__}")
    try:
        return S2Paper.model_validate(obj)
    except ValidationError as exc:
        raise S2Error(str(RecordError.from_validation(exc, record=where, show_given=True))) from exc


def parse_edge(obj: Any, key: str, where: str) -> S2Edge:
    """A reference (``key='citedPaper'``) or citation (``key='citingPaper'``) object as an S2Edge."""
    if not isinstance(obj, dict):
        raise S2Error(f"{where}: expected an edge object, got {type(obj).__name__}")
    data = {k: v for k, v in obj.items() if k not in ("citedPaper", "citingPaper")}
    try:
        return S2Edge.model_validate({**data, "paper": parse_paper(obj.get(key), f"{where}.{key}")})
    except ValidationError as exc:
        raise S2Error(str(RecordError.from_validation(exc, record=where, show_given=True))) from exc


def _fields(fields: str | Sequence[str]) -> str:
    return fields if isinstance(fields, str) else ",".join(fields)


class S2Client(ApiClient):
    """Batched, paced access to the Graph API."""

    URL_ENV, DEFAULT_URL = "RQB_S2_API_URL", DEFAULT_BASE_URL
    INTERVAL_ENV, DEFAULT_INTERVAL_S = "RQB_S2_INTERVAL_S", DEFAULT_INTERVAL_S

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        min_interval_s: float | None = None,
        batch_size: int = BATCH_LIMIT,
        timeout_s: float = 60.0,
        max_retries: int = 6,
        backoff_s: float = 2.0,
        cache_dir: Path | None = None,
        **http_kwargs,
    ):
        if not 1 <= batch_size <= BATCH_LIMIT:
            raise ValueError(f"S2 batch size must be between 1 and {BATCH_LIMIT}, got {batch_size}")
        key = api_key if api_key is not None else os.environ.get("S2_API_KEY")
        self.has_key = bool(key)
        self.batch_size = batch_size
        super().__init__(
            base_url=base_url,
            min_interval_s=min_interval_s,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            headers={"x-api-key": key} if key else None,
            cache_dir=cache_dir,
            **http_kwargs,
        )

    def __repr__(self) -> str:
        return f"S2Client(base_url={self.base_url!r}, api_key={'set' if self.has_key else 'unset'})"

    def _call(self, method: str, path: str, *, params: dict, body: Any = None, passthrough=()) -> Any:
        try:
            if method == "POST":
                return self.http.post_json(path, body, params=params, passthrough=passthrough)
            return self.http.get_json(path, params=params, passthrough=passthrough)
        except HttpError as exc:
            raise S2Error(f"Semantic Scholar request failed: {exc}") from exc

    # ------------------------------------------------------------- papers

    def batch(self, ids: Iterable[str], fields: str | Sequence[str] = PAPER_FIELDS) -> list[S2Paper | None]:
        """Papers for ``ids`` in the same order, ``None`` where S2 has no such paper; chunks of ``batch_size``."""
        from tqdm import tqdm

        ids = list(ids)
        out: list[S2Paper | None] = []
        params = {"fields": _fields(fields)}
        starts = range(0, len(ids), self.batch_size)
        # a progress bar for real crawls (more than one request, on a terminal)
        for i in tqdm(starts, desc="S2 batches", unit="batch", disable=None if len(starts) > 1 else True):
            chunk = ids[i : i + self.batch_size]
            data = self._call("POST", "paper/batch", params=params, body={"ids": chunk})
            where = f"S2 batch reply for ids {i}..{i + len(chunk) - 1}"
            if not isinstance(data, list):
                raise S2Error(f"{where}: expected a JSON list, got {type(data).__name__}")
            if len(data) != len(chunk):
                raise S2Error(f"{where}: {len(data)} entries for {len(chunk)} ids")
            out.extend(parse_paper(obj, f"{where}, entry {j} ({chunk[j]})") for j, obj in enumerate(data))
        return out

    def batch_arxiv(
        self, arxiv_ids: Iterable[str], fields: str | Sequence[str] = PAPER_FIELDS
    ) -> dict[str, S2Paper | None]:
        """``arxiv_id -> S2Paper | None`` for arXiv papers (the filtering stage's input)."""
        ids = list(dict.fromkeys(arxiv_ids))
        return dict(zip(ids, self.batch([arxiv_ref(a) for a in ids], fields)))

    def paper(self, paper_id: str, fields: str | Sequence[str] = PAPER_FIELDS) -> S2Paper | None:
        """One paper by any id form S2 accepts (sha, ``CorpusId:``, ``ARXIV:``, DOI); None when S2 answers 404."""
        data = self._call(
            "GET", f"paper/{quote(paper_id, safe='/:')}", params={"fields": _fields(fields)}, passthrough=(404,)
        )
        return parse_paper(data, f"S2 paper {paper_id}")

    # -------------------------------------------------------------- edges

    def _edges(self, paper_id: str, kind: str, key: str, fields, page_size: int, limit: int | None) -> list[S2Edge]:
        if not 1 <= page_size <= 1000:
            raise ValueError(f"page size must be between 1 and 1000, got {page_size}")
        path = f"paper/{quote(paper_id, safe='/:')}/{kind}"
        out: list[S2Edge] = []
        offset = 0
        while True:
            n = page_size if limit is None else min(page_size, limit - len(out))
            if n <= 0:
                return out
            data = self._call("GET", path, params={"fields": _fields(fields), "offset": offset, "limit": n})
            where = f"S2 {kind} of {paper_id} at offset {offset}"
            if not isinstance(data, dict):
                raise S2Error(f"{where}: expected a JSON object, got {type(data).__name__}")
            rows = data.get("data") or []
            out.extend(parse_edge(r, key, f"{where}, item {j}") for j, r in enumerate(rows))
            nxt = data.get("next")
            if nxt is None or not rows:
                return out
            if nxt <= offset:
                raise S2Error(f"{where}: 'next' ({nxt}) does not move past the offset")
            offset = nxt

    def references(
        self,
        paper_id: str,
        fields: str | Sequence[str] = EDGE_FIELDS,
        *,
        page_size: int = 1000,
        limit: int | None = None,
    ) -> list[S2Edge]:
        """The works ``paper_id`` cites, with citing contexts and intents, every page."""
        return self._edges(paper_id, "references", "citedPaper", fields, page_size, limit)

    def citations(
        self,
        paper_id: str,
        fields: str | Sequence[str] = EDGE_FIELDS,
        *,
        page_size: int = 1000,
        limit: int | None = None,
    ) -> list[S2Edge]:
        """The works citing ``paper_id``, every page (or up to ``limit``)."""
        return self._edges(paper_id, "citations", "citingPaper", fields, page_size, limit)

    # ------------------------------------------------------------- search

    def search(
        self,
        query: str,
        fields: str | Sequence[str] = ("paperId", "title", "externalIds"),
        *,
        venue: str | None = None,
        limit: int = 10,
        page_size: int = 100,
    ) -> list[S2Paper]:
        """Relevance search (used to find title-match candidates); at most ``limit`` papers."""
        out: list[S2Paper] = []
        offset = 0
        while len(out) < limit:
            params: dict[str, Any] = {"query": query}
            if venue:
                params["venue"] = venue
            params.update({"fields": _fields(fields), "offset": offset, "limit": min(page_size, limit - len(out))})
            data = self._call("GET", "paper/search", params=params)
            where = f"S2 search {query!r} at offset {offset}"
            if not isinstance(data, dict):
                raise S2Error(f"{where}: expected a JSON object, got {type(data).__name__}")
            rows = data.get("data") or []
            out.extend(p for j, r in enumerate(rows) if (p := parse_paper(r, f"{where}, item {j}")) is not None)
            nxt = data.get("next")
            if nxt is None or not rows:
                break
            offset = nxt
        return out[:limit]
