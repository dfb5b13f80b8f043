"""Human annotation: which pairs exist, who sees which next, and what a judgment records.

A pair is one instance of one submission: the author-anchored RQ and the model's
best-of-five RQ, picked by ``rqbench.evaluate.metrics.shown_pair`` (the one rule the
agreement tables use too). Once a pair has been judged it keeps the RQ its first
judgment saw, so a judge added later cannot change it under the annotators; every
judgment stores the shown RQ's candidate id and text hash. Sides are
shuffled per (annotator, pair) and never labelled. Assignment keeps to the
annotator's fields, never repeats a pair for them (judged or skipped), and
prefers the pairs with the fewest judgments until each has ``target`` of them.
Agreement numbers are computed by ``rqbench.evaluate.judge_board.agreement``; this module
only collects the human picks.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from rqbench.evaluate.criteria import headline
from rqbench.evaluate.metrics.metric import split_candidates
from rqbench.evaluate.metrics.shown_pair import shown_rqs, text_hash
from rqbench.records import CitedPaper, ExpertPair, InstanceResult, ResultsFile
from rqbench.space.records import HumanJudgment, Side, Skip, utcnow

TARGET_ANNOTATORS = 2
LOCAL_SALT = "rqbench-local-annotators"


def annotator_id(name: str, salt: str | None = None) -> str:
    """A keyed hash of the account name: stable per annotator, not reversible without the Space's salt."""
    key = (salt or os.environ.get("RQB_ANNOTATOR_SALT") or LOCAL_SALT).encode("utf-8")
    digest = hmac.new(key, name.strip().lower().encode("utf-8"), hashlib.blake2b).hexdigest()
    return "ann-" + digest[:20]


@dataclass(frozen=True)
class Pair:
    """One GT-vs-model comparison an annotator can be shown."""

    pair_id: str
    rq_id: str
    arxiv_id: str
    subfield: str
    model: str
    submission_hash: str
    gt_text: str
    model_text: str
    model_candidate: str
    model_text_hash: str
    background_paper_ids: tuple[str, ...]
    dataset_repo: str
    dataset_revision: str


def pair_id_for(submission_hash: str, rq_id: str) -> str:
    return f"{submission_hash.removeprefix('b2:')[:12]}:{rq_id}"


def _first_seen(judgments: Iterable[HumanJudgment]) -> dict[tuple[str, str], HumanJudgment]:
    """(submission hash, rq_id) -> its earliest judgment that recorded the shown RQ."""
    out: dict[tuple[str, str], HumanJudgment] = {}
    for j in sorted(judgments, key=lambda j: (j.created_at, j.judgment_id)):
        if j.model_candidate is not None:
            out.setdefault((j.submission_hash, j.rq_id), j)
    return out


def build_pairs(results: Iterable[ResultsFile], judgments: Iterable[HumanJudgment] = ()) -> list[Pair]:
    """Every pair the stored results allow, one per (submission, instance) with a scored model RQ.

    The model RQ is the shown-pair rule's, except where a judgment already
    recorded one: then that RQ, whose text must still hash as it did (a
    ``ValueError`` names the judgment otherwise).
    """
    results = list(results)
    shown = shown_rqs(results)
    pinned = _first_seen(judgments)
    first: dict[tuple[str, str], tuple[ResultsFile, InstanceResult]] = {}
    for f in sorted(results, key=lambda f: (f.judge.setting != "comparative", f.judge.label)):
        for inst in f.instances:
            first.setdefault((f.submission_hash, inst.rq_id), (f, inst))
    pairs = []
    for (digest, rq_id), (f, inst) in sorted(first.items()):
        gt, model = split_candidates(inst)
        j = pinned.get((digest, rq_id))
        if j is not None:
            c = next((m for m in model if m.candidate_id == j.model_candidate), None)
            if c is None or text_hash(c.text) != j.model_text_hash:
                raise ValueError(
                    f"judgment {j.judgment_id} of {rq_id}: the results no longer hold the RQ it was "
                    f"shown ({j.model_candidate}, text hash {j.model_text_hash})"
                )
        elif (digest, rq_id) in shown:
            cid = shown[(digest, rq_id)].candidate_id
            c = next(m for m in model if m.candidate_id == cid)
        else:
            continue
        pairs.append(
            Pair(
                pair_id=pair_id_for(digest, rq_id),
                rq_id=rq_id,
                arxiv_id=inst.arxiv_id,
                subfield=inst.subfield,
                model=f.submission.model,
                submission_hash=digest,
                gt_text=gt.text,
                model_text=c.text,
                model_candidate=c.candidate_id,
                model_text_hash=text_hash(c.text),
                background_paper_ids=tuple(inst.background_paper_ids),
                dataset_repo=f.dataset_repo,
                dataset_revision=f.dataset_revision,
            )
        )
    return pairs


