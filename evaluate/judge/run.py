"""The judging run: a submission, several judges, one or two settings -> one results file each.

Every call goes through ``LLM.ask``, so a rerun pays for nothing already
answered (the cache), and a crash loses nothing but unfinished calls. A call
that fails is recorded by name in its instance's ``failures`` with its raw reply
kept; the candidate stays unscored (``None``), never 0. ``reparse`` rescores
the raw replies stored in existing results files without any call;
``retry_failed`` re-asks the calls whose cached reply did not validate (plain
reruns already re-send calls that failed in transport, since those were never
cached). A reply cut at the reply budget is recorded as ``truncated`` (its raw
reply flagged), never re-asked as a format error. Each instance records what of
each background paper the judge's prompts carried (tokens kept and cut), and
each file the protocol and its departures from the paper's (``protocol``).
Results files are written atomically (temporary file + ``os.replace``). A trial
(``Benchmark.subset``: the revision's first N instances) writes its own files
(``results_path``), marked ``trial`` and counted against the whole revision.

Totals come from the call log of this run (requests sent, cache hits, tokens
and cost of the requests sent), added to those of the run that wrote the file
before, so a rerun does not erase what the file cost.

``only_new`` (``rqbench judge --only-new``) extends earlier results instead of
judging everything: the newest results file in the output folder of the same
generator, judge, setting, prompt set and run settings (``earlier_results``)
keeps every instance it holds whose texts are still those of the dataset and the
submission (``carried_instances``); only the rest (say, the instances a new
release added) are judged, through ``LLM.ask`` as always, and the merged file
replaces the earlier one, its totals added up and ``settings["carried"]``
saying what was kept from which revision.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rqbench.evaluate.benchmark.background import BackgroundPolicy
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.criteria import (
    CRITERIA,
    DECLARED,
    GT_ID,
    ORDER_KEY,
    SETTINGS,
    JudgeConfig,
    JudgeRequest,
    candidate_id,
    criterion_for_step,
)
from rqbench.evaluate.criteria.requests import ask
from rqbench.evaluate.generate.cost import submission_generation_cost
from rqbench.evaluate.generate.submission_files import Submission
from rqbench.evaluate.judge.schedule import InstanceScheduler
from rqbench.evaluate.metrics.accounting import GENERATION_FAILED, coverage_line, tally
from rqbench.evaluate.protocol import ModelUse, RecordedGeneration, RunPlan, judge_use
from rqbench.io import read_model, write_atomic
from rqbench.llm.catalog import parse_model_spec, spec_matches
from rqbench.llm.client import LLM, validate_reply
from rqbench.llm.config import public_label
from rqbench.paths import slug
from rqbench.progress import progress_bar
from rqbench.prompts import PromptSet, load_prompt_set
from rqbench.records import (
    CallTotals,
    CandidateScores,
    InstanceResult,
    JudgeSpec,
    PaperCut,
    PromptSetRef,
    ProtocolRecord,
    RawReply,
    Reply,
    ResultsFile,
    rule_counts,
)

ALL_CRITERIA: tuple[str, ...] = tuple(CRITERIA)
NOT_SUBMITTED = "not in the submission"


def results_path(out_dir: Path, submission: Submission, label: str, setting: str, trial: int | None = None) -> Path:
    """One file per (submission, judge, setting), and one per trial size beside it: a trial never overwrites the
    full run's file, nor the full run a trial's."""
    run = f"-trial{trial}" if trial is not None else ""
    name = (
        f"{slug(submission.metadata.model)}-{submission.hash.removeprefix('b2:')[:10]}{run}__{slug(label)}__"
        f"{setting}.json"
    )
    return out_dir / name


def _stored_results(out_dir: Path, submission: Submission, spec: str, setting: str, trial: int | None) -> list[Path]:
    prefix = results_path(out_dir, submission, "x", setting, trial).name.split("__")[0]
    found = [
        p
        for p in sorted(out_dir.glob(f"{prefix}__*__{setting}.json"))
        if spec_matches(spec, read_results(p).judge.label)
    ]
    if not found:
        raise FileNotFoundError(
            f"--reparse: no {setting} results file of judge {spec!r} for this submission in {out_dir}"
        )
    return found


def read_results(path: Path) -> ResultsFile:
    return read_model(path, ResultsFile, kind="results file")


def write_results(path: Path, results: ResultsFile) -> Path:
    return write_atomic(path, results.model_dump_json(indent=1))


# --------------------------------------------------------------------------
# one instance
# --------------------------------------------------------------------------


@dataclass
class _Outcome:
    req: JudgeRequest
    raw: RawReply | None  # None: dry run
    reply: Reply | None = None
    failure: str | None = None


def _new_instance(bench: Benchmark, rq_id: str, candidates: dict[str, str]) -> InstanceResult:
    inst = bench.instance(rq_id)
    return InstanceResult(
        rq_id=rq_id,
        arxiv_id=inst.paper_id,
        subfield=inst.subfield,
        paper_published=inst.paper_published,
        background_paper_ids=list(inst.background_paper_ids),
        candidates=[CandidateScores(candidate_id=c, text=t) for c, t in candidates.items()],
    )


def _candidates(gt: str, rqs: Sequence[str]) -> dict[str, str]:
    return {GT_ID: gt, **{candidate_id(i): q for i, q in enumerate(rqs)}}


def _apply(result: InstanceResult, outcomes: Sequence[_Outcome]) -> None:
    """Put replies into the result in request order (orderings stay aligned), count the paper's rules applied."""
    raws, failures = list(result.raw_replies), list(result.failures)
    rules = Counter(result.rule_applications)
    for o in outcomes:
        if o.raw is None:
            continue
        raws.append(o.raw)
        if o.reply is not None:
            CRITERIA[o.req.criterion].apply(o.req, o.reply, result)
            rules.update(rule_counts(o.reply))
        else:
            failures.append(o.failure or f"{o.req.label()}: unknown failure")
    result.raw_replies, result.failures = raws, failures
    result.rule_applications = dict(sorted(rules.items()))
    result.rule_corrections = sum(rules.values())


