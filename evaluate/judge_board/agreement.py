"""Human-LLM agreement: who wins, GT or the model RQ shown beside it, according to each evaluator.

An evaluator (an expert annotator, or an LLM judge) makes one pick per pair:
``gt``, ``model`` or ``tie``. A pair is one instance's GT and the model RQ an
annotator was shown (``rqbench.evaluate.metrics.shown_pair``: one rule picks it, and the
annotation records its candidate id and text hash). Human picks come from
annotation CSV files (columns ``rq_id, evaluator, winner``, optionally
``candidate_id, candidate_hash``) or the Space's judgments. An LLM judge's pick
is derived from its stored scores on that same pair: the GT's score against the
shown RQ's score on one dimension; for source-boundedness lower wins. The
non-obviousness picks (Tables 5, 11) and the source-boundedness picks (Tables
9, 12) each come from one judging setting, named apart: the paper does not say
which setting its Table 9 used, so it is a choice (``source_bound_setting``,
``--source-bound-setting``; comparative by default).
Agreement between two evaluators is the share of their shared pairs with the
same pick, with a cluster-bootstrap CI over source papers.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from rqbench.evaluate import criteria
from rqbench.evaluate.metrics import outcomes
from rqbench.evaluate.metrics.bootstrap import Estimate
from rqbench.evaluate.metrics.metric import ScoreOptions, split_candidates, verdicts
from rqbench.evaluate.metrics.shown_pair import RULE_NAME, shown_rqs, text_hash
from rqbench.io import RecordError, id_label, read_jsonl
from rqbench.records import PICKS, Pick, Record, ResultsFile, parse_rq_id, pick_of

# the dimensions the paper's study (A.6) asked about: novelty's headline, and narrowness's for the source-bound pick
NOVELTY_HEADLINE = criteria.headline("novelty")
NARROWNESS_HEADLINE = criteria.headline("narrowness")
Winner = Pick  # an annotation's winner is a pick (rqbench.records.outcomes)
WINNERS: tuple[str, ...] = PICKS
REQUIRED_COLUMNS = ("rq_id", "evaluator", "winner")
OPTIONAL_COLUMNS = ("group", "dimension", "notes", "candidate_id", "candidate_hash")
AGREEMENT_BOOT = 1000
SOURCE_BOUND_FLAG = "--source-bound-setting"


class Annotation(Record):
    """One evaluator's pick on one pair: an instance's GT against the model RQ the evaluator saw."""

    rq_id: str
    evaluator: str = Field(min_length=1)
    winner: Winner
    group: Literal["human", "llm"] = "human"
    dimension: str = Field(default=NOVELTY_HEADLINE, description="The rubric dimension the pick is about.")
    notes: str = ""
    candidate_id: str | None = Field(
        default=None, pattern=r"^m\d+$", description="The model RQ shown (m0..m4); None: the shown-pair rule fills it."
    )
    candidate_hash: str | None = Field(
        default=None, min_length=1, description="text_hash of the RQ as shown, checked against the results."
    )
    origin: str = Field(default="", description="Where the pick comes from (file:line, a judgment), for errors.")

    @field_validator("rq_id")
    @classmethod
    def _rq_id(cls, v: str) -> str:
        parse_rq_id(v)
        return v

    @model_validator(mode="after")
    def _hash_needs_id(self) -> Annotation:
        if self.candidate_hash is not None and self.candidate_id is None:
            raise ValueError("candidate_hash is given without candidate_id (the hash pins the text of that candidate)")
        return self

    @property
    def arxiv_id(self) -> str:
        return parse_rq_id(self.rq_id)[0]

    @property
    def pair(self) -> str:
        """The pair the pick is about: the instance, and the model RQ shown when it is known."""
        return self.rq_id if self.candidate_id is None else f"{self.rq_id}#{self.candidate_id}"

    @property
    def who(self) -> str:
        """The annotation, named for an error message."""
        where = f"{self.origin}: " if self.origin else ""
        return f"{where}annotation by {self.evaluator!r} of {self.rq_id}"


# --------------------------------------------------------------------------
# Import
# --------------------------------------------------------------------------


class AnnotationError(RecordError):
    """A bad row of an annotation file: columns are named in quotes; a bad pick lists the allowed ones."""

    FIELD_FORMAT = "field {field!r}"

    def render(self) -> str:
        return super().render() + (f"; expected one of {', '.join(WINNERS)}" if self.field == "winner" else "")


def read_annotations(path: str | Path) -> list[Annotation]:
    """Read an annotation CSV (rq_id, evaluator, winner[, group, dimension, notes, candidate_id, candidate_hash]).

    Winner values are case-insensitive (gt/model/tie). Errors name the file, the
    line and the field; a repeated (rq_id, evaluator, dimension) is an error.
    Files without the candidate columns (or with empty cells) still read: the
    shown-pair rule fills the candidate in when the results are joined.
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
            raise ValueError(
                f"{path}: missing column(s) {missing}; an annotation file has columns {list(REQUIRED_COLUMNS)}"
            )
        unknown = [c for c in cols if c not in REQUIRED_COLUMNS + OPTIONAL_COLUMNS]
        if unknown:
            raise ValueError(
                f"{path}: unknown column(s) {unknown}; allowed: {list(REQUIRED_COLUMNS + OPTIONAL_COLUMNS)}"
            )
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
            for optional in ("dimension", "candidate_id", "candidate_hash"):
                if not row.get(optional):
                    row.pop(optional, None)
            row["origin"] = f"{path}:{line}"
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
    dimension: str = NOVELTY_HEADLINE
    setting: Literal["standalone", "comparative"] = "comparative"
    verdicts: dict[str, Winner] = Field(min_length=1)

    @property
    def rq_id(self) -> str:
        """A stand-in instance id (the printed samples carry none); each sample is its own cluster."""
        return f"sample-{self.sample}_rq0"


