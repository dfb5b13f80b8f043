"""A criterion declared as data: one folder holding ``criterion.toml`` and its prompt files, and no code.

The paper's three criteria are modules (``novelty.py``, ``narrowness.py``,
``overlap.py``) because each carries a rule of the paper's that no table can say
(relevance 0, per-paper narrowness, the covering subset). A criterion without
such a rule is data: a folder with

- ``criterion.toml``: its name, a one-line description (the reply schema's,
  so part of every cache key), its dimensions (name, label, direction, integer
  scale), the setting each prompt step serves, and optionally its headline
  dimension, leaderboard columns and report tables (by default:
  a Best@5 and a win-rate column per dimension, a standalone scores table and a
  rates table per setting);
- ``<step>.system.md`` and ``<step>.user.md`` for each step, with the
  variables the paper's judge prompts get: ``{{background}}`` (every background
  paper of the instance) and the candidates (``{{candidates}}``,
  ``{{data_tag}}``, ``{{n_candidates}}``). A ``--prompts`` set that has a file
  pair of the same step name overrides the folder's.

Its reply is one object per candidate with an integer field per dimension
(``ge``/``le`` from the scale) and a short reason; the comparative step
replies ``{"scores": [...]}`` in the order shown. Scores are stored in each
candidate's ``criteria`` field, under the criterion's name. The folders are
found through ``RQB_CRITERIA`` (``rqbench.evaluate.criteria``), as a
provider plugin is found by the tools it extends.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import tomllib
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from rqbench.evaluate.benchmark.background import background_block
from rqbench.evaluate.benchmark.source import Benchmark
from rqbench.evaluate.metrics.metric import ScoreOptions
from rqbench.hashing import content_hash
from rqbench.prompts import PLACEHOLDER, PromptError, PromptSet, Template, load_prompt_set
from rqbench.records import MAX_SHORT_TEXT, CandidateScores, EvaluationInstance, InstanceResult, Reply
from rqbench.steps import STEPS as OTHER_STEPS
from rqbench.steps import Step
from rqbench.untrusted import CANDIDATE_VARIABLES

from .base import Column, Criterion, Dimension, ReportTable, dimension_metrics, figure_column
from .requests import JudgeConfig, JudgeRequest, candidate_map, group_candidates

DECLARATION = "criterion.toml"
NOT_IN_PAPER = "not in the paper"  # the paper-table label of a declared criterion's tables
NAME = r"^[a-z][a-z0-9_]*$"


class CriterionDeclarationError(ValueError):
    """A criterion folder that cannot be read: the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DimensionDecl(_Strict):
    name: str = Field(pattern=NAME)
    label: str = Field(min_length=1)
    higher_is_better: bool
    scale: tuple[int, int]

    @field_validator("scale", mode="before")
    @classmethod
    def _pair(cls, scale: Any) -> Any:
        if not isinstance(scale, list | tuple) or len(scale) != 2 or not all(type(v) is int for v in scale):
            raise ValueError(f"{scale!r} is not [lowest, highest], two integers such as [0, 3]")
        return scale

    @field_validator("scale")
    @classmethod
    def _ordered(cls, scale: tuple[int, int]) -> tuple[int, int]:
        if scale[0] >= scale[1]:
            raise ValueError(f"{list(scale)} is not [lowest, highest] with lowest < highest")
        return scale


class ColumnDecl(_Strict):
    metric: str = Field(description="a figure of this criterion: best5_<dimension>, win_/tie_/lose_<dimension>")
    label: str
    headline: bool = False


class TableDecl(_Strict):
    kind: Literal["scores", "rates"]
    name: str = Field(pattern=r"^[a-z][a-z0-9_{}]*$")
    caption: str
    dimensions: tuple[str, ...] = ()  # () = all of the criterion's
    other: Literal["tie", "lose"] = "tie"


class CriterionDeclaration(_Strict):
    """What ``criterion.toml`` holds."""

    name: str = Field(pattern=NAME)
    description: str = Field(min_length=1, description="one line; the reply schema's description")
    dimensions: list[DimensionDecl] = Field(min_length=1)
    steps: dict[Literal["standalone", "comparative"], str] = Field(min_length=1)
    headline: str | None = None
    columns: tuple[ColumnDecl, ...] | None = None
    report_tables: tuple[TableDecl, ...] | None = None

    @model_validator(mode="after")
    def _names_known(self) -> CriterionDeclaration:
        dims = [d.name for d in self.dimensions]
        if len(set(dims)) != len(dims):
            raise ValueError(f"dimensions: {dims} name one twice")
        named = [("headline", self.headline)] if self.headline else []
        named += [
            (f"report_tables.{k}.dimensions", d) for k, t in enumerate(self.report_tables or ()) for d in t.dimensions
        ]
        for field, d in named:
            if d not in dims:
                raise ValueError(f"{field}: {d!r} is not a dimension of this criterion ({', '.join(dims)})")
        for setting, step in self.steps.items():
            if not step.startswith(self.name):
                raise ValueError(f"steps.{setting}: {step!r} must begin with the criterion's name {self.name!r}")
        return self


