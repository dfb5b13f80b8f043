"""Constructed benchmarks and submissions for the generation and judging tests.

``judge_reply`` is the tests' one scripted responder (``scripted_replies.reply``),
under the name the judging tests call it by; ``responder_with`` overrides it per step.
"""

from __future__ import annotations

from scripted_replies import candidates_of, responder_with
from scripted_replies import reply as judge_reply

from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.generate.submission_files import Submission, load_submission, write_submission
from rqbench.records import (
    CitedPaper,
    EvaluationInstance,
    SectionText,
    SubmissionEntry,
    SubmissionMetadata,
)

__all__ = [
    "benchmark",
    "candidates_of",
    "five",
    "judge_reply",
    "metadata",
    "paper",
    "responder_with",
    "scripted_spec",
    "submission",
    "write_build",
]


def paper(pid: str, n_sections: int = 3, words: int = 60) -> CitedPaper:
    return CitedPaper(
        paper_id=pid,
        title=f"Paper {pid} on sparse attention",
        abstract=f"We study sparse attention for long inputs in paper {pid}. " * 3,
        text_level="full",
        sections=[
            SectionText(section=f"Section {k}", text=" ".join(f"w{k}_{i}" for i in range(words)))
            for k in range(n_sections)
        ],
    )


def benchmark(n: int = 3, *, multi_every: int = 2) -> Benchmark:
    """``n`` instances; every ``multi_every``-th one has two background papers."""
    papers = {f"p{i}": paper(f"p{i}") for i in range(n + 1)}
    instances = []
    for i in range(n):
        bg = [f"p{i}", f"p{i + 1}"] if multi_every and i % multi_every == 1 else [f"p{i}"]
        instances.append(
            EvaluationInstance(
                rq_id=f"2501.0000{i}_rq0",
                gt_rq=f"How can sparse attention generalise to unseen lengths in setting {i}?",
                arxiv_id=f"2501.0000{i}",
                subfield="cs.CL" if i % 2 else "cs.LG",
                background_paper_ids=bg,
            )
        )
    return Benchmark(instances, papers, repo="test/constructed", revision="v0")


def five(rq_id: str) -> list[str]:
    return [f"Question {k} about {rq_id}: does sparse routing variant {k} help?" for k in range(5)]


def metadata(model: str = "test-model") -> SubmissionMetadata:
    return SubmissionMetadata(model=model, provider="test", prompt_variant="original")


def submission(bench: Benchmark, folder, *, failed: set[str] = frozenset()) -> Submission:
    entries = [
        SubmissionEntry(rq_id=i.rq_id, failure="invalid_reply: scripted")
        if i.rq_id in failed
        else SubmissionEntry(rq_id=i.rq_id, research_questions=five(i.rq_id))
        for i in bench.instances
    ]
    write_submission(folder, metadata(), entries)
    return load_submission(folder, bench.rq_ids, allow_partial=bool(failed))


def write_build(bench: Benchmark, root) -> None:
    """A build folder (records/*.jsonl) holding ``bench``, as ``rqbench build`` writes it."""
    rec = root / "records"
    rec.mkdir(parents=True, exist_ok=True)
    (rec / "instances.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in bench.instances))
    (rec / "cited_papers.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in bench.papers.values()))


def scripted_spec(srv) -> str:
    """A model spec that reaches the scripted server through the normal name resolution (for CLI tests)."""
    return f"openai/scripted@api_base={srv.api_base},json_mode=json_object_schema,max_retries=0,timeout_s=5"