def read_expert_samples(path: str | Path) -> list[ExpertSample]:
    """The samples of an expert-study file; a bad line names the file, the line, the sample and the field."""
    samples = read_jsonl(
        path,
        ExpertSample,
        error=AnnotationError,
        label=id_label("sample"),
        hint="; an expert-study line holds sample, gt_rq, model_rq and verdicts",
    )
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
        Annotation(
            rq_id=s.rq_id,
            evaluator=rater,
            winner=winner,
            dimension=s.dimension,
            group="human" if rater.lower().startswith(EXPERT_PREFIX) else "llm",
        )
        for s in samples
        for rater, winner in s.verdicts.items()
    ]


# --------------------------------------------------------------------------
# LLM judges' picks
# --------------------------------------------------------------------------


def _one_submission(results: Sequence[ResultsFile]) -> None:
    subs = {(r.submission.model, r.submission_hash) for r in results}
    if len(subs) > 1:
        names = sorted(m for m, _ in subs)
        raise ValueError(f"agreement compares GT with one model's RQs, but results hold submissions {names}")


def pin_to_shown(
    annotations: Sequence[Annotation], results: Sequence[ResultsFile], options: ScoreOptions = ScoreOptions()
) -> list[Annotation]:
    """Each annotation with the model RQ it saw, checked against the results of the annotated submission.

    An annotation without a candidate id gets the RQ the shown-pair rule picks
    from ``results`` (all of the submission's files: the rule prefers the
    comparative ones). One with an id must name a model RQ of its instance, and
    that RQ's text in every results file must hash to the annotation's hash
    (filled in when it has none); otherwise an ``AnnotationError`` names the
    annotation. Annotations of instances the results do not hold, or whose
    instance has no scored model RQ, come back unpinned.
    """
    _one_submission(results)
    shown = shown_rqs(results, options)
    texts: dict[tuple[str, str], set[str]] = {}
    for r in results:
        for inst in r.instances:
            for c in split_candidates(inst)[1]:
                texts.setdefault((inst.rq_id, c.candidate_id), set()).add(text_hash(c.text))
    held = {inst.rq_id for r in results for inst in r.instances}
    digest = results[0].submission_hash if results else ""
    out: list[Annotation] = []
    for a in annotations:
        if a.rq_id not in held:
            out.append(a)
            continue
        if a.candidate_id is None:
            s = shown.get((digest, a.rq_id))
            out.append(
                a if s is None else a.model_copy(update={"candidate_id": s.candidate_id, "candidate_hash": s.text_hash})
            )
            continue
        hashes = texts.get((a.rq_id, a.candidate_id))
        if not hashes:
            raise AnnotationError(
                f"{a.who}: candidate {a.candidate_id!r} is not a model RQ of {a.rq_id} in the results"
            )
        if len(hashes) > 1:
            raise AnnotationError(
                f"{a.who}: the results files hold {len(hashes)} different texts for "
                f"{a.rq_id} {a.candidate_id}; they are not of one submission"
            )
        (got,) = hashes
        if a.candidate_hash is None:
            out.append(a.model_copy(update={"candidate_hash": got}))
        elif a.candidate_hash != got:
            raise AnnotationError(
                f"{a.who}: the shown RQ {a.candidate_id} had text hash {a.candidate_hash}, but the results hold a "
                f"text with hash {got}; the annotation was made on another text (another submission, or an edit)"
            )
        else:
            out.append(a)
    return out