def pool_pairs(
    judgments: Sequence[HumanJudgment], results: Sequence[ResultsFile], library: Mapping[str, CitedPaper]
) -> tuple[list[ExpertPair], list[str]]:
    """Every annotated pair as an expert-pool pair, and each judged pair that could not become one, with why.

    A pair's texts are the ones its annotators were shown (``build_pairs``), its background the papers the
    tab showed beside them (``library``: the Space's benchmark, each paper whole), its experts the
    annotators (hashed ids), each with their latest pick.
    """
    by_id = {p.pair_id: p for p in build_pairs(results, judgments)}
    picks: dict[str, dict[str, HumanJudgment]] = {}
    for j in sorted(judgments, key=lambda j: (j.created_at, j.judgment_id)):
        picks.setdefault(pair_id_for(j.submission_hash, j.rq_id), {})[j.annotator] = j
    out, left_out = [], []
    for pair_id, mine in sorted(picks.items()):
        pair = by_id.get(pair_id)
        if pair is None:
            left_out.append(f"annotated pair {pair_id}: its submission's results are no longer stored")
            continue
        missing = [pid for pid in pair.background_paper_ids if pid not in library]
        if missing:
            left_out.append(
                f"annotated pair {pair_id}: background paper(s) {missing} are not in this Space's "
                "benchmark, so the background the annotators saw is unknown"
            )
            continue
        out.append(
            ExpertPair(
                pair_id=pair_id,
                source="annotate",
                rq_id=pair.rq_id,
                arxiv_id=pair.arxiv_id,
                subfield=pair.subfield,
                model=pair.model,
                gt_rq=pair.gt_text,
                model_rq=pair.model_text,
                provenance=(
                    f"the Space's Annotate tab: {len(mine)} annotator(s) compared the author-anchored RQ of "
                    f"{pair.rq_id} with {pair.model}'s RQ {pair.model_candidate} (text hash "
                    f"{pair.model_text_hash}), dataset {pair.dataset_repo}@{pair.dataset_revision}, beside "
                    f"{len(pair.background_paper_ids)} background paper(s) in full"
                ),
                background=[library[pid] for pid in pair.background_paper_ids],
                expert_picks={a: j.winner for a, j in sorted(mine.items())},
            )
        )
    return out, left_out


def judged_counts(judgments: Iterable[HumanJudgment]) -> Counter[str]:
    """Distinct annotators per pair (an annotator counts once however often they judged it)."""
    seen = {(pair_id_for(j.submission_hash, j.rq_id), j.annotator) for j in judgments}
    return Counter(p for p, _ in seen)


def seen_by(
    annotator: str, judgments: Iterable[HumanJudgment], skips: Iterable[Skip], pairs: Sequence[Pair]
) -> set[str]:
    """Pair ids this annotator judged or skipped."""
    out = {pair_id_for(j.submission_hash, j.rq_id) for j in judgments if j.annotator == annotator}
    by_model_rq = {(p.model, p.rq_id): p.pair_id for p in pairs}
    for s in skips:
        if s.annotator == annotator and (s.model, s.rq_id) in by_model_rq:
            out.add(by_model_rq[(s.model, s.rq_id)])
    return out


