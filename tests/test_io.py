"""rqbench.io: whole-or-nothing writes, appended lines that survive a crash, and errors that name the place."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from rqbench.io import (
    RecordError,
    append_line,
    atomic_open,
    id_label,
    read_appended,
    read_json_lines,
    read_jsonl,
    read_model,
    write_atomic,
    write_jsonl,
)


class Row(BaseModel):
    row_id: str
    n: int = Field(ge=0)


def test_an_atomic_write_replaces_the_file_and_leaves_no_sibling(tmp_path):
    f = tmp_path / "sub" / "out.txt"
    write_atomic(f, "first\n")
    write_atomic(f, "é second\n")
    assert f.read_bytes() == "é second\n".encode("utf-8")
    write_atomic(f, b"\x00\x01")
    assert f.read_bytes() == b"\x00\x01"
    assert [p.name for p in f.parent.iterdir()] == ["out.txt"]


def test_a_write_that_fails_midway_keeps_the_old_file(tmp_path):
    f = tmp_path / "out.bin"
    f.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="dropped"):
        with atomic_open(f, "wb") as fh:
            fh.write(b"half of the new")
            raise RuntimeError("connection dropped")
    assert f.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(f, "a"):
            pass


def test_write_jsonl_then_read_jsonl_round_trips(tmp_path):
    rows = [Row(row_id="a", n=1), Row(row_id="b", n=2)]
    assert write_jsonl(tmp_path / "rows.jsonl", rows) == 2
    assert read_jsonl(tmp_path / "rows.jsonl", Row) == rows
    assert write_jsonl(tmp_path / "none.jsonl", []) == 0
    assert (tmp_path / "none.jsonl").read_bytes() == b""


def test_a_bad_line_names_file_line_record_and_field(tmp_path):
    f = tmp_path / "rows.jsonl"
    f.write_text('{"row_id": "a", "n": 1}\n\n{"row_id": "b", "n": -4, "x": 1}\n', encoding="utf-8")
    with pytest.raises(RecordError) as err:
        read_jsonl(f, Row, label=id_label("row_id"), hint=" (fix it by hand)")
    e = err.value
    assert str(e) == f"{f}:3: row_id='b': field n: Input should be greater than or equal to 0 (fix it by hand)"
    assert (e.path, e.line, e.record, e.field) == (f, 3, "row_id='b'", "n")
    f.write_text('{"row_id": "a"\n', encoding="utf-8")
    with pytest.raises(RecordError, match=r"rows.jsonl:1: Invalid JSON"):
        read_jsonl(f, Row, label=id_label("row_id"))
    with pytest.raises(RecordError, match=r"rows.jsonl:1: not JSON \("):
        read_json_lines(f)


def test_from_validation_counts_the_other_problems_and_lists_them_on_request():
    with pytest.raises(ValidationError) as exc:
        Row.model_validate({"n": "many"})
    e = RecordError.from_validation(exc.value, record="row 7", show_given=False)
    assert str(e) == "row 7: field row_id: Field required (and 1 more)"
    assert e.model == "Row"
    assert (
        e.problem_list(8)
        == "row_id: Field required; n: Input should be a valid integer, unable to parse string as an integer"
    )
    assert e.problem_list(1) == "row_id: Field required"
    shown = RecordError.from_validation(exc.value, kind="Row", show_given=True)
    assert str(shown) == "not a valid Row: field row_id: {'n': 'many'}: Field required (and 1 more)"
    assert str(RecordError("a plain problem")) == "a plain problem"


def test_read_model_names_the_file_and_what_it_should_be(tmp_path):
    f = tmp_path / "row.json"
    f.write_text('{"row_id": "a", "n": "x"}', encoding="utf-8")
    with pytest.raises(RecordError, match=r"row.json: not a valid row file: field n: Input should be a valid integer"):
        read_model(f, Row, kind="row file")
    f.write_text('{"row_id": "a", "n": 3}', encoding="utf-8")
    assert read_model(f, Row) == Row(row_id="a", n=3)


def test_appended_lines_survive_a_torn_last_write(tmp_path):
    f = tmp_path / "log.jsonl"
    for i in range(3):
        append_line(f, Row(row_id=f"r{i}", n=i).model_dump_json())
    whole = f.read_bytes()
    assert whole.count(b"\n") == 3
    f.write_bytes(whole[:-5])  # a crash in the middle of the third write
    assert [r.row_id for r in read_appended(f, Row)] == ["r0", "r1"]
    assert f.read_bytes() == whole[: whole.index(b"\n", whole.index(b"\n") + 1) + 1]  # the torn part is cut off
    append_line(f, Row(row_id="r2", n=2).model_dump_json())
    assert [r.row_id for r in read_appended(f, Row)] == ["r0", "r1", "r2"]
    assert read_appended(tmp_path / "absent.jsonl", Row) == []


def test_a_damaged_line_before_the_last_is_an_error(tmp_path):
    f = tmp_path / "log.jsonl"
    f.write_text('{"row_id": "a", "n": 1}\n{"row_id": "b"}\n{"row_id": "c", "n": 3}\n', encoding="utf-8")
    with pytest.raises(RecordError, match=r"log.jsonl:2: not a valid Row: field n: Field required"):
        read_appended(f, Row)
    f.write_text('{"row_id": "a", "n": 1}\n{"row_id": "b"}\n', encoding="utf-8")  # whole last line: damage, not a tear
    with pytest.raises(RecordError, match=r"log.jsonl:2"):
        read_appended(f, Row)
