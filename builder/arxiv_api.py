"""The arXiv API: search by category and submission window, look up ids, download e-print sources.

arXiv asks programmatic users for one request every three seconds, modest page
sizes, and no more than about 30,000 results from one query; the client keeps to
that (the interval and page size are settings), and long date windows are split
into slices (:func:`split_window`) so each query stays under the cap. Replies are
Atom XML, parsed with the standard library into :class:`rqbench.records.SourcePaper`.

Settings (constructor arguments, else environment, else the public defaults):
``RQB_ARXIV_API_URL``, ``RQB_ARXIV_EPRINT_URL``, ``RQB_ARXIV_INTERVAL_S`` (3),
``RQB_ARXIV_PAGE_SIZE`` (500).
"""

from __future__ import annotations

import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from rqbench.builder.http import ApiClient, HttpError, env_float
from rqbench.io import RecordError
from rqbench.records import ARXIV_ID_RE, SourcePaper

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://export.arxiv.org/api"
DEFAULT_EPRINT_URL = "https://export.arxiv.org/e-print"
DEFAULT_INTERVAL_S = 3.0
DEFAULT_PAGE_SIZE = 500
MAX_PAGE_SIZE = 2000  # arXiv's documented ceiling for one request
RESULT_CAP = 30000  # arXiv stops answering past this offset for one query

NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
ERROR_ID_PREFIXES = ("http://arxiv.org/api/errors", "https://arxiv.org/api/errors")

# An arXiv id with optional version, new style (2502.01113v2) or old style (hep-th/9901001v1, math.GT/0309136).
_ID_BODY = r"(?P<id>\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<version>\d+))?(?!\d)"
_BARE_ID = re.compile(rf"^(?:arxiv:\s*)?{_ID_BODY}$", re.IGNORECASE)
_ID_IN_TEXT = re.compile(
    rf"(?:arxiv\.org/(?:abs|pdf|e-print|format)/|arxiv:\s*|10\.48550/arxiv\.){_ID_BODY}",
    re.IGNORECASE,
)


class ArxivError(RuntimeError):
    """The arXiv API refused a query or sent a reply we cannot read."""


def parse_arxiv_id(text: str) -> tuple[str, int | None] | None:
    """``(id, version)`` from a bare id, an ``arXiv:`` id, an arxiv.org URL or an arXiv DOI; None if there is none.

    Old-style archive names are lower case (``hep-th``) with an optional upper-case
    subject class (``math.GT``); matching keeps that case so ids stay canonical.
    """
    if not text:
        return None
    s = text.strip()
    m = _BARE_ID.match(s) or _ID_IN_TEXT.search(s)
    if not m:
        return None
    arxiv_id = m.group("id")
    if "/" in arxiv_id:
        archive, number = arxiv_id.split("/", 1)
        head, _, sub = archive.partition(".")
        arxiv_id = f"{head.lower()}{'.' + sub.upper() if sub else ''}/{number}"
    if not ARXIV_ID_RE.match(arxiv_id):
        return None
    if "/" not in arxiv_id and len(arxiv_id.split(".")[1]) == 5 and arxiv_id[:4] < "1501":
        return None  # five-digit numbers began in January 2015
    version = int(m.group("version")) if m.group("version") else None
    return arxiv_id, version


def _stamp(d: date, end: bool) -> str:
    return d.strftime("%Y%m%d") + ("2359" if end else "0000")


def date_window_clause(date_from: date, date_to: date) -> str:
    """``submittedDate:[YYYYMMDD0000 TO YYYYMMDD2359]``, both days included (arXiv times are GMT)."""
    if date_to < date_from:
        raise ValueError(f"date window ends ({date_to}) before it starts ({date_from})")
    return f"submittedDate:[{_stamp(date_from, False)} TO {_stamp(date_to, True)}]"


def build_query(
    categories: str | Iterable[str] = "cs.*",
    date_from: date | None = None,
    date_to: date | None = None,
    extra: str | None = None,
) -> str:
    """An arXiv ``search_query``: categories ORed, then the submission window and any extra clause ANDed."""
    cats = [categories] if isinstance(categories, str) else list(categories)
    cats = [c.strip() for c in cats if c and c.strip()]
    parts: list[str] = []
    if cats:
        cat_clause = " OR ".join(f"cat:{c}" for c in cats)
        parts.append(f"({cat_clause})" if len(cats) > 1 else cat_clause)
    if date_from is not None or date_to is not None:
        if date_from is None or date_to is None:
            raise ValueError("a submission window needs both date_from and date_to")
        parts.append(date_window_clause(date_from, date_to))
    if extra:
        parts.append(f"({extra})" if " OR " in extra else extra)
    if not parts:
        raise ValueError("an arXiv query needs at least a category, a date window or a clause")
    return " AND ".join(parts)


def split_window(date_from: date, date_to: date, days: int) -> list[tuple[date, date]]:
    """Consecutive slices of at most ``days`` days covering the window, both ends included."""
    if days < 1:
        raise ValueError(f"slice length must be at least one day, got {days}")
    if date_to < date_from:
        raise ValueError(f"date window ends ({date_to}) before it starts ({date_from})")
    out: list[tuple[date, date]] = []
    start = date_from
    while start <= date_to:
        end = min(date_to, start + timedelta(days=days - 1))
        out.append((start, end))
        start = end + timedelta(days=1)
    return out


