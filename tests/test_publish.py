"""Publishing: local round trip by tag, the three refusals, and the Hub path's exact HfApi calls."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import httpx
import pytest
from datasets import load_dataset
from fake_build import make_records, write_build
from huggingface_hub import CommitOperationAdd, CommitOperationDelete
from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError
from huggingface_hub.hf_api import CommitInfo, GitRefInfo, GitRefs

from rqbench.cli import main
from rqbench.dataset_card import release as release_mod
from rqbench.dataset_card.card_base import CardSettings
from rqbench.dataset_card.features import CONFIG_RECORDS, config_features, from_row
from rqbench.dataset_card.publish import PublishRefused, publish
from rqbench.dataset_card.repo import HubTarget, LocalGitTarget, TargetError, materialize


def _local(tmp_path) -> tuple[LocalGitTarget, CardSettings]:
    repo = tmp_path / "repo"
    return LocalGitTarget(repo), CardSettings(target="local", repo=str(repo))


def _load_all(folder: Path, cache: Path) -> dict[str, list]:
    out = {}
    for config, model in CONFIG_RECORDS.items():
        ds = load_dataset(str(folder), config, split="test", cache_dir=str(cache))
        assert ds.features == config_features(config), config
        out[config] = [from_row(model, row) for row in ds]
    return out


def test_two_versions_each_loadable_by_tag_with_declared_features(tmp_path):
    target, settings = _local(tmp_path)
    r1, r2 = make_records(3, 2), make_records(4, 3, tag=" v2")
    publish(write_build(tmp_path / "b1", r1), "0.1.0", target, settings)
    publish(write_build(tmp_path / "b2", r2, build_id="b2"), "0.2.0", target, settings)
    assert sorted(str(v) for v in target.versions()) == ["0.1.0", "0.2.0"]

    p1, c1 = materialize(tmp_path / "repo", "v0.1.0")
    p2, c2 = materialize(tmp_path / "repo", "v0.2.0")
    assert c1 != c2 and c1 == target.versions()[min(target.versions())]
    v1, v2 = _load_all(p1, tmp_path / "hf1"), _load_all(p2, tmp_path / "hf2")
    # load_dataset shows the cited papers' contributions and their source, as published
    assert {c.contributions_source for c in v1["cited_papers"]} == {"extracted", "abstract", None}
    assert (
        next(c for c in v1["cited_papers"] if c.contributions_source == "extracted")
        .contributions[1]
        .endswith("builds another method on it.")
    )
    for loaded, made in ((v1, r1), (v2, r2)):
        for config, records in made.items():  # every record comes back equal (order: the release's own)
            assert sorted(loaded[config], key=repr) == sorted(records, key=repr), config
    assert len(v1["instances"]) == 6 and len(v2["instances"]) == 12
    # the working tree (HEAD) is the newest version, readable in place
    head = load_dataset(str(tmp_path / "repo"), "rqs", split="test", cache_dir=str(tmp_path / "hf3"))
    assert len(head) == 12
    # a tag's files are exported once and reused
    assert materialize(tmp_path / "repo", "v0.1.0") == (p1, c1)
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "repo"), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert log == [
        "RQ-Bench v0.2.0: 12 RQs, 4 papers, 8 cited papers (build b2)",
        "RQ-Bench v0.1.0: 6 RQs, 3 papers, 6 cited papers (build fake-build)",
    ]


def test_the_cards_load_code_runs(tmp_path):
    target, settings = _local(tmp_path)
    publish(write_build(tmp_path / "b1"), "0.1.0", target, settings)
    card = (tmp_path / "repo" / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", card, re.S).group(1)
    code = code.replace('split="test")', f'split="test", cache_dir={str(tmp_path / "hf")!r})')
    scope: dict = {}
    exec(compile(code, "card-load-code", "exec"), scope)
    assert len(scope["rqs"]) == 6 and scope["commit"] == target.resolve("v0.1.0")


def test_same_version_twice_is_refused(tmp_path, capsys):
    build = write_build(tmp_path / "b1")
    repo = tmp_path / "repo"
    assert main(["publish", str(build), "--version", "0.1.0", "--to", str(repo)]) == 0
    assert json.loads(capsys.readouterr().out)["tag"] == "v0.1.0"
    assert main(["publish", str(build), "--version", "0.1.0", "--to", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "refused: version 0.1.0 already exists in" in err and "--version 0.1.1" in err
    assert main(["publish", str(build), "--version", "0.0.9", "--to", str(repo)]) == 1
    assert "older than the newest release 0.1.0" in capsys.readouterr().err
    assert main(["publish", str(build), "--version", "1.0", "--to", str(repo)]) == 1
    assert "is not of the form X.Y.Z" in capsys.readouterr().err
    assert len(LocalGitTarget(repo).versions()) == 1


def test_publish_to_a_file_or_a_foreign_folder_is_refused_by_name(tmp_path, capsys):
    build = write_build(tmp_path / "b1")
    a_file = tmp_path / "release.txt"
    a_file.write_text("not a folder")
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "todo.txt").write_text("mine")
    for to, message in [
        (a_file, f"{a_file}: is a file, not a folder"),
        (a_file / "sub" / "repo", f"cannot be created, because {a_file} is a file, not a folder"),
        (foreign, f"{foreign}: exists, is not empty and is not a git repository"),
    ]:
        assert main(["publish", str(build), "--version", "0.1.0", "--to", str(to)]) == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert a_file.read_text() == "not a folder" and sorted(p.name for p in foreign.iterdir()) == ["todo.txt"]


def test_schema_change_needs_a_major_bump(tmp_path, monkeypatch):
    target, settings = _local(tmp_path)
    real = release_mod.features_dict

    def with_legacy_field(feats):  # the first release had a field the records no longer have
        d = real(feats)
        d["rqs"]["legacy_score"] = {"dtype": "float64", "_type": "Value"}
        return d

    monkeypatch.setattr(release_mod, "features_dict", with_legacy_field)
    publish(write_build(tmp_path / "b1"), "0.1.0", target, settings)
    monkeypatch.setattr(release_mod, "features_dict", real)
    b2 = write_build(tmp_path / "b2", build_id="b2")
    with pytest.raises(PublishRefused, match=r"schema changed since v0.1.0 \(rqs.legacy_score removed\).*as 1.0.0"):
        publish(b2, "0.2.0", target, settings)
    assert publish(b2, "1.0.0", target, settings).version.tag == "v1.0.0"


def test_invalid_build_is_refused_naming_file_line_and_field(tmp_path):
    target, settings = _local(tmp_path)
    build = write_build(tmp_path / "b")
    rqs = build / "records" / "rqs.jsonl"
    lines = rqs.read_text().splitlines()
    row = json.loads(lines[1])
    del row["subfield"]
    lines[1] = json.dumps(row)
    rqs.write_text("\n".join(lines) + "\n")
    with pytest.raises(PublishRefused, match=r"rqs.jsonl:line 2: RQRecord.subfield: Field required"):
        publish(build, "0.1.0", target, settings)

    build = write_build(tmp_path / "c")
    inst = build / "records" / "instances.jsonl"
    inst.write_text(inst.read_text().replace('"2501.00000_rq1"', '"2501.00000_rq7"', 1))
    with pytest.raises(PublishRefused, match=r"EvaluationInstance 2501.00000_rq7: rq_id not in rqs.jsonl"):
        publish(build, "0.1.0", target, settings)
    assert target.versions() == {}


def test_a_foreign_folder_unknown_tag_or_dirty_work_tree_is_refused(tmp_path):
    other = tmp_path / "notes"
    other.mkdir()
    (other / "todo.txt").write_text("mine")
    with pytest.raises(TargetError, match="is not a git repository; refusing"):
        publish(write_build(tmp_path / "b"), "0.1.0", LocalGitTarget(other), CardSettings(target="local"))
    target, settings = _local(tmp_path)
    publish(write_build(tmp_path / "b2"), "0.1.0", target, settings)
    with pytest.raises(TargetError, match=r"revision 'v9.0.0' not found \(tags: v0.1.0\)"):
        materialize(tmp_path / "repo", "v9.0.0")
    (tmp_path / "repo" / "README.md").write_text("edited by hand")
    with pytest.raises(TargetError, match="uncommitted changes"):
        publish(write_build(tmp_path / "b3", build_id="b3"), "0.1.1", target, settings)


# -- the Hub path, at the HfApi boundary -------------------------------------


class FakeHfApi:
    """Records every HfApi call and keeps the repository's files in memory, as the Hub would."""

    def __init__(self, tmp: Path):
        self.tmp, self.calls, self.commits = tmp, [], []
        self.exists, self.files, self.tags, self.head = False, {}, {}, None
        self.snapshots: dict[str, dict[str, bytes]] = {}

    def _missing(self):
        req = httpx.Request("GET", "https://huggingface.co/api/datasets/org/rq-bench/refs")
        return RepositoryNotFoundError("404 repo not found", response=httpx.Response(404, request=req))

    def create_repo(self, repo_id, **kw):
        self.calls.append(("create_repo", repo_id, kw))
        if not self.exists:
            self.exists, self.files = True, {".gitattributes": b"*.parquet filter=lfs\n"}
            self._snap("init")

    def _snap(self, oid):
        self.head = oid
        self.snapshots[oid] = dict(self.files)

    def list_repo_refs(self, repo_id, **kw):
        self.calls.append(("list_repo_refs", repo_id, kw))
        if not self.exists:
            raise self._missing()
        return GitRefs(
            branches=[GitRefInfo(name="main", ref="refs/heads/main", target_commit=self.head)],
            converts=[],
            tags=[GitRefInfo(name=t, ref=f"refs/tags/{t}", target_commit=c) for t, c in self.tags.items()],
        )

    def list_repo_files(self, repo_id, revision=None, **kw):
        self.calls.append(("list_repo_files", repo_id, revision))
        if not self.exists:
            raise self._missing()
        return sorted(self.snapshots[self._rev(revision)])

    def _rev(self, revision):
        return self.head if revision is None else self.tags.get(revision, revision)

    def hf_hub_download(self, repo_id, filename, revision=None, **kw):
        self.calls.append(("hf_hub_download", filename, revision))
        if not self.exists:
            raise self._missing()
        files = self.snapshots[self._rev(revision)]
        if filename not in files:
            raise EntryNotFoundError(f"{filename} not in {repo_id}")
        out = self.tmp / f"dl-{len(self.calls)}" / filename
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(files[filename])
        return str(out)

    def create_commit(self, repo_id, operations, commit_message, repo_type=None, parent_commit=None, **kw):
        operations = list(operations)
        self.calls.append(("create_commit", repo_id, repo_type, parent_commit))
        self.commits.append(operations)
        assert parent_commit == self.head
        for op in operations:
            if isinstance(op, CommitOperationAdd):
                self.files[op.path_in_repo] = Path(op.path_or_fileobj).read_bytes()
            else:
                del self.files[op.path_in_repo]
        oid = f"{len(self.commits):040x}"
        self._snap(oid)
        return CommitInfo(
            commit_url=f"https://huggingface.co/datasets/{repo_id}/commit/{oid}",
            commit_message=commit_message,
            commit_description="",
            oid=oid,
            pr_url=None,
        )

    def create_tag(self, repo_id, tag, tag_message=None, revision=None, repo_type=None, **kw):
        self.calls.append(("create_tag", repo_id, tag, revision, repo_type))
        self.tags[tag] = revision