async def _ask(llm: LLM, judge: JudgeConfig, req: JudgeRequest, retry_failed: bool) -> _Outcome:
    asked = await ask(llm, judge, req, retry_failed=retry_failed)
    if asked.raw is None:  # counted, or queued for a batch: the final pass finds the reply in the cache
        return _Outcome(req, None)
    if asked.answer is None:
        return _Outcome(req, asked.raw, None, f"{req.label()}: {asked.raw.error}")
    return _Outcome(req, asked.raw, asked.answer.reply)


# --------------------------------------------------------------------------
# reparse
# --------------------------------------------------------------------------


def reparse_results(results: ResultsFile) -> ResultsFile:
    """Rescore every stored raw reply with today's reply models and rules; no call is made."""
    out = results.model_copy(deep=True)
    out.coverage = None  # counted again below, from the rescored instances
    for inst in out.instances:
        kept = [f for f in inst.failures if f.startswith(GENERATION_FAILED)]
        for c in CRITERIA.values():
            c.reset(inst)
        raws, inst.raw_replies, inst.failures = inst.raw_replies, [], kept
        inst.rule_corrections, inst.rule_applications = 0, {}
        outcomes = []
        for raw in raws:
            criterion = criterion_for_step(raw.step)
            req = JudgeRequest(
                criterion.name,
                raw.step,
                [],
                criterion.reply_model_for(raw.step),
                tuple(raw.candidate_order),
                raw.paper_id,
            )
            if raw.text is None or raw.truncated:  # a reply cut at the budget stays cut: it is not reparsed
                outcomes.append(_Outcome(req, raw, None, f"{req.label()}: {raw.error or 'no reply text'}"))
                continue
            try:
                reply = validate_reply(req.reply_model, raw.text, req.context)
            except ValueError as exc:
                bad = raw.model_copy(update={"error": f"invalid_reply: {exc}"})
                outcomes.append(_Outcome(req, bad, None, f"{req.label()}: invalid_reply: {exc}"))
                continue
            outcomes.append(_Outcome(req, raw.model_copy(update={"error": None}), reply))
        _apply(inst, outcomes)
    out.coverage = tally(out)
    return out