@dataclass
class Feed:
    """One page of results."""

    total: int
    start: int
    per_page: int
    entries: list[SourcePaper] = field(default_factory=list)


def _text(el: ET.Element | None) -> str | None:
    if el is None or el.text is None:
        return None
    return " ".join(el.text.split())


def _when(raw: str | None, where: str) -> datetime | None:
    if not raw:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ArxivError(f"{where}: unreadable date {raw!r}") from None


def _int(feed: ET.Element, tag: str, default: int, where: str) -> int:
    raw = _text(feed.find(f"opensearch:{tag}", NS))
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ArxivError(f"{where}: opensearch:{tag} is not a number: {raw!r}") from None


def parse_entry(entry: ET.Element, where: str) -> SourcePaper:
    """One Atom ``<entry>`` as a SourcePaper; ArxivError naming the entry and field when it is malformed."""
    raw_id = _text(entry.find("atom:id", NS))
    if not raw_id:
        raise ArxivError(f"{where}: entry has no <id>")
    parsed = parse_arxiv_id(raw_id)
    if parsed is None:
        raise ArxivError(f"{where}: <id> {raw_id!r} holds no arXiv identifier")
    arxiv_id, version = parsed
    title = _text(entry.find("atom:title", NS))
    if not title:
        raise ArxivError(f"{where} ({arxiv_id}): entry has no <title>")
    primary_el = entry.find("arxiv:primary_category", NS)
    cats = [c.get("term", "") for c in entry.findall("atom:category", NS) if c.get("term")]
    primary = primary_el.get("term") if primary_el is not None else None
    primary = primary or (cats[0] if cats else None)
    if not primary:
        raise ArxivError(f"{where} ({arxiv_id}): entry has no primary category")
    categories = [primary] + [c for c in dict.fromkeys(cats) if c != primary]
    authors = [n for a in entry.findall("atom:author", NS) if (n := _text(a.find("atom:name", NS)))]
    published = _when(_text(entry.find("atom:published", NS)), f"{where} ({arxiv_id}) <published>")
    try:
        return SourcePaper(
            arxiv_id=arxiv_id,
            version=version,
            title=title,
            abstract=_text(entry.find("atom:summary", NS)) or "",
            authors=authors,
            primary_category=primary,
            categories=categories,
            published=published,
            updated=_when(_text(entry.find("atom:updated", NS)), f"{where} ({arxiv_id}) <updated>"),
            published_source="arxiv_api" if published else None,
            doi=_text(entry.find("arxiv:doi", NS)),
            journal_ref=_text(entry.find("arxiv:journal_ref", NS)),
            source="arxiv",
        )
    except ValidationError as exc:
        raise ArxivError(
            str(RecordError.from_validation(exc, record=f"{where} ({arxiv_id})", show_given=True))
        ) from exc


def parse_feed(xml: bytes | str, *, where: str = "arXiv reply") -> Feed:
    """An Atom feed as a :class:`Feed`; an arXiv error entry raises ArxivError with arXiv's message."""
    try:
        root = ET.fromstring(xml.encode("utf-8") if isinstance(xml, str) else xml)
    except ET.ParseError as exc:
        raise ArxivError(f"{where}: not well-formed Atom XML ({exc})") from exc
    if root.tag != f"{{{NS['atom']}}}feed":
        raise ArxivError(f"{where}: root element is {root.tag!r}, not an Atom <feed>")
    entries = root.findall("atom:entry", NS)
    for e in entries:
        eid = _text(e.find("atom:id", NS)) or ""
        if eid.startswith(ERROR_ID_PREFIXES):
            msg = _text(e.find("atom:summary", NS)) or eid
            raise ArxivError(f"{where}: arXiv API error: {msg}")
    papers = [parse_entry(e, f"{where}, entry {i}") for i, e in enumerate(entries)]
    return Feed(
        total=_int(root, "totalResults", len(papers), where),
        start=_int(root, "startIndex", 0, where),
        per_page=_int(root, "itemsPerPage", len(papers), where),
        entries=papers,
    )


