"""The Browse tab's data: pick sub-field, paper and RQ; see the papers, the GT and every model's five RQs.

Pure functions over results files and a paper library (paper id -> CitedPaper).
Everything returned is plain text, or table cells of plain text that
``rqbench.space.html_table`` escapes: no HTML or Markdown from a paper or a
submission is ever rendered.

A judge's reasons are its own words, quoted under its scores and labelled as
its: each distinct reason once per RQ, a reason it already gave for an RQ above
named by that RQ rather than repeated (a weak judge writes one text for every
score), and a long one folded until the reader opens it. A sub-field the
dataset does not know (``UNKNOWN_CATEGORY``) is shown as not recorded, and why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rqbench.evaluate.metrics.metric import GT_ID
from rqbench.records import UNKNOWN_CATEGORY, CandidateScores, CitedPaper, InstanceResult, ResultsFile
from rqbench.space.html_table import Cell, Header, Quote

# How a sub-field the dataset does not know is named in the pickers, and what the Browse tab says of it
SUBFIELD_NOT_RECORDED = "sub-field not recorded"
SUBFIELD_NOT_RECORDED_WHY = "Not recorded: the paper was built from its LaTeX source, without arXiv metadata."
REASON_SHOWN_CHARS = 160  # a judge's reason up to this long is shown whole; a longer one is folded behind its lead
REASON_LEAD = "the judge's reason ({what}):"
REASON_FOLDED_LEAD = "the judge's reason ({what}), {chars} characters: open to read"
REASON_REPEATED = "the judge's reason ({what}): the same words it gave for {row} above"


@dataclass(frozen=True)
class InstanceRef:
    rq_id: str
    arxiv_id: str
    subfield: str
    gt_text: str
    background_paper_ids: tuple[str, ...]


def index_instances(results: Iterable[ResultsFile]) -> dict[str, InstanceRef]:
    """Every instance any results file covers, by rq_id."""
    out: dict[str, InstanceRef] = {}
    for r in results:
        for inst in r.instances:
            if inst.rq_id not in out and inst.candidates:
                out[inst.rq_id] = InstanceRef(
                    inst.rq_id, inst.arxiv_id, inst.subfield, inst.candidates[0].text, tuple(inst.background_paper_ids)
                )
    return out


def subfield_choices(index: Mapping[str, InstanceRef]) -> list[str]:
    return sorted({i.subfield for i in index.values()})


def subfield_label(subfield: str) -> str:
    """A sub-field as a picker shows it: the arXiv category, or that none was recorded."""
    return SUBFIELD_NOT_RECORDED if subfield == UNKNOWN_CATEGORY else subfield


def subfield_note(subfield: str | None) -> str:
    """What the Browse tab says under the sub-field picker: why a sub-field is not recorded, else nothing."""
    return SUBFIELD_NOT_RECORDED_WHY if subfield == UNKNOWN_CATEGORY else ""


def paper_choices(index: Mapping[str, InstanceRef], subfield: str | None) -> list[str]:
    return sorted({i.arxiv_id for i in index.values() if subfield is None or i.subfield == subfield})


def rq_choices(index: Mapping[str, InstanceRef], arxiv_id: str | None) -> list[str]:
    return sorted(i.rq_id for i in index.values() if arxiv_id is None or i.arxiv_id == arxiv_id)


@dataclass(frozen=True)
class PaperView:
    """One background paper as text: a title line, the abstract, and (name, text) per section."""

    paper_id: str
    title: str
    abstract: str
    text_level: str
    sections: tuple[tuple[str, str], ...]


def paper_views(ref: InstanceRef, library: Mapping[str, CitedPaper]) -> list[PaperView]:
    out = []
    for pid in ref.background_paper_ids:
        p = library.get(pid)
        if p is None:
            out.append(PaperView(pid, f"{pid} (not in the loaded dataset)", "", "missing", ()))
            continue
        out.append(
            PaperView(pid, p.title, p.abstract, p.text_level.value, tuple((s.section, s.text) for s in p.sections))
        )
    return out


def rq_labels(index: Mapping[str, InstanceRef], arxiv_id: str | None, width: int = 90) -> list[tuple[str, str]]:
    """(label, rq_id) for the RQ picker: the id and the start of the author-anchored RQ's text."""
    out = []
    for rq_id in rq_choices(index, arxiv_id):
        text = " ".join(index[rq_id].gt_text.split())
        short = text if len(text) <= width else text[: width - 1].rstrip() + "…"
        out.append((f"{rq_id}: {short}", rq_id))
    return out


def first_rq(index: Mapping[str, InstanceRef]) -> str | None:
    """The RQ the tab opens on: the first sub-field's first paper's first RQ."""
    for sub in subfield_choices(index):
        for paper in paper_choices(index, sub):
            rqs = rq_choices(index, paper)
            if rqs:
                return rqs[0]
    return None


def _novelty_line(c: CandidateScores) -> str:
    n = c.novelty
    if n is None:
        return "novelty: unscored"
    return f"orig {n.originality} · gap {n.gap_addressing} · non-obv {n.non_obviousness} · relevant {n.relevance}"


def _narrowness_lines(c: CandidateScores, many_papers: bool) -> list[str]:
    lines = []
    for pid, s in c.narrowness.items():
        where = f"[{pid}] " if many_papers else ""
        lines.append(f"{where}source-bound {s.source_bound_score} · diagnostic {s.diagnostic_test_score}")
    return lines or ["narrowness: unscored"]