# --------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------


@dataclass
class _BatchPhase:
    """The batch rounds of a ``--batch`` run, which answer every judge and setting before any file is written.

    Their requests are attributed to results files by step (a setting's own steps;
    steps shared by both settings, such as overlap, to the first setting, which is
    where a direct run pays for them), and their wall time is split evenly.
    """

    t0: float
    wall0: float
    n_files: int
    seconds: float | None = None

    def share(self) -> float:
        return 0.0 if self.seconds is None else self.seconds / max(1, self.n_files)

    def steps_of(self, setting: str, settings: Sequence[str]) -> Callable[[str], bool] | None:
        if self.seconds is None:
            return None

        def keep(step: str) -> bool:
            base = step.split(":", 1)[0]
            own = [s for s in SETTINGS if base.endswith(f"_{s}")]
            return own == [setting] if own else setting == settings[0]

        return keep


def _totals(
    llm: LLM,
    model: str,
    since: float,
    seconds: float,
    before: CallTotals | None,
    keep_step: Callable[[str], bool] | None = None,
) -> CallTotals:
    rows = [
        r
        for r in llm.store.summary(run_id=llm.run_id, since=since)
        if r["model"] == model and (keep_step is None or keep_step(r["step"]))
    ]
    t = CallTotals(
        calls=int(sum(r["requests"] or 0 for r in rows)),
        cache_hits=int(sum(r["cache_hits"] or 0 for r in rows)),
        tokens_in=int(sum(r["tokens_in"] or 0 for r in rows)),
        tokens_out=int(sum(r["tokens_out"] or 0 for r in rows)),
        cost_usd=float(sum(r["cost_usd"] or 0.0 for r in rows)),
        unpriced=int(sum(r["unpriced"] or 0 for r in rows)),
        seconds=round(seconds, 3),
        run_ids=[llm.run_id] if rows else [],
    )
    if before is None:
        return t
    return CallTotals(
        calls=before.calls + t.calls,
        cache_hits=t.cache_hits,
        tokens_in=before.tokens_in + t.tokens_in,
        tokens_out=before.tokens_out + t.tokens_out,
        cost_usd=before.cost_usd + t.cost_usd,
        unpriced=before.unpriced + t.unpriced,
        seconds=round(before.seconds + t.seconds, 3),
        run_ids=sorted({*before.run_ids, *t.run_ids}),
    )


def _inputs(reqs: Sequence[JudgeRequest]) -> dict[str, list[PaperCut]]:
    """Per criterion, what of each background paper its prompts carried (one entry per paper)."""
    out: dict[str, dict[str, PaperCut]] = {}
    for r in reqs:
        for cut in r.background:
            out.setdefault(r.criterion, {}).setdefault(cut.paper_id, cut)
    return {m: list(cuts.values()) for m, cuts in out.items()}


