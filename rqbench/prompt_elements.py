"""The elements of the paper's prompts (A.4, A.8), as data, and the check that a prompt set expresses each one.

The packaged prompts say the paper's prompts in the project's own words. What the rewording must
keep is listed in ``prompts/elements/<prompt>.toml``, one checklist per prompt of the paper: every
persona, rule, scale level, example and output field, each with its meaning in a sentence and the
concepts a prompt has to express for it. A concept is a list of alternatives (regular expressions,
case-insensitive; ``#N`` stands for the number N on its own, a scale level); an element is present
when one match of every concept falls within ``within`` characters of text; a scale level's
stretch starts at its own number and holds no other level's, so a level cannot borrow words from
its neighbours.
Words that close together say one thing, so the check follows meaning through a rewording and still
notices a level that lost a word ("striking" without "unexpected") or a list that lost items.

A checklist may ``include`` others: a fragment shared by several prompts (the novelty scales, A.1)
or a whole prompt that the paper defines another by (the comparative narrowness prompt is "the
standalone one, except ..."; A.8 is A.4 without four rules). ``drop`` leaves included elements
out, and ``absent`` names included elements that the prompt must *not* express (the rules A.8
removed).
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rqbench.prompts import PromptError, PromptSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ELEMENTS_DIR = Path(__file__).parent / "prompts" / "elements"
_LEVEL = re.compile(r"#(\d+)")


@lru_cache(maxsize=None)
def _compile(alternative: str) -> re.Pattern[str]:
    """One alternative of a concept; ``#N`` is the number N standing alone (not 10, 0.5, 0-3 or N-1)."""
    level = _LEVEL.fullmatch(alternative)
    if level:
        return re.compile(rf"(?<![\w.\u2013/-]){level.group(1)}(?![\w.\u2013/%-])")
    return re.compile(alternative, re.IGNORECASE)


