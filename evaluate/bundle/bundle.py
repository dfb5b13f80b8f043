"""A reproduction bundle per leaderboard row: making one, opening one and checking its seal.

A bundle is a zip of the row's JSON, its results files, the submission, the slice of the dataset
revision the row judged, the prompt set, every call the row's judging read (request and reply,
from the call log and cache) and a manifest with the sha256 of each member. It is made only after
the row has been recomputed from exactly those members (``rejudge`` on the call log, offline, then
the summary): a bundle that would not re-score byte for byte is refused when it is made, with what
differs, rather than published. ``rqbench rescore`` (``rescore.py``) does the same from the zip.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.criteria.declared import DECLARATION
from rqbench.evaluate.generate.submission_files import Submission, load_submission, single_file_text
from rqbench.evaluate.judge.rejudge import (
    RejudgeMismatch,
    benchmark_of,
    check_declared,
    entries_from_results,
    instance_differences,
    rejudge,
)
from rqbench.evaluate.metrics.metric import FailureAccounting, NarrownessAggregation, OrderingAggregation, ScoreOptions
from rqbench.evaluate.metrics.summary import summarize
from rqbench.evaluate.metrics.summary_row import COMBINED, SummaryRow
from rqbench.io import RecordError
from rqbench.llm.client import LLM
from rqbench.llm.config import public_label
from rqbench.llm.store import CallStore
from rqbench.paths import slug
from rqbench.prompts import PromptSet
from rqbench.records import (
    MANIFEST_NAME,
    BundledCall,
    BundledJudge,
    BundleManifest,
    BundleMember,
    CitedPaper,
    EvaluationInstance,
    ResultsFile,
    RowKey,
    SubmissionMetadata,
    SummarySettings,
)

ROW = "row.json"
CALLS = "calls.jsonl"
SUBMISSION = "submission.jsonl"
INSTANCES = "dataset/instances.jsonl"
PAPERS = "dataset/cited_papers.jsonl"
REVISION = "dataset/revision.json"
README = "README.txt"
RESULTS_DIR = "results/"
PROMPTS_DIR = "prompts/"
CRITERIA_DIR = "criteria/"  # a criterion declared as data: criteria/<name>/ holds its folder's files
# A member larger than this is refused before it is read (a zip can claim any size it likes).
MAX_MEMBER_BYTES = 2 * 1024**3
# Every member's time stamp: the same row makes the same bytes, whenever it is bundled.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BundleError(ValueError):
    """A bundle that cannot be made or read: the message names the file, the member and the field."""


def rescore_command(bundle_name: str) -> str:
    return f"rqbench rescore {bundle_name}"


def summary_settings(
    *, combine: str = "pooled", n_boot: int, seed: int = 0, options: ScoreOptions = ScoreOptions()
) -> SummarySettings:
    return SummarySettings(
        combine=combine,
        n_boot=n_boot,
        seed=seed,
        narrowness=options.narrowness.value,
        orderings=options.orderings.value,
        failures=options.failures.value,
    )


def score_options(settings: SummarySettings) -> ScoreOptions:
    return ScoreOptions(
        narrowness=NarrownessAggregation(settings.narrowness),
        orderings=OrderingAggregation(settings.orderings),
        failures=FailureAccounting(settings.failures),
    )


# --------------------------------------------------------------------------
# rows
# --------------------------------------------------------------------------


def row_key(row: SummaryRow) -> RowKey:
    if row.row_kind != "model" or row.subfield is not None or row.provenance.submission_hash is None:
        raise BundleError("only a model's row over every sub-field has a bundle (not a reference or sub-field row)")
    return RowKey(
        model=row.model,
        prompt_variant=row.prompt_variant,
        setting=row.setting,
        judge=row.judge,
        submission_hash=row.provenance.submission_hash,
        trial=row.provenance.trial,
    )


def row_json(row: SummaryRow) -> bytes:
    """The row as the bundle stores it and a re-score must give back, byte for byte."""
    return (row.model_dump_json(indent=1) + "\n").encode()


def find_row(rows: Sequence[SummaryRow], key: RowKey) -> SummaryRow | None:
    for r in rows:
        if r.row_kind == "model" and r.subfield is None and r.provenance.submission_hash and row_key(r) == key:
            return r
    return None


def select_row(
    rows: Sequence[SummaryRow],
    *,
    model: str,
    variant: str,
    setting: str,
    judge: str,
    trial: int | None = None,
    submission_hash: str | None = None,
) -> SummaryRow:
    """The one model row these name; a named error listing what there is when none or several match."""
    models = [r for r in rows if r.row_kind == "model" and r.subfield is None]
    found = [
        r
        for r in models
        if (r.model, r.prompt_variant, r.setting, r.judge, r.provenance.trial)
        == (model, variant, setting, judge, trial)
        and (submission_hash is None or r.provenance.submission_hash == submission_hash)
    ]
    if len(found) == 1:
        return found[0]
    there = sorted(
        {f"--model {r.model} --variant {r.prompt_variant} --setting {r.setting} --judge {r.judge}" for r in models}
    )
    if not found:
        run = f" trial {trial}" if trial else ""
        listed = "\n  ".join(there) or "(no model rows)"
        raise BundleError(
            f"no leaderboard row for model {model!r}, variant {variant!r}, setting {setting!r}, judge {judge!r}{run}; "
            f"the rows are:\n  {listed}"
        )
    hashes = ", ".join(sorted(str(r.provenance.submission_hash) for r in found))
    raise BundleError(f"{len(found)} rows match (submissions {hashes}); pick one with --submission-hash")


def row_files(results: Sequence[ResultsFile], key: RowKey) -> list[ResultsFile]:
    """The results files behind a row: its judge's, or every judge's for a combined row, sorted by label."""
    group = [
        r
        for r in results
        if r.submission_hash == key.submission_hash and r.judge.setting == key.setting and r.trial == key.trial
    ]
    files = group if key.judge == COMBINED else [r for r in group if r.judge.label == key.judge]
    if not files:
        raise BundleError(f"no results file behind the row of judge {key.judge!r}")
    return sorted(files, key=lambda r: r.judge.label)


def recompute_row(files: Sequence[ResultsFile], key: RowKey, settings: SummarySettings) -> SummaryRow:
    rows = summarize(
        list(files),
        combine=settings.combine,
        options=score_options(settings),
        include_reference=False,
        n_boot=settings.n_boot,
        seed=settings.seed,
    )
    row = find_row(rows, key)
    if row is None:
        raise BundleError(f"the summary of the row's results files has no row {key.model_dump()}")
    return row


def row_diff(expected: bytes, got: bytes, *, names: tuple[str, str] = ("row.json (stored)", "recomputed")) -> str:
    return "".join(
        difflib.unified_diff(
            expected.decode().splitlines(keepends=True),
            got.decode().splitlines(keepends=True),
            fromfile=names[0],
            tofile=names[1],
        )
    )


# --------------------------------------------------------------------------
# making a bundle
# --------------------------------------------------------------------------


def results_member(r: ResultsFile) -> str:
    return f"{RESULTS_DIR}{slug(r.judge.label)}__{r.judge.setting}.json"


def _jsonl(records: Sequence[BaseModel]) -> bytes:
    return "".join(r.model_dump_json() + "\n" for r in records).encode()


def submission_bytes(
    metadata: SubmissionMetadata, submission: Submission | None, files: Sequence[ResultsFile]
) -> bytes:
    """The submission in its single-file form, its contact left out (it is private): the file given, or the
    model's RQs as the row's first results file holds them."""
    meta = metadata.model_copy(update={"contact": ""})
    entries = list(submission.entries.values()) if submission is not None else entries_from_results(files[0])
    return single_file_text(meta, entries).encode()


def load_bundled_submission(data: bytes, bench: Benchmark, where: str) -> Submission:
    """The bundled submission read back as the judging run reads a submission."""
    from rqbench.evaluate.generate.validation_report import SubmissionInvalid

    with tempfile.TemporaryDirectory(prefix="rqb-bundle-sub-") as tmp:
        path = Path(tmp) / "submission.jsonl"
        path.write_bytes(data)
        try:
            return load_submission(
                path, bench.revision_rq_ids, judged_rq_ids=bench.rq_ids, allow_partial=True, injection="flag"
            )
        except SubmissionInvalid as exc:
            raise BundleError(f"{where}: the submission is not valid:\n{exc}") from exc


def _calls(store: CallStore, keys: Sequence[str]) -> list[BundledCall]:
    out = []
    for key in dict.fromkeys(keys):
        stored = store.stored(key)
        if stored is not None:
            out.append(
                BundledCall(
                    key=key,
                    model=public_label(stored["model"]),  # a model's address stays private
                    step=stored["step"],
                    request=stored["request"],
                    text=stored["text"],
                    finish_reason=stored["finish_reason"],
                    provider_model=stored["provider_model"],
                    tokens_in=stored["tokens_in"],
                    tokens_out=stored["tokens_out"],
                    cost_usd=stored["cost_usd"],
                )
            )
            continue
        failed = store.recorded_failure(key)
        if failed is None:  # the offline run read it, so one of the two is there
            raise BundleError(f"call {key} was read but is neither cached nor a recorded failure in {store.path}")
        out.append(
            BundledCall(
                key=key,
                model=public_label(failed.model),
                step=failed.step,
                request={},
                failure_reason=failed.reason,
                failure_detail=failed.detail,
            )
        )
    return out


def readme_text(manifest: BundleManifest, bundle_name: str, declared: Sequence[str] = ()) -> str:
    k = manifest.row
    judges = "\n".join(
        f"  {j.spec.label} ({j.spec.setting}; provider's model: {', '.join(j.provider_models) or 'not recorded'})"
        for j in manifest.judges
    )
    return (
        f"RQ-Bench reproduction bundle: one leaderboard row\n\n"
        f"row: {k.model} ({k.prompt_variant}), {k.setting}, judge {k.judge}"
        f"{f', trial of {k.trial}' if k.trial else ''}\n"
        f"submission hash: {k.submission_hash} (submission: {manifest.submission_source})\n"
        f"dataset: {manifest.dataset_repo} at {manifest.dataset_revision}"
        f" ({manifest.instances} of {manifest.instances_expected} instances)\n"
        f"prompt set: {manifest.prompt_set.name} {manifest.prompt_set.hash}\n"
        + (
            f"criteria declared as data: {', '.join(declared)} ({CRITERIA_DIR}<name>/; rescore reads them from here)\n"
            if declared
            else ""
        )
        + f"judges:\n{judges}\n"
        f"summary: combine {manifest.summary.combine}, {manifest.summary.n_boot} bootstrap resamples, "
        f"seed {manifest.summary.seed}\n"
        f"calls: {manifest.calls}\n\n"
        f"Recompute the row from this file alone, with no LLM call:\n\n"
        f"  {rescore_command(bundle_name)}\n\n"
        "It checks every member against manifest.json (sha256), loads calls.jsonl into a fresh temporary call\n"
        "cache, judges the submission again from it (a call missing from the bundle stops it, naming the call;\n"
        "none is sent), recomputes the summary and prints the row. It exits 0 when the row is byte-identical\n"
        "to row.json, 1 with a diff when it is not. The row's judging cost and request counts are what the\n"
        "original run recorded (results/*.json, totals): a run from the cache pays nothing, so cannot re-measure them.\n"
    )


def _zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


@dataclass
class RowSource:
    """Where a row's bundle is made from: the leaderboard's results files, the dataset, the prompt set, the
    call log and (optionally) the submission file itself."""

    results: Sequence[ResultsFile]
    bench: Benchmark
    prompts: PromptSet
    store: CallStore
    settings: SummarySettings
    submission: Submission | None = None


def make_bundle(row: SummaryRow, source: RowSource, out: str | Path) -> BundleManifest:
    """Write ``row``'s bundle to ``out`` (atomically), after recomputing the row from what goes in it."""
    out = Path(out)
    key = row_key(row)
    files = row_files(source.results, key)
    if source.submission is not None and source.submission.hash != key.submission_hash:
        raise BundleError(
            f"{source.submission.path}: submission hash {source.submission.hash} is not the row's {key.submission_hash}"
        )
    try:
        benches = [benchmark_of(f, source.bench) for f in files]
    except RejudgeMismatch as exc:
        raise BundleError(f"dataset {source.bench.repo}: {exc}") from exc
    bench = benches[0]
    sub_data = submission_bytes(files[0].submission, source.submission, files)
    sub = load_bundled_submission(sub_data, bench, "the submission")
    llm = LLM(source.store, offline=True)
    rejudged = []
    for f in files:
        try:
            again = rejudge(f, benchmark_of(f, source.bench), sub, source.prompts, llm)
        except RejudgeMismatch as exc:
            raise BundleError(f"results of judge {f.judge.label!r}: {exc}") from exc
        diffs = instance_differences(f.instances, again.instances)
        if diffs:
            raise BundleError(
                f"the call log {source.store.path} does not reproduce the results of judge {f.judge.label!r} "
                f"({f.judge.setting}): " + "; ".join(diffs)
            )
        rejudged.append(again)
    stored, again_row = row_json(row), row_json(recompute_row(rejudged, key, source.settings))
    if stored != again_row:
        raise BundleError(
            "the row recomputed from its own results files differs from the leaderboard's row:\n"
            + row_diff(stored, again_row, names=("leaderboard row", "recomputed"))
        )
    calls = _calls(source.store, llm.read_keys)
    members: dict[str, bytes] = {ROW: stored}
    for f in files:
        members[results_member(f)] = (f.model_dump_json(indent=1) + "\n").encode()
    members[SUBMISSION] = sub_data
    members[INSTANCES] = _jsonl(bench.instances)
    members[PAPERS] = _jsonl([bench.papers[p] for p in sorted(bench.papers)])
    members[REVISION] = (json.dumps({"revision_rq_ids": bench.revision_rq_ids}, indent=1) + "\n").encode()
    for p in sorted(source.prompts.path.iterdir()):
        if p.suffix == ".md":
            members[f"{PROMPTS_DIR}{source.prompts.name}/{p.name}"] = p.read_bytes()
    declared = {name: folder for f in files for name, folder in check_declared(f).items()}
    for name, folder in sorted(declared.items()):
        for p in sorted(folder.iterdir()):
            if p.name == DECLARATION or p.suffix == ".md":
                members[f"{CRITERIA_DIR}{name}/{p.name}"] = p.read_bytes()
    members[CALLS] = _jsonl(calls)
    judges = []
    for f in files:
        identity = llm.model(f.judge.label).cache_identity()
        said = {c.provider_model for c in calls if c.request.get("model") == identity and c.provider_model}
        judges.append(
            BundledJudge(
                spec=f.judge, cache_identity=identity, provider_models=sorted(said), results_file=results_member(f)
            )
        )
    manifest = BundleManifest(
        row=key,
        dataset_repo=files[0].dataset_repo,
        dataset_revision=files[0].dataset_revision,
        dataset_version=files[0].dataset_version,
        instances=len(bench.instances),
        instances_expected=bench.instances_expected,
        prompt_set=files[0].judge.prompt_set,
        judges=judges,
        summary=source.settings,
        submission_source="the submitted file, contact left out"
        if source.submission is not None
        else "the model's RQs as the results file holds them",
        calls=len(calls),
        command=rescore_command(out.name),
        members=[],
    )
    members[README] = readme_text(manifest, out.name, sorted(declared)).encode()
    manifest.members = [
        BundleMember(name=n, sha256=hashlib.sha256(d).hexdigest(), bytes=len(d)) for n, d in members.items()
    ]
    members[MANIFEST_NAME] = (manifest.model_dump_json(indent=1) + "\n").encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_bytes(_zip_bytes(members))
    os.replace(tmp, out)
    return manifest