class DeclaredScores(Reply):
    """Base of a declared criterion's comparative reply: one score object per candidate, in the order shown."""

    scores: list[Reply]

    @model_validator(mode="after")
    def _one_per_candidate(self, info: ValidationInfo) -> DeclaredScores:
        n = (info.context or {}).get("n_candidates")
        if n is not None and len(self.scores) != n:
            raise ValueError(f"scores has {len(self.scores)} entries, expected {n} (one per candidate)")
        return self


def _title(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def reply_models(decl: CriterionDeclaration) -> tuple[type[Reply], type[Reply]]:
    """The score of one candidate (also the standalone reply) and the comparative reply, from the declaration."""
    fields: dict[str, Any] = {
        d.name: (int, Field(ge=d.scale[0], le=d.scale[1], description=d.label)) for d in decl.dimensions
    }
    fields["short_reason"] = (str, Field(default="", max_length=MAX_SHORT_TEXT))
    score = create_model(f"{_title(decl.name)}Score", __base__=Reply, __doc__=decl.description, **fields)
    comparative = create_model(
        f"Comparative{_title(decl.name)}Reply",
        __base__=DeclaredScores,
        __doc__=f"{decl.description} One score per candidate, in the order shown.",
        scores=(list[score], Field(min_length=1)),  # type: ignore[valid-type]
    )
    return score, comparative


class DeclaredCriterion(Criterion):
    """A criterion read from a folder (see the module); one instance per folder."""

    def __init__(self, folder: Path, decl: CriterionDeclaration, prompts: PromptSet):
        self.folder = folder
        self.declaration = decl
        self.prompts = prompts
        self.name = decl.name  # type: ignore[misc]
        score, comparative = reply_models(decl)
        self.steps = {  # type: ignore[misc]
            setting: Step(step, score if setting == "standalone" else comparative, f"criteria:{decl.name}", setting)
            for setting, step in decl.steps.items()
        }
        self.dimensions = tuple(  # type: ignore[misc]
            Dimension(d.name, d.label, d.higher_is_better, d.scale) for d in decl.dimensions
        )
        self.metrics = dimension_metrics(self.dimensions)  # type: ignore[misc]
        self.headline = decl.headline  # type: ignore[misc]
        self.columns = self._columns()  # type: ignore[misc]
        self.report_tables = self._tables()  # type: ignore[misc]
        # what reaches the judge and how its reply is read (the reply schema, the steps, the templates); not the
        # columns, tables or headline, which only lay out the figures and may change without a re-judge
        judged = decl.model_dump(mode="json", include={"name", "description", "dimensions", "steps"})
        self.hash = content_hash({"declaration": judged, "prompts": prompts.hash})

    def _columns(self) -> tuple[Column, ...]:
        by_name = {m.name: m for m in self.metrics}
        decl = self.declaration.columns
        if decl is None:  # a Best@5 and a win-rate column per dimension; the headline dimension's lead
            decl = tuple(
                ColumnDecl(
                    metric=f"{kind}_{d.name}",
                    label=f"{title} {d.label}" + ("" if kind == "win" or d.higher_is_better else " ↓"),
                    headline=d.name == self.headline,
                )
                for d in self.dimensions
                for kind, title in (("best5", "Best@5"), ("win", "Win %"))
            )
        out = []
        for c in decl:
            if c.metric not in by_name:
                raise CriterionDeclarationError(
                    f"{self.folder / DECLARATION}: columns: metric {c.metric!r} is not a figure of criterion "
                    f"{self.name!r}; its figures are {', '.join(by_name)}"
                )
            out.append(figure_column(by_name[c.metric], c.label, self.name, headline=c.headline))
        return tuple(out)

    def _tables(self) -> tuple[ReportTable, ...]:
        decl = self.declaration.report_tables
        if decl is None:  # each caption says every dimension's scale and which way is better
            scales = "; ".join(
                f"{d.label} {d.scale[0]}-{d.scale[1]}, {'higher' if d.higher_is_better else 'lower'} is better"
                for d in self.dimensions
            )
            decl = (
                TableDecl(
                    kind="scores",
                    name=f"{self.name}_standalone_scores",
                    caption=f"Standalone {self.name}: mean ± std of each model's best-of-five score per dimension "
                    f"({scales}); the GT row is the author-anchored RQ's own score.",
                ),
                TableDecl(
                    kind="rates",
                    name=f"{self.name}_{{setting}}_rates",
                    caption=f"{{Setting}} {self.name}: Pass@5 win rate % [95% CI] (tie rate %) of the best of five "
                    f"model RQs against the GT; a win is a better score than the GT's ({scales}).",
                ),
            )
        dims = tuple(d.name for d in self.dimensions)
        settings = tuple(self.steps)
        return tuple(
            ReportTable(
                t.kind,
                t.name,
                t.caption,
                {s: f"{NOT_IN_PAPER}: criterion {self.name}" for s in ("standalone", "comparative", "any")},
                t.dimensions or dims,
                other=t.other,
            )
            for t in decl
            if t.kind == "rates" or "standalone" in settings
        )

    # -- judging ------------------------------------------------------------
    def step_for(self, setting: str) -> str:
        if setting not in self.steps:
            raise KeyError(
                f"criterion {self.name!r} ({self.folder / DECLARATION}) has no step for setting {setting!r}; "
                f"it declares {', '.join(self.steps)}"
            )
        return self.steps[setting].name

    def prompts_for(self, judge: JudgeConfig, step: str) -> PromptSet:
        """The judge's prompt set where it has the step (an override), else the criterion's own folder."""
        return judge.prompts if step in judge.prompts.templates else self.prompts

    def requests(
        self, judge: JudgeConfig, bench: Benchmark, inst: EvaluationInstance, candidates: dict[str, str]
    ) -> list[JudgeRequest]:
        background, cuts = background_block(bench.background(inst), judge.policy)
        groups = group_candidates(judge, inst.rq_id, list(candidates))
        return self.build(
            judge, self.step_for(judge.setting), groups, candidates, {"background": background}, background=cuts
        )

    def apply(self, req: JudgeRequest, reply: Reply, result: InstanceResult) -> None:
        cands = candidate_map(result)
        scores = reply.scores if isinstance(reply, DeclaredScores) else [reply]
        for cid, score in zip(req.candidate_ids, scores, strict=True):
            c = cands[cid]
            c.criteria = {**c.criteria, self.name: {d.name: getattr(score, d.name) for d in self.dimensions}}

    def reset(self, result: InstanceResult) -> None:
        for c in result.candidates:
            if self.name in c.criteria:
                c.criteria = {k: v for k, v in c.criteria.items() if k != self.name}

    # -- scoring ------------------------------------------------------------
    def complete(self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores]) -> bool:
        return all(self.name in c.criteria for c in (gt, *model))

    def _row(self, c: CandidateScores) -> list[float] | None:
        got = c.criteria.get(self.name)
        return None if got is None else [float(got[d.name]) for d in self.dimensions]

    def table_values(
        self, inst: InstanceResult, gt: CandidateScores, model: Sequence[CandidateScores], opts: ScoreOptions
    ) -> tuple[list[float], list[list[float]]]:
        unscored = [float("nan")] * len(self.dimensions)
        rows = [self._row(c) or unscored for c in (gt, *model)]
        return rows[0], rows[1:]

    def candidate_value(
        self, c: CandidateScores, dimension: str, opts: ScoreOptions, paper_ids: Sequence[str] = ()
    ) -> float | None:
        at = self.dimensions.index(self.dimension(dimension))
        row = self._row(c)
        return None if row is None else row[at]


