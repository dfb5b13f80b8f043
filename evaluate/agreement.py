"""Human-LLM agreement: who wins, GT or the model's best RQ, according to each evaluator.

An evaluator (an expert annotator, or an LLM judge) makes one pick per instance:
``gt``, ``model`` or ``tie``. Human picks come from annotation CSV files
(columns ``rq_id, evaluator, winner``). An LLM judge's pick is derived from its
stored scores: the GT's score against the model's best RQ's score (chosen by a
``SelectionRule``) on one dimension; for source-boundedness lower wins.
Agreement between two evaluators is the share of their shared instances with
the same pick, with a cluster-bootstrap CI over source papers.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from rqbench.evaluate.bootstrap import Estimate, cluster_bootstrap_mean
from rqbench.evaluate.metrics import (
    Family,
    ScoreOptions,
    SelectionRule,
    Verdict,
    candidate_value,
    family_of,
    select_best,
    split_candidates,
    verdict,
)
from rqbench.io import RecordError, id_label, read_jsonl
from rqbench.records import Record, ResultsFile, parse_rq_id

Winner = Literal["gt", "model", "tie"]
WINNERS: tuple[str, ...] = ("gt", "model", "tie")
REQUIRED_COLUMNS = ("rq_id", "evaluator", "winner")
OPTIONAL_COLUMNS = ("group", "dimension", "notes")
AGREEMENT_BOOT = 1000


class Annotation(Record):
    """One evaluator's pick on one instance."""

    rq_id: str
    evaluator: str = Field(min_length=1)
    winner: Winner
    group: Literal["human", "llm"] = "human"
    dimension: str = Field(default="non_obviousness", description="The rubric dimension the pick is about.")
    notes: str = ""

    @field_validator("rq_id")
    @classmethod
    def _rq_id(cls, v: str) -> str:
        parse_rq_id(v)
        return v

    @property
    def arxiv_id(self) -> str:
        return parse_rq_id(self.rq_id)[0]


# --------------------------------------------------------------------------
# Import
# --------------------------------------------------------------------------


class AnnotationError(RecordError):
    """A bad row of an annotation file: columns are named in quotes; a bad pick lists the allowed ones."""

    FIELD_FORMAT = "field {field!r}"

    def render(self) -> str:
        return super().render() + (f"; expected one of {', '.join(WINNERS)}" if self.field == "winner" else "")