async def _judge_one(
    bench: Benchmark,
    submission: Submission,
    judge: JudgeConfig,
    criteria: Sequence[str],
    llm: LLM,
    concurrency: int,
    progress: bool,
    retry_failed: bool,
    skip: frozenset[str] = frozenset(),
) -> list[InstanceResult]:
    # the slots the model really has: the LLM layer serialises calls beyond its max_concurrency (llama.cpp: 1),
    # and the scheduler's order only holds for the calls it lets through
    scheduler = InstanceScheduler(min(concurrency, llm.model(judge.model).max_concurrency))

    async def asked(req: JudgeRequest) -> _Outcome:
        return await _ask(llm, judge, req, retry_failed)

    async def one(rank: int, rq_id: str) -> InstanceResult:
        entry = submission.entries.get(rq_id)
        inst = bench.instance(rq_id)
        if entry is None or entry.failure is not None:  # the model's failure: nothing to judge, and it counts
            result = _new_instance(bench, rq_id, {GT_ID: inst.gt_rq})
            result.failures = [f"{GENERATION_FAILED}: {NOT_SUBMITTED if entry is None else entry.failure}"]
            return result
        cands = _candidates(inst.gt_rq, entry.research_questions)
        result = _new_instance(bench, rq_id, cands)
        reqs = [r for c in criteria for r in CRITERIA[c].requests(judge, bench, inst, cands)]
        result.background = _inputs(reqs)
        # instance by instance, one call per shared prefix first, so a prefix cache is warm for the rest
        outcomes = await scheduler.run(rank, reqs, lambda r: (r.step, r.shared_prefix), asked)
        _apply(result, outcomes)
        return result

    # every instance of the revision, or of the trial (but those --only-new keeps): one the submission lacks is
    # written as a failed generation (the paper's rates are over every instance, and under its accounting that one
    # is a loss); the submission's lines for instances outside a trial are not read
    rq_ids = [i.rq_id for i in bench.instances if i.rq_id not in skip]
    bar = progress_bar(total=len(rq_ids), desc=f"judge {judge.label} {judge.setting}", unit="rq", enabled=progress)
    tasks = {rq_id: asyncio.ensure_future(one(rank, rq_id)) for rank, rq_id in enumerate(rq_ids)}
    for t in tasks.values():
        t.add_done_callback(lambda _t: bar.update(1))
    try:
        done = await asyncio.gather(*tasks.values())
    finally:
        bar.close()
    return list(done)


# --------------------------------------------------------------------------
# --only-new: extend earlier results
# --------------------------------------------------------------------------


def _run_settings(policy: BackgroundPolicy, criteria: Sequence[str]) -> dict[str, Any]:
    # "metrics" is the stored name of the criteria run (results files already published use it); a criterion
    # declared as data adds the hash of what it sends and reads (DeclaredCriterion.hash), as the prompt set's is recorded
    out: dict[str, Any] = {"background": policy.model_dump(), "metrics": list(criteria)}
    declared = {c: DECLARED[c].hash for c in criteria if c in DECLARED}
    if declared:
        out["declared_criteria"] = declared
    return out


def earlier_results(
    out_dir: Path,
    benchmark: Benchmark,
    submission: Submission,
    judge: JudgeSpec,
    run_settings: dict[str, Any],
    trial: int | None = None,
) -> tuple[Path, ResultsFile] | None:
    """The newest results file in ``out_dir`` that ``--only-new`` may extend: the same dataset repository,
    generator (model and prompt variant), judge configuration (model, label, setting, sampling, seed,
    orderings, prompt set), run settings (background policy, criteria) and run size (full, or a trial of
    the same N); None when there is none."""
    found: list[tuple[datetime, Path, ResultsFile]] = []
    for path in sorted(Path(out_dir).glob(f"*__{slug(judge.label)}__{judge.setting}.json")):  # results_path's names
        rf = read_results(path)
        same = (
            rf.dataset_repo == benchmark.name
            and rf.judge == judge
            and (rf.submission.model, rf.submission.prompt_variant)
            == (submission.metadata.model, submission.metadata.prompt_variant)
            and {k: rf.settings.get(k) for k in run_settings} == run_settings
            and rf.trial == trial
        )
        if same:
            found.append((rf.created_at, path, rf))
    if not found:
        return None
    _, path, rf = max(found, key=lambda t: t[0])
    return path, rf


