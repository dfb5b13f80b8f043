"""Reading a build folder (the builder's output) and checking it before anything is published.

A build folder holds ``records/{rqs,papers,cited_papers,instances}.jsonl``,
``manifest.json``, ``funnel.json``, ``skips.jsonl`` and
``manual_validation_sample.json``. Every line is validated into its record, and
the records are checked against each other; each problem names the file, the
line or record id, and the field.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rqbench.dataset_card.features import CONFIG_RECORDS
from rqbench.io import RecordError
from rqbench.io import read_jsonl as read_records
from rqbench.records import BuildManifest, CitedPaper, EvaluationInstance, PaperRecord, RQRecord, SkipRecord
from rqbench.wellformed import describe


class BuildError(RecordError):
    """A build folder that cannot be read, or whose records contradict each other.

    A bad record reads ``<file>:line <n>: <Model>.<field>: <problem>``.
    """

    LINE_FORMAT = "{path}:line {line}"
    FIELD_FORMAT = "{model}.{field}"


@dataclass
class Build:
    """Everything a release is made from, validated."""

    root: Path
    rqs: list[RQRecord]
    papers: list[PaperRecord]
    cited_papers: list[CitedPaper]
    instances: list[EvaluationInstance]
    manifest: BuildManifest
    funnel: dict[str, Any] = field(default_factory=dict)
    skips: list[SkipRecord] = field(default_factory=list)
    manual_sample: list[str] = field(default_factory=list)
    manual_sample_info: dict[str, Any] = field(default_factory=dict)

    def records(self, config: str) -> list[BaseModel]:
        return {"rqs": self.rqs, "papers": self.papers, "cited_papers": self.cited_papers, "instances": self.instances}[
            config
        ]


def read_jsonl(path: Path, model: type[BaseModel], *, required: bool = True) -> list[Any]:
    """Every line of a JSONL file as a record; BuildError naming file, line and field."""
    if not path.is_file():
        if required:
            raise BuildError(f"{path}: missing (a build folder needs it)")
        return []
    return read_records(path, model, error=BuildError)


def _read_json(path: Path, *, required: bool) -> Any:
    if not path.is_file():
        if required:
            raise BuildError(f"{path}: missing (a build folder needs it)")
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BuildError(f"{path}: not JSON: {exc.msg} (line {exc.lineno})") from exc


def read_manual_sample(path: Path) -> tuple[list[str], dict[str, Any]]:
    """The manual check's ids: a JSON list of ids, or an object with ``rq_ids`` (plus its protocol)."""
    data = _read_json(path, required=False)
    if data is None:
        return [], {}
    if isinstance(data, list):
        ids, info = data, {}
    elif isinstance(data, dict) and isinstance(data.get("rq_ids"), list):
        ids, info = data["rq_ids"], {k: v for k, v in data.items() if k != "rq_ids"}
    else:
        raise BuildError(f"{path}: expected a list of rq_ids or an object with an 'rq_ids' list")
    if not all(isinstance(i, str) for i in ids):
        raise BuildError(f"{path}: rq_ids must be strings")
    return list(ids), info


def load_build(root: str | Path) -> Build:
    """Read and validate every file of a build folder (records one by one, then cross-checks)."""
    root = Path(root)
    if not root.is_dir():
        raise BuildError(f"{root}: build folder does not exist")
    rec = root / "records"
    manifest_data = _read_json(root / "manifest.json", required=True)
    try:
        manifest = BuildManifest.model_validate(manifest_data)
    except ValidationError as exc:
        raise BuildError.from_validation(exc, path=root / "manifest.json") from exc
    funnel = _read_json(root / "funnel.json", required=False) or {}
    ids, info = read_manual_sample(root / "manual_validation_sample.json")
    build = Build(
        root=root,
        rqs=read_jsonl(rec / "rqs.jsonl", RQRecord),
        papers=read_jsonl(rec / "papers.jsonl", PaperRecord),
        cited_papers=read_jsonl(rec / "cited_papers.jsonl", CitedPaper),
        instances=read_jsonl(rec / "instances.jsonl", EvaluationInstance),
        manifest=manifest,
        funnel=funnel if isinstance(funnel, dict) else {"stages": funnel},
        skips=read_jsonl(root / "skips.jsonl", SkipRecord, required=False),
        manual_sample=ids,
        manual_sample_info=info,
    )
    return build


def _dupes(values: list[str]) -> list[str]:
    return sorted(v for v, n in Counter(values).items() if n > 1)