class Element(BaseModel):
    """One thing a paper prompt says, and the concepts a rewording of it must still express."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    kind: Literal["persona", "task", "rule", "scale", "level", "example", "output", "input"]
    meaning: str = Field(min_length=10, description="What the paper's prompt says here, in our words.")
    concepts: list[list[str]] = Field(min_length=1, description="Each concept: alternatives, one of which must match.")
    within: int = Field(default=160, gt=0, description="The most characters that all the matches may span.")
    applies_to: Literal["all", "single", "multi"] = Field(
        default="all", description="single/multi: only the one-paper or the several-papers generation steps."
    )

    @field_validator("concepts")
    @classmethod
    def _patterns_compile(cls, concepts: list[list[str]]) -> list[list[str]]:
        for alternatives in concepts:
            if not alternatives:
                raise ValueError("a concept needs at least one alternative")
            for a in alternatives:
                try:
                    _compile(a)
                except re.error as exc:
                    raise ValueError(f"pattern {a!r} does not compile: {exc}") from None
        return concepts

    def applies(self, step: str) -> bool:
        return self.applies_to == "all" or (self.applies_to == "multi") == step.endswith("_multi")

    def span(self, text: str) -> tuple[int, int] | None:
        """The shortest stretch of ``text`` holding a match of every concept, if it is at most ``within`` long
        (and, for a level, holds no other level's number)."""
        barriers: list[int] = []
        anchor = None
        if self.kind == "level":
            anchor = next(k for k, c in enumerate(self.concepts) if any(_LEVEL.fullmatch(a) for a in c))
            own = {m.group(1) for a in self.concepts[anchor] if (m := _LEVEL.fullmatch(a))}
            barriers = sorted(
                m.start() for n in range(10) if str(n) not in own for m in _compile(f"#{n}").finditer(text)
            )
        compiled = [[_compile(a) for a in c] for c in self.concepts]
        return _shortest_cover(compiled, text, self.within, barriers, anchor)


def _shortest_cover(
    concepts: list[list[re.Pattern[str]]], text: str, within: int, barriers: list[int], anchor: int | None
) -> tuple[int, int] | None:
    """Smallest window over the matches that holds one match of every concept and no barrier position, and starts
    with a match of concept ``anchor`` when one is given (two pointers over the matches sorted by start)."""
    hits = sorted((m.start(), m.end(), k) for k, alts in enumerate(concepts) for rx in alts for m in rx.finditer(text))
    need, have, counts, left, best = len(concepts), 0, Counter[int](), 0, None
    for right, (_, _, k) in enumerate(hits):
        counts[k] += 1
        have += counts[k] == 1
        while have == need:
            start, end = hits[left][0], max(hits[right][1], hits[left][1])
            crossed = bisect_left(barriers, start) < bisect_left(barriers, end)
            anchored = anchor is None or hits[left][2] == anchor
            shorter = best is None or end - start < best[1] - best[0]
            if end - start <= within and anchored and not crossed and shorter:
                best = (start, end)
            kl = hits[left][2]
            counts[kl] -= 1
            have -= counts[kl] == 0
            left += 1
    return best


class Checklist(BaseModel):
    """The elements of one prompt of the paper, and the prompt files of ours that must express them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    paper: str = Field(description="Where the prompt is in the paper, e.g. 'A.4, standalone novelty prompt'.")
    heading: str = Field(
        default="",
        description="The words that open the prompt in the paper's text; empty for "
        "a fragment, which only other checklists include.",
    )
    by_reference: bool = Field(
        default=False,
        description="The paper states this prompt as its included prompts "
        "plus changes, so its text there is read together with theirs.",
    )
    steps: list[str] = Field(default_factory=list, description="Our prompt files (steps) that carry this prompt.")
    include: list[str] = Field(default_factory=list)
    drop: list[str] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    elements: list[Element] = Field(default_factory=list, alias="element")

    def required(self, step: str) -> list[Element]:
        return [e for e in self.elements if e.applies(step)]

    def missing(self, step: str, text: str) -> list[Element]:
        """The elements ``text`` (a step's system and user templates) does not express."""
        return [e for e in self.required(step) if e.span(text) is None]

    def forbidden(self, text: str, every: Mapping[str, Checklist]) -> list[Element]:
        """The ``absent`` elements that ``text`` expresses anyway."""
        pool = {e.id: e for name in self.include for e in every[name].elements}
        return [pool[i] for i in self.absent if pool[i].span(text) is not None]


def _read(path: Path) -> Checklist:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise PromptError(f"{path}: not valid TOML: {exc}") from None
    for k, raw in enumerate(data.get("element", [])):
        try:
            Element.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            which = raw.get("id", f"#{k + 1}")
            raise PromptError(f"{path}: element {which!r}, field {field!r}: {first['msg']}") from None
    try:
        return Checklist.model_validate({"name": path.stem, **data})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise PromptError(f"{path}: field {'.'.join(map(str, first['loc']))!r}: {first['msg']}") from None


def _resolve(
    name: str, raw: Mapping[str, Checklist], folder: Path, done: dict[str, Checklist], path: tuple[str, ...] = ()
) -> Checklist:
    """``name`` with the elements of what it includes, less what it drops."""
    if name in done:
        return done[name]
    file = folder / f"{name}.toml"
    if name in path:
        raise PromptError(f"{file}: checklists include each other: {' -> '.join([*path, name])}")
    c = raw[name]
    inherited: list[Element] = []
    for inc in c.include:
        if inc not in raw:
            raise PromptError(f"{file}: includes {inc!r}, which has no checklist")
        inherited += _resolve(inc, raw, folder, done, (*path, name)).elements
    unknown = [i for i in (*c.drop, *c.absent) if i not in {e.id for e in inherited}]
    if unknown:
        raise PromptError(f"{file}: drop/absent name elements it does not include: {unknown}")
    leave = set(c.drop) | set(c.absent)
    elements = [e for e in inherited if e.id not in leave] + c.elements
    twice = sorted(i for i, n in Counter(e.id for e in elements).items() if n > 1)
    if twice:
        raise PromptError(f"{file}: element ids given twice: {twice}")
    done[name] = c.model_copy(update={"elements": elements})
    return done[name]


@lru_cache(maxsize=4)
def load_checklists(folder: Path = ELEMENTS_DIR) -> dict[str, Checklist]:
    """Every checklist of ``folder``, with its included elements resolved; fragments (no steps) too."""
    raw = {p.stem: _read(p) for p in sorted(folder.glob("*.toml"))}
    done: dict[str, Checklist] = {}
    for name in raw:
        _resolve(name, raw, folder, done)
    return done


def step_text(prompts: PromptSet, step: str) -> str:
    """What a step's prompt says: its system template, then its user template."""
    t = prompts[step]
    return f"{t.system}\n\n{t.user}"


_FOUND: dict[str, dict[str, list[str]]] = {}  # prompt-set hash -> what the packaged checklists found


def missing_elements(prompts: PromptSet, checklists: Mapping[str, Checklist] | None = None) -> dict[str, list[str]]:
    """For each step of ``prompts`` that a paper prompt covers, the ids of that prompt's elements it lacks
    (and of the elements the paper removed that it still has, as ``not:<id>``); steps the set lacks are skipped.

    With the packaged checklists the answer is kept per prompt-set hash: a run asks once per departure list."""
    if checklists is None and prompts.hash in _FOUND:
        return {step: list(ids) for step, ids in _FOUND[prompts.hash].items()}
    every = checklists if checklists is not None else load_checklists()
    out: dict[str, list[str]] = {}
    for c in every.values():
        for step in c.steps:
            if step not in prompts.templates:
                continue
            text = step_text(prompts, step)
            out[step] = [e.id for e in c.missing(step, text)] + [f"not:{e.id}" for e in c.forbidden(text, every)]
    if checklists is None:
        _FOUND[prompts.hash] = {step: list(ids) for step, ids in out.items()}
    return out