def carried_instances(earlier: ResultsFile, benchmark: Benchmark, submission: Submission) -> dict[str, InstanceResult]:
    """The earlier instance results that still stand: the instance is in the dataset with the same GT and
    background papers, and the submission's entry is the one judged (same five RQs, or the same failure)."""
    out: dict[str, InstanceResult] = {}
    wanted = set(benchmark.rq_ids)
    for result in earlier.instances:
        entry = submission.entries.get(result.rq_id)
        if result.rq_id not in wanted or entry is None:
            continue
        inst = benchmark.instance(result.rq_id)
        texts = {c.candidate_id: c.text for c in result.candidates}
        judged = [texts.get(candidate_id(i)) for i in range(len(entry.research_questions))]
        if (
            texts.get(GT_ID) != inst.gt_rq
            or result.background_paper_ids != list(inst.background_paper_ids)
            or judged != list(entry.research_questions)
            or len(texts) != 1 + len(entry.research_questions)
        ):
            continue
        out[result.rq_id] = result.model_copy(update={"paper_published": inst.paper_published})
    return out


def judge_submission(*args: Any, **kwargs: Any) -> list[Path]:
    """Judge a submission with every judge in every setting; the results files written (none in a dry run).

    Takes the arguments of ``ajudge_submission``; this is its synchronous entry point.
    """
    return asyncio.run(ajudge_submission(*args, **kwargs))


