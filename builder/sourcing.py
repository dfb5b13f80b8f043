"""Stage 1: the target papers, from an arXiv query, a local folder of LaTeX sources, or a file of arXiv ids.

Three ways in, one shape out: ``(SourcePaper, folder-with-LaTeX or None)``.

- An arXiv query (``cat:cs.*`` plus a submission window) is paged through the
  API. A date window is cut into slices of ``slice_days`` so no query passes
  arXiv's 30,000-result cap; each finished slice is kept under ``work_dir`` and
  read back on a rerun, so a crash costs at most the slice in progress.
- A local folder holds one subfolder per paper. Its ``paper_id`` is the folder
  name when it is an arXiv id (``2502.01113``, ``2502.01113v2``,
  ``hep-th_9901001``; then it is also its ``arxiv_id``), else a stable slug of the
  name, and the paper has no ``arxiv_id`` (unless its ``metadata.json`` gives one).
  Title and abstract come from a ``metadata.json`` beside the sources (any
  SourcePaper fields) when present, else from the LaTeX as the parser renders it
  (``front_matter``: title macros expanded, the abstract as text); a paper whose
  source gives no title has an empty one, never its folder's name.
- A file of ids (one a line; ``#`` comments, ``arXiv:`` prefixes, URLs and
  versions allowed) is looked up on arXiv in batches.

E-print sources are downloaded only when ``download_dir`` is given (see
:func:`fetch_latex`); unpacking is ``rqbench.builder.archive.unpack_eprint``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from datetime import date, datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from rqbench import paths
from rqbench.builder.arxiv_api import ArxivClient, date_window_clause, parse_arxiv_id, split_window
from rqbench.io import RecordError, UnreadableInput, read_capped, read_jsonl, write_jsonl
from rqbench.paths import slug
from rqbench.records import UNKNOWN_CATEGORY, SourcePaper, SourceWindow

log = logging.getLogger(__name__)

METADATA_FILE = "metadata.json"
TEX_SUFFIXES = (".tex", ".ltx", ".latex")
DEFAULT_CATEGORY = UNKNOWN_CATEGORY
MAX_IDS_FILE_BYTES = 16 * 1024 * 1024  # ~1M ids; arXiv's whole CS listing of a year is far less
MAX_LISTED_BAD_IDS = 10
MAX_METADATA_BYTES = 1024 * 1024

# --------------------------------------------------------------------------
# Ids and folders
# --------------------------------------------------------------------------


def folder_arxiv_id(name: str) -> tuple[str, int | None] | None:
    """The arXiv id a folder is named after (``2502.01113v2``, ``arXiv-2502.01113``, ``hep-th_9901001``), if any."""
    stripped = re.sub(r"^arxiv[-_:.\s]*", "", name.strip(), flags=re.IGNORECASE)
    for cand in (stripped, stripped.replace("_", "/", 1)):
        got = parse_arxiv_id(cand)
        if got is not None:
            return got
    return None


def folder_paper_id(name: str) -> str:
    """The paper id of a folder not named by an arXiv id: a stable slug of its name (a hash when none is left)."""
    return slug(
        name, alphabet="id", max_len=None, empty="paper-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
    )


def safe_dirname(arxiv_id: str) -> str:
    """A folder name for an id (old-style ids hold a '/')."""
    return arxiv_id.replace("/", "_")


def has_latex_source(folder: Path | None) -> bool:
    """Whether a folder holds at least one .tex file (the filtering stage's LaTeX rule)."""
    if folder is None or not Path(folder).is_dir():
        return False
    return any(p.suffix.lower() in TEX_SUFFIXES and p.is_file() for p in Path(folder).rglob("*"))


class PapersInputError(ValueError):
    """``--papers`` names something that cannot be read as papers; the message says which file, line and why."""


def read_ids_file(path: Path) -> list[str]:
    """arXiv ids from a text file, one a line; bad input is a PapersInputError naming file, line and why.

    The file must be a regular UTF-8 text file of at most ``MAX_IDS_FILE_BYTES``
    holding at least one id; every malformed line is listed (the first
    ``MAX_LISTED_BAD_IDS`` of them, then a count).
    """
    try:
        raw = read_capped(path, MAX_IDS_FILE_BYTES)
    except UnreadableInput as exc:
        raise PapersInputError(f"--papers {exc}") from None
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw.count(b"\n", 0, nul) + 1
        raise PapersInputError(
            f"{path}:{line}: a NUL byte (byte {nul}): a binary file, not a list of arXiv ids (one a line)"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise PapersInputError(
            f"{path}:{line}: not UTF-8 text (byte {exc.start}): a list of arXiv ids is plain text, one id a line"
        ) from None
    ids: list[str] = []
    bad: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        got = parse_arxiv_id(entry) if len(entry) <= 200 else None
        if got is None:
            bad.append(f"{path}:{n}: {entry[:80]!r} is not an arXiv id")
            continue
        ids.append(got[0] + (f"v{got[1]}" if got[1] else ""))
    if bad:
        more = f"\n... and {len(bad) - MAX_LISTED_BAD_IDS} more" if len(bad) > MAX_LISTED_BAD_IDS else ""
        raise PapersInputError(
            "\n".join(bad[:MAX_LISTED_BAD_IDS])
            + more
            + "\n(ids look like 2502.01113, 2502.01113v2, arXiv:2502.01113 or hep-th/9901001)"
        )
    if not ids:
        raise PapersInputError(f"{path}: holds no arXiv id (one a line; '#' starts a comment)")
    return list(dict.fromkeys(ids))


def check_papers_input(path: Path) -> None:
    """Refuse a ``--papers`` argument that cannot work, before a build starts: PapersInputError with the reason."""
    path = Path(path)
    if path.is_dir():
        if not any(p.is_dir() and not p.name.startswith((".", "_")) for p in path.iterdir()):
            raise PapersInputError(
                f"papers folder {path} has no subfolders (expected one folder of LaTeX sources per paper)"
            )
        return
    read_ids_file(path)


# --------------------------------------------------------------------------
# Title and abstract from the LaTeX
# --------------------------------------------------------------------------


def source_title_abstract(folder: Path) -> tuple[str | None, str | None]:
    """Title and abstract as the paper's own source gives them, rendered to text (``front_matter``); (None, None)
    when the parser cannot read the source."""
    from rqbench.builder.front_matter import read_front_matter
    from rqbench.builder.paper_skip import PaperSkipped

    try:
        front = read_front_matter(Path(folder), references=False)
    except PaperSkipped as skip:
        log.debug("no title/abstract for %s: %s", folder, skip)
        return None, None
    return front.title, front.abstract


# --------------------------------------------------------------------------
# Local folders
# --------------------------------------------------------------------------


def _read_metadata(folder: Path) -> dict:
    path = folder / METADATA_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(read_capped(path, MAX_METADATA_BYTES).decode("utf-8"))
    except UnreadableInput as exc:
        raise PapersInputError(str(exc)) from exc
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise PapersInputError(f"{path}: not valid UTF-8 JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise PapersInputError(f"{path}: expected a JSON object of SourcePaper fields, got {type(data).__name__}")
    unknown = sorted(set(data) - set(SourcePaper.model_fields))
    if unknown:
        raise PapersInputError(
            f"{path}: unknown SourcePaper field(s) {unknown}; known: {sorted(SourcePaper.model_fields)}"
        )
    return data


def _date_basis(meta: dict, remote: dict) -> str | None:
    """How a local folder's first-version date is known: its metadata.json (which may name the basis it
    copied, as the one ``fetch_latex`` writes does), else arXiv's record; None when neither gives a date."""
    if meta.get("published"):
        return meta.get("published_source") or "metadata_file"
    if remote.get("published"):
        return "arxiv_api"
    return None


def local_folder_papers(
    root: Path,
    *,
    client: ArxivClient | None = None,
    default_category: str = DEFAULT_CATEGORY,
) -> list[tuple[SourcePaper, Path]]:
    """One SourcePaper per subfolder of ``root`` (sorted by name); arXiv metadata filled in when a client is given."""
    root = Path(root)
    if not root.is_dir():
        raise PapersInputError(f"papers folder {root} does not exist or is not a folder")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    if not folders:
        raise PapersInputError(
            f"papers folder {root} has no subfolders (expected one folder of LaTeX sources per paper)"
        )
    ids: dict[Path, tuple[str, int | None]] = {}
    seen: dict[str, Path] = {}
    for f in folders:
        got = folder_arxiv_id(f.name)
        pid, ver = got if got else (folder_paper_id(f.name), None)
        if pid in seen:
            raise PapersInputError(f"papers folder {root}: {seen[pid].name!r} and {f.name!r} both give the id {pid!r}")
        seen[pid] = f
        ids[f] = (pid, ver)
    remote: dict[str, SourcePaper] = {}
    arxiv_named = [pid + (f"v{ver}" if ver else "") for f, (pid, ver) in ids.items() if folder_arxiv_id(f.name)]
    if client is not None and arxiv_named:
        remote = {p.arxiv_id: p for p in client.by_ids(arxiv_named)}
    out: list[tuple[SourcePaper, Path]] = []
    for f, (pid, ver) in ids.items():
        meta = _read_metadata(f)
        base = remote[pid].model_dump() if pid in remote else {}
        named = folder_arxiv_id(f.name) is not None
        fields: dict = {"version": ver, "primary_category": default_category, **base, **meta}
        fields["source"] = "local"
        fields["paper_id"] = pid
        fields["arxiv_id"] = pid if named else meta.get("arxiv_id")  # a folder name is no arXiv id
        fields["published_source"] = _date_basis(meta, base) if fields.get("published") else None
        if not fields.get("title") or not fields.get("abstract"):
            title, abstract = source_title_abstract(f)
            fields["title"] = fields.get("title") or title or ""  # never the folder's name
            fields["abstract"] = fields.get("abstract") or abstract or ""
        if not fields.get("categories"):
            fields["categories"] = [fields["primary_category"]]
        try:
            paper = SourcePaper.model_validate(fields)
        except ValidationError as exc:
            raise PapersInputError(
                str(RecordError.from_validation(exc, path=f / METADATA_FILE, record=f"paper {pid}", show_given=True))
            ) from exc
        out.append((paper, f))
    return out


# --------------------------------------------------------------------------
# arXiv queries, resumable by slice
# --------------------------------------------------------------------------


def _grouped(query: str) -> str:
    """The query in parentheses when ANDing onto it could bind to only part of an OR."""
    q = query.strip()
    return f"({q})" if re.search(r"\bOR\b", q) and not (q.startswith("(") and q.endswith(")")) else q


def _slice_file(work_dir: Path, query: str, d0: date, d1: date) -> Path:
    qh = hashlib.sha256(query.encode("utf-8")).hexdigest()[:12]
    return work_dir / qh / f"{d0:%Y%m%d}-{d1:%Y%m%d}.jsonl"


def query_papers(
    client: ArxivClient,
    query: str,
    *,
    date_from: date | None = None,
    date_to: date | None = None,
    limit: int | None = None,
    slice_days: int = 1,
    work_dir: Path | None = None,
    progress: bool = True,
) -> list[SourcePaper]:
    """Papers matching ``query`` (ANDed with the submission window), slice by slice, each slice kept once finished.

    A slice that ends today or later is never kept: arXiv may still add to it.
    """
    from tqdm import tqdm

    if (date_from is None) != (date_to is None):
        raise ValueError("a submission window needs both date_from and date_to")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if date_from is None:
        return list(client.search(query, limit=limit))
    work_dir = Path(work_dir) if work_dir is not None else paths.home() / "cache" / "arxiv-query"
    today = datetime.now(timezone.utc).date()
    out: list[SourcePaper] = []
    seen: set[str] = set()
    slices = split_window(date_from, date_to, slice_days)
    bar = tqdm(slices, desc="arXiv slices", unit="slice", disable=not progress)
    for d0, d1 in bar:
        path = _slice_file(work_dir, query, d0, d1)
        if path.exists():
            got = read_jsonl(path, SourcePaper, hint=" (delete the file to fetch the slice again)")
        else:
            window = date_window_clause(d0, d1)
            full = f"{_grouped(query)} AND {window}" if query.strip() else window
            want = None if limit is None else limit - len(out)
            got = list(client.search(full, limit=want))
            if d1 < today and (want is None or len(got) < want):
                write_jsonl(path, got)  # complete slices only: a limit-cut slice is not the whole slice
        for p in got:
            if p.arxiv_id not in seen:
                seen.add(p.arxiv_id)
                out.append(p)
        bar.set_postfix(papers=len(out))
        if limit is not None and len(out) >= limit:
            return out[:limit]
    return out


# --------------------------------------------------------------------------
# E-prints
# --------------------------------------------------------------------------


def fetch_latex(paper: SourcePaper, dest_root: Path, client: ArxivClient) -> Path:
    """Download and unpack a paper's e-print under ``dest_root/<id>/``; the folder holding its sources.

    An e-print without LaTeX (a PDF-only submission) is reported by
    ``unpack_eprint`` (it raises ``PaperSkipped`` with the reason).

    Layout: ``<id>/eprint`` (the blob), ``<id>/metadata.json`` (the SourcePaper),
    ``<id>/src/`` (unpacked). A rerun finds the blob and the finished ``src/``
    (``unpack_eprint`` marks it done) and neither downloads nor unpacks again.
    """
    folder = Path(dest_root) / safe_dirname(paper.arxiv_id)
    folder.mkdir(parents=True, exist_ok=True)
    meta = folder / METADATA_FILE
    if not meta.exists():
        meta.write_text(paper.model_dump_json(indent=2), encoding="utf-8")
    blob = client.download_eprint(paper.arxiv_id, folder / "eprint", version=paper.version)
    try:
        from rqbench.builder.archive import unpack_eprint
    except ImportError as exc:
        raise RuntimeError(
            f"downloaded {blob} but cannot unpack it: rqbench.builder.archive.unpack_eprint is unavailable ({exc})"
        ) from exc
    return unpack_eprint(blob, folder / "src")


# --------------------------------------------------------------------------
# The stage
# --------------------------------------------------------------------------


def source_papers(
    *,
    papers: Path | None = None,
    arxiv_query: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    limit: int | None = None,
    client: ArxivClient | None = None,
    download_dir: Path | None = None,
    work_dir: Path | None = None,
    slice_days: int = 1,
    default_category: str = DEFAULT_CATEGORY,
    progress: bool = True,
) -> list[tuple[SourcePaper, Path | None]]:
    """The target papers and, where known, the folder holding each one's LaTeX.

    Give exactly one of ``papers`` (a folder with one subfolder per paper, or a
    file of arXiv ids) and ``arxiv_query``. With ``download_dir``, papers known
    only by metadata get their e-print downloaded and unpacked there; otherwise
    their folder is None.
    """
    from tqdm import tqdm

    if (papers is None) == (arxiv_query is None):
        raise ValueError("give exactly one of papers (a folder or an ids file) and arxiv_query")
    if papers is not None and (date_from is not None or date_to is not None):
        raise ValueError("date_from/date_to apply to arxiv_query only")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")

    if papers is not None and Path(papers).is_dir():
        found = local_folder_papers(Path(papers), client=client, default_category=default_category)
        return list(found[:limit] if limit else found)

    own_client = client is None
    client = client or ArxivClient()
    try:
        if papers is not None:
            path = Path(papers)
            if not path.exists():
                raise PapersInputError(
                    f"papers {path} is neither a folder of sources nor a file of arXiv ids (it does not exist)"
                )
            ids = read_ids_file(path)  # names a FIFO, a device, a binary file or bad lines
            meta = client.by_ids(ids[:limit] if limit else ids)
        else:
            meta = query_papers(
                client,
                arxiv_query or "",
                date_from=date_from,
                date_to=date_to,
                limit=limit,
                slice_days=slice_days,
                work_dir=work_dir,
                progress=progress,
            )
        if download_dir is None:
            return [(p, None) for p in meta]
        out: list[tuple[SourcePaper, Path | None]] = []
        for p in tqdm(meta, desc="e-prints", unit="paper", disable=not progress):
            out.append((p, fetch_latex(p, Path(download_dir), client)))
        return out
    finally:
        if own_client:
            client.close()


Sourced = list[tuple[SourcePaper, Path | None]]


def select_window(found: Sourced, window: SourceWindow) -> Sourced:
    """The sourced papers a rolling build takes (``SourceWindow.admits``); PapersInputError naming any paper
    without a first-version date, which cannot be placed in a window and is never given one."""
    undated = [p.paper_id for p, _ in found if p.published is None]
    if undated:
        shown = ", ".join(undated[:10]) + (f" and {len(undated) - 10} more" if len(undated) > 10 else "")
        raise PapersInputError(
            f"{window.describe()}: {len(undated)} sourced paper(s) have no first-version date ({shown}); give each "
            "folder a metadata.json with 'published', or name it by its arXiv id so arXiv is asked"
        )
    kept = [(p, f) for p, f in found if window.admits(p)]
    log.info("%s: %d of %d sourced papers", window.describe(), len(kept), len(found))
    return kept
