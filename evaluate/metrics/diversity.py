"""Diversity of a model's five RQs: are they five questions or one question five times?

A model can reach a high Pass@5 by writing five near-copies of one good question; the five are then one idea,
not five. Si et al. (2024, "Can LLMs Generate Novel Research Ideas?") found that generated ideas repeat at scale
(about 200 unique among 4,000) by deduplicating them on sentence embeddings. Per instance, with the five RQs
embedded (unit vectors from ``similarity.Embedder``, the small ``all-minilm-l6-v2`` by default):

- **mean pairwise similarity**: the mean cosine over the C(k, 2) pairs of the instance's k RQs (k = 5 for a full
  generation; an instance with fewer than two RQs has no value), lower is more diverse;
- **near-duplicate pairs**: how many of those pairs have a cosine of at least ``NEAR_DUPLICATE``.

A model's figure is the mean over its instances, with a 95% cluster bootstrap interval over source papers, as
every figure of the report. The RQs are the submission's own, read from one of its results files (every results
file of a submission holds the same texts). The embedding is the I/O at the edge (``attach_diversity``, run by
``rqbench diversity``): once per (submission, embedding model), its per-instance values are stored in every
results file of the submission (``ResultsFile.diversity``), and the summary, the report and the Space read them
from there, so no page load embeds anything. The figures are pure functions of the stored values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from rqbench.evaluate.metrics.bootstrap import Estimate, cluster_bootstrap_mean
from rqbench.evaluate.metrics.metric import split_candidates
from rqbench.records import DiversityRecord, InstanceDiversity, ResultsFile

# Two RQs at least this similar are near-duplicates. Si et al. deduplicated their generated ideas at a cosine of
# 0.8 on all-MiniLM-L6-v2 embeddings; the same threshold on the same model keeps the count comparable with theirs.
NEAR_DUPLICATE = 0.8
DEFAULT_EMBEDDER = "all-minilm-l6-v2"
DIVERSITY_BOOT = 1000


def pairwise_cosines(vectors: np.ndarray) -> np.ndarray:
    """The cosine of every pair of rows (i < j), in row order; vectors need not be normalised."""
    v = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    unit = v / np.where(norms == 0, 1.0, norms)
    sims = unit @ unit.T
    i, j = np.triu_indices(len(v), k=1)
    return sims[i, j]


def five_similarity(vectors: np.ndarray, threshold: float = NEAR_DUPLICATE) -> tuple[float, int] | None:
    """(mean pairwise cosine, pairs at or above ``threshold``) of one instance's RQs; None under two RQs."""
    if len(vectors) < 2:
        return None
    cos = pairwise_cosines(vectors)
    return float(cos.mean()), int((cos >= threshold).sum())


class DiversityRow(BaseModel):
    """One submission's five-RQ diversity under one embedding model."""

    model: str
    prompt_variant: str
    embedder: str
    threshold: float
    instances: int = Field(description="Instances with at least two RQs.")
    mean_similarity: Estimate | None = Field(description="Mean pairwise cosine of an instance's RQs (lower: diverse).")
    near_duplicate_pairs: Estimate | None = Field(description="Pairs per instance at or above the threshold (0-10).")


def submission_texts(results: Sequence[ResultsFile]) -> dict[str, tuple[ResultsFile, dict[str, list[str]]]]:
    """Per submission hash: one of its results files and, per rq_id, the texts of its model RQs."""
    out: dict[str, tuple[ResultsFile, dict[str, list[str]]]] = {}
    for r in sorted(results, key=lambda r: (r.submission_hash, r.judge.setting, r.judge.label)):
        if r.submission_hash in out:
            continue
        texts = {inst.rq_id: [c.text for c in split_candidates(inst)[1]] for inst in r.instances}
        out[r.submission_hash] = (r, texts)
    return out


def instance_diversity(vectors: Mapping[str, np.ndarray], threshold: float = NEAR_DUPLICATE) -> list[InstanceDiversity]:
    """Each instance's stored values from its RQ vectors (``rq_id`` -> k x d); an instance under two RQs is left out."""
    out = []
    for rq_id in sorted(vectors):
        one = five_similarity(vectors[rq_id], threshold)
        if one is not None:
            out.append(
                InstanceDiversity(rq_id=rq_id, mean_cosine=max(-1.0, min(1.0, one[0])), near_duplicate_pairs=one[1])
            )
    return out


def diversity_row(
    r: ResultsFile,
    record: DiversityRecord,
    *,
    n_boot: int = DIVERSITY_BOOT,
    seed: int = 0,
) -> DiversityRow:
    """A submission's row from its stored record, each instance clustered by its source paper."""
    papers = {inst.rq_id: inst.arxiv_id for inst in r.instances}
    kept = [d for d in record.instances if d.rq_id in papers]
    clusters = [papers[d.rq_id] for d in kept]
    return DiversityRow(
        model=r.submission.model,
        prompt_variant=r.submission.prompt_variant,
        embedder=record.embedder,
        threshold=record.threshold,
        instances=len(kept),
        mean_similarity=cluster_bootstrap_mean([d.mean_cosine for d in kept], clusters, n_boot=n_boot, seed=seed),
        near_duplicate_pairs=cluster_bootstrap_mean(
            [float(d.near_duplicate_pairs) for d in kept], clusters, n_boot=n_boot, seed=seed
        ),
    )


def stored(r: ResultsFile, embedder: str) -> DiversityRecord | None:
    """The file's record under ``embedder``, if one was stored."""
    return next((d for d in r.diversity if d.embedder == embedder), None)


def attach_diversity(
    results: Sequence[ResultsFile], embedder, *, threshold: float = NEAR_DUPLICATE
) -> list[ResultsFile]:
    """The edge: embed each submission's RQs once under ``embedder`` (a ``similarity.Embedder``) and store the record
    in every results file of the submission; returns the files that changed. A submission that already has a record
    for this embedder (in any of its files) is not embedded again: the record is copied to the files that lack it."""
    by_sub: dict[str, list[ResultsFile]] = {}
    for r in results:
        by_sub.setdefault(r.submission_hash, []).append(r)
    texts = submission_texts(results)
    changed = []
    for sub, files in by_sub.items():
        record = next((d for f in files if (d := stored(f, embedder.name)) is not None), None)
        if record is None:
            by_rq = texts[sub][1]
            flat = [t for ts in by_rq.values() for t in ts]
            vecs = embedder.embed(flat) if flat else np.zeros((0, 0))
            vectors, at = {}, 0
            for rq_id, ts in by_rq.items():
                vectors[rq_id] = vecs[at : at + len(ts)]
                at += len(ts)
            record = DiversityRecord(
                embedder=embedder.name, threshold=threshold, instances=instance_diversity(vectors, threshold)
            )
        for f in files:
            if stored(f, embedder.name) is None:
                f.diversity = [*f.diversity, record]
                changed.append(f)
    return changed


def diversity_rows(
    results: Sequence[ResultsFile], embedder: str = DEFAULT_EMBEDDER, *, n_boot: int = DIVERSITY_BOOT, seed: int = 0
) -> list[DiversityRow]:
    """Every submission's row from its stored record under ``embedder``; submissions without one are left out."""
    rows = []
    for r, _ in submission_texts(results).values():
        record = next(
            (d for f in results if f.submission_hash == r.submission_hash if (d := stored(f, embedder)) is not None),
            None,
        )
        if record is not None:
            rows.append(diversity_row(r, record, n_boot=n_boot, seed=seed))
    return sorted(rows, key=lambda d: (d.model, d.prompt_variant))
