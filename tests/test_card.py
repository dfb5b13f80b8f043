"""The card: computed from the data, validated with huggingface_hub/datasets parsers, merged with the old card."""

from __future__ import annotations

import re

import pytest
import yaml
from datasets.utils.metadata import MetadataConfigs
from fake_build import make_records, write_build
from huggingface_hub import DatasetCard

from rqbench.dataset_card.build_folder import load_build
from rqbench.dataset_card.card_base import CardError, CardSettings, fill
from rqbench.dataset_card.card_changelog import changelog_entries
from rqbench.dataset_card.card_fields import undocumented_fields
from rqbench.dataset_card.card_validation import validate_card
from rqbench.dataset_card.release import assemble
from rqbench.dataset_card.versions import Version


def _tree(tmp_path, records=None, *, version="0.1.0", existing=None, name="tree", **settings):
    build = load_build(write_build(tmp_path / f"build-{name}", records))
    out = tmp_path / name
    release, stats = assemble(build, Version.parse(version), out, CardSettings(**settings), existing_card=existing)
    return out, (out / "README.md").read_text(encoding="utf-8"), stats


def _row(card: str, label: str) -> str:
    m = re.search(rf"^\| {re.escape(label)} \| (.+?) \|$", card, re.M)
    assert m, f"no row {label!r}"
    return m.group(1)


def test_card_validates_and_shows_computed_statistics(tmp_path):
    out, card, stats = _tree(tmp_path)
    assert validate_card(card, tree=out, version="0.1.0") == []
    parsed = DatasetCard(card)
    assert parsed.data.license == "other" and parsed.data.license_link == "LICENSE.md"
    assert parsed.data.size_categories == ["n<1K"] and parsed.data.pretty_name == "RQ-Bench"
    assert _row(card, "research questions") == "6"
    assert _row(card, "RQ–citation links") == "9"
    assert _row(card, "unique cited papers") == "6"
    assert _row(card, "distinct gap statements") == "9"
    assert _row(card, "RQs dropped") == "3"
    assert _row(card, "no_cited_text") == "2"
    assert _row(card, "full") == "2"
    assert "| cs.CL | 2 | 4 | 6 | 4 | 6 |" in card
    assert "approval rate of 80.0%" in card
    assert "`2501.00000_rq0` `2501.00000_rq1`" in card  # the manual sample's ids
    assert "| influence | local/smollm2-135m | rqbench-v1 `b2:0123456789ab` | 10 | 6 |" in card


def test_numbers_change_with_the_data(tmp_path):
    _, card, _ = _tree(tmp_path, make_records(n_papers=5, rqs_per_paper=3))
    assert _row(card, "research questions") == "15"
    assert _row(card, "source papers") == "5"
    assert "15 research questions from 5 papers" in card.replace("\n", " ")


def test_yaml_declares_configs_splits_and_typed_features(tmp_path):
    out, card, _ = _tree(tmp_path)
    configs = MetadataConfigs.from_dataset_card_data(DatasetCard(card).data)
    assert list(configs) == ["rqs", "papers", "cited_papers", "instances"]
    assert configs["rqs"]["default"] is True
    assert [d["split"] for d in configs["instances"]["data_files"]] == ["test", "dev"]
    meta = yaml.safe_load(card.split("---")[1])
    info = {i["config_name"]: i for i in meta["dataset_info"]}
    assert info["rqs"]["splits"][0] == {
        "name": "test",
        "num_bytes": info["rqs"]["splits"][0]["num_bytes"],
        "num_examples": 6,
    }
    assert info["cited_papers"]["download_size"] > 0


def test_every_published_field_has_a_meaning():
    assert undocumented_fields() == []


def test_sample_card_says_what_it_is(tmp_path):
    _, card, _ = _tree(tmp_path, sample=True)
    assert "not for reporting results" in card and "small local model (local/smollm2-135m)" in card
    assert "sample" in DatasetCard(card).data.tags
    _, plain, _ = _tree(tmp_path, name="plain")
    assert "not for reporting results" not in plain


def test_merge_keeps_what_other_uploads_wrote(tmp_path):
    _, first, _ = _tree(tmp_path, name="first")
    meta = yaml.safe_load(first.split("---")[1])
    meta["configs"].append(
        {
            "config_name": "reference_judgments",
            "data_files": [{"split": "test", "path": "data/reference_judgments/*.parquet"}],
        }
    )
    meta["configs"][0]["default"] = True
    meta["dataset_info"].append(
        {"config_name": "reference_judgments", "features": [{"name": "rq_id", "dtype": "string"}]}
    )
    meta["tags"].append("hand-added")
    meta["annotations_creators"] = ["expert-generated"]  # ours: overwritten
    meta["homepage_note"] = "kept as found"
    body = first.split("---", 2)[2]
    existing = "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---" + body
    _, card, _ = _tree(tmp_path, make_records(4, 2), version="0.2.0", existing=existing, name="second")
    merged = DatasetCard(card).data.to_dict()
    assert [c["config_name"] for c in merged["configs"]] == [
        "rqs",
        "papers",
        "cited_papers",
        "instances",
        "reference_judgments",
    ]
    assert [c["config_name"] for c in merged["configs"] if c.get("default")] == ["rqs"]
    assert "reference_judgments" in {i["config_name"] for i in merged["dataset_info"]}
    assert merged["homepage_note"] == "kept as found" and "hand-added" in merged["tags"]
    assert merged["annotations_creators"] == ["machine-generated"]
    info = {i["config_name"]: i for i in merged["dataset_info"]}
    assert info["rqs"]["splits"][0]["num_examples"] == 8  # ours replaced the old entry
    assert [e.split("**")[1] for e in changelog_entries(card)] == ["v0.2.0", "v0.1.0"]


def test_republishing_a_version_replaces_its_changelog_line(tmp_path):
    _, first, _ = _tree(tmp_path, name="a")
    _, again, _ = _tree(tmp_path, existing=first, name="b")
    assert len(changelog_entries(again)) == 1


def test_validation_catches_broken_cards(tmp_path):
    out, card, _ = _tree(tmp_path)
    no_license = card.replace("license: other\n", "", 1)
    assert "README.md: metadata key 'license' is missing or empty" in validate_card(no_license)
    assert any("unfilled placeholders ['oops']" in p for p in validate_card(card + "\n{{oops}}\n"))
    assert "README.md: the changelog has no entry for v9.9.9" in validate_card(card, version="9.9.9")
    bad_type = card.replace("  - name: gt_rq\n    dtype: string", "  - name: gt_rq\n    dtype: int64", 1)
    assert "README.md: dataset_info features of 'instances' differ from the instances records" in validate_card(
        bad_type
    )
    (out / "data" / "rqs" / "dev-00000-of-00001.parquet").unlink()
    assert "README.md: config 'rqs' split 'dev': no file matches data/rqs/dev-*.parquet" in validate_card(
        card, tree=out
    )
    assert validate_card("---\nlicense: [unclosed\n---\nbody")[0].startswith("README.md: not a valid dataset card")


def test_template_filling_refuses_missing_and_unused_values():
    assert fill("a {{x}} b", {"x": 1}, "t") == "a 1 b"
    with pytest.raises(CardError, match=r"missing values \['y'\], unused values \['z'\]"):
        fill("{{x}} {{y}}", {"x": 1, "z": 2}, "t")
