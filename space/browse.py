"""The Browse tab's data: pick sub-field, paper and RQ; see the papers, the GT and every model's five RQs.

Pure functions over results files and a paper library (paper id -> CitedPaper).
Everything returned is plain text or a table of plain strings: the page shows
it in text components, so no HTML or Markdown from a paper or a submission is
ever rendered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rqbench.records import CitedPaper, InstanceResult, ResultsFile


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
                out[inst.rq_id] = InstanceRef(inst.rq_id, inst.arxiv_id, inst.subfield, inst.candidates[0].text,
                                              tuple(inst.background_paper_ids))  # fmt: skip
    return out


def subfield_choices(index: Mapping[str, InstanceRef]) -> list[str]:
    return sorted({i.subfield for i in index.values()})


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
        out.append(PaperView(pid, p.title, p.abstract, p.text_level.value,
                             tuple((s.section, s.text) for s in p.sections)))  # fmt: skip
    return out


def _novelty_cell(c) -> str:
    n = c.novelty
    if n is None:
        return "unscored"
    return f"rel {n.relevance} · orig {n.originality} · gap {n.gap_addressing} · non-obv {n.non_obviousness}"


def _narrowness_cell(c) -> str:
    parts = []
    for pid, s in c.narrowness.items():
        parts.append(
            f"[{pid}] source-bound {s.source_bound_score}: {s.short_reason_source_bound} | "
            f"diagnostic {s.diagnostic_test_score}: {s.short_reason_diagnostic}"
        )
    return "\n".join(parts) or "unscored"


def _find(r: ResultsFile, rq_id: str) -> InstanceResult | None:
    return next((i for i in r.instances if i.rq_id == rq_id), None)


def scores_table(results: Sequence[ResultsFile], rq_id: str) -> pd.DataFrame:
    """One row per (model, candidate): the RQ's text and, per judge and setting, its scores and reasons."""
    per_model: dict[str, list[tuple[ResultsFile, InstanceResult]]] = {}
    for r in results:
        inst = _find(r, rq_id)
        if inst is not None:
            per_model.setdefault(r.submission.model, []).append((r, inst))
    records = []
    judge_cols: list[str] = []
    for model in sorted(per_model):
        runs = sorted(per_model[model], key=lambda ri: (ri[0].judge.label, ri[0].judge.setting))
        first_inst = runs[0][1]
        for k, cand in enumerate(first_inst.candidates):
            if cand.candidate_id == "gt":
                continue
            rec: dict[str, str] = {"Model": model, "RQ": cand.candidate_id, "Text": cand.text}
            for r, inst in runs:
                tag = f"{r.judge.label} ({r.judge.setting})"
                match = next((c for c in inst.candidates if c.candidate_id == cand.candidate_id), None)
                for kind, cell in (("novelty", _novelty_cell), ("narrowness", _narrowness_cell)):
                    col = f"{tag} {kind}"
                    rec[col] = cell(match) if match else "missing"
                    if col not in judge_cols:
                        judge_cols.append(col)
                col = f"{tag} overlap with GT"
                idx = k - 1
                ov = inst.overlap.pairwise_scores[idx] if inst.overlap and idx < len(inst.overlap.pairwise_scores) else None
                rec[col] = "" if ov is None else f"{ov}/4"
                if col not in judge_cols:
                    judge_cols.append(col)
            records.append(rec)
    return pd.DataFrame.from_records(records, columns=["Model", "RQ", "Text", *judge_cols])


def gt_scores_table(results: Sequence[ResultsFile], rq_id: str) -> pd.DataFrame:
    """The author-anchored RQ's own scores under each judge (standalone scores are the GT's alone)."""
    records = []
    for r in sorted(results, key=lambda r: (r.judge.label, r.judge.setting, r.submission.model)):
        inst = _find(r, rq_id)
        if inst is None or not inst.candidates:
            continue
        gt = inst.candidates[0]
        records.append({"Judge": r.judge.label, "Setting": r.judge.setting, "Shown with": r.submission.model,
                        "Novelty": _novelty_cell(gt), "Narrowness": _narrowness_cell(gt)})  # fmt: skip
    return pd.DataFrame.from_records(records, columns=["Judge", "Setting", "Shown with", "Novelty", "Narrowness"])
