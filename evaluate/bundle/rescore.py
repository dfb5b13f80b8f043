"""Re-scoring a bundle: its row recomputed from its own members with no LLM call, and compared byte for byte.

The bundle's calls go into a fresh call cache in a temporary folder (never the user's call log),
the judging runs offline on it (``rejudge``: a call the bundle lacks stops it, naming the call),
and the summary is recomputed under the bundle's summary settings.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from rqbench.evaluate.bundle.bundle import (
    PROMPTS_DIR,
    BundleError,
    load_bundled_submission,
    open_bundle,
    recompute_row,
    row_diff,
    row_json,
)
from rqbench.evaluate.judge.rejudge import RejudgeMismatch, benchmark_of, instance_differences, rejudge
from rqbench.llm.client import LLM
from rqbench.llm.store import CallStore
from rqbench.prompts import load_prompt_set
from rqbench.records import BundledCall


@dataclass
class Rescored:
    """What a re-score gave: the row's bytes, the stored ones, and where the judging differed, if anywhere."""

    row: bytes
    stored: bytes
    calls_read: int
    differences: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return self.row == self.stored and not self.differences

    def diff(self) -> str:
        return row_diff(self.stored, self.row)


def load_calls(store: CallStore, calls: list[BundledCall]) -> None:
    """The bundle's calls as a call cache holds them: replies cached, transport failures logged."""
    for c in calls:
        if c.text is None:
            store.log(
                step=c.step,
                model=c.model,
                key=c.key,
                cache="miss",
                status=f"error:{c.failure_reason}",
                error=c.failure_detail,
            )
            continue
        store.put(
            c.key,
            model=c.model,
            step=c.step,
            request=c.request,
            text=c.text,
            tokens_in=c.tokens_in,
            tokens_out=c.tokens_out,
            cost_usd=c.cost_usd,
            finish_reason=c.finish_reason,
            provider_model=c.provider_model,
        )


def rescore(path: str | Path) -> Rescored:
    """The bundle's row recomputed from the bundle alone; errors name the file, the member and the field."""
    b = open_bundle(path)
    with tempfile.TemporaryDirectory(prefix="rqb-rescore-") as tmp:
        folder = Path(tmp) / b.manifest.prompt_set.name
        folder.mkdir()
        for name, data in b.prompt_files().items():
            (folder / name).write_bytes(data)
        prompts = load_prompt_set(folder)
        if prompts.hash != b.manifest.prompt_set.hash:
            raise BundleError(
                f"{b.path}: {PROMPTS_DIR}{prompts.name}/ hashes to {prompts.hash}, the manifest's prompt_set.hash "
                f"is {b.manifest.prompt_set.hash}"
            )
        store = CallStore(Path(tmp) / "calls.db")
        try:
            load_calls(store, b.calls)
            llm = LLM(store, offline=True)
            sub = load_bundled_submission(b.submission, benchmark_of(b.results[0], b.bench), f"{b.path}:submission")
            rejudged, differences = [], []
            for f in b.results:
                try:
                    again = rejudge(f, b.bench, sub, prompts, llm)
                except RejudgeMismatch as exc:
                    raise BundleError(f"{b.path}: results of judge {f.judge.label!r}: {exc}") from exc
                differences += [f"{f.judge.label}: {d}" for d in instance_differences(f.instances, again.instances)]
                rejudged.append(again)
            row = row_json(recompute_row(rejudged, b.manifest.row, b.manifest.summary))
            return Rescored(row, b.row, len(set(llm.read_keys)), differences)
        finally:
            store.close()