async def ajudge_submission(
    benchmark: Benchmark,
    submission: Submission,
    judges: Sequence[str | ModelUse],
    settings: Sequence[str],
    *,
    llm: LLM,
    seed: int = 0,
    orderings: int = 1,
    out_dir: str | Path,
    reparse: bool = False,
    retry_failed: bool = False,
    criteria: Sequence[str] = ALL_CRITERIA,
    prompts: PromptSet | None = None,
    policy: BackgroundPolicy | None = None,
    context_tokens: int | None = None,
    protocol: ProtocolRecord | None = None,
    concurrency: int = 8,
    progress: bool = True,
    only_new: bool = False,
) -> list[Path]:
    """The async body of ``judge_submission`` (for callers already inside an event loop).

    ``judges`` are the judges as the command line resolved them (``protocol.judge_use``: resolved once, with the
    settings the run plan printed), or model specs that are resolved here the same way.

    ``policy`` fixes every judge's background budget; by default each judge reads the papers whole up
    to its context window (``context_tokens``, if given). ``protocol`` is what the files record; by
    default the departures are worked out here, under the name ``custom``.
    """
    bad = [s for s in settings if s not in SETTINGS] + [c for c in criteria if c not in CRITERIA]
    if bad:
        raise ValueError(
            f"unknown settings or criteria {bad}; settings: {SETTINGS}, criteria: {sorted(CRITERIA)} (a criterion "
            "declared as data is known where RQB_CRITERIA names its folder)"
        )
    if orderings < 1:
        raise ValueError("orderings must be >= 1")
    prompts = prompts or load_prompt_set()
    out = Path(out_dir)
    generation = submission_generation_cost(submission.path, llm.store)  # read once, stored in every file
    written: list[Path] = []
    if reparse:
        for spec in (j.spec if isinstance(j, ModelUse) else j for j in judges):
            for setting in settings:
                for path in _stored_results(out, submission, spec, setting, benchmark.trial):
                    written.append(write_results(path, reparse_results(read_results(path))))
        return written

    def resolved(judge: str | ModelUse) -> ModelUse:
        if isinstance(judge, ModelUse):
            llm.register(judge.config)  # the same settings in this client, whichever client resolved it
            return judge
        return judge_use(judge, llm, context_tokens=context_tokens, fixed=policy)

    uses = [resolved(j) for j in judges]
    if protocol is None:
        protocol = RunPlan(
            "custom",
            uses,
            RecordedGeneration(submission.metadata),
            submission.metadata.prompt_variant,
            prompts,
            settings,
            criteria,
            orderings,
            instances=len(benchmark.instances),
            instances_total=benchmark.instances_expected,
        ).record()

    def judge_config(use: ModelUse, setting: str) -> JudgeConfig:
        return JudgeConfig(
            model=use.name,
            label=use.label,
            setting=setting,
            prompts=prompts,
            policy=use.policy,  # type: ignore[arg-type]
            seed=seed,
            orderings=orderings if setting == "comparative" else 1,
        )

    def spec_record(use: ModelUse, setting: str) -> JudgeSpec:
        cfg, judge = use.config, judge_config(use, setting)
        return JudgeSpec(
            model=parse_model_spec(cfg.name)[0],
            label=cfg.name,
            setting=setting,  # type: ignore[arg-type]
            temperature=cfg.temperature,
            reasoning_effort=cfg.reasoning_effort,
            seed=seed,
            orderings=judge.orderings,
            order_key=ORDER_KEY.format(seed=seed, judge=public_label(cfg.name), rq_id="{rq_id}", ordering="{ordering}"),
            prompt_set=PromptSetRef(**prompts.ref()),
        )

    # --only-new: per judge and setting, the earlier results it extends and the instances they keep
    earlier: dict[tuple[int, str], tuple[Path, ResultsFile] | None] = {
        (id(use), setting): earlier_results(
            out,
            benchmark,
            submission,
            spec_record(use, setting),
            _run_settings(judge_config(use, setting).policy, criteria),
            benchmark.trial,
        )
        if only_new
        else None
        for use in uses
        for setting in settings
    }
    carried = {
        key: carried_instances(found[1], benchmark, submission) if found else {} for key, found in earlier.items()
    }

    by_batch = _BatchPhase(time.time(), time.monotonic(), len(uses) * len(settings))
    if llm.batch and not llm.dry_run:
        # every judge and setting at once: one batch per model, then the passes below run from the cache
        async def every_judge() -> None:
            for use in uses:
                for setting in settings:
                    await _judge_one(
                        benchmark,
                        submission,
                        judge_config(use, setting),
                        criteria,
                        llm,
                        concurrency,
                        progress=False,
                        retry_failed=llm.retry_failed or retry_failed,
                        skip=frozenset(carried[id(use), setting]),
                    )

        await llm.fill_by_batches(every_judge)
        by_batch.seconds = time.monotonic() - by_batch.wall0
    for use in uses:
        cfg = use.config
        for setting in settings:
            judge = judge_config(use, setting)
            label, pol = cfg.name, judge.policy
            path = results_path(out, submission, label, setting, benchmark.trial)
            before, kept = earlier[id(use), setting], carried[id(use), setting]
            existing = read_results(path) if path.exists() else (before[1] if before else None)
            t0, wall = time.time(), time.monotonic()
            if by_batch.seconds is not None:
                t0 = by_batch.t0
            judged = await _judge_one(
                benchmark,
                submission,
                judge,
                criteria,
                llm,
                concurrency,
                progress,
                retry_failed=llm.retry_failed or retry_failed,
                skip=frozenset(kept),
            )
            if llm.dry_run:
                continue
            by_id = {**kept, **{i.rq_id: i for i in judged}}
            instances = [by_id[i.rq_id] for i in benchmark.instances if i.rq_id in by_id]
            carry_note = (
                {
                    "carried": {
                        "instances": len(kept),
                        "from_revision": before[1].dataset_revision,
                        "from_file": before[0].name,
                        "judged_now": len(judged),
                    }
                }
                if before
                else {}
            )
            results = ResultsFile(
                dataset_repo=benchmark.name,
                dataset_version=benchmark.version,
                dataset_revision=benchmark.revision,
                submission_hash=submission.hash,
                submission=submission.metadata,
                judge=spec_record(use, setting),
                created_at=datetime.now(timezone.utc),
                instances_expected=benchmark.instances_expected,
                trial=benchmark.trial,
                instances=instances,
                totals=_totals(
                    llm,
                    cfg.name,
                    t0,
                    time.monotonic() - wall + by_batch.share(),
                    existing.totals if existing else None,
                    by_batch.steps_of(setting, settings),
                ),
                settings={
                    **_run_settings(pol, criteria),
                    "coverage": f"{len(instances)}/{benchmark.instances_expected}",
                    **carry_note,
                },
                protocol=protocol,
                generation_cost=generation,
            )
            results.coverage = tally(results)
            written.append(write_results(path, results))
            if before is not None and before[0] != path:
                before[0].unlink()  # the merged file holds all of it: every instance, raw reply and total
    return written


