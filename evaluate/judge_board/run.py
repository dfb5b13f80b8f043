"""The judge board's run: judge configurations on every pair of the expert pool, both orders, through ``LLM.ask``.

Each judge is resolved as ``rqbench judge`` resolves it (``protocol.judge_use``:
temperature 0 unless the spec sets one, the highest reasoning setting where the
model has one, the background cut only to its context window) and asked the
paper's comparative non-obviousness judgment on each pair, once in each order
(``judge_board_requests``). Every call goes through ``LLM.ask``: cached, so a
rerun pays for nothing and a grown pool pays for its new pairs only; retried;
re-asked once on an invalid reply; logged. ``LLM(dry_run=True)`` counts calls and
cost and writes nothing; ``LLM(batch=True)`` sends the calls through the
provider's batch endpoint first, as ``rqbench judge --batch`` does. A call that
fails is kept with its reason and raw reply, and gives no pick.

One ``JudgeBoardFile`` per judge and prompt set, rewritten atomically after
each run; pairs judged before and since left out of the pool stay in it. Each
call records what its answer cost when it was sent (the call log's
``CallStore.spent``), so a rerun from the cache keeps the real cost. The pool
the run used is written beside the files (``pool.json``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

from tqdm import tqdm

from rqbench.evaluate.benchmark.background import BackgroundPolicy
from rqbench.evaluate.judge_board.expert_pool import POOL_FILE, write_pool
from rqbench.evaluate.judge_board.metrics import order_pick
from rqbench.evaluate.judge_board.requests import (
    SHOWN,
    BoardJudge,
    BoardRequest,
    ask,
    board_judge,
    board_step,
    pair_requests,
    reply_scores,
)
from rqbench.evaluate.judge_board.susceptibility import Cue, cued_pair
from rqbench.evaluate.protocol import judge_use
from rqbench.io import RecordError, read_model, write_atomic
from rqbench.llm.catalog import parse_model_spec
from rqbench.llm.client import LLM
from rqbench.paths import slug
from rqbench.prompts import PromptSet
from rqbench.records import (
    CuedPairVerdicts,
    ExpertPair,
    ExpertPool,
    JudgeBoardFile,
    JudgeSpec,
    Order,
    OrderVerdict,
    PairVerdicts,
    PromptSetRef,
    corrections_of,
)

BOARD_KIND = "judge-board results file"
T = TypeVar("T")


def board_path(out_dir: Path, label: str, prompts: PromptSet) -> Path:
    """One file per judge label and prompt set: ``<label>__<prompt set>-<hash10>.json``."""
    return out_dir / f"{slug(label)}__{slug(prompts.name)}-{prompts.hash.removeprefix('b2:')[:10]}.json"


def read_board_file(path: Path) -> JudgeBoardFile:
    return read_model(path, JudgeBoardFile, kind=BOARD_KIND)


def load_board_files(folder: Path) -> list[JudgeBoardFile]:
    """Every judge-board results file in ``folder`` (not the pool); a bad file is a ``RecordError`` naming it."""
    if not folder.is_dir():
        return []
    return [read_board_file(p) for p in sorted(folder.glob("*.json")) if p.name != POOL_FILE]


def _spent(llm: LLM, keys: Sequence[str], *, delivered: bool) -> dict[str, float | int | None]:
    """Cost, seconds and tokens of the requests behind a call, from the call log.

    ``delivered``: the call got a reply, so every key must be in the log (else the amounts are unknown);
    a call that failed in transport is counted for the replies it did get, since failed requests are not billed.
    """
    found = llm.store.spent(list(keys))
    rows = [found[k] for k in keys if k in found]
    if delivered and len(rows) < len(keys):
        return {"cost_usd": None, "latency_s": None, "tokens_in": None, "tokens_out": None}

    def total(values: list) -> float | int | None:
        return None if any(v is None for v in values) else sum(values)

    return {
        "cost_usd": total([r.cost_usd for r in rows]),
        "latency_s": total([r.latency_s for r in rows]),
        "tokens_in": total([r.tokens_in for r in rows]),
        "tokens_out": total([r.tokens_out for r in rows]),
    }


async def _verdict(llm: LLM, judge: BoardJudge, order: Order, req: BoardRequest) -> OrderVerdict | None:
    """One call's verdict; None in a dry run or while the call waits for a batch."""
    asked = await ask(llm, judge, req)
    if asked.raw is None:
        return None
    if asked.answer is None:
        exc = asked.error
        assert exc is not None  # a call with a raw reply and no answer failed
        return OrderVerdict(
            order=order,
            pick=None,
            raw=asked.raw,
            failure=asked.raw.error,
            reasked=exc.reask_key is not None,
            **_spent(llm, exc.keys, delivered=False),
        )
    ans = asked.answer
    gt, model = reply_scores(req, ans.reply)
    return OrderVerdict(
        order=order,
        pick=order_pick(gt, model),
        gt_score=gt,
        model_score=model,
        raw=asked.raw,
        reasked=ans.reasked,
        rule_corrections=corrections_of(ans.reply),
        **_spent(llm, ans.keys, delivered=True),
    )


