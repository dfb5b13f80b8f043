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

The check also runs the other way. A prompt may say things the paper's prompt does not, but only as
a *named departure*: an element of kind ``departure`` that belongs to one of the departures declared
in ``prompts/elements/departures.toml`` (what it adds, why, and what restores the paper). Every
sentence of a packaged prompt must carry a match of an element or of a departure
(``unaccounted``), so an instruction added without a name fails; and no departure may be found in
the paper's own text, so a departure is never a paraphrase of the paper in disguise.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

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
    kind: Literal["persona", "task", "rule", "scale", "level", "example", "output", "input", "departure"]
    meaning: str = Field(min_length=10, description="What the paper's prompt says here, in our words.")
    concepts: list[list[str]] = Field(min_length=1, description="Each concept: alternatives, one of which must match.")
    within: int = Field(default=160, gt=0, description="The most characters that all the matches may span.")
    applies_to: Literal["all", "single", "multi"] = Field(
        default="all", description="single/multi: only the one-paper or the several-papers generation steps."
    )
    only_steps: list[str] = Field(
        default_factory=list, description="When given, the steps that say this element (a variant's own rule)."
    )
    departure: str | None = Field(
        default=None, description="For kind 'departure': the id of the named departure (departures.toml) it is part of."
    )

    @model_validator(mode="after")
    def _departure_named(self) -> Element:
        if (self.kind == "departure") != (self.departure is not None):
            raise ValueError("an element of kind 'departure', and only such an element, names its departure")
        return self

    @property
    def is_departure(self) -> bool:
        return self.kind == "departure"

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
        if self.only_steps and step not in self.only_steps:
            return False
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

    def spans(self, text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
        """Every place ``text`` says this element: the shortest stretch, then the shortest ones either side of it
        (a prompt may say one thing twice, and each saying is accounted for)."""
        hi = len(text) if hi is None else hi
        found = self.span(text[lo:hi])
        if found is None:
            return []
        a, b = lo + found[0], lo + found[1]
        return [*self.spans(text, lo, a), (a, b), *self.spans(text, b, hi)]

    def hits(self, text: str, span: tuple[int, int]) -> list[tuple[int, int]]:
        """Where the concepts match inside ``span`` of ``text``: the words that carry this element there."""
        a, b = span
        return [
            (m.start(), m.end())
            for c in self.concepts
            for alt in c
            for m in _compile(alt).finditer(text)
            if a <= m.start() and m.end() <= b
        ]


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
    also: list[str] = Field(
        default_factory=list,
        description="The words that open further lines of the paper read with the heading's line (a stage that §4 "
        "describes over two paragraphs).",
    )
    printed: bool = Field(
        default=True,
        description="False where the paper prints no prompt for this step and only describes the stage (§4): its "
        "elements are what the description says, and every other sentence is a named departure.",
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
        """The paper's elements that ``step`` must express (departures are not the paper's, so not required)."""
        return [e for e in self.elements if e.applies(step) and not e.is_departure]

    def departures(self, step: str) -> list[Element]:
        """The departure elements declared for ``step``."""
        return [e for e in self.elements if e.applies(step) and e.is_departure]

    def missing(self, step: str, text: str) -> list[Element]:
        """The elements ``text`` (a step's system and user templates) does not express."""
        return [e for e in self.required(step) if e.span(text) is None]

    def unaccounted(self, step: str, text: str) -> list[str]:
        """The sentences of ``text`` that carry no element of the paper and no named departure.

        An element said within one sentence accounts for that sentence. An element that no single sentence
        holds (an input heading and its placeholder on two lines, a reply shape and its lead-in) accounts for
        each sentence that holds one of the words carrying it where ``text`` says it. So a sentence added
        to a prompt, saying something neither the paper nor a departure says, is listed, even when it borrows
        a word from its neighbour."""
        units = sentence_spans(text)
        done = [False] * len(units)
        for e in [*self.required(step), *self.departures(step)]:
            inside = [k for k, (a, b) in enumerate(units) if e.span(text[a:b]) is not None]
            if inside:
                for k in inside:
                    done[k] = True
                continue
            carriers = sorted(h for sp in e.spans(text) for h in e.hits(text, sp))
            for k, (a, b) in enumerate(units):
                j = bisect_left(carriers, (a, a))
                done[k] = done[k] or (j < len(carriers) and carriers[j][1] <= b)
        return [" ".join(text[a:b].split()) for (a, b), ok in zip(units, done) if not ok]

    def forbidden(self, text: str, every: Mapping[str, Checklist]) -> list[Element]:
        """The ``absent`` elements that ``text`` expresses anyway."""
        pool = {e.id: e for name in self.include for e in every[name].elements}
        return [pool[i] for i in self.absent if pool[i].span(text) is not None]


_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=\S)|(?<=[}\]>])\s+(?=[A-Z][a-z])")
_LIST_MARK = re.compile(r"^(?:\d+\.|[-*])\s+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of a prompt, as (start, end) offsets.

    Each line is split after a full stop, question or exclamation mark (a list item's own number, "1.", is not
    a sentence). A sentence that ends with a colon leads into what follows (a list, a field, an example), so it
    is read together with the first sentence of the next line."""
    spans: list[tuple[int, int]] = []
    pending: int | None = None  # where a lead-in started
    pos = 0
    for line in text.splitlines(keepends=True):
        start, body = pos, line.strip()
        pos += len(line)
        if not body:
            continue
        a = start + line.index(body[0])
        mark = _LIST_MARK.match(body)
        skip = mark.end() if mark else 0
        cuts = [a, *(a + skip + m.end() for m in _SENTENCE_END.finditer(body[skip:])), a + len(body)]
        parts = list(zip(cuts, cuts[1:]))
        if pending is not None:
            parts[0] = (pending, parts[0][1])
            pending = None
        if body.endswith(":"):
            pending = parts.pop()[0]
        spans.extend(parts)
    if pending is not None:
        spans.append((pending, len(text)))
    return [(x, len(text[:y].rstrip())) for x, y in spans]


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


class NamedDeparture(BaseModel):
    """Something the packaged prompts say that the paper's do not: what, why, and what restores the paper."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str = Field(min_length=5, description="The departure's name as a run prints it.")
    adds: str = Field(min_length=10, description="What the prompts say beyond the paper, in a sentence.")
    why: str = Field(min_length=10, description="Why the project keeps it.")
    restore: str = Field(min_length=5, description="The flag or set-up that runs the paper's behaviour instead.")
    fidelity_row: str = Field(pattern=r"^[BGJMT]\d+$", description="The docs/fidelity.md row that names it.")
    own_line: bool = Field(
        default=True, description="False where another departure a run prints already names it (a prompt variant)."
    )


DEPARTURES_FILE = "departures.toml"


@lru_cache(maxsize=4)
def load_departures(folder: Path = ELEMENTS_DIR) -> dict[str, NamedDeparture]:
    """The named departures of the packaged prompts (``departures.toml`` beside the checklists)."""
    path = folder / DEPARTURES_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise PromptError(f"{path}: not valid TOML: {exc}") from None
    out: dict[str, NamedDeparture] = {}
    for k, raw in enumerate(data.get("departure", [])):
        try:
            d = NamedDeparture.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            which = raw.get("id", f"#{k + 1}")
            raise PromptError(
                f"{path}: departure {which!r}, field {'.'.join(map(str, first['loc']))!r}: {first['msg']}"
            ) from None
        if d.id in out:
            raise PromptError(f"{path}: departure {d.id!r} is declared twice")
        out[d.id] = d
    return out


@lru_cache(maxsize=4)
def load_checklists(folder: Path = ELEMENTS_DIR) -> dict[str, Checklist]:
    """Every checklist of ``folder``, with its included elements resolved; fragments (no steps) too."""
    raw = {p.stem: _read(p) for p in sorted(folder.glob("*.toml")) if p.name != DEPARTURES_FILE}
    done: dict[str, Checklist] = {}
    for name in raw:
        _resolve(name, raw, folder, done)
    named = load_departures(folder)
    for name, c in raw.items():
        for e in c.elements:
            if e.departure is not None and e.departure not in named:
                raise PromptError(
                    f"{folder / (name + '.toml')}: element {e.id!r} names departure {e.departure!r}, "
                    f"which {folder / DEPARTURES_FILE} does not declare"
                )
    return done


def step_text(prompts: PromptSet, step: str) -> str:
    """What a step's prompt says: its system template, then its user template."""
    t = prompts[step]
    return f"{t.system}\n\n{t.user}"


def departures_present(prompts: PromptSet, steps: Iterable[str] | None = None) -> dict[str, list[str]]:
    """For each named departure the packaged checklists declare, the steps of ``prompts`` (of ``steps``, when
    given) whose text says it; departures said nowhere are left out."""
    every = load_checklists()
    out: dict[str, list[str]] = {}
    wanted = None if steps is None else set(steps)
    for c in every.values():
        for step in c.steps:
            if step not in prompts.templates or (wanted is not None and step not in wanted):
                continue
            text = step_text(prompts, step)
            for e in c.departures(step):
                if e.span(text) is not None and step not in out.setdefault(e.departure or "", []):
                    out[e.departure or ""].append(step)
    return out


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
