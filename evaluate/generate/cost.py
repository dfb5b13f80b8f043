"""What generating a submission cost, from the call log, and a figure per dollar of it.

``rqbench generate`` writes ``generation_log.jsonl`` beside the submission: per
instance the cache key of its request (and of its re-ask). The call log holds, per
key, what the request cost when it was sent (litellm's cost map, ``CallStore.spent``)
and the run it was sent in. The cost is summed over the distinct keys, so a
question answered from the cache (a rerun, or the same request twice) is paid
once, as it was. What is not known stays unknown, never $0: a request with no
price, and a key of an answered instance that the log never saw sent (the
submission was generated on another machine). A request that failed in transport
is not billed, so a failed instance's missing key counts for nothing.

The judging run reads the log once and stores the result in each results file
(``ResultsFile.generation_cost``), with its run ids; the summary and the
leaderboard only read what is stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from rqbench.evaluate.generate.run import LOG_FILE
from rqbench.llm.store import CallStore, Spent
from rqbench.records import GenerationCost


def _keys(entry: Mapping[str, object]) -> list[str]:
    return [str(entry[k]) for k in ("cache_key", "reask_key") if entry.get(k)]


def _delivered(entry: Mapping[str, object]) -> bool:
    """The instance got a reply (a truncated one is billed too): its requests must be in the log."""
    return "failure" not in entry or bool(entry.get("truncated"))


def generation_cost(entries: Sequence[Mapping[str, object]], spent: Mapping[str, Spent]) -> GenerationCost:
    """The cost of the requests behind ``entries`` (generation-log lines), each distinct key counted once."""
    seen: set[str] = set()
    requests = unpriced = unlogged = 0
    cost = 0.0
    runs: set[str] = set()
    for entry in entries:
        for key in _keys(entry):
            if key in seen:
                continue
            seen.add(key)
            got = spent.get(key)
            if got is None:
                unlogged += _delivered(entry)
                continue
            requests += 1
            if got.run_id:
                runs.add(got.run_id)
            if got.cost_usd is None:
                unpriced += 1
            else:
                cost += got.cost_usd
    return GenerationCost(requests=requests, cost_usd=cost, unpriced=unpriced, unlogged=unlogged, run_ids=sorted(runs))


def read_generation_log(folder: Path) -> list[dict[str, object]] | None:
    """The generation log's lines; None when the folder has none (the submission was made by other means)."""
    folder = Path(folder)
    path = (folder if folder.is_dir() else folder.parent) / LOG_FILE  # a submission given as its .jsonl file
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def submission_generation_cost(folder: Path, store: CallStore) -> GenerationCost | None:
    """The edge: read the submission's generation log and look its keys up in the call log."""
    entries = read_generation_log(folder)
    if entries is None:
        return None
    keys = sorted({k for e in entries for k in _keys(e)})
    return generation_cost(entries, store.spent(keys))


def per_dollar(value: float | None, cost_usd: float | None) -> float | None:
    """A figure per dollar; None when either is unknown or nothing was paid (a free run has no such ratio)."""
    if value is None or cost_usd is None or cost_usd <= 0:
        return None
    return value / cost_usd