def test_hub_publish_is_one_commit_then_a_tag(tmp_path):
    api = FakeHfApi(tmp_path)
    target = HubTarget("org/rq-bench", api=api)
    settings = CardSettings(repo="org/rq-bench", target="hub")
    publish(write_build(tmp_path / "b1"), "0.1.0", target, settings)

    names = [c[0] for c in api.calls]
    assert names == [
        "list_repo_refs",
        "hf_hub_download",
        "list_repo_files",
        "create_repo",
        "list_repo_refs",
        "create_commit",
        "create_tag",
    ]
    assert api.calls[5] == ("create_commit", "org/rq-bench", "dataset", "init")
    assert api.calls[6] == ("create_tag", "org/rq-bench", "v0.1.0", f"{1:040x}", "dataset")
    (ops,) = api.commits
    assert all(isinstance(op, CommitOperationAdd) for op in ops)
    assert sorted(op.path_in_repo for op in ops) == [
        "LICENSE.md",
        "README.md",
        "build/funnel.json",
        "build/manifest.json",
        "build/manual_validation_sample.json",
        "build/skips.jsonl",
        "data/cited_papers/test-00000-of-00001.parquet",
        "data/instances/dev-00000-of-00001.parquet",
        "data/instances/test-00000-of-00001.parquet",
        "data/papers/test-00000-of-00001.parquet",
        "data/rqs/dev-00000-of-00001.parquet",
        "data/rqs/test-00000-of-00001.parquet",
        "release.json",
    ]
    card = api.files["README.md"].decode()
    assert 'load_dataset(REPO, "rqs", revision=REVISION, split="test")' in card
    assert 'REPO, REVISION = "org/rq-bench", "v0.1.0"' in card

    # Same version again: refused before anything is written.
    n = len(api.commits)
    with pytest.raises(PublishRefused, match="version 0.1.0 already exists in hf://datasets/org/rq-bench"):
        publish(write_build(tmp_path / "b1b"), "0.1.0", target, settings)
    assert len(api.commits) == n