def llm_picks(
    results: Sequence[ResultsFile],
    shown: Sequence[Annotation],
    *,
    dimension: str = NOVELTY_HEADLINE,
    options: ScoreOptions = ScoreOptions(),
) -> list[Annotation]:
    """Each judge's pick on every pair in ``shown``: the GT against that same model RQ, on ``dimension``.

    ``shown`` are annotations pinned by ``pin_to_shown`` (unpinned ones have no
    pair and give no pick). All results must be of the annotated submission. A
    judge whose results hold another text for a shown RQ than the annotation's
    hash is an ``AnnotationError`` naming the annotation. Pairs where the GT or
    the shown RQ is unscored give no pick.
    """
    _one_submission(results)
    labels = [r.judge.label for r in results]
    if len(set(labels)) != len(labels):
        raise ValueError(f"two results files for one judge label among {labels}")
    crit, dim = criteria.dimension(dimension)
    if not crit.per_candidate:
        raise ValueError(f"{dimension} is not a pick dimension")
    pairs: dict[tuple[str, str], Annotation] = {}
    for a in shown:
        if a.candidate_id is not None:
            pairs.setdefault((a.rq_id, a.candidate_id), a)
    found: list[tuple[str, str, str, str, str, float, float]] = []  # (rq_id, cid, hash, label, origin, model, gt)
    for r in results:
        by_rq = {inst.rq_id: inst for inst in r.instances}
        for (rq_id, cid), a in pairs.items():
            inst = by_rq.get(rq_id)
            if inst is None:
                continue
            gt, model = split_candidates(inst)
            c = next((m for m in model if m.candidate_id == cid), None)
            if c is None:
                raise AnnotationError(f"{a.who}: {r.judge.label}'s results have no model RQ {cid!r} for {rq_id}")
            h = text_hash(c.text)
            if a.candidate_hash is not None and h != a.candidate_hash:
                raise AnnotationError(
                    f"{a.who}: {r.judge.label}'s results hold another text for the shown RQ {cid} "
                    f"(hash {h}, shown {a.candidate_hash})"
                )
            papers = inst.background_paper_ids
            mine, theirs = (crit.candidate_value(x, dimension, options, papers) for x in (c, gt))
            found.append(
                (
                    rq_id,
                    cid,
                    h,
                    r.judge.label,
                    f"{r.judge.label} ({r.judge.setting})",
                    np.nan if mine is None else mine,
                    np.nan if theirs is None else theirs,
                )
            )
    # the model RQ against the GT, as the Pass@5 verdict compares Best@5 with it
    outcome = verdicts(np.array([f[5] for f in found]), np.array([f[6] for f in found]), dim.higher_is_better)
    out: list[Annotation] = []
    for k, (rq_id, cid, h, label, origin, _, _) in enumerate(found):
        v = next((v for v, hit in outcome.items() if hit[k] == 1.0), None)
        if v is None:  # the GT or the shown RQ is unscored
            continue
        out.append(
            Annotation(
                rq_id=rq_id,
                evaluator=label,
                winner=pick_of(v),
                group="llm",
                dimension=dimension,
                candidate_id=cid,
                candidate_hash=h,
                origin=origin,
            )
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


def _by_evaluator(picks: Sequence[Annotation]) -> dict[str, dict[str, Annotation]]:
    out: dict[str, dict[str, Annotation]] = {}
    for p in picks:
        out.setdefault(p.evaluator, {})[p.pair] = p
    return out


def agreement_matrix(
    row_picks: Sequence[Annotation],
    col_picks: Sequence[Annotation] | None = None,
    *,
    n_boot: int = AGREEMENT_BOOT,
    seed: int = 0,
) -> AgreementMatrix:
    """Agreement of every row evaluator with every column evaluator (the full matrix when one list is given).

    Two evaluators are compared on the pairs both judged (an instance and the
    model RQ shown, when known). Passing two lists compares across dimensions, e.g. human non-obviousness
    picks (rows) against LLM source-boundedness picks (columns).
    """
    col_picks = row_picks if col_picks is None else col_picks
    rows, cols = evaluators(row_picks), evaluators(col_picks)
    rmap, cmap = _by_evaluator(row_picks), _by_evaluator(col_picks)
    cells = []
    for a in rows:
        for b in cols:
            mine, theirs = rmap[a], cmap[b]
            estimate = outcomes.agreement(
                {k: mine[k].winner for k in sorted(mine)},
                {k: p.winner for k, p in theirs.items()},
                cluster_of=lambda k, mine=mine: mine[k].arxiv_id,
                n_boot=n_boot,
                seed=seed,
            )
            cells.append(AgreementCell(row=a, col=b, estimate=estimate))
    dims = lambda ps: ",".join(sorted({p.dimension for p in ps}))  # noqa: E731
    return AgreementMatrix(
        rows=rows, cols=cols, row_dimension=dims(row_picks), col_dimension=dims(col_picks), cells=cells
    )


def win_rates(picks: Sequence[Annotation], *, n_boot: int = AGREEMENT_BOOT, seed: int = 0) -> list[WinRateRow]:
    """Per evaluator: the share of instances won by the GT, by the model, and tied."""
    out = []
    for ev in evaluators(picks):
        mine = [p for p in picks if p.evaluator == ev]
        est = {
            w: outcomes.pick_rate(
                dict(enumerate(p.winner for p in mine)),  # every pick, in the order given
                w,
                cluster_of=lambda i, mine=mine: mine[i].arxiv_id,
                n_boot=n_boot,
                seed=seed,
            )
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
    setting: str = Field(description="The judging the LLM non-obviousness picks (Tables 5, 11) come from.")
    source_bound_setting: str = Field(
        description="The judging the LLM source-boundedness picks (Tables 9, 12) come from (--source-bound-setting); "
        "the paper does not say which."
    )
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
    source_bound_setting: str = "comparative",
    options: ScoreOptions = ScoreOptions(),
    n_boot: int = AGREEMENT_BOOT,
    seed: int = 0,
) -> AgreementReport:
    """Agreement among humans and LLM judges on the pairs the annotators saw, for one submission.

    ``results`` are the submission's files (both settings may be given: the
    shown-pair rule reads the comparative ones); LLM non-obviousness picks come
    from the ``setting`` files, on exactly the pairs annotated, so every win rate
    is over the same sample. Human non-obviousness picks are also compared with
    the LLM judges' source-boundedness picks on the same pairs (the paper's
    Table 9); those picks come from the ``source_bound_setting`` files (the
    paper does not say which setting; ``--source-bound-setting`` in the CLIs).
    A setting whose results are missing is a ``ValueError`` naming it.
    """
    for name, value in (("setting", setting), ("source_bound_setting", source_bound_setting)):
        if value not in criteria.SETTINGS:
            raise ValueError(
                f"{name} {value!r} is not a judging setting; expected one of {', '.join(criteria.SETTINGS)}"
            )
    used = [r for r in results if r.judge.setting == setting]
    if not used:
        raise ValueError(f"no {setting} results among the {len(results)} given; agreement uses {setting} judging")
    sb_used = [r for r in results if r.judge.setting == source_bound_setting]
    if not sb_used:
        raise ValueError(
            f"no {source_bound_setting} results among the {len(results)} given; the source-boundedness picks "
            f"(Tables 9 and 12) use {source_bound_setting} judging ({SOURCE_BOUND_FLAG} {source_bound_setting}): "
            f"give the submission's {source_bound_setting} results or choose another {SOURCE_BOUND_FLAG}"
        )
    if not annotations:
        raise ValueError("no annotations given")
    annotated = {a.rq_id for a in annotations}
    judged = {i.rq_id for r in used for i in r.instances}
    if not annotated & judged:
        raise ValueError(
            "no annotated rq_id appears in the results; are these the results of the annotated submission?"
        )
    if not annotated & {i.rq_id for r in sb_used for i in r.instances}:
        raise ValueError(
            f"no annotated rq_id appears in the {source_bound_setting} results the source-boundedness picks use "
            f"({SOURCE_BOUND_FLAG} {source_bound_setting})"
        )
    pinned = pin_to_shown(annotations, results, options)
    human = [a for a in pinned if a.group == "human" and a.dimension == NOVELTY_HEADLINE]
    llm_nonobv = llm_picks(used, pinned, dimension=NOVELTY_HEADLINE, options=options)
    llm_sb = llm_picks(sb_used, pinned, dimension=NARROWNESS_HEADLINE, options=options)
    picks = [*human, *[a for a in pinned if a.group == "llm" and a.dimension == NOVELTY_HEADLINE], *llm_nonobv]
    return AgreementReport(
        model=used[0].submission.model,
        prompt_variant=used[0].submission.prompt_variant,
        setting=setting,
        source_bound_setting=source_bound_setting,
        selection_rule=RULE_NAME,
        instances=len({p.rq_id for p in picks}),
        matrix=agreement_matrix(picks, n_boot=n_boot, seed=seed),
        win_rates=win_rates(picks, n_boot=n_boot, seed=seed),
        source_bound_win_rates=win_rates(llm_sb, n_boot=n_boot, seed=seed),
        nonobv_vs_source_bound=agreement_matrix(human, llm_sb, n_boot=n_boot, seed=seed) if human and llm_sb else None,
    )
