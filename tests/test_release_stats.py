"""Tables 1 and 13 from the dataset revision the results were judged on, and a named skip when it cannot be read."""

from __future__ import annotations

import csv

import pytest
from fake_build import make_records, write_build
from results_factory import cand, instance, results

from rqbench.cli import main
from rqbench.dataset_card.build_folder import load_build
from rqbench.dataset_card.card_base import CardSettings
from rqbench.dataset_card.publish import publish
from rqbench.dataset_card.repo import LocalGitTarget
from rqbench.dataset_card.stats import compute_stats
from rqbench.evaluate.report.release_stats import ReleaseUnavailable, judged_revisions, release_stats


def _stats_of(build_dir):
    b = load_build(build_dir)
    return compute_stats(
        b.rqs, b.papers, b.cited_papers, b.instances, b.manifest, b.manual_sample, b.manual_sample_info
    )


@pytest.fixture
def published(tmp_path):
    """Two releases of one repository: v0.1.0 (3 papers) and v0.2.0 (4 papers)."""
    target, settings = LocalGitTarget(tmp_path / "repo"), CardSettings(target="local", repo=str(tmp_path / "repo"))
    b1 = write_build(tmp_path / "b1", make_records(3, 2))
    b2 = write_build(tmp_path / "b2", make_records(4, 3, tag=" v2"), build_id="b2")
    publish(b1, "0.1.0", target, settings)
    publish(b2, "0.2.0", target, settings)
    return tmp_path / "repo", b1, b2


def test_a_revision_reads_back_as_the_card_computed_it(published):
    repo, b1, b2 = published
    assert release_stats(str(repo), "v0.1.0") == _stats_of(b1)
    assert release_stats(str(repo), "v0.2.0") == _stats_of(b2)  # each revision its own figures
    assert release_stats(str(b1), "build:fake-build") == _stats_of(b1)  # a build folder, as load_benchmark names it


@pytest.mark.parametrize(
    "where,revision,match",
    [
        ("repo", "v9.9.9", r"dataset .*repo@v9.9.9: TargetError"),
        ("b1", "build:other", r"b1@build:other: .*b1 now holds build:fake-build, not the build:other"),
        ("gone", "v0.1.0", r"gone/x@v0.1.0: TargetError: .*gone/x: no such folder"),
    ],
)
def test_an_unreadable_revision_is_named(published, where, revision, match):
    repo, b1, _ = published
    path = {"repo": repo, "b1": b1, "gone": repo.parent / "gone" / "x"}[where]
    with pytest.raises(ReleaseUnavailable, match=match):
        release_stats(str(path), revision)


def test_a_hub_id_offline_is_named():
    with pytest.raises(ReleaseUnavailable, match=r"dataset org/rq-bench@v1.0.0: the Hub copy cannot be fetched"):
        release_stats("org/rq-bench", "v1.0.0")


def _results_on(repo: str, revision: str):
    inst = instance("2501.00000_rq0", cand("gt"), [cand(f"m{i}") for i in range(5)])
    r = results([inst])
    return r.model_copy(update={"dataset_repo": repo, "dataset_revision": revision})


def test_report_writes_tables_1_and_13_of_the_judged_revision(tmp_path, published, capsys):
    repo, b1, _ = published
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "r.json").write_text(_results_on(str(repo), "v0.1.0").model_dump_json())
    out = tmp_path / "report"
    assert main(["report", str(folder), "--out", str(out), "--n-boot", "20"]) == 0, capsys.readouterr().err
    stats = _stats_of(b1)
    t1 = (out / "dataset_summary.md").read_text()
    assert "Table 1" in t1 and f"{repo}@v0.1.0" in t1
    assert f"| research questions | {stats.rqs} |" in t1 and f"| sub-fields | {stats.subfields} |" in t1
    assert f"| unique cited papers | {stats.unique_cited_papers} |" in t1 and "| words per RQ |" in t1
    with (out / "subfields.csv").open() as fh:
        got = {
            (r["row"], r["column"]): float(r["value"])
            for r in csv.DictReader(line for line in fh if not line.startswith("#"))
        }  # the provenance header
    for row in stats.by_subfield:
        assert got[(row.subfield, "RQs")] == row.rqs and got[(row.subfield, "papers")] == row.papers
    assert "Table 13" in (out / "subfields.tex").read_text()
    assert "### Summary statistics" in (out / "report.md").read_text()


def test_report_names_a_revision_it_cannot_read_and_writes_the_rest(tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "r.json").write_text(_results_on(str(tmp_path / "nowhere"), "v0.1.0").model_dump_json())
    out = tmp_path / "report"
    assert main(["report", str(folder), "--out", str(out), "--n-boot", "20"]) == 0
    err = capsys.readouterr().err
    assert f"Tables 1 and 13 skipped: dataset {tmp_path / 'nowhere'}@v0.1.0: " in err
    names = {p.name for p in out.iterdir()}
    assert "dataset_summary.md" not in names and "subfields.md" not in names
    assert "novelty_standalone_scores.md" in names
    assert judged_revisions([_results_on("a", "v1"), _results_on("a", "v1"), _results_on("b", "v2")]) == [
        ("a", "v1"),
        ("b", "v2"),
    ]