def next_pair(
    pairs: Sequence[Pair],
    *,
    annotator: str,
    fields: Sequence[str],
    judgments: Sequence[HumanJudgment],
    skips: Sequence[Skip] = (),
    target: int = TARGET_ANNOTATORS,
) -> Pair | None:
    """The pair to show next, or None when this annotator has seen every pair in their fields.

    Pairs below ``target`` annotators come first, the least-judged of them first;
    ties are broken at random, seeded by the annotator and their progress, so two
    annotators starting together spread out over the pairs.
    """
    wanted = set(fields)
    seen = seen_by(annotator, judgments, skips, pairs)
    counts = judged_counts(judgments)
    open_pairs = [p for p in pairs if p.subfield in wanted and p.pair_id not in seen]
    if not open_pairs:
        return None
    rng = random.Random(f"{annotator}:{len(seen)}")
    keyed = [((counts[p.pair_id] >= target, counts[p.pair_id], rng.random()), p) for p in open_pairs]
    return min(keyed, key=lambda kp: kp[0])[1]


def left_side(annotator: str, pair: Pair) -> Side:
    """Which RQ goes on the left: a fair coin per (annotator, pair), the same on every reload."""
    return "gt" if random.Random(f"side:{annotator}:{pair.pair_id}").random() < 0.5 else "model"


def shown_texts(annotator: str, pair: Pair) -> tuple[str, str]:
    left = left_side(annotator, pair)
    return (pair.gt_text, pair.model_text) if left == "gt" else (pair.model_text, pair.gt_text)


def make_judgment(
    annotator: str,
    pair: Pair,
    choice: str,
    *,
    shown_at: datetime,
    now: datetime | None = None,
    source_bound_left: int | None = None,
    source_bound_right: int | None = None,
    comment: str = "",
) -> HumanJudgment:
    """The stored record of one choice ("left", "right" or "tie"), mapped back to GT / model."""
    if choice not in ("left", "right", "tie"):
        raise ValueError(f"choice must be left, right or tie, not {choice!r}")
    now = now or utcnow()
    left = left_side(annotator, pair)
    right: Side = "model" if left == "gt" else "gt"
    winner = "tie" if choice == "tie" else (left if choice == "left" else right)
    return HumanJudgment(
        judgment_id=f"{now:%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}",
        annotator=annotator,
        rq_id=pair.rq_id,
        subfield=pair.subfield,
        model=pair.model,
        submission_hash=pair.submission_hash,
        model_candidate=pair.model_candidate,
        model_text_hash=pair.model_text_hash,
        left=left,
        choice=choice,
        winner=winner,
        source_bound_left=source_bound_left,
        source_bound_right=source_bound_right,
        comment=comment.strip()[:2000],
        seconds=max(0.0, (now - shown_at).total_seconds()),
        dataset_repo=pair.dataset_repo,
        dataset_revision=pair.dataset_revision,
        created_at=now,
    )


def make_skip(annotator: str, pair: Pair, now: datetime | None = None) -> Skip:
    return Skip(annotator=annotator, rq_id=pair.rq_id, model=pair.model, created_at=now or utcnow())


def subfields(pairs: Iterable[Pair]) -> list[str]:
    return sorted({p.subfield for p in pairs})


# --------------------------------------------------------------------------
# Human agreement, for the leaderboard column group and the Annotate tab
# --------------------------------------------------------------------------


def human_picks(judgments: Iterable[HumanJudgment], submission_hash: str):
    """The stored judgments of one submission as ``evaluate.agreement.Annotation`` picks (one per annotator)."""
    from rqbench.evaluate.judge_board.agreement import Annotation

    return [
        Annotation(
            rq_id=j.rq_id,
            evaluator=j.annotator,
            winner=j.winner,
            group="human",
            dimension=headline("novelty"),
            candidate_id=j.model_candidate,
            candidate_hash=j.model_text_hash,
            origin=f"judgment {j.judgment_id}",
        )
        for j in judgments
        if j.submission_hash == submission_hash
    ]


def annotated_picks(judgments: Sequence[HumanJudgment], results: Sequence[ResultsFile]):
    """For each (submission, setting) that people annotated: its results files, the human picks pinned to the
    RQ each annotator was shown (``pin_to_shown``), and the judges' ``llm_picks`` on those same pairs.

    The leaderboard's agreement column and the Agreement view both start here, so they compare the same picks.
    """
    from rqbench.evaluate.judge_board.agreement import llm_picks, pin_to_shown

    by_key: dict[tuple[str, str], list[ResultsFile]] = {}
    by_sub: dict[str, list[ResultsFile]] = {}
    for r in results:
        by_key.setdefault((r.submission_hash, r.judge.setting), []).append(r)
        by_sub.setdefault(r.submission_hash, []).append(r)
    for (digest, setting), files in sorted(by_key.items()):
        humans = human_picks(judgments, digest)
        if not humans:
            continue
        humans = pin_to_shown(humans, by_sub[digest])
        yield files, setting, humans, llm_picks(files, humans, dimension=headline("novelty"))


