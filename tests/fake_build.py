"""A small, self-consistent build folder made of records constructed here (no builder, no LLM).

Used by the dataset-card tests so they do not wait for a real build. The numbers
are chosen so that every statistic can be worked out by hand in a test.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from rqbench.records import (
    BuildManifest,
    CitedPaper,
    EvaluationInstance,
    Gap,
    NoveltyType,
    PaperRecord,
    PromptSetRef,
    RQRecord,
    SectionText,
    SkipRecord,
    SourcePaper,
    StageRun,
    TextLevel,
    Verification,
)

SUBFIELDS = ["cs.CL", "cs.LG", "cs.CL", "cs.CV"]


# Each paper's extracted texts: distinct per paper, and well formed (publishing applies the gate).
def problem(i: int) -> str:
    return f"Paper {i} asks why sparse attention loses accuracy on inputs longer than in training."


def headline(i: int) -> str:
    return f"Sparse routing idea {i}"


def idea(i: int) -> str:
    return f"Route tokens by block score in paper {i}."


def contribution(i: int) -> str:
    return f"A routing rule from paper {i} for long inputs."


def make_records(
    n_papers: int = 3,
    rqs_per_paper: int = 2,
    *,
    tag: str = "",
    first: int = 0,
    published: datetime = datetime(2025, 1, 2, tzinfo=timezone.utc),
) -> dict[str, list]:
    """Papers 2501.0000i (i from ``first``) with ``rqs_per_paper`` RQs each; RQ j of paper i cites c{i}a and, for
    j odd, c{i}b; every paper first posted at ``published``."""
    rqs, papers, cited, instances = [], [], [], []
    levels = [TextLevel.full, TextLevel.abstract, TextLevel.title]
    for i in range(first, first + n_papers):
        arxiv_id = f"2501.{i:05d}"
        sub = SUBFIELDS[i % len(SUBFIELDS)]
        cids = [f"c{i}a", f"c{i}b"]
        for k, cid in enumerate(cids):
            level = levels[(i + k) % 3]
            cited.append(
                CitedPaper(
                    paper_id=cid,
                    title=f"Cited work {cid}",
                    abstract="An abstract of three words." if level != TextLevel.title else "",
                    text_level=level,
                    sections=[
                        SectionText(section="Introduction", text="one two three four"),
                        SectionText(section="Method", text="five six"),
                    ]
                    if level == TextLevel.full
                    else [],
                    contributions={
                        TextLevel.full: [f"{cid} shows one thing.", f"{cid} builds another method on it."],
                        TextLevel.abstract: ["An abstract of three words."],
                    }.get(level, []),
                    contributions_source={TextLevel.full: "extracted", TextLevel.abstract: "abstract"}.get(level),
                )
            )
        for j in range(rqs_per_paper):
            rq_id = f"{arxiv_id}_rq{j}"
            background = cids if j % 2 else cids[:1]
            rq = f"How does factor {j} of paper {i}{tag} change the outcome?"
            rqs.append(
                RQRecord(
                    rq_id=rq_id,
                    rq=rq,
                    arxiv_id=arxiv_id,
                    subfield=sub,
                    paper_published=published.date(),
                    paper_published_source="arxiv_api",
                    novelty_type=NoveltyType.new_method if i % 2 == 0 else NoveltyType.empirical_finding,
                    problem_statement=problem(i),
                    main_idea_headline=headline(i),
                    contributions=[contribution(i)],
                    ideas=[idea(i)],
                    gaps=[
                        Gap(
                            text=f"Cited work k{i}a leaves gap {i} open for the paper.",
                            cited_key=f"k{i}a",
                            cited_paper_id=cids[0],
                        ),
                        Gap(
                            text=f"Cited work k{i}a leaves gap {i}.{j} open for this RQ.",
                            cited_key=f"k{i}a",
                            cited_paper_id=cids[0],
                        ),
                    ],
                    cited_paper_ids=background,
                    cited_keys=[f"k{i}a"],
                    verification=None
                    if (i == 0 and j == 0)
                    else Verification(
                        addressed=not (i == 1 and j == 0),
                        confidence="high" if j == 0 else "medium",
                        reasoning="The paper's method answers it.",
                        model="local/smollm2-135m",
                    ),
                )
            )
            instances.append(
                EvaluationInstance(
                    rq_id=rq_id,
                    gt_rq=rq,
                    arxiv_id=arxiv_id,
                    subfield=sub,
                    paper_published=published.date(),
                    paper_published_source="arxiv_api",
                    background_paper_ids=background,
                )
            )
        papers.append(
            PaperRecord(
                paper=SourcePaper(
                    arxiv_id=arxiv_id,
                    title=f"Paper {i}",
                    primary_category=sub,
                    categories=[sub],
                    published=published,
                    published_source="arxiv_api",
                    external_ids={"DOI": f"10.1/{i}"} if i == 0 else {},
                ),
                problem_statement=problem(i),
                main_idea_headline=headline(i),
                novelty_type=NoveltyType.new_method if i % 2 == 0 else NoveltyType.empirical_finding,
                ideas=[idea(i)],
                contributions=[contribution(i)],
                n_rqs=rqs_per_paper,
                influential_keys=[f"k{i}a"],
                extraction_model="local/smollm2-135m",
            )
        )
    return {"rqs": rqs, "papers": papers, "cited_papers": cited, "instances": instances}


def make_manifest(records: dict[str, list], build_id: str = "fake-build") -> BuildManifest:
    ps = PromptSetRef(name="rqbench-v1", hash="b2:0123456789abcdef")
    return BuildManifest(
        build_id=build_id,
        created_at=datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc),
        inputs={"papers": "fixtures/latex", "limit": 4},
        settings={"allow_abstract_only": True},
        stages=[
            StageRun(
                stage="influence", model="local/smollm2-135m", prompt_set=ps, items_in=10, items_out=6, llm_calls=10
            ),
            StageRun(
                stage="author_rqs", model="local/smollm2-135m", prompt_set=ps, items_in=3, items_out=6, llm_calls=3
            ),
            StageRun(stage="parse", items_in=4, items_out=3, skipped=1),
        ],
        counts={name: len(v) for name, v in records.items()},
        dropped={"no_cited_text": 2, "verification_failed": 1},
    )


def write_build(
    root: Path,
    records: dict[str, list] | None = None,
    *,
    build_id: str = "fake-build",
    manifest: BuildManifest | None = None,
) -> Path:
    """Write a complete build folder at ``root`` and return it."""
    records = records or make_records()
    (root / "records").mkdir(parents=True, exist_ok=True)
    for name, recs in records.items():
        with (root / "records" / f"{name}.jsonl").open("w", encoding="utf-8") as fh:
            for r in recs:
                fh.write(r.model_dump_json() + "\n")
    manifest = manifest or make_manifest(records, build_id)
    (root / "manifest.json").write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    (root / "funnel.json").write_text(json.dumps({"papers_found": 4, "parsed": 3, "with_rqs": 3}), encoding="utf-8")
    (root / "skips.jsonl").write_text(
        SkipRecord(stage="parse", item_id="acl-template", reason="no_bibliography").model_dump_json() + "\n",
        encoding="utf-8",
    )
    ids = [r.rq_id for r in records["rqs"]][:2]
    (root / "manual_validation_sample.json").write_text(
        json.dumps({"seed": 42, "size": len(ids), "rq_ids": ids}), encoding="utf-8"
    )
    return root