# --------------------------------------------------------------------------
# position bias under --orderings
# --------------------------------------------------------------------------


@dataclass
class OrderingStats:
    """How much a comparative judge's scores depend on where a candidate is shown."""

    instances: int = 0
    mean_total_by_position: list[float | None] = field(default_factory=list)
    gt_verdict_flip_rate: float | None = None
    pairwise_flip_rate: float | None = None

    def line(self) -> str:
        pos = ", ".join("-" if v is None else f"{v:.2f}" for v in self.mean_total_by_position)

        def fmt(v: float | None) -> str:
            return "n/a" if v is None else f"{v:.1%}"

        return (
            f"{self.instances} instances with >= 2 orderings; mean novelty total by shown position [{pos}]; "
            f"GT-vs-best verdict flips in {fmt(self.gt_verdict_flip_rate)}; pairwise order flips {fmt(self.pairwise_flip_rate)}"
        )


def ordering_stats(results: ResultsFile) -> OrderingStats:
    """Position bias (mean total by shown position) and flip rates over an instance's orderings."""
    by_pos: dict[int, list[int]] = {}
    flips, n_inst, pair_flips, pairs = 0, 0, 0, 0
    comparative = CRITERIA["novelty"].step_for("comparative")
    for inst in results.instances:
        raws = [r for r in inst.raw_replies if r.step == comparative and r.error is None]
        cands = {c.candidate_id: c for c in inst.candidates}
        if not raws or any(len(c.novelty_by_ordering) != len(raws) for c in cands.values()):
            continue
        for k, raw in enumerate(raws):
            for pos, cid in enumerate(raw.candidate_order):
                by_pos.setdefault(pos, []).append(cands[cid].novelty_by_ordering[k].total)
        if len(raws) < 2:
            continue
        n_inst += 1
        verdicts = set()
        for k in range(len(raws)):
            gt = cands[GT_ID].novelty_by_ordering[k].sort_key()
            best = max(c.novelty_by_ordering[k].sort_key() for cid, c in cands.items() if cid != GT_ID)
            verdicts.add((best > gt) - (best < gt))
        flips += len(verdicts) > 1
        for a, b in itertools.combinations(cands.values(), 2):
            signs = {(x > y) - (x < y) for x, y in zip(a.rank_by_ordering, b.rank_by_ordering, strict=True)}
            pairs += 1
            pair_flips += len(signs) > 1
    width = max(by_pos) + 1 if by_pos else 0
    return OrderingStats(
        instances=n_inst,
        mean_total_by_position=[statistics.fmean(by_pos[p]) if by_pos.get(p) else None for p in range(width)],
        gt_verdict_flip_rate=flips / n_inst if n_inst else None,
        pairwise_flip_rate=pair_flips / pairs if pairs else None,
    )


def run_line(results: ResultsFile) -> str:
    """One line per results file: N of M instances scored and who failed where, then calls and cost (the file's:
    over every run that wrote it, as a rerun adds to the totals; ``rqbench calls --run`` gives one run's)."""
    t = results.totals
    runs = f" over its {len(t.run_ids)} runs" if len(t.run_ids) > 1 else ""
    return (
        f"{results.judge.label} [{results.judge.setting}]: {coverage_line(results)};{runs} {t.calls} request(s) "
        f"sent, {t.cache_hits} cache hit(s), {t.tokens_in}+{t.tokens_out} tokens, ${t.cost_usd:.4f}"
    )