def read_annotations(path: str | Path) -> list[Annotation]:
    """Read an annotation CSV (rq_id, evaluator, winner[, group, dimension, notes]).

    Winner values are case-insensitive (gt/model/tie). Errors name the file, the
    line and the field; a repeated (rq_id, evaluator, dimension) is an error.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such annotation file")
    out: list[Annotation] = []
    seen: dict[tuple[str, str, str], int] = {}
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        cols = [c.strip() for c in (reader.fieldnames or [])]
        missing = [c for c in REQUIRED_COLUMNS if c not in cols]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; an annotation file has columns {list(REQUIRED_COLUMNS)}")
        unknown = [c for c in cols if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
        if unknown:
            raise ValueError(f"{path}: unknown column(s) {unknown}; allowed: {list(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}")
        for raw in reader:
            line = reader.line_num
            row = {k.strip(): (v or "").strip() for k, v in raw.items() if k is not None}
            if None in raw:
                raise ValueError(f"{path}:{line}: more values than columns")
            if not any(row.values()):
                continue
            row["winner"] = row.get("winner", "").lower()
            if not row.get("group"):
                row.pop("group", None)
            if not row.get("dimension"):
                row.pop("dimension", None)
            try:
                ann = Annotation.model_validate(row)
            except ValidationError as exc:
                raise AnnotationError.from_validation(exc, path=path, line=line, show_given=True) from exc
            key = (ann.rq_id, ann.evaluator, ann.dimension)
            if key in seen:
                raise ValueError(
                    f"{path}:{line}: evaluator {ann.evaluator!r} already judged {ann.rq_id} "
                    f"({ann.dimension}) on line {seen[key]}"
                )
            seen[key] = line
            out.append(ann)
    if not out:
        raise ValueError(f"{path}: no annotations")
    return out


def read_annotation_files(paths: Iterable[str | Path]) -> list[Annotation]:
    """Several annotation files; one evaluator may not judge one instance twice across files."""
    out: list[Annotation] = []
    seen: dict[tuple[str, str, str], str] = {}
    for p in paths:
        for ann in read_annotations(p):
            key = (ann.rq_id, ann.evaluator, ann.dimension)
            if key in seen:
                raise ValueError(f"{p}: evaluator {ann.evaluator!r} already judged {ann.rq_id} in {seen[key]}")
            seen[key] = str(p)
            out.append(ann)
    return out


# --------------------------------------------------------------------------
# The paper's printed expert study (appendix A.6)
# --------------------------------------------------------------------------

EXPERT_PREFIX = "expert"


class ExpertSample(Record):
    """One printed sample of an expert study: the pair the raters saw and each rater's pick.

    The format of ``../shared/fixtures/paper_examples/expert_vs_llm.jsonl``: every
    rater, human or LLM, judged the same two RQs (the author-anchored one and the
    model's best-of-five), so agreement here compares like with like. A rater
    whose name starts with ``expert`` is human; every other rater is an LLM judge.
    """

    sample: int = Field(ge=1)
    background_title: str
    background_abstract_summary: str
    gt_rq: str
    model: str
    model_rq: str
    dimension: str = "non_obviousness"
    setting: Literal["standalone", "comparative"] = "comparative"
    verdicts: dict[str, Winner] = Field(min_length=1)

    @property
    def rq_id(self) -> str:
        """A stand-in instance id (the printed samples carry none); each sample is its own cluster."""
        return f"sample-{self.sample}_rq0"


def read_expert_samples(path: str | Path) -> list[ExpertSample]:
    """The samples of an expert-study file; a bad line names the file, the line, the sample and the field."""
    samples = read_jsonl(path, ExpertSample, error=AnnotationError, label=id_label("sample"),
                         hint="; an expert-study line holds sample, gt_rq, model_rq and verdicts")  # fmt: skip
    if not samples:
        raise AnnotationError(f"{path}: no expert-study samples")
    seen: set[int] = set()
    for s in samples:
        if s.sample in seen:
            raise AnnotationError(f"{path}: sample {s.sample} appears twice")
        seen.add(s.sample)
    return samples


def expert_sample_picks(samples: Sequence[ExpertSample]) -> list[Annotation]:
    """Every rater's pick on every sample, as picks the agreement functions take (experts first)."""
    return [
        Annotation(rq_id=s.rq_id, evaluator=rater, winner=winner, dimension=s.dimension,
                   group="human" if rater.lower().startswith(EXPERT_PREFIX) else "llm")
        for s in samples
        for rater, winner in s.verdicts.items()
    ]  # fmt: skip


# --------------------------------------------------------------------------
# LLM judges' picks
# --------------------------------------------------------------------------

_WINNER_OF = {Verdict.win: "model", Verdict.lose: "gt", Verdict.tie: "tie"}


def llm_picks(
    results: Sequence[ResultsFile],
    *,
    dimension: str = "non_obviousness",
    rule: SelectionRule = SelectionRule.per_dimension,
    options: ScoreOptions = ScoreOptions(),
    rq_ids: set[str] | None = None,
) -> list[Annotation]:
    """Each judge's pick per instance: GT vs the selected model RQ on ``dimension``.

    All results must be of one submission (the model the humans compared with).
    Instances where the GT or the selected RQ is unscored give no pick.
    """
    subs = {(r.submission.model, r.submission_hash) for r in results}
    if len(subs) > 1:
        names = sorted(m for m, _ in subs)
        raise ValueError(f"agreement compares GT with one model's RQs, but results hold submissions {names}")
    labels = [r.judge.label for r in results]
    if len(set(labels)) != len(labels):
        raise ValueError(f"two results files for one judge label among {labels}")
    hib = family_of(dimension).higher_is_better
    if family_of(dimension) is Family.overlap:
        raise ValueError("overlap is not a pick dimension")
    out: list[Annotation] = []
    for r in results:
        for inst in r.instances:
            if rq_ids is not None and inst.rq_id not in rq_ids:
                continue
            idx = select_best(inst, rule, dim=dimension, opts=options)
            if idx is None:
                continue
            gt, model = split_candidates(inst)
            papers = inst.background_paper_ids
            v = verdict(
                candidate_value(model[idx], dimension, options, papers),
                candidate_value(gt, dimension, options, papers),
                hib,
            )
            if v is None:
                continue
            out.append(
                Annotation(rq_id=inst.rq_id, evaluator=r.judge.label, winner=_WINNER_OF[v], group="llm", dimension=dimension)
            )
    return out


# --------------------------------------------------------------------------
# Agreement and win rates
# --------------------------------------------------------------------------


class AgreementCell(BaseModel):
    row: str
    col: str
    estimate: Estimate | None = Field(description="Share of shared instances with the same pick; None if none shared.")


class AgreementMatrix(BaseModel):
    """Pairwise agreement; ``rows`` and ``cols`` are evaluator names in display order."""

    rows: list[str]
    cols: list[str]
    row_dimension: str
    col_dimension: str
    cells: list[AgreementCell]

    def get(self, row: str, col: str) -> Estimate | None:
        for c in self.cells:
            if c.row == row and c.col == col:
                return c.estimate
        raise KeyError(f"no cell ({row!r}, {col!r})")


class WinRateRow(BaseModel):
    evaluator: str
    group: str
    dimension: str
    gt: Estimate
    model: Estimate
    tie: Estimate


def evaluators(picks: Sequence[Annotation]) -> list[str]:
    """Evaluator names, humans first, each group in first-seen order."""
    order: list[str] = []
    for group in ("human", "llm"):
        for p in picks:
            if p.group == group and p.evaluator not in order:
                order.append(p.evaluator)
    return order


def _by_evaluator(picks: Sequence[Annotation]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for p in picks:
        out.setdefault(p.evaluator, {})[p.rq_id] = p.winner
    return out


def agreement_matrix(
    row_picks: Sequence[Annotation],
    col_picks: Sequence[Annotation] | None = None,
    *,
    n_boot: int = AGREEMENT_BOOT,
    seed: int = 0,
) -> AgreementMatrix:
    """Agreement of every row evaluator with every column evaluator (the full matrix when one list is given).

    Passing two lists compares across dimensions, e.g. human non-obviousness
    picks (rows) against LLM source-boundedness picks (columns).
    """
    col_picks = row_picks if col_picks is None else col_picks
    rows, cols = evaluators(row_picks), evaluators(col_picks)
    rmap, cmap = _by_evaluator(row_picks), _by_evaluator(col_picks)
    cells = []
    for a in rows:
        for b in cols:
            shared = sorted(set(rmap[a]) & set(cmap[b]))
            values = [float(rmap[a][k] == cmap[b][k]) for k in shared]
            clusters = [parse_rq_id(k)[0] for k in shared]
            cells.append(AgreementCell(row=a, col=b, estimate=cluster_bootstrap_mean(values, clusters, n_boot=n_boot, seed=seed)))
    dims = lambda ps: ",".join(sorted({p.dimension for p in ps}))  # noqa: E731
    return AgreementMatrix(rows=rows, cols=cols, row_dimension=dims(row_picks), col_dimension=dims(col_picks), cells=cells)


def win_rates(picks: Sequence[Annotation], *, n_boot: int = AGREEMENT_BOOT, seed: int = 0) -> list[WinRateRow]:
    """Per evaluator: the share of instances won by the GT, by the model, and tied."""
    out = []
    for ev in evaluators(picks):
        mine = [p for p in picks if p.evaluator == ev]
        clusters = [p.arxiv_id for p in mine]
        est = {
            w: cluster_bootstrap_mean([float(p.winner == w) for p in mine], clusters, n_boot=n_boot, seed=seed)
            for w in WINNERS
        }
        out.append(
            WinRateRow(
                evaluator=ev,
                group=mine[0].group,
                dimension=",".join(sorted({p.dimension for p in mine})),
                gt=est["gt"],
                model=est["model"],
                tie=est["tie"],
            )
        )
    return out


class AgreementReport(BaseModel):
    """Everything the agreement tables show (the paper's Tables 5, 9, 11 and 12)."""

    model: str
    prompt_variant: str
    setting: str
    selection_rule: str
    instances: int
    matrix: AgreementMatrix
    win_rates: list[WinRateRow]
    source_bound_win_rates: list[WinRateRow]
    nonobv_vs_source_bound: AgreementMatrix | None


def agreement_report(
    annotations: Sequence[Annotation],
    results: Sequence[ResultsFile],
    *,
    setting: str = "comparative",
    rule: SelectionRule = SelectionRule.per_dimension,
    options: ScoreOptions = ScoreOptions(),
    n_boot: int = AGREEMENT_BOOT,
    seed: int = 0,
) -> AgreementReport:
    """Agreement among humans and LLM judges on the annotated instances of one submission.

    LLM picks are restricted to the instances the humans annotated, so every
    win rate is over the same sample. Human non-obviousness picks are also
    compared with the LLM judges' source-boundedness picks.
    """
    used = [r for r in results if r.judge.setting == setting]
    if not used:
        raise ValueError(f"no {setting} results among the {len(results)} given; agreement uses {setting} judging")
    human = [a for a in annotations if a.group == "human" and a.dimension == "non_obviousness"]
    annotated = {a.rq_id for a in annotations} or None
    judged = {i.rq_id for r in used for i in r.instances}
    if annotated is not None and not annotated & judged:
        raise ValueError("no annotated rq_id appears in the results; are these the results of the annotated submission?")
    llm_nonobv = llm_picks(used, dimension="non_obviousness", rule=rule, options=options, rq_ids=annotated)
    llm_sb = llm_picks(used, dimension="source_bound_score", rule=rule, options=options, rq_ids=annotated)
    picks = [*human, *[a for a in annotations if a.group == "llm" and a.dimension == "non_obviousness"], *llm_nonobv]
    return AgreementReport(
        model=used[0].submission.model,
        prompt_variant=used[0].submission.prompt_variant,
        setting=setting,
        selection_rule=rule.value,
        instances=len({p.rq_id for p in picks}),
        matrix=agreement_matrix(picks, n_boot=n_boot, seed=seed),
        win_rates=win_rates(picks, n_boot=n_boot, seed=seed),
        source_bound_win_rates=win_rates(llm_sb, n_boot=n_boot, seed=seed),
        nonobv_vs_source_bound=agreement_matrix(human, llm_sb, n_boot=n_boot, seed=seed) if human and llm_sb else None,
    )
