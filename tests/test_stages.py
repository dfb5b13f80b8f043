"""The stage framework: done-set, resume after a crash, torn lines, reruns, joins, workers, dry run."""

from __future__ import annotations

import asyncio
import functools
import json

import pytest
from ray_local import ray_local  # noqa: F401 - the fixture

from rqbench.builder.stages import (
    ItemSkipped,
    Stage,
    StageFileError,
    StageStore,
    build_items,
    gather_calls,
    input_hash,
    run_stage,
)
from rqbench.records import Record


class Num(Record):
    arxiv_id: str
    value: int


def double(item, *, fail_on: str | None = None, calls: list | None = None):
    rec = item["nums"]
    if calls is not None:
        calls.append(rec.arxiv_id)
    if rec.arxiv_id == fail_on:
        raise RuntimeError("injected crash")
    if rec.value < 0:
        raise ItemSkipped("negative_value", f"value {rec.value}")
    return [Num(arxiv_id=rec.arxiv_id, value=rec.value * 2)]


def nums(n: int) -> list[Num]:
    return [Num(arxiv_id=f"p{i}", value=i) for i in range(n)]


def stage(fn=double, **kw) -> Stage:
    return Stage(name="double", inputs=("nums",), output=Num, fn=fn, **kw)


def test_a_finished_stage_does_nothing_on_rerun(tmp_path):
    calls: list[str] = []
    st = stage(functools.partial(double, calls=calls))
    r1 = run_stage(st, tmp_path, {"nums": nums(4)}, progress=False)
    assert (r1.processed, r1.items_out, r1.already_done) == (4, 4, 0)
    r2 = run_stage(st, tmp_path, {"nums": nums(4)}, progress=False)
    assert (r2.processed, r2.already_done) == (0, 4)
    assert calls == ["p0", "p1", "p2", "p3"]
    out = StageStore(tmp_path, "double").records(Num)
    assert [r.value for r in out] == [0, 2, 4, 6]


def test_a_crash_mid_stage_resumes_at_the_next_unfinished_item(tmp_path):
    calls: list[str] = []
    with pytest.raises(RuntimeError, match="injected crash"):
        run_stage(
            stage(functools.partial(double, fail_on="p2", calls=calls)), tmp_path, {"nums": nums(4)}, progress=False
        )
    assert calls == ["p0", "p1", "p2"]
    calls.clear()
    r = run_stage(stage(functools.partial(double, calls=calls)), tmp_path, {"nums": nums(4)}, progress=False)
    assert calls == ["p2", "p3"]
    assert (r.already_done, r.processed, r.items_out) == (2, 2, 4)


def test_a_torn_last_line_is_dropped_and_redone(tmp_path):
    run_stage(stage(), tmp_path, {"nums": nums(3)}, progress=False)
    store = StageStore(tmp_path, "double")
    raw = store.items_path.read_bytes()
    store.items_path.write_bytes(raw[:-20])  # a crash in the middle of the last write
    assert set(store.load()) == {"p0", "p1"}
    assert store.items_path.read_bytes().endswith(b"\n")
    calls: list[str] = []
    run_stage(stage(functools.partial(double, calls=calls)), tmp_path, {"nums": nums(3)}, progress=False)
    assert calls == ["p2"]


def test_a_damaged_middle_line_is_an_error_naming_the_file_and_line(tmp_path):
    run_stage(stage(), tmp_path, {"nums": nums(3)}, progress=False)
    store = StageStore(tmp_path, "double")
    lines = store.items_path.read_text().splitlines(keepends=True)
    lines[1] = '{"item_id": "p1"}\n'
    store.items_path.write_text("".join(lines))
    with pytest.raises(StageFileError, match=r"items.jsonl, line 2"):
        store.load()


def test_changed_input_or_settings_redo_only_the_affected_items(tmp_path):
    run_stage(stage(), tmp_path, {"nums": nums(3)}, progress=False)
    changed = nums(3)
    changed[1] = Num(arxiv_id="p1", value=10)
    calls: list[str] = []
    run_stage(stage(functools.partial(double, calls=calls)), tmp_path, {"nums": changed}, progress=False)
    assert calls == ["p1"]
    assert [r.value for r in StageStore(tmp_path, "double").records(Num)] == [0, 20, 4]
    calls.clear()
    run_stage(
        stage(functools.partial(double, calls=calls), fingerprint={"model": "other"}),
        tmp_path,
        {"nums": changed},
        progress=False,
    )
    assert calls == ["p0", "p1", "p2"]


