"""A criterion: one thing the judges score (novelty, narrowness, author-anchor overlap), declared in one module.

A criterion's module declares everything about it in one class:

- ``steps``: the prompt step it asks in each judge setting, with the step's
  reply model and prompt files;
- ``requests``, ``apply``, ``reset``: which calls one instance needs, and where
  a parsed reply's scores go in the instance's results;
- ``dimensions`` and ``table_values``: what it scores, and how a stored
  instance becomes one value per candidate and dimension (the score table);
- ``metrics``: its reported figures, each with the one function that computes
  it and its direction;
- ``report_tables`` and ``columns``: the paper's tables and the leaderboard
  columns that show those figures;
- ``headline`` and ``tie_break``: the dimension its headline figures are on, and
  the order of dimensions that picks a model's best RQ for a reader.

The judging run, the summary, the report and the leaderboard read these
declarations; adding a criterion means a module here, its prompt files, its
reply model in ``rqbench/records/`` and its tests. ``rqbench.evaluate.criteria``
lists the criteria (``CRITERIA``) and their figures (``METRICS``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.metrics.metric import (
    MODEL_RQS,
    FailureAccounting,
    MetricSpec,
    ScoreOptions,
    best_of_five,
    pass_rates,
)
from rqbench.prompts import PromptSet
from rqbench.records import CandidateScores, EvaluationInstance, InstanceResult, PaperCut, Reply
from rqbench.steps import Step
from rqbench.untrusted import candidate_values

from .requests import JudgeConfig, JudgeRequest, render, shared_user_chars


@dataclass(frozen=True)
class Dimension:
    """One scored dimension of a criterion, which way is better, and its scale (the reply model's bounds)."""

    name: str
    label: str
    higher_is_better: bool
    scale: tuple[int, int]

    @property
    def worst(self) -> float:
        """The scale's worst value: what a missing RQ scores, and an instance with no generation's Best@5."""
        return float(self.scale[0] if self.higher_is_better else self.scale[1])


@dataclass(frozen=True)
class Column:
    """One leaderboard column; ``metric`` names the figure it shows (None for identity and provenance columns)."""

    label: str
    group: str
    metric: str | None = None
    percent: bool = False
    higher_is_better: bool | None = None
    headline: bool = False  # shown by the "headline" group whatever its own group


def dimension_metrics(dimensions: Sequence[Dimension]) -> tuple[MetricSpec, ...]:
    """Each dimension's figures, in dimension order: its Best@5, then its Pass@5 win/tie/lose rates."""
    return tuple(
        m
        for d in dimensions
        for m in (
            best_of_five(d.name, d.label, d.higher_is_better, d.worst),
            *pass_rates(d.name, d.label, d.higher_is_better),
        )
    )


def figure_column(spec: MetricSpec, label: str, group: str, *, headline: bool = False) -> Column:
    """The leaderboard column of one figure: percent for rates, the figure's own direction."""
    return Column(
        label=label,
        group=group,
        metric=spec.name,
        percent=spec.kind == "rate",
        higher_is_better=spec.higher_is_better,
        headline=headline,
    )


@dataclass(frozen=True)
class ReportTable:
    """One of the paper's tables that a criterion's figures fill (``evaluate/report/tables.py`` lays it out).

    kind: ``scores`` (standalone Best@5, mean ± std, with the GT's own row), ``rates``
    (Pass@5 win rate with ``other`` in brackets), ``best_of`` (one figure per model and
    judge, taken from whichever setting has it). ``name`` and ``caption`` may hold
    ``{setting}`` / ``{Setting}``; ``paper_tables`` gives the paper's table per setting.
    """

    kind: Literal["scores", "rates", "best_of"]
    name: str
    caption: str
    paper_tables: Mapping[str, str]
    dimensions: tuple[str, ...] = ()
    other: Literal["tie", "lose"] = "tie"
    metric: str | None = None  # for ``best_of``: the figure shown
    column: str = ""  # for ``best_of``: the column's label
    by_subfield: bool = True


class Criterion:
    """One judged criterion: its steps, requests, dimensions, figures, tables and columns (see the module)."""

    name: ClassVar[str]
    steps: ClassVar[Mapping[str, Step]]  # by setting; "any": one step serves both settings
    dimensions: ClassVar[tuple[Dimension, ...]]
    metrics: ClassVar[tuple[MetricSpec, ...]]
    report_tables: ClassVar[tuple[ReportTable, ...]] = ()
    columns: ClassVar[tuple[Column, ...]] = ()
    per_candidate: ClassVar[bool] = True  # each candidate has its own value (overlap: the instance has five)
    # the dimension whose Best@5 and Pass@5 win are the criterion's headline figures (its leaderboard headline, the
    # figure a dollar buys, the one controlled for length, the one the expert study judged); None: no dimension leads
    headline: ClassVar[str | None] = None
    # the dimensions, in order, that pick a model's best RQ of five for a reader (A.5: the RQ shown to the experts),
    # and that the plots draw; () where the criterion picks none
    tie_break: ClassVar[tuple[str, ...]] = ()

    # -- judging ------------------------------------------------------------
    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        raise NotImplementedError

    def apply(self, req: JudgeRequest, reply: Reply, result: InstanceResult) -> None:
        raise NotImplementedError

    def reset(self, result: InstanceResult) -> None:
        """Clear what this criterion wrote (before a reparse)."""
        raise NotImplementedError

    def step_for(self, setting: str) -> str:
        chosen = self.steps.get(setting) or self.steps.get("any")
        if chosen is None:
            raise KeyError(f"criterion {self.name!r} has no step for setting {setting!r}")
        return chosen.name

    def prompts_for(self, judge: JudgeConfig, step: str) -> PromptSet:
        """The prompt set a step's template is read from: the judge's (a criterion declared as data may bring its
        own, ``declared.py``)."""
        return judge.prompts

    def reply_model_for(self, name: str) -> type[Reply]:
        for s in self.steps.values():
            if s.name == name:
                return s.reply_model
        raise KeyError(f"step {name!r} is not a step of criterion {self.name!r}")

    def build(
        self,
        judge: JudgeConfig,
        step: str,
        groups: Sequence[Sequence[str]],
        candidates: dict[str, str],
        values: dict[str, str],
        *,
        paper_id: str | None = None,
        ordering: int = 0,
        background: Sequence[PaperCut] = (),
    ) -> list[JudgeRequest]:
        """One request per group of candidates: the step's template filled with ``values`` and the group's texts."""
        out = []
        for group in groups:
            texts = [candidates[c] for c in group]
            filled = {**values, **candidate_values(texts)}
            prompts = self.prompts_for(judge, step)
            msgs = render(prompts, step, filled)
            out.append(
                JudgeRequest(
                    self.name,
                    step,
                    msgs,
                    self.reply_model_for(step),
                    tuple(group),
                    paper_id,
                    ordering,
                    tuple(background),
                    shared_user_chars(prompts, step, filled),
                    prompts.hash,
                )
            )
        return out

    # -- failure accounting ---------------------------------------------------
    def complete(self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores]) -> bool:
        """Whether every candidate the criterion scores has its score (a failed call leaves one without)."""
        raise NotImplementedError

    def unjudged(self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores]) -> bool:
        """A judge's failure: the instance has the model's RQs, and a call of this criterion failed after its
        re-ask (its raw reply kept with the error) or left a candidate without this criterion's score."""
        if not model:
            return False  # no generation: nothing was asked, and that is the model's failure, not the judge's
        steps = {s.name for s in self.steps.values()}
        if any(r.error is not None and r.step in steps for r in inst.raw_replies):
            return True
        return not self.complete(inst, gt, model)

    def score_row(
        self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores], opts: ScoreOptions
    ) -> tuple[list[float], list[list[float]], bool]:
        """The instance's row of the score table under ``opts.failures``, and whether it is unjudged here.

        Paper accounting: an unjudged instance has no model values (the GT keeps its own, for the reference
        row), and an instance with fewer than five RQs gets the scale's worst in each missing slot. An instance
        with no generation has no slots here; its figures take their ``no_generation`` value in the summary.
        Conditional: ``table_values`` as they are.
        """
        g, slots = self.table_values(inst, gt, model, opts)
        unjudged = self.unjudged(inst, gt, model)
        if opts.failures is FailureAccounting.paper and model:
            if unjudged:
                slots = [[float("nan")] * len(self.dimensions)] * max(MODEL_RQS, len(slots))
            elif len(slots) < MODEL_RQS:
                slots = [*slots, *[[d.worst for d in self.dimensions]] * (MODEL_RQS - len(slots))]
        return g, slots, unjudged

    # -- scoring ------------------------------------------------------------
    def table_values(
        self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores], opts: ScoreOptions
    ) -> tuple[list[float], list[list[float]]]:
        """The GT's value on each dimension, and each model slot's (NaN = unscored), for the score table."""
        raise NotImplementedError

    def candidate_value(
        self, c: CandidateScores, dimension: str, opts: ScoreOptions, paper_ids: Sequence[str]
    ) -> float | None:
        """One candidate's value on one dimension (None = unscored), from the same code as the score table."""
        raise NotImplementedError(f"criterion {self.name!r} scores instances, not single candidates")

    def dimension(self, name: str) -> Dimension:
        for d in self.dimensions:
            if d.name == name:
                return d
        raise KeyError(f"criterion {self.name!r} has no dimension {name!r}")
