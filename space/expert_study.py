"""The paper's expert study on the page: the printed samples, each rater's pick, and their agreement.

The samples are appendix A.6 of the RQ-Bench paper: for each, a background
paper, the author-anchored RQ, the best of gpt-5.5's five RQs, and which of the
two each of two domain experts and two LLM judges found more non-obvious. The
file is read where it lies when the Space starts (``RQB_EXPERT_STUDY``, else
``fixtures/paper_examples/expert_vs_llm.jsonl`` under ``rqbench.paths.shared_dir()``);
it is never copied into the Space. Agreement is
``rqbench.evaluate.judge_board.agreement.agreement_matrix`` over ``expert_sample_picks``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rqbench import paths
from rqbench.evaluate.judge_board.agreement import (
    AgreementMatrix,
    ExpertSample,
    WinRateRow,
    agreement_matrix,
    expert_sample_picks,
    read_expert_samples,
    win_rates,
)
from rqbench.space.html_table import Cell, Header

EXPERT_STUDY_ENV = "RQB_EXPERT_STUDY"
SHARED_FILE = Path("fixtures") / "paper_examples" / "expert_vs_llm.jsonl"
SOURCE = "the RQ-Bench paper, appendix A.6 (expert evaluation outputs)"


def display_path(path: Path) -> str:
    """How a page names the study file: relative to the shared folder (``fixtures/...``), else by its file name,
    so no page shows a path on the host's disk."""
    shared = paths.shared_dir()
    if shared is not None:
        try:
            return path.resolve().relative_to(shared.resolve()).as_posix()
        except ValueError:
            pass
    return path.name


def study_path(configured: str | Path | None = None) -> Path | None:
    """Where the study file should be: the configured path, ``RQB_EXPERT_STUDY``, or the shared fixtures."""
    chosen = configured or os.environ.get(EXPERT_STUDY_ENV)
    if chosen:
        return Path(chosen)
    shared = paths.shared_dir()
    return shared / SHARED_FILE if shared is not None else None


@dataclass(frozen=True)
class ExpertStudy:
    """The samples of one study file, every rater's pick as agreement input, the matrix and the win counts."""

    path: Path
    samples: list[ExpertSample]
    matrix: AgreementMatrix
    wins: list[WinRateRow]

    @property
    def raters(self) -> list[str]:
        return self.matrix.rows


def load_study(path: str | Path, *, n_boot: int = 1000) -> ExpertStudy:
    """Read and summarise a study file; a bad line raises ``AnnotationError`` naming file, line and field."""
    samples = read_expert_samples(path)
    picks = expert_sample_picks(samples)
    return ExpertStudy(Path(path), samples, agreement_matrix(picks, n_boot=n_boot), win_rates(picks, n_boot=n_boot))


def rater_label(rater: str) -> str:
    """``expert_1`` -> ``Expert 1``; an LLM judge keeps its model name."""
    if rater.lower().startswith("expert"):
        return rater.replace("_", " ").capitalize()
    return rater


def pick_text(winner: str, model: str) -> str:
    return {"gt": "author-anchored", "model": model, "tie": "tie"}[winner]


def samples_table(study: ExpertStudy) -> tuple[list[Header], list[list[Cell]]]:
    """One row per sample: the background paper, the two RQs side by side, and each rater's pick."""
    raters = study.raters
    headers = [
        Header("#"),
        Header("Background paper (summarised abstract)", kind="long"),
        Header("Author-anchored RQ", kind="long", title="Reconstructed from the paper that cites the background paper"),
        Header("Best of gpt-5.5's five RQs", kind="long"),
    ] + [Header(rater_label(r), title="Which RQ this rater found more non-obvious", kind="pick") for r in raters]
    rows = []
    for s in study.samples:
        row = [
            Cell(str(s.sample)),
            Cell(s.background_title, note=s.background_abstract_summary, kind="long paper"),
            Cell(s.gt_rq, kind="long"),
            Cell(s.model_rq, kind="long"),
        ]
        for r in raters:
            w = s.verdicts.get(r)
            row.append(
                Cell("—", kind="missing", title="no verdict")
                if w is None
                else Cell(pick_text(w, s.model), kind=f"pick-{w}")
            )
        rows.append(row)
    return headers, rows


def wins_table(study: ExpertStudy) -> tuple[list[Header], list[list[Cell]]]:
    """Per rater: on how many samples each side won."""
    models = sorted({s.model for s in study.samples})
    model = models[0] if len(models) == 1 else "model"
    headers = [
        Header("Rater"),
        Header("author-anchored", kind="num"),
        Header(model, kind="num"),
        Header("tie", kind="num"),
    ]
    rows = []
    for w in study.wins:
        n = w.gt.n
        rows.append(
            [Cell(rater_label(w.evaluator), note="expert" if w.group == "human" else "LLM judge")]
            + [
                Cell(
                    f"{round(e.value * n)}/{n}",
                    title=f"{100 * e.value:.0f}%, 95% CI [{100 * e.ci_low:.0f}, {100 * e.ci_high:.0f}]",
                    kind="num",
                )
                for e in (w.gt, w.model, w.tie)
            ]
        )
    return headers, rows
