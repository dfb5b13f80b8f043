"""Honest research questions through `rqbench validate`: how many are rejected, held for review, or pass.

The sets:
- ``mined <split>``: ``honest_rqs_mined.jsonl``, questions derived from the
  real papers in ``../shared/fixtures/latex`` and the RQ-Bench paper (each row
  names the paper and the passage) and our own questions about LLM, NLP and ML
  research that name tokens, chat templates, JSON schemas, field names, rubric
  scales, code identifiers and maths. ``split`` says when a row was written:
  ``dev`` before the rules changed; ``holdout-1`` and ``holdout-2`` each after
  a round of changes, whose figures then led to the next round (both are tuned
  on now); ``holdout-3`` after the last round, by another method (one question
  per title sampled from ``../shared/fixtures/s2_api``, every 25th title of the
  sorted list, plus our own), never used to change a rule: the generalisation
  check;
- ``expert study``: the 20 research questions (author-anchored and gpt-5.5) of
  the paper's expert-study samples, read from
  ``../shared/fixtures/paper_examples/expert_vs_llm.jsonl`` at run time (never
  copied here);
- ``honest_rqs.jsonl``: the screen's older public set (LLM safety, evaluation
  and prompting vocabulary).

Each honest question goes through the product's own path: a submission file in
which it is the first of five RQs on its line (the other four are plain
questions that pass everything), checked by ``validate_submission`` as
``rqbench validate`` does. A question is *rejected* when its field has an error,
*flagged* when it has only warnings or is listed for review, and *passed*
otherwise. The script reads only what the report says, so the same file
measures any version of the rules (run it with another checkout's interpreter
to get a before figure). Target: at most 1 in 100 rejected or flagged.

    .venv/bin/python benchmarks/honest_questions.py [--show passed]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

from rqbench.evaluate.generate.submission_files import validate_submission
from rqbench.paths import shared_dir

HERE = Path(__file__).parent
FILLERS = [
    "Does dropping recurrence change how translation quality degrades on very long sentences?",
    "Which attention heads carry word-alignment information in attention-only translation models?",
    "Can attention-only encoders match recurrent ones on speech recognition with the same training budget?",
    "How does the size of the vocabulary affect the calibration of small language models?",
]


def mined() -> dict[str, list[dict[str, str]]]:
    """The mined rows by split, in the file's order."""
    rows = [json.loads(x) for x in (HERE / "honest_rqs_mined.jsonl").read_text(encoding="utf-8").splitlines() if x]
    out: dict[str, list[dict[str, str]]] = {}
    for r in rows:
        out.setdefault(r["split"], []).append(r)
    return out


def expert_study() -> list[dict[str, str]]:
    root = shared_dir()
    if root is None:
        raise SystemExit("../shared is not beside this checkout: the expert-study RQs are read from it")
    path = root / "fixtures" / "paper_examples" / "expert_vs_llm.jsonl"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
    return [
        {"source": f"expert study sample {r['sample']} {field}", "text": r[field]}
        for r in rows
        for field in ("gt_rq", "model_rq")
    ]


def older_set() -> list[dict[str, str]]:
    rows = [json.loads(x) for x in (HERE / "honest_rqs.jsonl").read_text(encoding="utf-8").splitlines() if x]
    return [{"source": f"honest_rqs.jsonl ({r['topic']})", "text": r["text"]} for r in rows]


def outcomes(texts: list[str], work: Path) -> list[tuple[str, list[str]]]:
    """For each text: rejected, flagged or passed, with the report's reasons, from one validate_submission run."""
    path = work / "submission.jsonl"
    ids = [f"honest_{i:04d}" for i in range(len(texts))]
    lines = [json.dumps({"kind": "metadata", "model": "honest-set"})]
    lines += [json.dumps({"rq_id": rq_id, "research_questions": [text, *FILLERS]}) for rq_id, text in zip(ids, texts)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = validate_submission(path, ids, max_problems_per_rule=10**6)
    field = "research_questions[0]"
    errors: dict[str, list[str]] = {}
    warnings: dict[str, list[str]] = {}
    for p in report.problems:
        if p.rq_id is None:
            continue
        if p.field != field:
            raise SystemExit(f"a filler question was refused, fix the filler: {p}")
        (errors if p.severity == "error" else warnings).setdefault(p.rq_id, []).append(f"{p.code}: {p.message}")
    for f in report.flagged:
        if f.rq_id is not None and f.field == field:
            warnings.setdefault(f.rq_id, []).extend(r for r in f.reasons if not any(r in w for w in warnings[f.rq_id]))
    out = []
    for rq_id in ids:
        if rq_id in errors:
            out.append(("rejected", errors[rq_id] + warnings.get(rq_id, [])))
        elif rq_id in warnings:
            out.append(("flagged", warnings[rq_id]))
        else:
            out.append(("passed", []))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--show", default="rejected,flagged", help="which outcomes to list one by one (comma-separated)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that only checks the script works (the test suite runs it); its figures mean nothing",
    )
    args = ap.parse_args()
    show = set(args.show.split(","))
    splits = mined()
    sets = {
        "expert study": expert_study(),
        **{f"mined {k}": v for k, v in splits.items()},
        "honest_rqs.jsonl": older_set(),
    }
    if args.smoke:
        sets = {name: rows[:5] for name, rows in list(sets.items())[:2]}
    print(f"{'set':18s} {'n':>4s} {'rejected':>9s} {'flagged':>8s} {'passed':>7s}   rejected or flagged")
    listed = []
    total: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for name, rows in sets.items():
            if not rows:
                print(f"{name:18s} {0:4d}   (no rows)")
                continue
            got = outcomes([r["text"] for r in rows], Path(tmp))
            counts = Counter(o for o, _ in got)
            total.update(counts)
            total["n"] += len(rows)
            bad = counts["rejected"] + counts["flagged"]
            print(
                f"{name:18s} {len(rows):4d} {counts['rejected']:9d} {counts['flagged']:8d} {counts['passed']:7d}   "
                f"{bad}/{len(rows)} ({bad / len(rows):.1%})"
            )
            listed += [(name, o, r, why) for r, (o, why) in zip(rows, got) if o in show]
    bad = total["rejected"] + total["flagged"]
    print(
        f"{'all':18s} {total['n']:4d} {total['rejected']:9d} {total['flagged']:8d} {total['passed']:7d}   "
        f"{bad}/{total['n']} ({bad / max(total['n'], 1):.1%}; target at most 1 in 100)"
    )
    for name, outcome, row, why in listed:
        print(f"\n[{name}] {outcome}: {row['text']}\n    source: {row['source']}")
        for reason in why:
            print(f"    - {reason[:220]}")


if __name__ == "__main__":
    main()
