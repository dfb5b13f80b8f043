"""What RQ-Bench computes from stored results, pinned: summary rows, report tables, leaderboard cells.

``test_golden_outputs.py`` pins the path up to the results files; this pins the
path after them. Seeded synthetic results with the holes real runs have (an
unscored candidate, a candidate scored on one of two background papers, a
missing overlap reply, several comparative orderings, a repeated rq_id) go
through ``summarize`` under every combine rule and score option, through
``rqbench report`` (with annotations, so the agreement tables run too), through
the leaderboard's table, views and cells, and through the paired per-instance
values. Each output is reduced to a digest and compared with
``tests/golden/scores.json``. A restructuring of criteria, metrics, tables or
the leaderboard must leave every digest as it was; a change meant to alter
figures updates the file (``RQB_UPDATE_GOLDEN=1``) in the same commit and says why.
"""

from __future__ import annotations

import csv
import json
import os
import random
from datetime import date
from pathlib import Path

import pytest

from rqbench.hashing import content_hash
from rqbench.records import SOURCE_BOUND_SCOPES, NoveltyScore, ResultsFile
from rqbench.testing.synthetic import make_results

GOLDEN = Path(__file__).parent / "golden" / "scores.json"
N = 24


def _holes(r: ResultsFile, seed: int) -> ResultsFile:
    """The gaps and variants real results have, drawn from a seeded RNG so the file is the same every run."""
    rng = random.Random(f"holes:{seed}:{r.submission.model}:{r.judge.label}:{r.judge.setting}")
    r = r.model_copy(deep=True)
    for inst in r.instances:
        if rng.random() < 0.2:  # a second background paper, which some candidates were not scored on
            extra = f"{inst.background_paper_ids[0]}b"
            inst.background_paper_ids.append(extra)
            for c in inst.candidates:
                if rng.random() < 0.6:
                    first = next(iter(c.narrowness.values()))
                    sb = rng.randint(0, 3)
                    c.narrowness[extra] = first.model_copy(
                        update={"source_bound_score": sb, "source_bound_scope": SOURCE_BOUND_SCOPES[sb]}
                    )
        for c in inst.candidates[1:]:
            if rng.random() < 0.08:
                c.novelty = None
            if rng.random() < 0.05:
                c.narrowness = {}
        if rng.random() < 0.1:
            inst.overlap = None
        if r.judge.setting == "comparative":
            for c in inst.candidates:
                if c.novelty is None:
                    continue
                draws = [c.novelty] + [
                    NoveltyScore(
                        relevance=1,
                        originality=rng.randint(0, 3),
                        gap_addressing=rng.randint(0, 3),
                        non_obviousness=rng.randint(0, 3),
                    )
                    for _ in range(rng.randint(0, 2))
                ]
                c.novelty_by_ordering = draws
                c.rank_by_ordering = [rng.randint(1, 6) for _ in draws]
    if r.submission.model == "model-b":  # a failed generation: the same instance in every file of the submission
        lost = r.instances[5]
        unscored = {"novelty": None, "narrowness": {}, "novelty_by_ordering": [], "rank_by_ordering": []}
        lost.candidates = [lost.candidates[0].model_copy(update=unscored)]
        lost.overlap, lost.failures = None, ["generation_failed: invalid_reply: scripted"]
    if r.judge.setting == "standalone" and r.submission.model == "model-b":
        r.instances.append(r.instances[3].model_copy(deep=True))  # a repeated rq_id
    return r


def _dated(r: ResultsFile) -> ResultsFile:
    """First-version dates: the 12 papers (2501.10000-2501.10011) on January 1st-10th, the last two undated."""
    r = r.model_copy(deep=True)
    for inst in r.instances:
        paper = int(inst.arxiv_id.split(".")[1]) - 10000
        inst.paper_published = date(2025, 1, paper + 1) if paper < 10 else None
    return r


def _results() -> list[ResultsFile]:
    out = []
    # cutoffs: before every paper (its clean figures are over the dated instances), inside the papers' days (some
    # clean, some not), and none (no clean figures)
    for model, bias, cutoff, variant in (
        ("model-a", 0.4, date(2024, 6, 1), "original"),
        ("model-b", -0.2, None, "original"),
        ("model-a", 0.1, date(2025, 1, 4), "revised"),
    ):
        for judge in ("judge-a", "judge-b"):
            for setting in ("standalone", "comparative"):
                r = make_results(
                    model,
                    judge=judge,
                    setting=setting,
                    n_instances=N,
                    seed=7,
                    bias=bias,
                    prompt_variant=variant,
                    knowledge_cutoff=cutoff,
                )
                out.append(_dated(_holes(r, 7)))
    return out


def _digest_text(path: Path) -> str:
    return content_hash(path.read_text(encoding="utf-8"))


