"""Constructed benchmarks, submissions and a scripted judge for the generation and judging tests."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from rqbench.evaluate.dataset import Benchmark
from rqbench.evaluate.submission import Submission, load_submission, write_submission

from rqbench.records import (
    CitedPaper,
    EvaluationInstance,
    SectionText,
    SubmissionEntry,
    SubmissionMetadata,
)

CAND_LINE = re.compile(r"^\[(\d+)\] (.*)$", re.MULTILINE)


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
        SubmissionEntry(rq_id=i.rq_id, failure="invalid_reply: scripted") if i.rq_id in failed
        else SubmissionEntry(rq_id=i.rq_id, research_questions=five(i.rq_id))
        for i in bench.instances
    ]
    write_submission(folder, metadata(), entries)
    return load_submission(folder, bench.rq_ids, allow_partial=bool(failed))


# -- a scripted judge: answers every judge step with valid JSON -------------------------


def system_text(req: dict[str, Any]) -> str:
    return req["messages"][0]["content"]


def user_text(req: dict[str, Any]) -> str:
    return req["messages"][-1]["content"] if req["messages"][-1]["role"] == "user" else req["messages"][1]["content"]


def step_of(req: dict[str, Any]) -> str:
    s = system_text(req)
    if "NOVELTY" in s:
        return "novelty_comparative" if "listwise" in s else "novelty_standalone"
    if "SOURCE-BOUNDEDNESS" in s:
        return "narrowness_comparative" if "several candidate" in s else "narrowness_standalone"
    if "REFERENCE" in s:
        return "overlap"
    if "research_questions" in s:
        return "generation"
    raise AssertionError(f"unknown prompt: {s[:80]}")


def candidates_of(req: dict[str, Any]) -> list[str]:
    block = req["messages"][1]["content"].split("<<<CANDIDATES", 1)[1]
    return [m.group(2) for m in CAND_LINE.finditer(block)]


def novelty_score(text: str) -> dict[str, int]:
    """Deterministic from the text, so orderings give the same scores; the GT (no 'Question') scores 3s."""
    if not text.startswith("Question"):
        return {"relevance": 1, "originality": 3, "gap_addressing": 3, "non_obviousness": 3}
    k = int(text.split()[1])
    return {"relevance": 1, "originality": k % 4, "gap_addressing": 2, "non_obviousness": (k + 1) % 4}


def narrow_score(text: str) -> dict[str, Any]:
    sb = 0 if not text.startswith("Question") else 1 + int(text.split()[1]) % 3
    scopes = ("not_source_bound", "mildly_source_bound", "source_bound", "strongly_source_bound")
    return {"mentions_source_specific_name": 0, "main_object_in_source": 1, "introduces_new_mechanism": 0,
            "source_bound_score": sb, "diagnostic_test_score": 1, "source_bound_scope": scopes[sb],
            "diagnostic_scope": "mildly_diagnostic", "short_reason_source_bound": "r1",
            "short_reason_diagnostic": "r2"}  # fmt: skip


def judge_reply(req: dict[str, Any]) -> str:
    step = step_of(req)
    cands = candidates_of(req) if step != "generation" else []
    if step == "novelty_standalone":
        return json.dumps({"scores": [novelty_score(cands[0])]})
    if step == "novelty_comparative":
        scores = [novelty_score(c) for c in cands]
        ranking = sorted(range(len(scores)), key=lambda i: -sum(v for k, v in scores[i].items() if k != "relevance"))
        return json.dumps({"scores": scores, "ranking": ranking})
    if step == "narrowness_standalone":
        return json.dumps(narrow_score(cands[0]))
    if step == "narrowness_comparative":
        return json.dumps({"scores": [narrow_score(c) for c in cands]})
    if step == "overlap":
        return json.dumps({"pairwise_scores": [1] * len(cands), "covering_subset_indices": [], "covered": False})
    return json.dumps({"gaps": ["a gap"], "research_questions": [f"Generated question {k} here?" for k in range(5)]})


def responder_with(overrides: dict[str, Callable[[dict[str, Any]], str | None]]) -> Callable[[dict[str, Any]], str]:
    """``judge_reply`` except where an override for the step returns text."""

    def respond(req: dict[str, Any]) -> str:
        fn = overrides.get(step_of(req))
        if fn is not None:
            text = fn(req)
            if text is not None:
                return text
        return judge_reply(req)

    return respond


def write_build(bench: Benchmark, root) -> None:
    """A build folder (records/*.jsonl) holding ``bench``, as ``rqbench build`` writes it."""
    rec = root / "records"
    rec.mkdir(parents=True, exist_ok=True)
    (rec / "instances.jsonl").write_text("".join(i.model_dump_json() + "\n" for i in bench.instances))
    (rec / "cited_papers.jsonl").write_text("".join(p.model_dump_json() + "\n" for p in bench.papers.values()))


def scripted_spec(srv) -> str:
    """A model spec that reaches the scripted server through the normal name resolution (for CLI tests)."""
    return f"openai/scripted@api_base={srv.api_base},json_mode=json_object_schema,max_retries=0,timeout_s=5"
