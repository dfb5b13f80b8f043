"""The pair an expert is shown: the author-anchored RQ against one of a model's five, chosen by one rule.

The paper's expert study (§6.2, A.6) puts the GT beside "the best-of-five" RQ of
a model, and every rater, human or LLM judge, gives a verdict on that same pair.
Its printed outputs (A.5) order a model's RQs by non-obviousness, then
originality, then gap addressing, from the comparative judge. ``shown_candidate``
is that rule, and the only place it is written down:

- scores are the **comparative** novelty scores of the submission (its
  standalone ones when it has no comparative results), mean over orderings;
- with several judges, each of the three dimensions is the mean over the judges
  that scored the candidate, so no single judge picks the RQ it is then asked
  to compare (the paper names no judge; A.5 hints at gemini-3.1-pro);
- the RQ with the highest (non-obviousness, originality, gap addressing), in
  that order, is shown; equal keys go to the lowest index (m0 before m1).

The Space's pair building and the agreement code both call it. A shown RQ is
pinned by its candidate id and ``text_hash`` of its text, so an annotation says
which RQ it saw, and a verdict on a pair whose text no longer matches is an
error rather than a comparison of different questions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rqbench.evaluate.criteria import CRITERIA
from rqbench.evaluate.metrics.metric import ScoreOptions, split_candidates
from rqbench.hashing import content_hash
from rqbench.records import InstanceResult, ResultsFile

RULE_NAME = "shown_pair"
RULE = (
    "the model RQ with the highest comparative non-obviousness, then originality, then gap addressing "
    "(each the mean over the comparative judges; standalone scores when there are none); "
    "lowest index on ties"
)
ORDER = CRITERIA["novelty"].tie_break


def text_hash(text: str) -> str:
    """The hash that pins an RQ's text: blake2b of its words joined by single spaces.

    Whitespace is normalised so that a CSV edited in a spreadsheet keeps the hash.
    """
    return content_hash(" ".join(text.split()), size=8)


@dataclass(frozen=True)
class ShownRQ:
    """The model RQ an annotator sees beside the GT for one instance of one submission."""

    submission_hash: str
    rq_id: str
    candidate_id: str
    text: str
    text_hash: str


def best_candidate(
    per_judge: Sequence[InstanceResult], options: ScoreOptions = ScoreOptions(), *, mean_first: bool = False
) -> str | None:
    """The best of a model's RQs for one instance, from its results under each judge: the one best-RQ rule.

    Each of the three novelty dimensions is the mean over the judges that scored the candidate on all three; the
    highest (non-obviousness, originality, gap addressing) wins, preceded by the mean of the three when
    ``mean_first`` (Table 6's "highest mean novelty"); equal keys go to the lowest index. None when no model RQ has
    all three scores under any judge.
    """
    keys: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    order: list[str] = []
    for inst in per_judge:
        _, model = split_candidates(inst)
        for c in model:
            if c.candidate_id not in order:
                order.append(c.candidate_id)
            vals = [CRITERIA["novelty"].candidate_value(c, d, options) for d in ORDER]
            if all(v is not None for v in vals):
                keys[c.candidate_id].append(tuple(vals))  # type: ignore[arg-type]
    if not keys:
        return None
    means = {cid: tuple(sum(k[d] for k in ks) / len(ks) for d in range(len(ORDER))) for cid, ks in keys.items()}

    def key(cid: str) -> tuple[float, ...]:
        m = means[cid]
        return ((sum(m) / len(m),) if mean_first else ()) + m

    # max keeps the first of equal keys: candidates in their stored order, so the lowest index wins a tie
    return max((cid for cid in order if cid in means), key=key)


def shown_candidate(per_judge: Sequence[InstanceResult], options: ScoreOptions = ScoreOptions()) -> str | None:
    """The candidate id (m0..m4) of the model RQ shown for one instance: ``best_candidate`` in the A.5 order.

    None when no model RQ has all three novelty scores under any judge.
    """
    return best_candidate(per_judge, options)


def selection_files(files: Sequence[ResultsFile]) -> list[ResultsFile]:
    """The results files of one submission the rule reads: the comparative ones, else the standalone ones."""
    comparative = [f for f in files if f.judge.setting == "comparative"]
    return comparative or list(files)


def shown_rqs(results: Iterable[ResultsFile], options: ScoreOptions = ScoreOptions()) -> dict[tuple[str, str], ShownRQ]:
    """(submission hash, rq_id) -> the RQ shown for that instance, for every instance with a scored model RQ."""
    by_sub: dict[str, list[ResultsFile]] = defaultdict(list)
    for r in results:
        by_sub[r.submission_hash].append(r)
    out: dict[tuple[str, str], ShownRQ] = {}
    for digest, files in sorted(by_sub.items()):
        per_rq: dict[str, list[InstanceResult]] = defaultdict(list)
        for f in sorted(selection_files(files), key=lambda f: f.judge.label):
            for inst in f.instances:
                per_rq[inst.rq_id].append(inst)
        for rq_id, insts in per_rq.items():
            cid = shown_candidate(insts, options)
            if cid is None:
                continue
            c = next(c for inst in insts for c in inst.candidates if c.candidate_id == cid)
            out[(digest, rq_id)] = ShownRQ(digest, rq_id, c.candidate_id, c.text, text_hash(c.text))
    return out
