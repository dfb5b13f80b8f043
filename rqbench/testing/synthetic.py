"""Seeded synthetic results files: for the Space's tests and its benchmark.

They have the exact shape judging writes (``rqbench.records.ResultsFile``), with
random but rubric-valid scores, so every code path downstream is the real one.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from rqbench.hashing import content_hash
from rqbench.records import DIAGNOSTIC_SCOPES as DIAG_SCOPES
from rqbench.records import SOURCE_BOUND_SCOPES as SOURCE_SCOPES
from rqbench.records import (
    CandidateScores,
    InstanceResult,
    JudgeSpec,
    NarrownessScore,
    NoveltyScore,
    OverlapReply,
    PromptSetRef,
    ResultsFile,
    SubmissionMetadata,
    rq_id_for,
)

if TYPE_CHECKING:
    from rqbench.space.stores import SpaceStores

SUBFIELDS = ("cs.CL", "cs.LG", "cs.CV", "cs.AI")


def instance_ids(n: int) -> list[tuple[str, str, str]]:
    """(rq_id, arxiv_id, subfield) for ``n`` instances, two RQs per paper."""
    out = []
    for i in range(n):
        arxiv_id = f"2501.{10000 + i // 2:05d}"
        out.append((rq_id_for(arxiv_id, i % 2), arxiv_id, SUBFIELDS[(i // 2) % len(SUBFIELDS)]))
    return out


def _novelty(rng: random.Random, bias: float) -> NoveltyScore:
    def s() -> int:
        return max(0, min(3, round(rng.gauss(1.5 + bias, 0.9))))

    return NoveltyScore(relevance=1, originality=s(), gap_addressing=s(), non_obviousness=s())


def _narrowness(rng: random.Random, bias: float) -> NarrownessScore:
    sb = max(0, min(3, round(rng.gauss(1.0 + bias, 0.8))))
    dg = max(0, min(3, round(rng.gauss(1.0 + bias, 0.8))))
    return NarrownessScore(
        mentions_source_specific_name=int(sb >= 2),
        main_object_in_source=int(sb >= 2),
        introduces_new_mechanism=int(sb == 0),
        source_bound_score=sb,
        diagnostic_test_score=dg,
        source_bound_scope=SOURCE_SCOPES[sb],
        diagnostic_scope=DIAG_SCOPES[dg],
        short_reason_source_bound=f"Scope level {sb} against the source.",
        short_reason_diagnostic=f"Diagnostic level {dg}.",
    )


def make_results(
    model: str,
    *,
    judge: str = "judge-a",
    setting: str = "standalone",
    n_instances: int = 6,
    seed: int = 0,
    bias: float = 0.0,
    prompt_variant: str = "original",
    model_type: str = "open",
    knowledge_cutoff: date | None = None,
    dataset_repo: str = "local/rq-bench-sample",
    dataset_revision: str = "v0.1.0",
    instances_expected: int | None = None,
    gt_texts: dict[str, str] | None = None,
    published: Mapping[str, date] | None = None,
) -> ResultsFile:
    """One results file for ``model`` under one judge; ``bias`` shifts the model's scores up or down.

    published: arXiv id -> first-version date of the source papers that have one (the others stay undated).
    """
    rng = random.Random(f"{seed}:{model}:{judge}:{setting}")
    meta = SubmissionMetadata(
        model=model,
        provider="synthetic",
        model_type=model_type,
        prompt_variant=prompt_variant,
        knowledge_cutoff=knowledge_cutoff,
        date=datetime(2026, 4, 1, tzinfo=timezone.utc),
    )
    instances = []
    for rq_id, arxiv_id, subfield in instance_ids(n_instances):
        papers = [f"2401.{20000 + len(instances):05d}"]
        gt_text = (gt_texts or {}).get(rq_id, f"How does the method of paper {arxiv_id} behave outside its setting?")
        cands = [
            CandidateScores(
                candidate_id="gt",
                text=gt_text,
                novelty=_novelty(rng, 0.0),
                narrowness={papers[0]: _narrowness(rng, -0.4)},
            )
        ]
        for k in range(5):
            cands.append(
                CandidateScores(
                    candidate_id=f"m{k}",
                    text=f"{model} question {k} about {arxiv_id}: what explains result {k}?",
                    novelty=_novelty(rng, bias),
                    narrowness={papers[0]: _narrowness(rng, 0.3)},
                )
            )
        overlap = OverlapReply(
            pairwise_scores=[rng.randint(0, 2) for _ in range(5)], covering_subset_indices=[], covered=False
        )
        instances.append(
            InstanceResult(
                rq_id=rq_id,
                arxiv_id=arxiv_id,
                subfield=subfield,
                background_paper_ids=papers,
                candidates=cands,
                overlap=overlap,
                paper_published=(published or {}).get(arxiv_id),
            )
        )
    return ResultsFile(
        dataset_repo=dataset_repo,
        dataset_revision=dataset_revision,
        submission_hash=content_hash({"model": model, "seed": seed, "variant": prompt_variant}),
        submission=meta,
        judge=JudgeSpec(
            model=f"scripted/{judge}",
            label=judge,
            setting=setting,
            prompt_set=PromptSetRef(name="rqbench-v1", hash="b2:0000"),
        ),
        created_at=datetime(2026, 4, 2, tzinfo=timezone.utc),
        instances_expected=n_instances if instances_expected is None else instances_expected,
        instances=instances,
    )


def fill_results_store(
    root: Path,
    n_models: int,
    *,
    judges: tuple[str, ...] = ("j1",),
    settings: tuple[str, ...] = ("standalone", "comparative"),
    n_instances: int = 4,
    with_requests: bool = False,
) -> "SpaceStores":
    """A Space store under ``root`` holding one results file per (model, judge, setting): ``model-000``... with
    scores spread around the mean, the leaderboard the Space's benchmarks load (500 models: 1,000 rows).
    ``with_requests``: each model also has its finished request in the queue, as on a Space that judged them."""
    from rqbench.space.records import SubmissionRequest
    from rqbench.space.stores import SpaceStores

    stores = SpaceStores.local(root)
    for m in range(n_models):
        written = []
        for judge in judges:
            for setting in settings:
                results = make_results(
                    f"model-{m:03d}",
                    judge=judge,
                    setting=setting,
                    n_instances=n_instances,
                    bias=(m % 7 - 3) / 5,
                    seed=m,
                )
                written.append(stores.results.put(results))
        if with_requests:
            at = results.created_at
            stores.requests.put(
                SubmissionRequest(
                    request_id=results.submission_hash.split(":")[-1][:16],
                    user=f"team-{m:03d}",
                    submission_hash=results.submission_hash,
                    metadata=results.submission,
                    submission_file=f"submissions/team-{m:03d}/{m}.jsonl",
                    dataset_repo=results.dataset_repo,
                    dataset_revision=results.dataset_revision,
                    instances=n_instances,
                    status="finished",
                    submitted_at=at,
                    updated_at=at,
                    attempts=1,
                    results_files=written,
                )
            )
    return stores
