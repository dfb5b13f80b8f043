"""Features are derived from the records, and rows validate back into the same records."""

from __future__ import annotations

import pytest
from datasets import Dataset, List, Value
from fake_build import make_records
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from rqbench.dataset_card.features import (
    CONFIG_RECORDS,
    FeatureError,
    RowError,
    all_features,
    config_features,
    feature_for,
    features_dict,
    from_row,
    schema_differences,
    schema_fingerprint,
    to_row,
)
from rqbench.records import RQRecord


def test_every_config_has_one_feature_per_record_field():
    for config, model in CONFIG_RECORDS.items():
        assert list(config_features(config)) == list(model.model_fields), config


def test_mapping_of_nested_optional_enum_dict_and_datetime_fields():
    rqs = config_features("rqs")
    assert rqs["novelty_type"] == Value("string")
    assert rqs["gaps"] == List(
        {"text": Value("string"), "cited_key": Value("string"), "cited_paper_id": Value("string")}
    )
    assert rqs["verification"]["addressed"] == Value("bool")
    paper = config_features("papers")["paper"]
    assert paper["published"] == Value("string")
    assert paper["citation_count"] == Value("int64")
    assert paper["external_ids"] == List({"key": Value("string"), "value": Value("string")})
    assert config_features("cited_papers")["sections"] == List({"section": Value("string"), "text": Value("string")})


def test_unknown_config_and_unmapped_type_are_errors():
    with pytest.raises(KeyError, match="unknown config 'judgments'"):
        config_features("judgments")

    class Odd(BaseModel):
        values: set[int]

    with pytest.raises(FeatureError, match="Odd.values"):
        feature_for(Odd.model_fields["values"].annotation, "Odd.values")


@pytest.mark.parametrize("config", list(CONFIG_RECORDS))
def test_rows_round_trip_through_parquet(config, tmp_path):
    records = make_records()[config]
    rows = [to_row(r) for r in records]
    path = tmp_path / f"{config}.parquet"
    Dataset.from_list(rows, features=config_features(config)).to_parquet(str(path))
    back = Dataset.from_parquet(str(path))
    assert back.features == config_features(config)
    assert [from_row(CONFIG_RECORDS[config], row) for row in back] == records


def test_dict_field_becomes_key_value_pairs():
    paper = make_records()["papers"][0]
    row = to_row(paper)
    assert row["paper"]["external_ids"] == [{"key": "DOI", "value": "10.1/0"}]
    assert row["paper"]["published"].startswith("2025-01-02T00:00:00")


def test_a_bad_row_names_the_record_and_field():
    row = to_row(make_records()["rqs"][0])
    row["cited_paper_ids"] = []
    with pytest.raises(RowError, match=r"rqs row 3: RQRecord.cited_paper_ids"):
        from_row(RQRecord, row, "rqs row 3")


def test_schema_differences_and_fingerprint():
    old = features_dict(all_features())
    assert schema_differences(old, old) == []
    new = {k: dict(v) for k, v in old.items()}
    new["rqs"]["extra"] = {"dtype": "string", "_type": "Value"}
    del new["instances"]["subfield"]
    new["cited_papers"]["title"] = {"dtype": "int64", "_type": "Value"}
    del new["papers"]
    diffs = schema_differences(old, new)
    assert diffs == [
        "cited_papers.title changed type",
        "instances.subfield removed",
        "config 'papers' removed",
        "rqs.extra added",
    ]
    reordered = {k: dict(v) for k, v in old.items()}
    reordered["instances"] = dict(reversed(list(old["instances"].items())))
    assert schema_differences(old, reordered) == ["instances: field order changed"]
    assert schema_fingerprint(all_features()) == schema_fingerprint(all_features())


@settings(max_examples=30, deadline=None)
@given(text=st.text(min_size=1, max_size=80).filter(str.strip), gap=st.text(max_size=60))
def test_any_text_survives_the_row_mapping(text, gap):
    r = make_records(1, 1)["rqs"][0]
    r = r.model_copy(update={"rq": text, "gaps": [r.gaps[0].model_copy(update={"text": gap})]})
    assert from_row(RQRecord, to_row(r)) == r
