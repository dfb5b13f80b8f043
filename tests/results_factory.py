"""Hand-built ResultsFile objects for the metric, summary and report tests (no LLM calls)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from rqbench.records import DIAGNOSTIC_SCOPES as DG_SCOPES
from rqbench.records import SOURCE_BOUND_SCOPES as SB_SCOPES
from rqbench.records import (
    CallTotals,
    CandidateScores,
    InstanceResult,
    JudgeSpec,
    NarrownessScore,
    NoveltyScore,
    OverlapReply,
    PromptSetRef,
    RawReply,
    ResultsFile,
    SubmissionMetadata,
)


def nov(o: int = 2, g: int = 2, n: int = 2, rel: int = 1) -> NoveltyScore:
    return NoveltyScore.model_validate({"relevance": rel, "originality": o, "gap_addressing": g, "non_obviousness": n})


def narrow(sb: int = 1, dg: int = 0) -> NarrownessScore:
    return NarrownessScore.model_validate(
        {
            "mentions_source_specific_name": 0,
            "main_object_in_source": 0,
            "introduces_new_mechanism": 0,
            "source_bound_score": sb,
            "diagnostic_test_score": dg,
            "source_bound_scope": SB_SCOPES[sb],
            "diagnostic_scope": DG_SCOPES[dg],
        }
    )


def cand(
    cid: str,
    novelty: tuple[int, int, int] | NoveltyScore | None = (2, 2, 2),
    sb: int | dict[str, int] | None = 1,
    dg: int = 0,
    papers: tuple[str, ...] = ("p1",),
    text: str | None = None,
    by_ordering: list[tuple[int, int, int]] | None = None,
    ranks: list[int] | None = None,
) -> CandidateScores:
    """A candidate; ``novelty`` is (originality, gap_addressing, non_obviousness) at relevance 1."""
    if isinstance(novelty, tuple):
        novelty = nov(*novelty)
    if sb is None:
        narrowness = {}
    elif isinstance(sb, dict):
        narrowness = {p: narrow(v, dg) for p, v in sb.items()}
    else:
        narrowness = {p: narrow(sb, dg) for p in papers}
    return CandidateScores(
        candidate_id=cid,
        text=text or f"What does candidate {cid} ask?",
        novelty=novelty,
        novelty_by_ordering=[nov(*t) for t in (by_ordering or [])],
        rank_by_ordering=list(ranks or []),
        narrowness=narrowness,
    )


def instance(
    rq_id: str,
    gt: CandidateScores,
    model: list[CandidateScores],
    *,
    subfield: str = "cs.CL",
    papers: tuple[str, ...] = ("p1",),
    overlap: list[int] | None = None,
    failures: list[str] | None = None,
    rule_corrections: int = 0,
    raw_replies: list[RawReply] | None = None,
    published: date | None = None,
) -> InstanceResult:
    arxiv_id = rq_id.rsplit("_rq", 1)[0]
    ov = None
    if overlap is not None:
        ov = OverlapReply.model_validate({"pairwise_scores": overlap, "covering_subset_indices": [], "covered": False})
    return InstanceResult(
        rq_id=rq_id,
        arxiv_id=arxiv_id,
        subfield=subfield,
        paper_published=published,
        background_paper_ids=list(papers),
        candidates=[gt, *model],
        overlap=ov,
        failures=list(failures or []),
        rule_corrections=rule_corrections,
        raw_replies=list(raw_replies or []),
    )


def simple_instance(
    rq_id: str,
    gt: tuple[int, int, int],
    model: list[tuple[int, int, int]],
    gt_sb: int = 0,
    model_sb: list[int] | None = None,
    **kw: Any,
) -> InstanceResult:
    model_sb = model_sb if model_sb is not None else [1] * len(model)
    return instance(
        rq_id,
        cand("gt", gt, sb=gt_sb),
        [cand(f"m{i}", m, sb=s) for i, (m, s) in enumerate(zip(model, model_sb))],
        **kw,
    )


def results(
    instances: list[InstanceResult],
    *,
    model: str = "openai/gpt-5.5",
    judge_model: str = "gemini/gemini-3.1-pro",
    label: str | None = None,
    setting: str = "standalone",
    prompt_variant: str = "original",
    submission_hash: str | None = None,
    knowledge_cutoff: date | None = None,
    expected: int | None = None,
    orderings: int = 1,
    totals: CallTotals | None = None,
) -> ResultsFile:
    return ResultsFile(
        dataset_repo="local/rq-bench-sample",
        dataset_revision="v1",
        submission_hash=submission_hash or f"hash-{model}-{prompt_variant}",
        submission=SubmissionMetadata(
            model=model,
            model_type="closed",
            knowledge_cutoff=knowledge_cutoff,
            prompt_variant=prompt_variant,
            date=datetime(2026, 5, 1, tzinfo=timezone.utc),
        ),
        judge=JudgeSpec(
            model=judge_model,
            label=label or judge_model.split("/")[-1],
            setting=setting,
            orderings=orderings,
            prompt_set=PromptSetRef(name="rqbench-v1", hash="b2:abc"),
        ),
        created_at=datetime(2026, 5, 2, tzinfo=timezone.utc),
        instances_expected=expected if expected is not None else len(instances),
        instances=instances,
        totals=totals or CallTotals(),
    )


def metric_value(name: str, inst: InstanceResult, opts: Any = None) -> float | None:
    """Metric ``name`` on one instance as the summary computes it: the score table, then the declared function
    (with the failures accounted as ``opts`` says)."""
    import numpy as np

    from rqbench.evaluate.criteria import METRICS
    from rqbench.evaluate.metrics.metric import ScoreOptions
    from rqbench.evaluate.metrics.score_table import score_table

    spec = METRICS[name]
    t = score_table(results([inst]), opts or ScoreOptions())
    v = t.values(spec, np.arange(len(t)))[0]
    return None if np.isnan(v) else float(v)
