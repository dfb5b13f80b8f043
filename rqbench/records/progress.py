"""A background job's progress as one small file: its phases, each step's done/total, and a failure by name.

``rqbench start`` runs the sample build and the demo evaluation in a child process that writes this file;
the terminal and the Space's progress panel read it. Times are seconds since the epoch, since the writer and
the readers are different processes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rqbench.records.common import Record

PhaseStatus = Literal["waiting", "running", "done", "failed", "stopped"]
StepStatus = Literal["running", "done", "failed", "stopped"]


class StepProgress(Record):
    """One counted piece of work inside a phase (a build stage, generation, one judge and setting)."""

    phase: str
    name: str
    done: int = Field(default=0, ge=0)
    total: int | None = Field(default=None, ge=0)
    status: StepStatus = "running"
    started_at: float
    updated_at: float
    message: str = ""


class PhaseProgress(Record):
    """One command the job runs (``rqbench setup-sample``, ``rqbench evaluate``)."""

    name: str
    command: str
    status: PhaseStatus = "waiting"
    started_at: float | None = None
    finished_at: float | None = None
    message: str = ""


class JobProgress(Record):
    """The whole job: ``status`` is ``running`` until every phase is done, one failed, or it was stopped."""

    status: Literal["running", "done", "failed", "stopped"] = "running"
    started_at: float
    updated_at: float
    pid: int | None = None
    log: str = ""
    phases: list[PhaseProgress] = Field(default_factory=list)
    steps: list[StepProgress] = Field(default_factory=list)

    def phase(self, name: str) -> PhaseProgress:
        for p in self.phases:
            if p.name == name:
                return p
        raise KeyError(f"no phase {name!r} in this job")

    def step(self, phase: str, name: str) -> StepProgress | None:
        for s in self.steps:
            if (s.phase, s.name) == (phase, name):
                return s
        return None

    @property
    def finished(self) -> bool:
        return self.status != "running"