def test_hub_second_version_deletes_stale_release_files_and_keeps_others(tmp_path):
    api = FakeHfApi(tmp_path)
    target = HubTarget("org/rq-bench", api=api)
    settings = CardSettings(repo="org/rq-bench", target="hub")
    publish(write_build(tmp_path / "b1"), "0.1.0", target, settings)
    # someone else uploaded a reference_judgments config; a stale shard sits in a release folder
    api.files["data/reference_judgments/test-00000-of-00001.parquet"] = b"PAR1"
    api.files["data/rqs/test-00001-of-00002.parquet"] = b"PAR1"
    api._snap("external")
    publish(write_build(tmp_path / "b2", make_records(4, 2), build_id="b2"), "0.2.0", target, settings)
    ops = api.commits[-1]
    assert [op.path_in_repo for op in ops if isinstance(op, CommitOperationDelete)] == [
        "data/rqs/test-00001-of-00002.parquet"
    ]
    assert "data/reference_judgments/test-00000-of-00001.parquet" in api.files
    assert api.calls[-1] == ("create_tag", "org/rq-bench", "v0.2.0", f"{2:040x}", "dataset")
    assert ("create_commit", "org/rq-bench", "dataset", "external") in api.calls
    # tags resolve to the right data
    r1 = json.loads(api.snapshots[api.tags["v0.1.0"]]["release.json"])
    r2 = json.loads(api.snapshots[api.tags["v0.2.0"]]["release.json"])
    assert (r1["splits"]["rqs"]["test"], r2["splits"]["rqs"]["test"]) == (6, 8)