async def _judge_pair(llm: LLM, judge: BoardJudge, pair: ExpertPair) -> PairVerdicts | None:
    calls = pair_requests(judge, pair)
    verdicts = await asyncio.gather(*(_verdict(llm, judge, order, req) for order, req in calls))
    if any(v is None for v in verdicts):
        return None
    return PairVerdicts(pair_id=pair.pair_id, content_key=pair.content_key(), verdicts=list(verdicts))  # type: ignore[arg-type]


async def _judge_cued_pair(llm: LLM, judge: BoardJudge, pair: ExpertPair, cue: Cue) -> CuedPairVerdicts | None:
    """The pair judged again, both orders, with ``cue`` appended to the model RQ; keyed to the clean pair."""
    calls = pair_requests(judge, cued_pair(pair, cue))
    verdicts = await asyncio.gather(*(_verdict(llm, judge, order, req) for order, req in calls))
    if any(v is None for v in verdicts):
        return None
    return CuedPairVerdicts(
        pair_id=pair.pair_id,
        content_key=pair.content_key(),
        cue=cue.kind,
        cue_text=cue.text,
        verdicts=list(verdicts),  # type: ignore[arg-type]
    )


async def _bounded(jobs: Sequence[Callable[[], Awaitable[T]]], desc: str, progress: bool, concurrency: int) -> list[T]:
    """Run ``jobs`` with at most ``concurrency`` in flight, a progress bar counting them; results in order."""
    bar = tqdm(total=len(jobs), desc=desc, unit="pair", disable=not progress)
    slots = asyncio.Semaphore(max(1, concurrency))  # pairs in flight; the LLM layer bounds each model's calls too

    async def one(job: Callable[[], Awaitable[T]]) -> T:
        async with slots:
            return await job()

    tasks = [asyncio.ensure_future(one(j)) for j in jobs]
    for t in tasks:
        t.add_done_callback(lambda _t: bar.update(1))
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        bar.close()


async def _judge_pool(
    llm: LLM, judge: BoardJudge, pairs: Sequence[ExpertPair], progress: bool, concurrency: int
) -> list[PairVerdicts | None]:
    jobs = [lambda p=p: _judge_pair(llm, judge, p) for p in pairs]
    return await _bounded(jobs, f"judge-board {judge.label}", progress, concurrency)


async def _judge_cued(
    llm: LLM, judge: BoardJudge, pairs: Sequence[ExpertPair], cues: Sequence[Cue], progress: bool, concurrency: int
) -> list[CuedPairVerdicts | None]:
    jobs = [lambda p=p, c=c: _judge_cued_pair(llm, judge, p, c) for p in pairs for c in cues]
    return await _bounded(jobs, f"judge-board {judge.label} with cues", progress, concurrency)


def _before(path: Path) -> JudgeBoardFile | None:
    """The judge's file as the last run left it; None when there is none."""
    if not path.is_file():
        return None
    try:
        return read_board_file(path)
    except RecordError as exc:
        raise ValueError(f"{exc}; move the file away to start this judge's row afresh") from exc


