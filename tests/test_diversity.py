"""Diversity of the five RQs: the pairwise cosines and near-duplicates on vectors worked by hand, and the report
table from real embeddings."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rqbench.evaluate.metrics.diversity import (
    NEAR_DUPLICATE,
    attach_diversity,
    diversity_row,
    five_similarity,
    instance_diversity,
    pairwise_cosines,
)
from rqbench.evaluate.report.tables import diversity_table
from rqbench.records import DiversityRecord
from rqbench.testing.synthetic import make_results


def test_pairwise_cosines_by_hand():
    # (1,0), (0,1), (1,1): cosines 0 (1-2), 1/sqrt2 (1-3), 1/sqrt2 (2-3); the third vector is not unit length
    cos = pairwise_cosines(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    assert cos == pytest.approx([0.0, 1 / math.sqrt(2), 1 / math.sqrt(2)])


def test_five_copies_are_ten_near_duplicate_pairs_and_five_orthogonal_rqs_none():
    same = np.tile([[0.6, 0.8]], (5, 1))
    assert five_similarity(same) == (pytest.approx(1.0), 10)  # C(5, 2) = 10 pairs, every one a copy
    assert five_similarity(np.eye(5)) == (0.0, 0)
    # one copied RQ among three others, all orthogonal: rows a, a, b, c, d
    # cosines: (a,a) 1; the other 9 pairs 0 -> mean 0.1, one near-duplicate
    a, b, c, d = np.eye(4)
    assert five_similarity(np.stack([a, a, b, c, d])) == (pytest.approx(0.1), 1)
    assert five_similarity(np.eye(5)[:1]) is None  # one RQ: no pair


def test_the_threshold_is_inclusive():
    # cos(theta) = 0.8 exactly: (1, 0) and (0.8, 0.6)
    assert five_similarity(np.array([[1.0, 0.0], [0.8, 0.6]]), NEAR_DUPLICATE)[1] == 1


def test_a_submissions_row_averages_instances_and_skips_one_without_pairs():
    r = make_results("m", judge="A", setting="standalone", n_instances=3)
    ids = [inst.rq_id for inst in r.instances]
    vectors = {ids[0]: np.tile([[1.0, 0.0]], (5, 1)), ids[1]: np.eye(5), ids[2]: np.eye(5)[:1]}
    record = DiversityRecord(embedder="hand", threshold=NEAR_DUPLICATE, instances=instance_diversity(vectors))
    row = diversity_row(r, record, n_boot=100)
    # instance 0: mean 1, 10 near-duplicates; instance 1: mean 0, none; instance 2: one RQ, left out
    assert row.instances == 2
    assert row.mean_similarity.value == pytest.approx(0.5) and row.near_duplicate_pairs.value == pytest.approx(5.0)
    table = diversity_table([row])
    assert table.name == "diversity" and "0.500" in table.display.to_string()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_report_writes_the_table_from_real_embeddings(tmp_path):
    from rqbench.evaluate.metrics.diversity import diversity_rows
    from rqbench.evaluate.metrics.similarity import Embedder, EmbedderUnavailable

    r = make_results("m", judge="A", setting="standalone", n_instances=2)
    texts = [
        "How does attention sink size change with model depth?",
        "How does attention sink size change with model depth?",
        "Can grammatical error correction use n-gram statistics from the web?",
        "Why do small language models fail at counting letters?",
        "Which tokenizer choices improve low-resource translation?",
    ]
    for inst in r.instances:
        for c, t in zip(inst.candidates[1:], texts):
            c.text = t
    try:
        attach_diversity([r], Embedder("all-minilm-l6-v2", cache_path=tmp_path / "emb.sqlite"))
        (row,) = diversity_rows([r], "all-minilm-l6-v2")
    except EmbedderUnavailable as exc:
        pytest.skip(f"the packaged MiniLM is not installed: {exc}")
    # the copied question is one near-duplicate pair per instance; four distinct topics are far apart
    assert row.instances == 2 and row.near_duplicate_pairs.value == pytest.approx(1.0)
    assert 0.1 < row.mean_similarity.value < 0.6


class _CountingEmbedder:
    """Four hand-set unit vectors, one per distinct text, and a count of the texts it was asked to embed."""

    name = "hand"

    def __init__(self):
        self.calls = 0
        self.texts = 0

    def embed(self, texts):
        self.calls += 1
        self.texts += len(texts)
        table = {"a": [1.0, 0.0, 0.0], "b": [0.8, 0.6, 0.0], "c": [0.0, 1.0, 0.0], "d": [0.0, 0.0, 1.0]}
        return np.array([table[t] for t in texts])


def _four_rqs(r, texts=("a", "b", "c", "d")):
    for inst in r.instances:
        inst.candidates = inst.candidates[: 1 + len(texts)]
        for c, t in zip(inst.candidates[1:], texts):
            c.text = t
    return r


def test_four_rqs_by_hand_embedded_once_per_submission_and_stored_in_each_file():
    # a=(1,0,0), b=(.8,.6,0), c=(0,1,0), d=(0,0,1); cosines ab .8, ac 0, ad 0, bc .6, bd 0, cd 0
    # mean = (.8 + .6) / 6 = 0.2333..., pairs >= 0.8: one (ab, the threshold is inclusive)
    files = [
        _four_rqs(make_results("m", judge=j, setting=s, n_instances=2))
        for j in ("A", "B")
        for s in ("standalone", "comparative")
    ]
    emb = _CountingEmbedder()
    changed = attach_diversity(files, emb)
    assert len(changed) == 4 and emb.calls == 1 and emb.texts == 8  # one submission: 2 instances x 4 RQs, once
    (rec,) = files[3].diversity
    assert [d.near_duplicate_pairs for d in rec.instances] == [1, 1]
    assert rec.instances[0].mean_cosine == pytest.approx(1.4 / 6)
    assert attach_diversity(files, emb) == [] and emb.calls == 1  # stored: never embedded again
    row = diversity_row(files[0], rec, n_boot=50)
    assert row.mean_similarity.value == pytest.approx(1.4 / 6) and row.near_duplicate_pairs.value == 1.0


def test_rqbench_report_diversity_writes_the_table(tmp_path, capsys, monkeypatch):
    from rqbench.cli import main

    monkeypatch.setenv("RQB_HOME", str(tmp_path / "home"))  # the embedding cache
    res = tmp_path / "results"
    res.mkdir()
    for setting in ("standalone", "comparative"):
        r = make_results("m", judge="A", setting=setting, n_instances=3)
        (res / f"m-{setting}.json").write_text(r.model_dump_json())
    out = tmp_path / "report"
    assert main(["report", str(res), "--out", str(out), "--n-boot", "50", "--diversity"]) == 0, capsys.readouterr().err
    table = (out / "diversity.md").read_text()
    assert "all-minilm-l6-v2" in table and "near-duplicate pairs" in table
    assert (out / "diversity.csv").is_file()


def test_rqbench_diversity_stores_the_record_once_and_the_summary_reads_it(tmp_path, capsys, monkeypatch):
    import rqbench.evaluate.metrics.similarity as similarity
    from rqbench.cli import main
    from rqbench.evaluate.metrics.summary import load_results, summarize

    emb = _CountingEmbedder()
    emb.name = "all-minilm-l6-v2"  # stands in for the board's embedder: the summary reads this record
    monkeypatch.setattr(similarity, "Embedder", lambda name: emb)
    res = tmp_path / "results"
    res.mkdir()
    for setting in ("standalone", "comparative"):
        r = _four_rqs(make_results("m", judge="A", setting=setting, n_instances=2))
        (res / f"m-{setting}.json").write_text(r.model_dump_json())
    assert main(["diversity", str(res)]) == 0, capsys.readouterr().err
    assert "2 of 2 results file(s) updated" in capsys.readouterr().out and emb.calls == 1
    assert main(["diversity", str(res)]) == 0 and emb.calls == 1  # stored: nothing embedded, nothing rewritten
    assert "0 of 2" in capsys.readouterr().out
    rows = [r for r in summarize(load_results([res]), n_boot=50) if r.row_kind == "model"]
    # the four hand-set vectors again: mean (.8 + .6) / 6 on both instances, one near-duplicate pair each
    assert all(r.diversity.mean_similarity.value == pytest.approx(1.4 / 6) for r in rows) and len(rows) == 2