def test_redo_and_subset(tmp_path):
    calls: list[str] = []
    st = stage(functools.partial(double, calls=calls))
    r = run_stage(st, tmp_path, {"nums": nums(4)}, progress=False, only={"p1", "p3"})
    assert calls == ["p1", "p3"] and r.items_out == 2
    calls.clear()
    run_stage(st, tmp_path, {"nums": nums(4)}, progress=False, redo=True, only={"p3"})
    assert calls == ["p3"]
    assert [r.arxiv_id for r in StageStore(tmp_path, "double").records(Num)] == ["p1", "p3"]


def test_skips_are_recorded_by_name_and_count_as_done(tmp_path):
    data = nums(3) + [Num(arxiv_id="bad", value=-1)]
    r = run_stage(stage(), tmp_path, {"nums": data}, progress=False)
    assert (r.skipped, r.items_out) == (1, 3)
    (skip,) = StageStore(tmp_path, "double").skips()
    assert (skip.stage, skip.item_id, skip.reason) == ("double", "bad", "negative_value")
    assert run_stage(stage(), tmp_path, {"nums": data}, progress=False).processed == 0


def test_side_inputs_are_joined_by_id_and_missing_ids_left_out():
    st = Stage(name="join", inputs=("a", "b"), output=Num, fn=double)
    items = build_items(st, {"a": nums(3), "b": [Num(arxiv_id="p2", value=0), Num(arxiv_id="p0", value=0)]})
    assert [i for i, _ in items] == ["p0", "p2"]
    assert set(items[0][1]) == {"a", "b"}


def test_input_hash_is_stable_and_sensitive():
    item = {"nums": Num(arxiv_id="p0", value=1)}
    assert input_hash(item, {"m": 1}) == input_hash({"nums": Num(arxiv_id="p0", value=1)}, {"m": 1})
    assert input_hash(item, {"m": 1}) != input_hash(item, {"m": 2})


def test_worker_processes_give_the_same_records(tmp_path):
    r = run_stage(stage(), tmp_path / "pool", {"nums": nums(5)}, progress=False, workers=2)
    assert r.items_out == 5
    pooled = StageStore(tmp_path / "pool", "double").records(Num)
    run_stage(stage(), tmp_path / "inline", {"nums": nums(5)}, progress=False)
    assert pooled == StageStore(tmp_path / "inline", "double").records(Num)


def test_wrong_output_type_is_an_error(tmp_path):
    class Other(Record):
        arxiv_id: str

    st = Stage(name="bad", inputs=("nums",), output=Other, fn=double)
    with pytest.raises(TypeError, match="expected Other"):
        run_stage(st, tmp_path, {"nums": nums(1)}, progress=False)


async def _llm_double(item, llm):
    await asyncio.sleep(0)
    return [Num(arxiv_id=item["nums"].arxiv_id, value=item["nums"].value * 2)]


def test_llm_stage_runs_items_concurrently_and_stores_each(tmp_path):
    st = Stage(name="llmdouble", inputs=("nums",), output=Num, fn=_llm_double, kind="llm")
    r = run_stage(st, tmp_path, {"nums": nums(6)}, progress=False, concurrency=3)
    assert r.items_out == 6
    lines = StageStore(tmp_path, "llmdouble").items_path.read_text().splitlines()
    assert [json.loads(x)["item_id"] for x in lines] == [f"p{i}" for i in range(6)]  # compacted in input order


def test_gather_calls_counts_every_call_in_a_dry_run():
    from rqbench.llm import DryRun

    seen = []

    async def call(i):
        seen.append(i)
        raise DryRun(str(i))

    with pytest.raises(DryRun):
        asyncio.run(gather_calls([call(i) for i in range(3)]))
    assert seen == [0, 1, 2]


def test_ray_executor_gives_the_same_records(tmp_path, ray_local):
    r = run_stage(stage(), tmp_path / "ray", {"nums": nums(3)}, progress=False, executor="ray")
    assert r.items_out == 3
    assert [x.value for x in StageStore(tmp_path / "ray", "double").records(Num)] == [0, 2, 4]
