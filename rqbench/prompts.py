"""Prompt sets: a folder of template files, one pair per step, swapped whole by ``--prompts DIR``.

Each step has ``<step>.system.md`` and ``<step>.user.md``. Placeholders are
``{{name}}``; rendering refuses a missing or an unexpected variable, so a prompt
and the code that fills it cannot drift apart silently. The set's name and a hash
of every file's content are stored with every result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from rqbench.hashing import content_hash

DEFAULT_PROMPT_SET = Path(__file__).parent / "prompts" / "rqbench-v1"
PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}")


class PromptError(ValueError):
    """A prompt set is incomplete, or a template was rendered with the wrong variables."""


@dataclass(frozen=True)
class Template:
    step: str
    system: str
    user: str

    def variables(self) -> set[str]:
        return set(PLACEHOLDER.findall(self.system)) | set(PLACEHOLDER.findall(self.user))

    def render(self, **values: str) -> list[dict[str, str]]:
        """Chat messages for this step; every placeholder must be given, and nothing else."""
        wanted = self.variables()
        missing = wanted - values.keys()
        extra = values.keys() - wanted
        if missing or extra:
            raise PromptError(f"prompt {self.step!r}: missing variables {sorted(missing)}, unexpected {sorted(extra)}")

        def fill(text: str) -> str:
            return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)

        return [
            {"role": "system", "content": fill(self.system).strip()},
            {"role": "user", "content": fill(self.user).strip()},
        ]

    def shared_user_chars(self, varying: set[str], **values: str) -> int:
        """How many leading characters of the rendered user message do not depend on ``varying`` variables.

        The user message is cut at the start of the first line that holds a varying
        placeholder; what comes before it is the part the calls of one instance share
        (with the system message), so a provider's prefix cache can hold it. A
        ``varying`` placeholder in the system text is refused: it would make the whole
        prompt differ from call to call.
        """
        in_system = varying & set(PLACEHOLDER.findall(self.system))
        if in_system:
            raise PromptError(
                f"prompt {self.step!r}: the system text holds per-call variables {sorted(in_system)}; "
                "they belong at the end of the user message"
            )
        starts = [m.start() for m in PLACEHOLDER.finditer(self.user) if m.group(1) in varying]
        if not starts:
            return len(self.render(**values)[1]["content"])
        cut = self.user.rfind("\n", 0, min(starts)) + 1
        head = PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.user[:cut]).lstrip()
        full = self.render(**values)[1]["content"]
        if not full.startswith(head):  # only when the head is nothing but white space the render strips
            return 0
        return len(head)


@dataclass(frozen=True)
class PromptSet:
    name: str
    path: Path
    templates: dict[str, Template] = field(repr=False)
    hash: str

    def __getitem__(self, step: str) -> Template:
        try:
            return self.templates[step]
        except KeyError:
            raise PromptError(
                f"prompt set {self.name!r} ({self.path}) has no step {step!r}; it has {sorted(self.templates)}"
            ) from None

    def ref(self) -> dict[str, str]:
        return {"name": self.name, "hash": self.hash}


@lru_cache(maxsize=16)
def _load(path: Path) -> PromptSet:
    if not path.is_dir():
        raise PromptError(f"prompt set folder {path} does not exist")
    files = sorted(p for p in path.iterdir() if p.suffix == ".md")
    steps: dict[str, dict[str, str]] = {}
    for f in files:
        stem = f.name[: -len(".md")]
        step, _, part = stem.rpartition(".")
        if part not in ("system", "user") or not step:
            raise PromptError(f"{f}: prompt files are named <step>.system.md or <step>.user.md")
        steps.setdefault(step, {})[part] = f.read_text(encoding="utf-8")
    templates = {}
    for step, parts in steps.items():
        if set(parts) != {"system", "user"}:
            raise PromptError(f"prompt set {path}: step {step!r} needs both a .system.md and a .user.md file")
        templates[step] = Template(step, parts["system"], parts["user"])
    digest = content_hash({f.name: f.read_text(encoding="utf-8") for f in files})
    return PromptSet(name=path.name, path=path, templates=templates, hash=digest)


def load_prompt_set(path: str | Path | None = None) -> PromptSet:
    """The named prompt set (a folder); the packaged ``rqbench-v1`` when ``path`` is None."""
    return _load(Path(path).resolve() if path else DEFAULT_PROMPT_SET.resolve())


def rubric_scale(step: str, first_line: str, prompt_set: PromptSet | None = None) -> str:
    """One scale of a judge's rubric, as the judge reads it: the block of the step's system prompt that starts
    with the line beginning ``first_line`` and ends before the next blank line.

    The Annotate tab shows annotators these blocks, so humans and judges score
    against the same words and there is no second copy of the rubric to drift.
    """
    ps = prompt_set or load_prompt_set()
    lines = ps[step].system.splitlines()
    start = next((k for k, line in enumerate(lines) if line.strip().startswith(first_line)), None)
    if start is None:
        raise PromptError(f"prompt set {ps.name!r}, step {step!r}: no line starts with {first_line!r}")
    block = []
    for line in lines[start:]:
        if not line.strip():
            break
        block.append(line.rstrip())
    return "\n".join(block)
