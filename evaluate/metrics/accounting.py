"""Failure accounting: whose failure a missing score is, per instance and per results file.

The paper's rates are over every instance of the release, so a missing score has
to be charged to someone:

- the **model's** failure: no valid generation for an instance (the results hold
  the GT only, with ``generation_failed: ...``; an rq_id missing from a partial
  submission is written that way too), or fewer than five RQs in an instance.
  Under the default accounting (`paper`: every instance counted, the paper's denominator; what a failure scores is the project's rule, the paper being silent) such an instance is a loss with the scale's worst
  Best@5, and a missing RQ scores the worst (``metrics.FailureAccounting``);
- the **judge's** failure: a call of a criterion that failed after its re-ask (its
  raw reply kept with the error), or a candidate left without the criterion's
  score. The instance is then *unjudged* for that criterion: it has no model value
  there, and every row it would have entered says how many such instances it lacks.

An instance outside a trial (``--limit N``: the revision's first N instances) is
neither: it is not in the run (``evaluate/benchmark/trial.py``). The criteria say what
"judged" means for each (``Criterion.unjudged``); this module counts, for the judging run's line, the ``Coverage`` every results file
carries, and the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rqbench.evaluate.benchmark.trial import trial_text
from rqbench.evaluate.criteria import CRITERIA, PAPER_CRITERIA
from rqbench.evaluate.metrics.metric import MODEL_RQS, split_candidates
from rqbench.records import Coverage, InstanceResult, ResultsFile

GENERATION_FAILED = "generation_failed"


def criteria_run(r: ResultsFile) -> tuple[str, ...]:
    """The criteria a results file's run judged (``settings["metrics"]``, its stored name); the paper's three when
    unrecorded (a file written before runs recorded them, so before criteria could be declared as data)."""
    names = r.settings.get("metrics")
    if not names:
        return tuple(c.name for c in PAPER_CRITERIA)
    return tuple(c for c in CRITERIA if c in names)


@dataclass(frozen=True)
class InstanceStatus:
    """One instance under one judge: the model's failures and the criteria the judge left unjudged."""

    no_generation: bool
    missing: int  # RQs missing from an instance that has some (of the five)
    unjudged: tuple[str, ...]  # criteria

    @property
    def scored(self) -> bool:
        """Every criterion judged, or nothing to judge (no generation: scored as a loss)."""
        return not self.unjudged


def instance_status(inst: InstanceResult, criteria: Sequence[str]) -> InstanceStatus:
    gt, model = split_candidates(inst)
    unjudged = tuple(c for c in criteria if CRITERIA[c].unjudged(inst, gt, model))
    missing = MODEL_RQS - len(model) if 0 < len(model) < MODEL_RQS else 0
    return InstanceStatus(no_generation=not model, missing=missing, unjudged=unjudged)


def failure_reason(error: str) -> str:
    """The named reason of a failed call (``invalid_reply``, ``truncated``, ``APIConnectionError``, ...)."""
    return error.split(":", 1)[0].strip() or "unknown"


def latest(r: ResultsFile) -> list[InstanceResult]:
    """Each rq_id once, its last instance (as the summary reads a file with a repeated rq_id)."""
    return list({i.rq_id: i for i in r.instances}.values())


def tally(r: ResultsFile) -> Coverage:
    """What a results file scored, who failed where, and the paper's rules applied: its ``coverage``."""
    criteria = criteria_run(r)
    insts = latest(r)
    statuses = [instance_status(i, criteria) for i in insts]
    by_criterion: Counter[str] = Counter(c for s in statuses for c in s.unjudged)
    failed: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    for inst in insts:
        failed.update(failure_reason(raw.error) for raw in inst.raw_replies if raw.error is not None)
        rules.update(inst.rule_applications)
    return Coverage(
        instances_expected=r.instances_expected,
        instances=len(insts),
        instances_scored=sum(s.scored for s in statuses),
        generation_failures=sum(s.no_generation for s in statuses),
        missing_candidates=sum(s.missing for s in statuses),
        unjudged=sum(not s.scored for s in statuses),
        unjudged_by_criterion={c: by_criterion[c] for c in criteria if by_criterion[c]},
        failed_calls=dict(sorted(failed.items())),
        rule_applications=dict(sorted(rules.items())),
        trial=r.trial,
    )


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))


def coverage_line(r: ResultsFile, cov: Coverage | None = None) -> str:
    """``N of M instances scored`` against the dataset revision, then who failed where (the run's and report's line)."""
    cov = cov or tally(r)
    parts = [
        f"{cov.instances_scored} of {cov.instances_expected} instances scored "
        f"(dataset {r.dataset_repo}@{r.dataset_revision})"
    ]
    if cov.trial is not None:
        parts.append(
            f"{trial_text(cov.trial, cov.instances_expected)}; the other "
            f"{cov.instances_expected - cov.trial} are not in this run (nobody's failure)"
        )
    if cov.instances < (cov.trial or cov.instances_expected):
        parts.append(f"{(cov.trial or cov.instances_expected) - cov.instances} not in the results")
    if cov.generation_failures:
        parts.append(
            f"{cov.generation_failures} with no valid generation (the model's failure: a loss with the worst Best@5)"
        )
    if cov.missing_candidates:
        parts.append(f"{cov.missing_candidates} RQ(s) missing (the model's: scored the worst)")
    if cov.unjudged:
        parts.append(
            f"{cov.unjudged} unjudged (the judge's calls failed after their re-ask: "
            f"{_counts(cov.unjudged_by_criterion)}; left out of those figures)"
        )
    if cov.failed_calls:
        parts.append(f"failed calls: {_counts(cov.failed_calls)}")
    parts.append(f"rules applied: {_counts(cov.rule_applications) or 'none'}")
    return "; ".join(parts)


def unjudged_files(results: Sequence[ResultsFile]) -> list[tuple[ResultsFile, Coverage]]:
    """The results files in which a judge left instances unjudged, with their counts."""
    out = []
    for r in results:
        cov = tally(r)
        if cov.unjudged:
            out.append((r, cov))
    return out