def test_hub_and_local_targets_receive_the_same_files(tmp_path):
    api = FakeHfApi(tmp_path)
    build = write_build(tmp_path / "b1")
    publish(build, "0.1.0", HubTarget("org/rq-bench", api=api), CardSettings(repo="org/rq-bench"))
    target, settings = _local(tmp_path)
    publish(build, "0.1.0", target, settings)
    local = set(target.list_files("v0.1.0"))
    assert local == set(api.files) - {".gitattributes"}
    for path in local:
        if path.startswith("data/"):
            assert (tmp_path / "repo" / path).read_bytes() == api.files[path], path


# -- the offline sample (its publishing half; the build half is the builder's) --


def test_sample_chooses_fixture_papers_with_a_real_bibliography(fixtures_dir, tmp_path):
    from rqbench.builder.sample import bibliography_size, choose_fixture_papers, cites_a_local_paper, link_papers

    latex = fixtures_dir / "latex"
    assert bibliography_size(latex / "acl-template") < 10  # the template's stub .bib
    assert bibliography_size(latex / "hypertools-arxiv-bblonly") == 23  # .bbl only: \bibitem entries
    assert bibliography_size(latex / "sherlock-topic-model") == 69  # an inline thebibliography in the .tex
    # the papers that cite another fixture paper, found by the cited-text stage's own lookup
    assert cites_a_local_paper(latex / "sherlock-topic-model", latex) == ["HeusEtal18a"]
    assert cites_a_local_paper(latex / "pca-paper", latex) == ["OwenEtal20", "OwenEtal21"]
    assert cites_a_local_paper(latex / "hypertools-jmlr", latex) == []
    chosen = choose_fixture_papers(latex, 4)
    assert [p.name for p in chosen] == [
        "efficient-learning-khan",
        "pca-paper",
        "sherlock-topic-model",
        "supereeg-paper",
    ]
    linked = link_papers(chosen, tmp_path / "links")
    assert sorted(p.name for p in linked.iterdir()) == [p.name for p in chosen]
    assert all(p.is_symlink() for p in linked.iterdir())  # linked, never copied
    link_papers(chosen[:2], linked)
    assert sorted(p.name for p in linked.iterdir()) == [p.name for p in chosen[:2]]


