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
file of a submission holds the same texts). The embedding is the I/O at the edge; the figures are pure functions of
the vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from rqbench.evaluate.bootstrap import Estimate, cluster_bootstrap_mean
from rqbench.evaluate.metrics import split_candidates
from rqbench.evaluate.tables import Table
from rqbench.records import ResultsFile

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


def diversity_row(
    r: ResultsFile,
    vectors: dict[str, np.ndarray],
    *,
    embedder: str,
    threshold: float = NEAR_DUPLICATE,
    n_boot: int = DIVERSITY_BOOT,
    seed: int = 0,
) -> DiversityRow:
    """A submission's row from each instance's RQ vectors (``rq_id`` -> k x d), clustered by the instance's paper."""
    papers = {inst.rq_id: inst.arxiv_id for inst in r.instances}
    means, dups, clusters = [], [], []
    for rq_id in sorted(vectors):
        one = five_similarity(vectors[rq_id], threshold)
        if one is None:
            continue
        means.append(one[0])
        dups.append(float(one[1]))
        clusters.append(papers[rq_id])
    return DiversityRow(
        model=r.submission.model,
        prompt_variant=r.submission.prompt_variant,
        embedder=embedder,
        threshold=threshold,
        instances=len(means),
        mean_similarity=cluster_bootstrap_mean(means, clusters, n_boot=n_boot, seed=seed),
        near_duplicate_pairs=cluster_bootstrap_mean(dups, clusters, n_boot=n_boot, seed=seed),
    )


def diversity_rows(
    results: Sequence[ResultsFile],
    embedder,
    *,
    threshold: float = NEAR_DUPLICATE,
    n_boot: int = DIVERSITY_BOOT,
    seed: int = 0,
) -> list[DiversityRow]:
    """Every submission's row under ``embedder`` (a ``similarity.Embedder``: cached, so texts embed once)."""
    rows = []
    for r, texts in submission_texts(results).values():
        flat = [t for ts in texts.values() for t in ts]
        vecs = embedder.embed(flat) if flat else np.zeros((0, 0))
        by_rq, at = {}, 0
        for rq_id, ts in texts.items():
            by_rq[rq_id] = vecs[at : at + len(ts)]
            at += len(ts)
        rows.append(diversity_row(r, by_rq, embedder=embedder.name, threshold=threshold, n_boot=n_boot, seed=seed))
    return sorted(rows, key=lambda d: (d.model, d.prompt_variant))


def diversity_table(rows: Sequence[DiversityRow]) -> Table:
    """The report's table: per model, the mean pairwise similarity of its five and the near-duplicate pairs."""

    def num(e: Estimate | None, digits: int) -> str:
        return "–" if e is None else f"{e.value:.{digits}f} [{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"

    display = pd.DataFrame(
        [
            {
                "model": d.model if d.prompt_variant == "original" else f"{d.model} ({d.prompt_variant})",
                "embedder": d.embedder,
                "mean pairwise similarity [95% CI]": num(d.mean_similarity, 3),
                f"near-duplicate pairs (cosine >= {d.threshold:g}) per instance [95% CI]": num(
                    d.near_duplicate_pairs, 2
                ),
                "instances": d.instances,
            }
            for d in rows
        ]
    )
    data = pd.DataFrame(
        [
            {"model": d.model, "prompt_variant": d.prompt_variant, "embedder": d.embedder, "figure": name}
            | ({"value": e.value, "ci_low": e.ci_low, "ci_high": e.ci_high, "n": e.n} if e else {})
            for d in rows
            for name, e in (("mean_similarity", d.mean_similarity), ("near_duplicate_pairs", d.near_duplicate_pairs))
        ]
    )
    return Table(
        "diversity",
        "Diversity of the five RQs: the mean cosine similarity of an instance's RQs over its 10 pairs (lower is "
        "more diverse), and its pairs at or above the near-duplicate threshold, each the mean over instances.",
        "not in the paper (diversity of the five, docs/metrics.md)",
        display.set_index(["model", "embedder"]) if len(display) else display,
        data,
    )
