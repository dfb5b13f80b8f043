"""Judging a results file again from cached replies only: the step a bundle is checked by and re-scored with.

The judging run is the ordinary one (``ajudge_submission``), on an ``LLM(offline=True)``: each
request is rebuilt from the dataset, the submission and the prompt set, and its reply must be in the
cache (or its transport failure in the call log), else the run stops on ``CallNotCached`` naming the
call. What comes out replaces the file's instances; the rest of the file (when it was written, what
the original requests cost, the protocol) is what the original run recorded, since a run from the
cache pays nothing and so cannot measure it again.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Sequence
from pathlib import Path

from rqbench.evaluate.benchmark.background import BackgroundPolicy
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.criteria import CRITERIA, DECLARED, GT_ID
from rqbench.evaluate.generate.submission_files import Submission
from rqbench.evaluate.judge.run import NOT_SUBMITTED, ajudge_submission, read_results
from rqbench.evaluate.metrics.accounting import GENERATION_FAILED, tally
from rqbench.llm.client import LLM
from rqbench.prompts import PromptSet
from rqbench.records import InstanceResult, ResultsFile, SubmissionEntry


class RejudgeMismatch(ValueError):
    """Judging again from the cache did not give the instances a results file holds."""


def benchmark_of(results: ResultsFile, bench: Benchmark) -> Benchmark:
    """The part of ``bench`` a results file judged (its instances, in its order, and their background papers),
    still counted against the whole revision; a named error when the revision is not the file's."""
    if bench.revision != results.dataset_revision:
        raise RejudgeMismatch(
            f"the results file was judged on revision {results.dataset_revision!r} of {results.dataset_repo}, "
            f"the dataset given is at {bench.revision!r}; give that revision (--revision)"
        )
    missing = [i.rq_id for i in results.instances if i.rq_id not in set(bench.revision_rq_ids)]
    if missing:
        raise RejudgeMismatch(f"instances of the results file absent from the dataset: {missing[:5]}")
    instances = [bench.instance(i.rq_id) for i in results.instances]
    papers = {p: bench.papers[p] for inst in instances for p in inst.background_paper_ids}
    return Benchmark(
        instances,
        papers,
        repo=bench.repo,
        revision=bench.revision,
        name=results.dataset_repo,
        version=results.dataset_version,
        revision_rq_ids=list(bench.revision_rq_ids),
    )


def check_declared(results: ResultsFile) -> dict[str, Path]:
    """The folders of the criteria declared as data that ``results`` was judged with, each checked to be the one
    this process loaded (``RQB_CRITERIA``) by its hash; a named error when one is absent or differs."""
    recorded: dict[str, str] = results.settings.get("declared_criteria") or {}
    judged = results.settings.get("metrics") or ()
    unknown = [c for c in judged if c not in CRITERIA and c not in recorded]
    if unknown:
        raise RejudgeMismatch(f"the results file names criteria {unknown} that no criterion module declares")
    out = {}
    for name, digest in recorded.items():
        if name not in DECLARED:
            raise RejudgeMismatch(
                f"criterion {name!r} was declared as data (folder hash {digest}); set RQB_CRITERIA to its folder"
            )
        if DECLARED[name].hash != digest:
            raise RejudgeMismatch(
                f"criterion {name!r} from {DECLARED[name].folder} hashes to {DECLARED[name].hash}; the results were "
                f"judged with {digest}"
            )
        out[name] = DECLARED[name].folder
    return out


def entries_from_results(results: ResultsFile) -> list[SubmissionEntry]:
    """The submission's entries as a results file holds them: each instance's model RQs in order, or its
    generation failure (an instance the submission lacked has no entry)."""
    out: list[SubmissionEntry] = []
    for inst in results.instances:
        lost = next((f for f in inst.failures if f.startswith(GENERATION_FAILED)), None)
        if lost is not None:
            reason = lost.removeprefix(f"{GENERATION_FAILED}: ")
            if reason != NOT_SUBMITTED:
                out.append(SubmissionEntry(rq_id=inst.rq_id, failure=reason))
            continue
        rqs = [c.text for c in inst.candidates if c.candidate_id != GT_ID]
        out.append(SubmissionEntry(rq_id=inst.rq_id, research_questions=rqs))
    return out


def rejudge(
    results: ResultsFile, bench: Benchmark, submission: Submission, prompts: PromptSet, llm: LLM
) -> ResultsFile:
    """``results`` with its instances judged again through ``llm`` (offline), the rest of it as recorded."""
    if not llm.offline:
        raise ValueError("rejudge needs an offline LLM: it must not send a request")
    check_declared(results)
    if prompts.hash != results.judge.prompt_set.hash:
        raise RejudgeMismatch(
            f"prompt set {prompts.name} has hash {prompts.hash}; the results were judged with "
            f"{results.judge.prompt_set.name} {results.judge.prompt_set.hash}"
        )
    judge = results.judge
    settings = results.settings
    with tempfile.TemporaryDirectory(prefix="rqb-rejudge-") as tmp:
        (path,) = _judge_quietly(
            benchmark_of(results, bench),
            submission,
            judge.label,
            judge.setting,
            llm=llm,
            seed=judge.seed,
            orderings=judge.orderings,
            criteria=list(settings.get("metrics") or ()),
            prompts=prompts,
            policy=BackgroundPolicy.model_validate(settings["background"]),
            protocol=results.protocol,
            out_dir=Path(tmp),
        )
        fresh = read_results(path)
    out = results.model_copy(update={"instances": fresh.instances, "coverage": None})
    out.coverage = tally(out)
    return out


def _judge_quietly(
    bench: Benchmark, submission: Submission, spec: str, setting: str, *, llm: LLM, out_dir: Path, **kw
) -> list[Path]:
    """One judge, one setting, quietly: the ordinary judging run."""
    return asyncio.run(
        ajudge_submission(bench, submission, [spec], [setting], llm=llm, out_dir=out_dir, progress=False, **kw)
    )


def instance_differences(
    expected: Sequence[InstanceResult], got: Sequence[InstanceResult], limit: int = 5
) -> list[str]:
    """Where two files' instances differ, one line each (at most ``limit``): the instance and the field."""
    lines: list[str] = []
    if [i.rq_id for i in expected] != [i.rq_id for i in got]:
        return [f"instances differ: {[i.rq_id for i in expected][:5]} vs {[i.rq_id for i in got][:5]}"]
    for a, b in zip(expected, got):
        da, db = a.model_dump(mode="json"), b.model_dump(mode="json")
        for name in da:
            if da[name] != db.get(name):
                lines.append(f"instance {a.rq_id}: field {name} differs")
                break
        if len(lines) >= limit:
            break
    return lines
