"""The columnar ``summarize`` equals the per-instance reference computation, row for row and bit for bit."""

from __future__ import annotations

import random
from datetime import date

import pytest
from results_factory import cand, instance, results
from summary_reference import reference_instance_values, reference_summarize

from rqbench.evaluate.criteria import METRICS
from rqbench.evaluate.metrics.metric import FailureAccounting, NarrownessAggregation, OrderingAggregation, ScoreOptions
from rqbench.evaluate.metrics.summary import instance_values, summarize
from rqbench.records import RawReply

SUBFIELDS = ("cs.CL", "cs.LG", "cs.CV")
# model-0's and model-extra's cutoffs leave some instances clean and some not; model-1 states none (no clean figures)
CUTOFFS = {"model-0": date(2025, 6, 15), "model-extra": date(2025, 3, 31)}


def _maybe(rng: random.Random, p: float, value):
    return None if rng.random() < p else value


def _random_candidate(rng: random.Random, cid: str, papers: tuple[str, ...]):
    novelty = _maybe(rng, 0.1, tuple(rng.randint(0, 3) for _ in range(3)))
    orderings = [tuple(rng.randint(0, 3) for _ in range(3)) for _ in range(rng.choice((0, 0, 2, 3)))]
    narrow_papers = [p for p in papers if rng.random() > 0.15]
    sb = {p: rng.randint(0, 3) for p in narrow_papers} if narrow_papers else None
    return cand(
        cid,
        novelty,
        sb=sb,
        dg=rng.randint(0, 3),
        papers=papers,
        by_ordering=orderings or None,
        ranks=list(range(len(orderings))) or None,
    )


def _random_instance(rng: random.Random, k: int, n_model: int):
    papers = tuple(f"p{j}" for j in range(rng.randint(1, 3)))
    gt = _random_candidate(rng, "gt", papers)
    model = [_random_candidate(rng, f"m{i}", papers) for i in range(n_model)]
    overlap = _maybe(rng, 0.2, [rng.randint(0, 4) for _ in range(rng.choice((n_model, 3)))]) if n_model else None
    # a call that failed after its re-ask, kept as its raw reply: a judge's failure whatever the scores say
    raws = (
        [
            RawReply(
                step=rng.choice(("novelty_standalone", "narrowness_comparative", "overlap")),
                cache_key="k",
                text="not json",
                error="invalid_reply: scripted",
            )
        ]
        if n_model and rng.random() < 0.1
        else []
    )
    gt = gt if n_model else cand("gt", None, sb=None)  # no generation: the GT is not judged either
    return instance(
        f"25{rng.randint(1, 12):02d}.{k // 3:05d}_rq{k % 3}",
        gt,
        model,
        subfield=rng.choice(SUBFIELDS),
        papers=papers,
        overlap=overlap,
        raw_replies=raws,
    )


def _dated(files, seed: int):
    """First-version dates, one per paper in the month its id names (about one paper in seven undated), and the
    submissions' cutoffs (``CUTOFFS``)."""
    rng = random.Random(f"dates:{seed}")
    published: dict[str, date | None] = {}
    out = []
    for f in files:
        for i in f.instances:
            if i.arxiv_id not in published:
                published[i.arxiv_id] = _maybe(rng, 0.15, date(2025, int(i.arxiv_id[2:4]), rng.randint(1, 28)))
        insts = [i.model_copy(update={"paper_published": published[i.arxiv_id]}) for i in f.instances]
        meta = f.submission.model_copy(update={"knowledge_cutoff": CUTOFFS.get(f.submission.model)})
        out.append(f.model_copy(update={"instances": insts, "submission": meta}))
    return out


def _random_results(seed: int, n: int = 40):
    rng = random.Random(seed)
    files = []
    for s in range(2):
        for label in ("judge-a", "judge-b", "judge-c")[: rng.randint(1, 3)]:
            for setting in ("standalone", "comparative"):
                # five RQs mostly, four (one missing), or none (no valid generation)
                insts = [_random_instance(rng, k, rng.choice((5, 5, 5, 4, 0))) for k in range(n) if rng.random() > 0.1]
                files.append(results(insts, model=f"model-{s}", label=label, setting=setting))
    # a second standalone file of one judge, overlapping the first: the reference row's "first file wins"
    extra = [_random_instance(rng, k, 5) for k in range(n // 2, n + 10)]
    files.append(results(extra, model="model-extra", label="judge-a", setting="standalone"))
    return _dated(files, seed)


def _dump(rows):
    return [r.model_dump() for r in rows]


@pytest.mark.parametrize("failures", list(FailureAccounting))
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("combine", ["pooled", "mean_scores"])
def test_fast_summarize_equals_the_reference_on_random_results(seed, combine, failures):
    files = _random_results(seed)
    opts = [
        ScoreOptions(failures=failures),
        ScoreOptions(NarrownessAggregation.max, OrderingAggregation.first, failures),
        ScoreOptions(NarrownessAggregation.min, failures=failures),
    ][seed]
    kw = dict(combine=combine, by_subfield=True, options=opts, n_boot=200, seed=seed)
    fast, ref = summarize(files, **kw), reference_summarize(files, **kw)
    assert len(fast) == len(ref) > 0
    assert _dump(fast) == _dump(ref)  # exact, floats included


def test_fast_summarize_equals_the_reference_with_a_repeated_rq_id():
    rng = random.Random(7)
    insts = [_random_instance(rng, k, 5) for k in range(12)]
    insts.append(insts[3].model_copy(update={"subfield": "cs.XX"}))  # the same rq_id again, other scores
    insts.append(_random_instance(random.Random(8), 3, 5))
    files = [results(insts, label="judge-a"), results(list(reversed(insts)), label="judge-b")]
    kw = dict(combine="mean_scores", by_subfield=True, n_boot=100)
    assert _dump(summarize(files, **kw)) == _dump(reference_summarize(files, **kw))


@pytest.mark.parametrize("failures", list(FailureAccounting))
@pytest.mark.parametrize("combine", ["pooled", "mean_scores"])
def test_fast_instance_values_equal_the_reference(combine, failures):
    files = _random_results(3)
    opts = ScoreOptions(failures=failures)
    for name in ("win_originality", "best5_source_bound_score", "overlap5", "tie_diagnostic_test_score"):
        for setting in ("standalone", "comparative"):
            fast = instance_values(files, name, setting=setting, combine=combine, options=opts)
            assert fast == reference_instance_values(files, name, setting=setting, combine=combine, options=opts)
            assert all(type(v) is float for _, per in fast.values() for v in per.values())


def test_every_metric_is_covered_by_the_random_results():
    rows = summarize(_random_results(0), by_subfield=False, n_boot=20)
    seen = {name for r in rows for name in r.figures}
    assert seen == set(METRICS)


def test_the_random_results_have_partial_clean_subsets_and_empty_ones():
    """So the equality above covers the clean figures: some rows clean in part, some with none and a reason."""
    rows = [r for r in summarize(_random_results(0), n_boot=20) if r.row_kind == "model"]
    partial = [r for r in rows if 0 < r.clean.instances < r.provenance.instances_covered and r.clean.undated]
    assert partial and all(r.clean.figures != r.figures for r in partial)
    assert any(r.clean.reason and r.clean.reason.startswith("no knowledge cutoff for ") for r in rows)
