"""The stages that bring the papers in, before any LLM call: source, filter, parse (module level, so worker
processes can run them), and the records they store."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import Field

from rqbench.builder.stages import WHOLE, ItemSkipped
from rqbench.records import ParsedPaper, Record, SkipRecord, SourcePaper, SourceWindow

log = logging.getLogger(__name__)


class SourcedPaper(Record):
    """A target paper M and the folder that holds its LaTeX (None while only metadata is known).

    ``arxiv_id`` here, as in every stage output, is the stage's item key: the paper's ``paper_id`` (its arXiv id,
    or a local paper's id)."""

    arxiv_id: str
    paper: SourcePaper
    folder: str | None = None


class FilterOutcome(Record):
    """Stage "filter": the papers kept, the funnel report (as its JSON), and the named drops."""

    arxiv_id: str = WHOLE
    kept: list[SourcedPaper]
    funnel: dict[str, Any]
    skips: list[SkipRecord] = Field(default_factory=list)


def source_stage(item: dict[str, Any], *, inputs: dict[str, Any], work_dir: str, progress: bool) -> list[SourcedPaper]:
    """The target papers; in a rolling build only those of its window (``select_window``), and folders named by
    arXiv ids are looked up on arXiv for their dates (as with ``--arxiv-metadata``)."""
    from contextlib import nullcontext

    from rqbench.builder.arxiv_api import ArxivClient
    from rqbench.builder.sourcing import select_window, source_papers

    window = SourceWindow.model_validate(inputs["window"]) if inputs.get("window") else None
    folder = inputs["papers"] is not None and Path(inputs["papers"]).is_dir()
    lookup = folder and (window is not None or bool(inputs.get("arxiv_metadata")))
    with ArxivClient() if lookup else nullcontext() as client:
        found = source_papers(
            work_dir=Path(work_dir),
            progress=progress,
            papers=Path(inputs["papers"]) if inputs["papers"] else None,
            arxiv_query=inputs["arxiv_query"],
            date_from=date.fromisoformat(inputs["date_from"]) if inputs["date_from"] else None,
            date_to=date.fromisoformat(inputs["date_to"]) if inputs["date_to"] else None,
            limit=inputs["limit"],
            client=client,
        )
    if window is not None:
        found = select_window(found, window)
    return [SourcedPaper(arxiv_id=p.paper_id, paper=p, folder=str(f) if f else None) for p, f in found]


def filter_stage(
    item: dict[str, Any], *, apply_s2: bool, fetch: bool, top_fraction: float, sources_dir: str
) -> list[FilterOutcome]:
    """The four keep rules (the Semantic Scholar ones only for a queried population); then the
    kept papers' e-prints are fetched where needed (politely, one at a time)."""
    from rqbench.builder.filtering import apply_filters

    sourced: list[SourcedPaper] = item["source"]
    papers = [s.paper for s in sourced]
    s2: dict[str, Any] = {}
    if apply_s2:
        from rqbench.builder.s2_api import S2Client

        with S2Client() as client:
            s2 = client.batch_arxiv([p.arxiv_id for p in papers])
    # Whether arXiv holds LaTeX is known only after download: assume so here, drop at fetch time.
    has_latex = {s.arxiv_id: (s.folder is not None) or fetch for s in sourced}  # keyed by paper id
    kept, funnel = apply_filters(papers, s2, has_latex=has_latex, top_fraction=top_fraction, offline=not apply_s2)
    folders = {s.arxiv_id: s.folder for s in sourced}
    out: list[SourcedPaper] = []
    skips: list[SkipRecord] = []
    for p in kept:
        folder = folders.get(p.paper_id)
        if folder is None and fetch:
            try:
                folder = str(fetch_eprint(p, Path(sources_dir)))
            except ItemSkipped as skip:
                skips.append(SkipRecord(stage="filter", item_id=p.paper_id, reason=skip.reason, detail=skip.detail))
                continue
        out.append(SourcedPaper(arxiv_id=p.paper_id, paper=p, folder=folder))
    return [FilterOutcome(kept=out, funnel=funnel.model_dump(mode="json"), skips=skips)]


def fetch_eprint(paper: SourcePaper, sources_dir: Path) -> Path:
    """Download and unpack one e-print under ``sources_dir/<id>/`` (sourcing's layout); reused when there."""
    from rqbench.builder.arxiv_api import ArxivClient, ArxivError
    from rqbench.builder.paper_skip import PaperSkipped
    from rqbench.builder.sourcing import fetch_latex

    try:
        with ArxivClient() as client:
            folder = fetch_latex(paper, sources_dir, client)
    except PaperSkipped as skip:
        raise ItemSkipped(skip.reason, skip.detail) from skip
    except ArxivError as exc:
        raise ItemSkipped("eprint_download_failed", str(exc)[:500]) from exc
    if folder is None:
        raise ItemSkipped("no_latex_source", "the e-print holds no LaTeX")
    return folder


def parse_stage(item: dict[str, Any]) -> list[ParsedPaper]:
    """Stage 3 on one paper; any parser failure is a named skip, so one bad paper never stops the build."""
    from rqbench.builder.paper_skip import PaperSkipped
    from rqbench.builder.parse import parse_paper

    sp: SourcedPaper = item["filter"]
    if sp.folder is None:
        raise ItemSkipped("no_latex_source", "no folder with LaTeX for this paper")
    try:
        parsed = parse_paper(Path(sp.folder), sp.arxiv_id)
    except PaperSkipped as skip:
        raise ItemSkipped(skip.reason, skip.detail) from skip
    except Exception as exc:  # a parser bug on odd input: recorded by name with its message, the build goes on
        log.warning("parser failed on %s: %r", sp.arxiv_id, exc)
        raise ItemSkipped("parser_error", f"{type(exc).__name__}: {exc}"[:1000]) from exc
    if not parsed.bibliography:
        raise ItemSkipped("no_bibliography", f"no .bib or .bbl entries in {sp.folder}")
    if not parsed.cited_works:
        raise ItemSkipped("no_citations", "the text cites nothing")
    return [parsed]