# --------------------------------------------------------------------------
# opening a bundle
# --------------------------------------------------------------------------


@dataclass
class OpenedBundle:
    """A bundle whose members all match its manifest, parsed."""

    path: Path
    manifest: BundleManifest
    members: dict[str, bytes]
    row: bytes
    results: list[ResultsFile]
    calls: list[BundledCall]
    bench: Benchmark
    submission: bytes

    def prompt_files(self) -> dict[str, bytes]:
        """The prompt set's files by name (``prompts/<set>/<file>``)."""
        root = f"{PROMPTS_DIR}{self.manifest.prompt_set.name}/"
        return {n.removeprefix(root): d for n, d in self.members.items() if n.startswith(root)}


def _verified(path: Path) -> tuple[BundleManifest, dict[str, bytes]]:
    """Every member, checked against the manifest: a changed, missing or extra member is named."""
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise BundleError(f"{path}: no such bundle") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{path}: not a readable zip archive ({exc})") from exc
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        big = [n for n, i in infos.items() if i.file_size > MAX_MEMBER_BYTES]
        if big:
            raise BundleError(f"{path}: member {big[0]} claims {infos[big[0]].file_size:,} bytes, over the limit")
        if MANIFEST_NAME not in infos:
            raise BundleError(f"{path}: no member {MANIFEST_NAME}; is this an RQ-Bench bundle?")
        try:
            members = {n: zf.read(n) for n in infos}
        except (zipfile.BadZipFile, OSError, EOFError) as exc:  # a corrupt member: CRC or a cut archive
            raise BundleError(f"{path}: a member cannot be read ({exc})") from exc
    try:
        manifest = BundleManifest.model_validate_json(members.pop(MANIFEST_NAME))
    except ValidationError as exc:
        raise RecordError.from_validation(exc, path=f"{path}:{MANIFEST_NAME}", kind="bundle manifest") from exc
    listed = {m.name: m for m in manifest.members}
    for name in sorted(set(listed) - set(members)):
        raise BundleError(f"{path}: member {name} is in the manifest but not in the bundle")
    for name in sorted(set(members) - set(listed)):
        raise BundleError(f"{path}: member {name} is in the bundle but not in the manifest")
    for name, m in listed.items():
        digest = hashlib.sha256(members[name]).hexdigest()
        if digest != m.sha256:
            raise BundleError(
                f"{path}: member {name} does not match the manifest (sha256 {digest}, manifest: {m.sha256}); "
                "it was changed after the bundle was made"
            )
    return manifest, members