# what a declared criterion's templates are filled with: the instance's background papers, then the candidates
OFFERED = frozenset({"background", *CANDIDATE_VARIABLES})


def _check_template(t: Template, folder: Path) -> None:
    """Refuse, before any call, a template the run would refuse mid-way, naming its file: an unknown variable, or
    a candidate variable in the system text (the calls of one instance share everything before the candidates)."""
    for part, text in (("system", t.system), ("user", t.user)):
        unknown = set(PLACEHOLDER.findall(text)) - OFFERED
        if unknown:
            raise CriterionDeclarationError(
                f"{folder / f'{t.step}.{part}.md'}: unknown variables {sorted(unknown)}; a criterion's templates "
                f"are given {', '.join(f'{{{{{v}}}}}' for v in sorted(OFFERED))}"
            )
    try:  # the check a run makes when it renders the template, made now
        t.shared_user_chars(set(CANDIDATE_VARIABLES), **dict.fromkeys(t.variables(), ""))
    except PromptError as exc:
        raise CriterionDeclarationError(f"{folder / f'{t.step}.system.md'}: {exc}") from None


def load_declared(folder: str | Path, *, taken: Sequence[str] = ()) -> DeclaredCriterion:
    """The criterion of one folder; ``CriterionDeclarationError`` naming the file and field when it is not one.

    ``taken``: the criterion, dimension and step names already in use, which this folder may not reuse.
    """
    folder = Path(folder)
    path = folder / DECLARATION
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CriterionDeclarationError(
            f"{path}: no criterion declaration (a criterion folder holds {DECLARATION})"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise CriterionDeclarationError(f"{path}: not valid TOML: {exc}") from None
    try:
        decl = CriterionDeclaration.model_validate(raw)
    except ValidationError as exc:
        # a check across fields names its field in its message (pydantic gives it no place)
        where = "; ".join(
            (f"{'.'.join(map(str, e['loc']))}: " if e["loc"] else "") + e["msg"].removeprefix("Value error, ")
            for e in exc.errors()
        )
        raise CriterionDeclarationError(f"{path}: {where}") from None
    try:
        prompts = load_prompt_set(folder)
        templates = [prompts[step] for step in decl.steps.values()]
    except PromptError as exc:
        raise CriterionDeclarationError(f"{path}: steps: {exc}") from None
    for t in templates:
        _check_template(t, folder)
    clash = sorted({decl.name, *(d.name for d in decl.dimensions), *decl.steps.values()} & {*taken, *OTHER_STEPS})
    if clash:
        raise CriterionDeclarationError(f"{path}: {clash} already name a criterion, dimension or step")
    return DeclaredCriterion(folder.resolve(), decl, prompts)