def test_sample_publishes_once_per_data_change(tmp_path):
    from rqbench.dataset_card.sample_release import publish_sample

    dataset = tmp_path / "datasets" / "rq-bench-sample"
    b1 = write_build(tmp_path / "b1")
    first = publish_sample(b1, dataset)
    assert first is not None and first.version.tag == "v0.1.0"
    assert publish_sample(write_build(tmp_path / "b1-again", build_id="rerun"), dataset) is None  # same data
    second = publish_sample(write_build(tmp_path / "b2", make_records(3, 3)), dataset)
    assert second is not None and second.version.tag == "v0.1.1"
    card = (dataset / "README.md").read_text(encoding="utf-8")
    assert "not for reporting results" in card and "RQ-Bench sample (rq-bench-sample)" in card
    assert sorted(str(v) for v in LocalGitTarget(dataset).versions()) == ["0.1.0", "0.1.1"]


def test_sample_arxiv_id_list_is_readable_by_the_builder():
    from rqbench.builder.sample import SAMPLE_IDS
    from rqbench.builder.sourcing import read_ids_file

    ids = read_ids_file(SAMPLE_IDS)
    assert 3 <= len(ids) <= 8 and all(re.fullmatch(r"\d{4}\.\d{5}", i) for i in ids)


def test_a_real_builder_build_publishes_loads_and_validates(tmp_path, fixtures_dir, scripted_server):
    """The builder's actual output (scripted LLM) goes through the sample's publish path unchanged."""
    from builder_script import reply_for

    from rqbench.builder.build_config import BuildConfig
    from rqbench.builder.pipeline import run_build
    from rqbench.builder.sample import choose_fixture_papers, link_papers
    from rqbench.dataset_card.sample_release import publish_sample
    from rqbench.llm import LLM, CallStore

    scripted_server.responder = lambda req: reply_for(req)
    llm = LLM(CallStore(tmp_path / "calls.db"))
    cfg = llm.register(scripted_server.model_config())
    papers = link_papers(choose_fixture_papers(fixtures_dir / "latex", 1), tmp_path / "papers")
    out = tmp_path / "build"
    run_build(
        BuildConfig(
            out=out,
            papers=papers,
            max_cited_per_paper=2,
            allow_abstract_only=True,
            progress=False,
            models={r: cfg.name for r in ("strong", "light", "labeller")},
            concurrency=1,
        ),
        llm,
    )
    done = publish_sample(out, tmp_path / "sample")
    assert done is not None and done.version.tag == "v0.1.0"
    loaded = _load_all(*materialize(tmp_path / "sample", "v0.1.0")[:1], tmp_path / "hf")
    rqs_jsonl = [json.loads(line) for line in (out / "records" / "rqs.jsonl").read_text().splitlines()]
    assert len(loaded["rqs"]) == len(rqs_jsonl) >= 1
    card = (tmp_path / "sample" / "README.md").read_text(encoding="utf-8")
    assert f"| research questions | {len(rqs_jsonl)} |" in card
    stage_row = re.search(r"^\| influence \| (.*)$", card, re.M)
    assert stage_row and "scripted" in stage_row.group(1), stage_row and stage_row.group(0)
    assert publish_sample(out, tmp_path / "sample") is None  # same data: nothing new