def _lines(path: Path, name: str, data: bytes, model: type[BaseModel]) -> list:
    out = []
    for n, line in enumerate(data.decode().splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(model.model_validate_json(line))
        except ValidationError as exc:
            raise RecordError.from_validation(exc, path=f"{path}:{name}", line=n, kind=model.__name__) from exc
    return out


def open_bundle(path: str | Path) -> OpenedBundle:
    """A bundle checked member by member against its manifest and parsed; errors name the file, member and field."""
    path = Path(path)
    manifest, members = _verified(path)
    missing = [n for n in (ROW, CALLS, SUBMISSION, INSTANCES, PAPERS, REVISION) if n not in members]
    if missing:
        raise BundleError(f"{path}: no member {missing[0]}")
    results = []
    for j in manifest.judges:
        if j.results_file not in members:
            raise BundleError(f"{path}: {MANIFEST_NAME}: field judges.results_file names {j.results_file}, absent")
        try:
            results.append(ResultsFile.model_validate_json(members[j.results_file]))
        except ValidationError as exc:
            raise RecordError.from_validation(exc, path=f"{path}:{j.results_file}", kind="results file") from exc
    try:
        revision = json.loads(members[REVISION])["revision_rq_ids"]
    except (ValueError, KeyError, TypeError) as exc:
        raise BundleError(f"{path}:{REVISION}: field revision_rq_ids: not readable ({exc})") from exc
    instances = _lines(path, INSTANCES, members[INSTANCES], EvaluationInstance)
    papers = {p.paper_id: p for p in _lines(path, PAPERS, members[PAPERS], CitedPaper)}
    try:
        bench = Benchmark(
            instances,
            papers,
            repo=str(path),
            revision=manifest.dataset_revision,
            name=manifest.dataset_repo,
            version=manifest.dataset_version,
            revision_rq_ids=list(revision),
        )
    except ValueError as exc:
        raise BundleError(f"{path}:{INSTANCES}: {exc}") from exc
    return OpenedBundle(
        path=path,
        manifest=manifest,
        members=members,
        row=members[ROW],
        results=results,
        calls=_lines(path, CALLS, members[CALLS], BundledCall),
        bench=bench,
        submission=members[SUBMISSION],
    )