def _merged(before: JudgeBoardFile | None, judged: list[PairVerdicts]) -> list[PairVerdicts]:
    """This run's verdicts, plus the file's verdicts on pairs this run did not judge (left out of the pool)."""
    if before is None:
        return judged
    now = {pv.pair_id for pv in judged}
    return judged + [pv for pv in before.pairs if pv.pair_id not in now]


def _merged_cued(before: JudgeBoardFile | None, judged: list[CuedPairVerdicts]) -> list[CuedPairVerdicts]:
    """This run's cued verdicts, plus the file's on (pair, cue) this run did not judge."""
    if before is None:
        return judged
    now = {(c.pair_id, c.cue) for c in judged}
    return judged + [c for c in before.cued if (c.pair_id, c.cue) not in now]


def run_board(*args: object, **kwargs: object) -> list[Path]:
    """``arun_board``'s synchronous entry point."""
    return asyncio.run(arun_board(*args, **kwargs))  # type: ignore[arg-type]


async def arun_board(
    pool: ExpertPool,
    judge_specs: Sequence[str],
    *,
    llm: LLM,
    prompts: PromptSet,
    out_dir: Path,
    seed: int = 0,
    context_tokens: int | None = None,
    policy: BackgroundPolicy | None = None,
    limit: int | None = None,
    concurrency: int = 8,
    progress: bool = True,
    cues: Sequence[Cue] = (),
) -> list[Path]:
    """Judge every pool pair (the first ``limit``) with every judge, and again with each of ``cues`` added to the
    model RQ (``judge_board_susceptibility``); the files written (none in a dry run)."""
    if not pool.pairs:
        raise ValueError("the expert pool is empty: there is nothing to judge")
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, not {limit}")
    pairs = pool.pairs[:limit]
    uses = [judge_use(spec, llm, context_tokens=context_tokens, fixed=policy) for spec in judge_specs]
    labels = [u.label for u in uses]
    if len(set(labels)) != len(labels):
        raise ValueError(f"two --judge options name one judge configuration: {labels}")
    judges = [board_judge(u, prompts, seed=seed) for u in uses]
    if llm.batch and not llm.dry_run:

        async def every_judge() -> None:
            for judge in judges:
                await _judge_pool(llm, judge, pairs, False, concurrency)
                await _judge_cued(llm, judge, pairs, cues, False, concurrency)

        await llm.fill_by_batches(every_judge)
    written: list[Path] = []
    for use, judge in zip(uses, judges, strict=True):
        judged = await _judge_pool(llm, judge, pairs, progress and not llm.dry_run, concurrency)
        cued = await _judge_cued(llm, judge, pairs, cues, progress and not llm.dry_run, concurrency)
        if llm.dry_run:
            continue
        if any(pv is None for pv in judged) or any(c is None for c in cued):
            raise RuntimeError(
                f"{judge.label}: some calls are still waiting for their batch; run again to collect them"
            )
        cfg = use.config
        path = board_path(out_dir, judge.label, prompts)
        before = _before(path)
        spec = JudgeSpec(
            model=parse_model_spec(cfg.name)[0],
            label=judge.label,
            setting="comparative",
            temperature=cfg.temperature,
            reasoning_effort=cfg.reasoning_effort,
            seed=seed,
            orderings=judge.orderings,
            prompt_set=PromptSetRef(**prompts.ref()),
        )
        board = JudgeBoardFile(
            judge=spec,
            step=board_step(),
            pool_version=pool.version,
            pool_pairs=len(pool.pairs),
            created_at=datetime.now(timezone.utc),
            pairs=_merged(before, judged),  # type: ignore[arg-type]
            settings={"background": judge.policy.model_dump(), "orders": list(SHOWN)},
            cued=_merged_cued(before, cued),  # type: ignore[arg-type]
        )
        written.append(write_atomic(path, board.model_dump_json(indent=1)))
    if not llm.dry_run:
        write_pool(pool, out_dir)
    return written