def wellformed_problems(build: Build) -> list[str]:
    """One line per text of a record that fails the well-formedness gate: file, record, field, rule, what is wrong.

    Reading a build does not apply the gate (a build made before it still loads); publishing does.
    """
    rec = build.root / "records"
    rows = [("rqs", RQRecord.__name__, r.rq_id, r) for r in build.rqs]
    rows += [("papers", PaperRecord.__name__, p.paper.paper_id, p) for p in build.papers]
    rows += [("instances", EvaluationInstance.__name__, i.rq_id, i) for i in build.instances]
    rows += [("cited_papers", CitedPaper.__name__, c.paper_id, c) for c in build.cited_papers]
    return [
        f"{rec / (config + '.jsonl')}: {describe(failure, record=f'{kind} {ident}', field=field)}"
        for config, kind, ident, row in rows
        for field, failure in row.wellformed_failures()
    ]


def check_build(build: Build) -> list[str]:
    """Cross-record problems, one line each; an empty list means the build may be published."""
    problems: list[str] = []
    rec = build.root / "records"
    if not build.rqs:
        problems.append(f"{rec / 'rqs.jsonl'}: no RQs")
    for config, key in (("rqs", "rq_id"), ("cited_papers", "paper_id"), ("instances", "rq_id")):
        d = _dupes([getattr(r, key) for r in build.records(config)])
        if d:
            problems.append(f"{rec / (config + '.jsonl')}: duplicate {key} {d[:5]}")
    d = _dupes([p.paper.paper_id for p in build.papers])
    if d:
        problems.append(f"{rec / 'papers.jsonl'}: duplicate paper.paper_id {d[:5]}")

    papers = {p.paper.paper_id: p for p in build.papers}
    cited = {c.paper_id for c in build.cited_papers}
    rqs = {r.rq_id: r for r in build.rqs}
    for r in build.rqs:
        if r.paper_id not in papers:
            problems.append(f"{rec / 'rqs.jsonl'}: RQRecord {r.rq_id}: paper_id {r.paper_id!r} not in papers.jsonl")
        missing = [c for c in r.cited_paper_ids if c not in cited]
        if missing:
            problems.append(
                f"{rec / 'rqs.jsonl'}: RQRecord {r.rq_id}: cited_paper_ids {missing[:3]} not in cited_papers.jsonl"
            )
    per_paper = Counter(r.paper_id for r in build.rqs)
    for a, p in papers.items():
        if p.n_rqs != per_paper.get(a, 0):
            problems.append(
                f"{rec / 'papers.jsonl'}: PaperRecord {a}: n_rqs is {p.n_rqs} but rqs.jsonl has {per_paper.get(a, 0)}"
            )
    for i in build.instances:
        r = rqs.get(i.rq_id)
        where = f"{rec / 'instances.jsonl'}: EvaluationInstance {i.rq_id}"
        if r is None:
            problems.append(f"{where}: rq_id not in rqs.jsonl")
            continue
        if i.gt_rq != r.rq:
            problems.append(f"{where}: gt_rq differs from the RQRecord's rq")
        if (i.paper_id, i.arxiv_id) != (r.paper_id, r.arxiv_id):
            problems.append(
                f"{where}: paper_id/arxiv_id {i.paper_id!r}/{i.arxiv_id!r} differ from the RQRecord's "
                f"{r.paper_id!r}/{r.arxiv_id!r}"
            )
        missing = [c for c in i.background_paper_ids if c not in cited]
        if missing:
            problems.append(f"{where}: background_paper_ids {missing[:3]} not in cited_papers.jsonl")
    no_instance = sorted(set(rqs) - {i.rq_id for i in build.instances})
    if no_instance:
        problems.append(f"{rec / 'instances.jsonl'}: no instance for rq_id {no_instance[:5]}")
    problems += wellformed_problems(build)
    unknown = [i for i in build.manual_sample if i not in rqs]
    if unknown:
        problems.append(f"{build.root / 'manual_validation_sample.json'}: rq_ids {unknown[:5]} not in rqs.jsonl")
    for config in CONFIG_RECORDS:
        claimed = build.manifest.counts.get(config)
        if claimed is not None and claimed != len(build.records(config)):
            problems.append(
                f"{build.root / 'manifest.json'}: BuildManifest.counts.{config} is {claimed} "
                f"but records/{config}.jsonl has {len(build.records(config))}"
            )
    return problems
