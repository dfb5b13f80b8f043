"""What a model may have read: its instances' source-paper dates against its knowledge cutoff.

An instance is *clean* for a model when its source paper's first version (arXiv v1,
``InstanceResult.paper_published``) is after the model's knowledge cutoff: a model
whose training data ends at the cutoff cannot have read the paper, or the question its
authors pursued. A paper dated on the cutoff day counts as possibly read (a cutoff
stated as a month is read as the month's last day, ``rqbench.llm.catalog``).

A paper without a date is neither clean nor counted as read: it is left out of the
clean subset and of the contaminated share, and counted (``undated``). The date is
never inferred from the arXiv id: an id's YYMM names the month the id was issued, not
the first version's day, and the dataset records no date it does not know
(docs/dataset.md). The contamination flag and the clean subset read the same dates
and the same rule, so a row's contaminated share and its clean count add up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from rqbench.llm.catalog import unknown_cutoff_reason
from rqbench.records import ResultsFile


def _day(v: date | datetime) -> date:
    return v.date() if isinstance(v, datetime) else v


def paper_dates(results: Iterable[ResultsFile], stated: Mapping[str, date | datetime] | None = None) -> dict[str, date]:
    """arXiv id -> its first-version date: from the instances' ``paper_published``, else from ``stated``
    (``rqbench report --source-dates``) for papers whose instances carry none.

    Instances of one paper that disagree (results judged on releases that dated it differently) give the
    earliest date: the reading under which fewer instances count as unseen.
    """
    out: dict[str, date] = {}
    for r in results:
        for inst in r.instances:
            if inst.paper_published is not None:
                d = out.get(inst.arxiv_id)
                out[inst.arxiv_id] = inst.paper_published if d is None else min(d, inst.paper_published)
    for arxiv_id, d in (stated or {}).items():
        out.setdefault(arxiv_id, _day(d))
    return out


def is_clean(published: date | None, cutoff: date) -> bool:
    """Whether a paper first published on ``published`` is after ``cutoff`` (False when undated)."""
    return published is not None and published > cutoff


@dataclass(frozen=True)
class Exposure:
    """A row's contamination: whether the model may have read some of its source papers, and how many."""

    contaminated: bool | None  # True: some dated paper is not after the cutoff; None: no cutoff or not all dated
    share: float | None  # of the dated instances, the share not after the cutoff
    earliest: date | None  # the earliest dated source paper


def exposure(published: Sequence[date | None], cutoff: date | None) -> Exposure:
    """Contamination over a row's instances, one first-version date (or None) each.

    ``contaminated`` is False only when every instance is dated and all are after the cutoff: an undated
    paper could be one the model read, so with one among otherwise clean papers the flag is unknown.
    """
    dated = [d for d in published if d is not None]
    earliest = min(dated) if dated else None
    if cutoff is None or not dated:
        return Exposure(None, None, earliest)
    seen = sum(not is_clean(d, cutoff) for d in dated)
    if seen:
        return Exposure(True, seen / len(dated), earliest)
    return Exposure(False if len(dated) == len(published) else None, 0.0, earliest)


def clean_reason(model: str, cutoff: date | None, instances: int, dated: int, clean: int) -> str | None:
    """Why a row has no clean figures, or None when it has clean instances.

    instances: the row's covered instances; dated: those whose source paper has a date; clean: those dated
    after the cutoff.
    """
    if cutoff is None:
        return unknown_cutoff_reason(model)
    if not dated:
        return (
            f"no source paper of the {instances} instance(s) has a first-version date (results written before "
            "dates were kept, or a release without them; rqbench report --source-dates supplies them)"
        )
    if not clean:
        return f"none of the {dated} dated instance(s) has a source paper first published after the cutoff {cutoff}"
    return None
