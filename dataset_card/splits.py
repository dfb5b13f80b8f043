"""The split policy: every RQ is in ``test``; a small ``dev`` subset is picked by a seeded hash of the paper.

Why by paper: the RQs of one paper share background papers, so a dev split that
holds some of a paper's RQs would leak into the rest. Why a hash rather than
``random.sample``: a paper's membership depends only on its paper id (its arXiv id) and the
seed, so it stays put when later versions add or drop other papers.

Rule: a paper is in dev when the first 8 bytes of
``blake2b(f"{seed}:{paper_id}")`` read as an integer, divided by 2**64, are below
``fraction``. If that picks no paper, the paper with the smallest hash is taken,
so even a tiny sample has a dev split. Dev rows are also test rows: dev is for
prompt development, results are reported on test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

DEV_SEED = "rqbench-dev-v1"
DEV_FRACTION = 0.05
SPLITS = ("test", "dev")


def _unit(arxiv_id: str, seed: str) -> float:
    digest = hashlib.blake2b(f"{seed}:{arxiv_id}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def dev_papers(arxiv_ids: Iterable[str], *, fraction: float = DEV_FRACTION, seed: str = DEV_SEED) -> set[str]:
    """The arXiv ids whose RQs form the dev split (see the module docstring for the rule)."""
    if not 0 < fraction < 1:
        raise ValueError(f"dev fraction must be between 0 and 1, got {fraction}")
    ids = sorted(set(arxiv_ids))
    if not ids:
        return set()
    picked = {a for a in ids if _unit(a, seed) < fraction}
    return picked or {min(ids, key=lambda a: _unit(a, seed))}
