"""The outcome words, declared once: who won a comparison of the author-anchored RQ with a model's RQ.

Two views of one outcome. A **pick** is said from the rater's side, naming the winner: ``gt`` (the author-anchored
RQ), ``model`` or ``tie``; experts, judges on the judge board and annotation files speak in picks. A **verdict** is
said from the model's side: ``win``, ``tie`` or ``lose`` (the Pass@5 outcome of its best RQ against the GT), which is
what the figures count. ``verdict_of`` maps one to the other, so no module needs its own list of either.
"""

from __future__ import annotations

import enum
from typing import Literal

Pick = Literal["gt", "model", "tie"]
PICKS: tuple[Pick, ...] = ("gt", "model", "tie")


class Verdict(str, enum.Enum):
    """The Pass@5 outcome of the model's best RQ against the GT."""

    win = "win"
    tie = "tie"
    lose = "lose"


_PICK_OF: dict[Verdict, Pick] = {Verdict.win: "model", Verdict.tie: "tie", Verdict.lose: "gt"}
_VERDICT_OF: dict[str, Verdict] = {pick: verdict for verdict, pick in _PICK_OF.items()}


def pick_of(verdict: Verdict) -> Pick:
    """The rater's pick for the model's verdict: a win is ``model``, a loss ``gt``, a tie ``tie``."""
    return _PICK_OF[verdict]


def verdict_of(pick: Pick) -> Verdict:
    """The model's verdict for a rater's pick (``pick_of`` read backwards)."""
    return _VERDICT_OF[pick]