class ArxivClient(ApiClient):
    """Paged, paced access to the arXiv API and e-print downloads."""

    URL_ENV, DEFAULT_URL = "RQB_ARXIV_API_URL", DEFAULT_API_URL
    INTERVAL_ENV, DEFAULT_INTERVAL_S = "RQB_ARXIV_INTERVAL_S", DEFAULT_INTERVAL_S

    def __init__(
        self,
        *,
        base_url: str | None = None,
        eprint_url: str | None = None,
        min_interval_s: float | None = None,
        page_size: int | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 3.0,
        empty_page_retries: int = 2,
        **http_kwargs,
    ):
        self.eprint_url = (eprint_url or os.environ.get("RQB_ARXIV_EPRINT_URL") or DEFAULT_EPRINT_URL).rstrip("/")
        size = page_size if page_size is not None else int(env_float("RQB_ARXIV_PAGE_SIZE", DEFAULT_PAGE_SIZE))
        if not 1 <= size <= MAX_PAGE_SIZE:
            raise ValueError(f"arXiv page size must be between 1 and {MAX_PAGE_SIZE}, got {size}")
        self.page_size = size
        self.empty_page_retries = empty_page_retries
        # One pacer for both hosts' paths: arXiv counts all our requests together.
        super().__init__(
            base_url=base_url,
            min_interval_s=min_interval_s,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            **http_kwargs,
        )

    def query_page(
        self,
        search_query: str = "",
        *,
        id_list: Iterable[str] = (),
        start: int = 0,
        max_results: int | None = None,
        sort_by: str = "relevance",
        sort_order: str = "descending",
    ) -> Feed:
        """One request to ``/query``; HTTP 400 and error entries raise ArxivError with arXiv's message."""
        n = max_results or self.page_size
        if not 1 <= n <= MAX_PAGE_SIZE:
            raise ValueError(f"max_results must be between 1 and {MAX_PAGE_SIZE}, got {n}")
        params = {
            "search_query": search_query,
            "id_list": ",".join(id_list),
            "sortBy": sort_by,
            "sortOrder": sort_order,
            "start": str(start),
            "max_results": str(n),
        }
        try:
            resp = self.http.request("GET", "query", params=params, passthrough=(400,))
        except HttpError as exc:
            raise ArxivError(f"arXiv query failed: {exc}") from exc
        where = f"arXiv reply to {resp.request.url}"
        feed = parse_feed(resp.content, where=where)
        if resp.status_code == 400:
            raise ArxivError(f"{where}: HTTP 400 without an error entry")
        return feed

    def search(
        self,
        search_query: str,
        *,
        limit: int | None = None,
        sort_by: str = "submittedDate",
        sort_order: str = "ascending",
    ) -> Iterator[SourcePaper]:
        """Every paper matching ``search_query``, page by page, each id once.

        arXiv sometimes answers a page empty although more results exist; such a page
        is asked again ``empty_page_retries`` times before the search fails, so a gap
        is never mistaken for the end.
        """
        start, seen, yielded = 0, set(), 0
        total: int | None = None
        while True:
            want = self.page_size if limit is None else min(self.page_size, limit - yielded)
            if want <= 0:
                return
            feed = None
            for _attempt in range(self.empty_page_retries + 1):
                feed = self.query_page(
                    search_query, start=start, max_results=want, sort_by=sort_by, sort_order=sort_order
                )
                if feed.entries or feed.total <= start:
                    break
                log.warning("arXiv returned an empty page at start=%d of %d; asking again", start, feed.total)
            assert feed is not None
            total = feed.total
            if not feed.entries:
                if start < total:
                    raise ArxivError(
                        f"arXiv kept returning an empty page at start={start} although it reports {total} results "
                        f"for {search_query!r}; rerun later (finished slices are kept)"
                    )
                return
            for p in feed.entries:
                if p.arxiv_id in seen:
                    continue
                seen.add(p.arxiv_id)
                yielded += 1
                yield p
                if limit is not None and yielded >= limit:
                    return
            start += len(feed.entries)
            if start >= total:
                return
            if start >= RESULT_CAP:
                log.warning(
                    "arXiv reports %d results for %r but serves at most %d per query; split the date window",
                    total,
                    search_query,
                    RESULT_CAP,
                )
                return

    def by_ids(self, ids: Iterable[str]) -> list[SourcePaper]:
        """Metadata for the given ids (with or without versions), in chunks of ``page_size``; unknown ids are absent."""
        ids = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
        out: list[SourcePaper] = []
        for i in range(0, len(ids), self.page_size):
            chunk = ids[i : i + self.page_size]
            feed = self.query_page("", id_list=chunk, max_results=self.page_size)
            out.extend(feed.entries)
        found = {p.arxiv_id for p in out}
        missing = [i for i in ids if (parse_arxiv_id(i) or (i, None))[0] not in found]
        if missing:
            log.warning("arXiv has no entry for %d id(s): %s", len(missing), ", ".join(missing[:20]))
        return out

    def download_eprint(self, arxiv_id: str, dest_file: Path, *, version: int | None = None) -> Path:
        """Download the e-print blob (tar.gz, gzipped .tex or PDF, as arXiv has it) to ``dest_file``.

        A file already there is kept: a rerun never downloads twice.
        """
        parsed = parse_arxiv_id(arxiv_id)
        if parsed is None:
            raise ValueError(f"not an arXiv id: {arxiv_id!r}")
        clean, ver = parsed
        ver = version or ver
        dest_file = Path(dest_file)
        if dest_file.exists() and dest_file.stat().st_size > 0:
            return dest_file
        url = f"{self.eprint_url}/{clean}" + (f"v{ver}" if ver else "")
        try:
            self.http.download(url, dest_file)
        except HttpError as exc:
            raise ArxivError(f"e-print download for {clean} failed: {exc}") from exc
        return dest_file