def produce(tmp: Path) -> dict[str, str]:
    from rqbench.cli import main as cli_main
    from rqbench.evaluate.metrics.metric import (
        FailureAccounting,
        NarrownessAggregation,
        OrderingAggregation,
        ScoreOptions,
    )
    from rqbench.evaluate.metrics.summary import instance_values, summarize
    from rqbench.evaluate.report.length_control import length_by_row
    from rqbench.space import leaderboard as lb
    from rqbench.space import leaderboard_cells as lb_cells

    results = _results()
    folder = tmp / "results"
    folder.mkdir()
    for i, r in enumerate(results):
        (folder / f"r{i:02d}.json").write_text(r.model_dump_json(indent=1), encoding="utf-8")

    digests: dict[str, str] = {}
    variants = {
        "pooled": {},
        "mean_scores": {"combine": "mean_scores"},
        "pooled by subfield": {"by_subfield": True},
        "narrowness max, orderings first": {
            "options": ScoreOptions(narrowness=NarrownessAggregation.max, orderings=OrderingAggregation.first)
        },
        "narrowness min": {"options": ScoreOptions(narrowness=NarrownessAggregation.min)},
        "failures conditional": {"options": ScoreOptions(failures=FailureAccounting.conditional)},
    }
    for name, kw in variants.items():
        rows = summarize(results, n_boot=200, **kw)
        digests[f"summary/{name}"] = content_hash([r.model_dump(mode="json") for r in rows])
    for metric in ("best5_non_obviousness", "win_non_obviousness", "best5_source_bound_score", "overlap5"):
        for combine in ("pooled", "mean_scores"):
            for setting in ("standalone", "comparative"):
                vals = instance_values(results, metric, setting=setting, combine=combine)
                digests[f"instance_values/{metric}/{combine}/{setting}"] = content_hash(vals)

    # annotations on model-a (original): two annotators, one pick per instance
    rng = random.Random("annotations")
    ann = tmp / "annotations.csv"
    with ann.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["rq_id", "evaluator", "winner"])
        for inst in results[0].instances:
            for who in ("expert-1", "expert-2"):
                w.writerow([inst.rq_id, who, rng.choice(["gt", "model", "tie"])])
    for name, extra in (
        ("default", []),
        ("mean_scores by subfield", ["--combine", "mean_scores", "--by-subfield"]),
        ("annotated", ["--annotations", str(ann), "--annotated-model", "model-a", "--annotated-variant", "original"]),
        ("conditional", ["--failures", "conditional"]),
    ):
        out = tmp / f"report-{len(digests)}"
        assert cli_main(["report", str(folder), "--out", str(out), "--n-boot", "200", *extra]) == 0
        for f in sorted(out.iterdir()):
            if f.suffix in (".md", ".csv", ".tex", ".json"):
                digests[f"report/{name}/{f.name}"] = _digest_text(f)

    rows = summarize(results, n_boot=200)
    agreement = {
        ("model-a", "standalone", "judge-a"): lb.AgreementCell(value=0.5, ci_low=0.3, ci_high=0.7, n=10),
    }
    df = lb.build_table(rows, agreement, lengths=length_by_row(results, n_boot=200))
    digests["leaderboard/table"] = content_hash(lb.to_csv(df).decode("utf-8"))
    digests["leaderboard/choices"] = content_hash(lb.choices(df))
    digests["leaderboard/numeric_columns"] = content_hash(lb.numeric_columns())
    views = {
        "default": lb.View(),
        "every judge, all groups": lb.View(judges=(), groups=lb.GROUPS, show_ci=True),
        "comparative, no CI, sorted": lb.View(
            judges=(),
            settings=("comparative",),
            groups=lb.GROUPS,
            show_ci=False,
            sort_by="Win % non-obviousness",
            ascending=True,
        ),
        "search, original, open": lb.View(
            search="model-a", variants=("original",), model_types=("open",), groups=lb.GROUPS
        ),
        "clean only, every judge, all groups": lb.View(judges=(), groups=lb.GROUPS, clean_only=True),
        "clean only, sorted": lb.View(clean_only=True, sort_by="Win % non-obviousness"),
    }
    for name, view in views.items():
        frame = lb.render(df, view)
        digests[f"leaderboard/render/{name}"] = content_hash(frame.to_csv(index=False))
        headers, cells, caption = lb_cells.display(df, view)
        digests[f"leaderboard/display/{name}"] = content_hash(
            {
                "headers": [repr(h) for h in headers],
                "cells": [[repr(c) for c in row] for row in cells],
                "caption": caption,
            }
        )
    return digests


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_summary_report_and_leaderboard_are_identical_to_the_golden_run(tmp_path):
    got = produce(tmp_path)
    if os.environ.get("RQB_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    changed = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
    assert not changed, f"outputs differ from tests/golden/scores.json: {changed}"