def agreement_cells(judgments: Sequence[HumanJudgment], results: Sequence[ResultsFile], *, n_boot: int = 500):
    """(model, setting, judge) -> share of (annotator, instance) picks the judge matched, with a cluster CI.

    Judge picks come from ``evaluate.agreement.llm_picks``: the judge's verdict
    on non-obviousness between the GT and the very RQ the annotator was shown
    (judgments made before the shown RQ was recorded get the shown-pair rule's).
    Each annotator's pick is one observation, as the pooled rule treats judges;
    ``combined`` pools every judge of the setting.
    """
    from rqbench.evaluate.metrics import outcomes
    from rqbench.evaluate.metrics.summary_row import COMBINED
    from rqbench.space.leaderboard import AgreementCell

    out: dict[tuple[str, str, str], AgreementCell] = {}
    for files, setting, humans, picks in annotated_picks(judgments, results):
        per_judge: dict[str, dict[str, str]] = {}
        for p in picks:
            per_judge.setdefault(p.evaluator, {})[p.pair] = p.winner
        # one item per (judge, annotator's pick): the pick of the human, and the judge's on the same pair
        human_picks: dict[tuple[str, int], str] = {}
        judge_picks: dict[tuple[str, int], str] = {}
        for judge, mine in sorted(per_judge.items()):
            for i, h in enumerate(humans):
                if h.pair in mine:
                    human_picks[(judge, i)], judge_picks[(judge, i)] = h.winner, mine[h.pair]

        def paper(item: tuple[str, int], humans=humans) -> str:
            return humans[item[1]].arxiv_id

        model = files[0].submission.model
        for judge in sorted(per_judge):
            est = outcomes.agreement(
                {k: v for k, v in human_picks.items() if k[0] == judge}, judge_picks, cluster_of=paper, n_boot=n_boot
            )
            if est is not None:
                out[(model, setting, judge)] = AgreementCell(est.value, est.ci_low, est.ci_high, est.n)
        est = outcomes.agreement(human_picks, judge_picks, cluster_of=paper, n_boot=n_boot)
        if est is not None and len(per_judge) > 0:
            out[(model, setting, COMBINED)] = AgreementCell(est.value, est.ci_low, est.ci_high, est.n)
    return out


def expert_corrected_cells(judgments: Sequence[HumanJudgment], results: Sequence[ResultsFile]):
    """(model, "comparative", judge) -> the judge's win rate corrected with the annotators' picks, for the
    leaderboard's expert-corrected columns: ``evaluate.expert_corrected.corrected_by_judge`` per annotated
    submission, as ``rqbench report --annotations`` computes it (each annotator's pick pinned to the RQ they were
    shown; an annotator who judged an instance twice counts with their last pick). Only comparative rows, per judge:
    ``combined`` pools several judges' picks, and the rectifier corrects one judge's.
    """
    from rqbench.evaluate.judge_board.expert_corrected import ExpertCorrectedRate, corrected_by_judge

    by_sub: dict[str, list[ResultsFile]] = {}
    for r in results:
        by_sub.setdefault(r.submission_hash, []).append(r)
    out: dict[tuple[str, str, str], ExpertCorrectedRate] = {}
    for digest, files in sorted(by_sub.items()):
        humans = human_picks(judgments, digest)
        if humans:
            for judge, rate in corrected_by_judge(humans, files):
                out[(files[0].submission.model, "comparative", judge)] = rate
    return out


AGREEMENT_COLUMNS = ["Model", "Setting", "Judge", "Agreement %", "95% CI", "Picks"]


def agreement_rows(cells) -> list[list[object]]:
    """The Annotate tab's agreement table: the same cells as the leaderboard's human-agreement column."""
    rows = []
    for (model, setting, judge), c in sorted(cells.items()):
        rows.append(
            [model, setting, judge, round(100 * c.value, 1), f"[{100 * c.ci_low:.1f}, {100 * c.ci_high:.1f}]", c.n]
        )
    return rows
