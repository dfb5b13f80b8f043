"""Stage "influence" (method.md step 3): label each cited work of M with one of the five labels.

One prompt per cited work: its title, how often M cites it, the sections where
it is cited, and every citation with its context. Inspiration and
competitor/baseline count as influential. Only works with a bibliography
entry that gives a title are labelled: a key the bibliography lacks can never
become a background paper. ``max_cited`` keeps only N of them, to bound the
cost: first the works whose text the build can read (found among the local
sources, or to be fetched by arXiv id; the cited_text stage's own lookup), since
only they can become background papers with text, then the most often cited
(ties in order of first citation).

``min_influential`` (off by default) is a flagged fallback for weak labellers,
such as the embedded 135M model, that call everything canonical: labelled
works are promoted in the same order (readable first, then the most often
cited) until that many influential works have text the build can read (as
many as there are), then until that many are influential at all, each marked
``promoted`` and counted in the manifest, so a small offline sample still
yields RQs with background text and nobody mistakes the promotion for the
model's judgement.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import Field

from rqbench.builder import prompt_text as pt
from rqbench.builder.cited_text import CitedTextSettings, citing_works, has_source
from rqbench.builder.llm_stage import LLMStageSettings, ask, is_permanent
from rqbench.builder.stages import gather_calls
from rqbench.llm import LLMCallFailed
from rqbench.records import CitedWork, InfluenceLabel, ParsedPaper, Record, SourcePaper
from rqbench.steps import owned_step

STEP = owned_step(__name__)


class CitationLabel(Record):
    """One cited work's label, or the reason it has none."""

    key: str
    title: str
    frequency: int
    label: InfluenceLabel | None = None
    reason: str = ""
    failure: str | None = None
    promoted: bool = False  # made influential by the min_influential fallback, not by its label

    @property
    def influential(self) -> bool:
        return self.promoted or (self.label is not None and self.label.influential)


class InfluenceResult(Record):
    arxiv_id: str
    total_cited: int
    without_title: int = 0  # cited keys with no bib entry or no title: not labelled
    labels: list[CitationLabel]
    influential_keys: list[str]
    promoted_keys: list[str] = Field(default_factory=list)
    model: str | None = None


def select_cited(
    parsed: ParsedPaper, max_cited: int | None, readable: Callable[[CitedWork], bool] | None = None
) -> list[CitedWork]:
    """The works to label: those with a titled bib entry; the ones whose text the build can read first (only
    they can become background papers with text), then the most often cited, ties by first citation."""
    titled = [w for w in parsed.cited_works if w.bib is not None and (w.bib.title or "").strip()]
    order = {w.key: i for i, w in enumerate(titled)}
    can_read = {w.key: bool(readable(w)) if readable else False for w in titled}
    ranked = sorted(titled, key=lambda w: (not can_read[w.key], -w.frequency, order[w.key]))
    return ranked if max_cited is None else ranked[: max(0, max_cited)]


def variables(paper: SourcePaper, work: CitedWork, settings: LLMStageSettings) -> dict[str, str]:
    return {
        "paper_title": paper.title,
        "cited_title": pt.cited_title(work),
        "frequency": str(work.frequency),
        "sections": pt.sections_list(work),
        "contexts": pt.contexts_block(work.contexts, settings.context_budget_chars),
    }


def promote(labels: list[CitationLabel], readable: list[bool], min_influential: int) -> list[CitationLabel]:
    """The min_influential fallback: labelled works, in selection order, are promoted until ``min_influential`` of
    the influential ones have text the build can read (as many as there are), then until that many are influential
    at all. An RQ needs a background paper with text; a weak labeller's pick among the others cannot give one."""
    out = list(labels)

    def short(only_readable: bool) -> int:
        return min_influential - sum(1 for x, r in zip(out, readable) if x.influential and (r or not only_readable))

    for only_readable in (True, False):
        for i, (x, r) in enumerate(zip(out, readable)):
            if short(only_readable) <= 0:
                break
            if x.label is not None and not x.influential and (r or not only_readable):
                out[i] = x.model_copy(update={"promoted": True})
    return out


def text_readable(
    parsed: ParsedPaper, folder: str | None, sources: CitedTextSettings | None
) -> Callable[[CitedWork], bool]:
    """Whether the cited_text stage will find a work's text (the same lookup, without reading the text)."""
    if sources is None:
        return lambda work: False
    n = citing_works(parsed)
    return lambda work: has_source(work.bib, sources, exclude=Path(folder) if folder else None, citations=n)


async def label_paper(
    item: dict[str, Any],
    llm: Any,
    *,
    settings: LLMStageSettings,
    max_cited: int | None,
    min_influential: int = 0,
    sources: CitedTextSettings | None = None,
) -> list[InfluenceResult]:
    """All labels of one paper; a citation whose reply stayed invalid is kept, unlabelled, with the reason."""
    paper: SourcePaper = item["filter"].paper
    parsed: ParsedPaper = item["parse"]
    readable = text_readable(parsed, item["filter"].folder, sources)
    works = select_cited(parsed, max_cited, readable)
    calls = [ask(llm, settings, STEP.reply_model, variables(paper, w, settings)) for w in works]
    results = await gather_calls(calls)
    labels: list[CitationLabel] = []
    model = None
    for work, res in zip(works, results):
        base = dict(key=work.key, title=pt.cited_title(work), frequency=work.frequency)
        if isinstance(res, LLMCallFailed):
            if not is_permanent(res):
                raise res  # the endpoint failed, not the model: retried on the next run
            labels.append(CitationLabel(**base, failure=f"{res.reason}: {res.detail}"[:500]))
            continue
        reply, model = res
        labels.append(CitationLabel(**base, label=reply.label, reason=reply.reason))
    labels = promote(labels, [readable(w) for w in works], min_influential)
    return [
        InfluenceResult(
            arxiv_id=parsed.arxiv_id,
            total_cited=len(parsed.cited_works),
            without_title=sum(1 for w in parsed.cited_works if w.bib is None or not (w.bib.title or "").strip()),
            labels=labels,
            influential_keys=[x.key for x in labels if x.influential],
            promoted_keys=[x.key for x in labels if x.promoted],
            model=model,
        )
    ]
