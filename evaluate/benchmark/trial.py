"""Trial runs: the first N instances of a dataset revision (``--limit N``), never a result beside full runs.

A trial judges the revision's first N instances in dataset order, whatever the
submission holds. Its coverage is still counted against the whole revision
("1 of 4 instances scored"), and everything it writes says it is a trial
(``ResultsFile.trial``, ``Coverage.trial``, ``Provenance.trial``): its figures
are over those N instances, not the release, so a trial row is never ranked
beside a full run's. The instances outside a trial are not in the run: they are
nobody's failure, neither the model's (no loss) nor the judge's (not unjudged).

The summary keeps a trial's rows apart from the full run's (its own group);
what reads one judge's results per submission without a row to mark them
(agreement, annotation pairs, the judge meta-evaluation, paired tests,
similarity, Browse) reads ``one_run_each``, so a trial never counts twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from rqbench.records import ResultsFile


def trial_text(trial: int, expected: int | None) -> str:
    """How a trial is named wherever it is shown: ``TRIAL, the first 1 of 4 instances only (--limit 1)``."""
    of = f" of {expected}" if expected else ""
    return f"TRIAL, the first {trial}{of} instance{'' if trial == 1 and not of else 's'} only (--limit {trial})"


def trial_mark(trial: int | None, expected: int | None) -> str:
    """The short mark a trial row's name carries (``[trial 1/4]``); empty for a full run."""
    if trial is None:
        return ""
    return f" [trial {trial}/{expected}]" if expected else f" [trial {trial}]"


def one_run_each(results: Sequence[ResultsFile]) -> list[ResultsFile]:
    """Per (submission, judge, setting), one results file: the full run where there is one, else the largest
    trial (a trial's instances are a full run's first ones, judged alike). Order kept."""
    best: dict[tuple[str, str, str], ResultsFile] = {}
    for r in results:
        key = (r.submission_hash, r.judge.label, r.judge.setting)
        held = best.get(key)
        if held is None or _rank(r) > _rank(held):
            best[key] = r
    keep = {id(r) for r in best.values()}
    return [r for r in results if id(r) in keep]


def _rank(r: ResultsFile) -> float:
    return float("inf") if r.trial is None else r.trial