def _reasons(c: CandidateScores, many_papers: bool) -> dict[str, list[str]]:
    """Each distinct reason the judge wrote for this RQ (in the order given) -> the scores it was given for."""
    out: dict[str, list[str]] = {}
    for pid, s in c.narrowness.items():
        where = f" [{pid}]" if many_papers else ""
        for what, text in (("source-bound", s.short_reason_source_bound), ("diagnostic", s.short_reason_diagnostic)):
            words = " ".join(text.split())
            if words:
                out.setdefault(words, []).append(what + where)
    return out


def reason_quotes(c: CandidateScores, many_papers: bool, row: str, seen: dict[str, str]) -> tuple[Quote, ...]:
    """The judge's reasons for one RQ as quotes: each distinct one once, one given above (``seen``: reason -> the
    RQ it was first given for, in this judge's column) named by that RQ, a long one folded. Adds to ``seen``."""
    quotes = []
    for words, whats in _reasons(c, many_papers).items():
        what = " and ".join(whats) if len(whats) <= 2 else ", ".join(whats)
        if words in seen:
            quotes.append(Quote(REASON_REPEATED.format(what=what, row=seen[words])))
            continue
        seen[words] = row
        if len(words) > REASON_SHOWN_CHARS:
            quotes.append(Quote(REASON_FOLDED_LEAD.format(what=what, chars=len(words)), words, folded=True))
        else:
            quotes.append(Quote(REASON_LEAD.format(what=what), words))
    return tuple(quotes)


def _find(r: ResultsFile, rq_id: str) -> InstanceResult | None:
    return next((i for i in r.instances if i.rq_id == rq_id), None)


def _scores_cell(inst: InstanceResult, cand: CandidateScores | None, index: int, seen: dict[str, str]) -> Cell:
    """One judge's view of one RQ: novelty, narrowness, overlap with the GT, then the judge's reasons quoted
    (``seen``: the reasons this judge's column has shown so far)."""
    if cand is None:
        return Cell("—", title="This judge has no score for this RQ.", kind="missing")
    many = len(inst.background_paper_ids) > 1
    lines = [_novelty_line(cand), *_narrowness_lines(cand, many)]
    if index > 0 and inst.overlap is not None and index - 1 < len(inst.overlap.pairwise_scores):
        ov = inst.overlap.pairwise_scores[index - 1]
        if ov is not None:
            lines.append(f"overlap with the author-anchored RQ: {ov}/4")
    row = "the GT" if cand.candidate_id == GT_ID else f"RQ {index}"
    return Cell("\n".join(lines), kind="long", quotes=reason_quotes(cand, many, row, seen))


SCORE_KEY = (
    "orig, gap, non-obv: originality, gap addressing, non-obviousness (0-3, higher is more novel); relevant: 0 or 1. "
    "source-bound, diagnostic: narrowness per background paper (0-3, lower is broader). "
    "overlap: how much the RQ covers the author-anchored RQ (0-4). "
    "Under the scores, the judge's reasons in its own words: each once, a long one folded, and one it already gave "
    "for an RQ above named by that RQ."
)


@dataclass(frozen=True)
class ModelBlock:
    """One model's RQs for one instance, the author-anchored RQ first, one column per judge and setting."""

    model: str
    headers: list[Header]
    rows: list[list[Cell]]


def models_for(results: Sequence[ResultsFile], rq_id: str) -> list[str]:
    """The models with RQs for this instance, sorted."""
    return sorted({r.submission.model for r in results if (i := _find(r, rq_id)) is not None and i.candidates})


def candidates_tables(
    results: Sequence[ResultsFile], rq_id: str, models: Sequence[str] | None = None
) -> list[ModelBlock]:
    """Each model's RQs for one instance (``models``, or all), one block per model with the judges that judged it.

    The author-anchored RQ heads each block because comparative judges score it
    beside that model's five; its standalone scores are the same in every block.
    """
    per_model: dict[str, list[tuple[ResultsFile, InstanceResult]]] = {}
    for r in results:
        inst = _find(r, rq_id)
        if inst is not None and inst.candidates and (models is None or r.submission.model in models):
            per_model.setdefault(r.submission.model, []).append((r, inst))
    blocks = []
    for model in sorted(per_model):
        runs = {(r.judge.label, r.judge.setting): inst for r, inst in per_model[model]}
        keys = sorted(runs, key=lambda k: (k[1] != "standalone", k[0]))
        headers = [
            Header("RQ", title="GT: the author-anchored RQ; 1-5: the model's five"),
            Header("Research question", kind="long text"),
        ]
        headers += [
            Header(f"{label} · {setting}", kind="long", title=f"judge {label}, {setting} setting")
            for label, setting in keys
        ]
        rows = []
        seen: dict[tuple[str, str], dict[str, str]] = {key: {} for key in keys}  # per judge column: reason -> RQ
        for k, cand in enumerate(runs[keys[0]].candidates):
            gt = cand.candidate_id == GT_ID
            row = [
                Cell("GT" if gt else str(k), title="the author-anchored RQ" if gt else ""),
                Cell(cand.text, kind="long text"),
            ]
            for key in keys:
                inst = runs[key]
                match = next((c for c in inst.candidates if c.candidate_id == cand.candidate_id), None)
                row.append(_scores_cell(inst, match, k, seen[key]))
            rows.append(row)
        blocks.append(ModelBlock(model, headers, rows))
    return blocks
