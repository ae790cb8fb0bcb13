"""What the workers of a batch tell its driver, as typed events (every executor carries them the
same way: a thread's queue, or Ray's board and task results)."""

from __future__ import annotations

from dataclasses import dataclass

from swe_aci.trajectory.instance import InstanceResult


@dataclass(frozen=True)
class InstanceStarted:
    instance_id: str


@dataclass(frozen=True)
class StepDone:
    instance_id: str
    steps: int
    action: str


@dataclass(frozen=True)
class InstanceDone:
    """The instance ended: `result.exit_status` None when it was interrupted (redone later)."""

    result: InstanceResult


@dataclass(frozen=True)
class InstanceFatal:
    """A problem no instance can get past (a rejected API key): the batch stops."""

    instance_id: str
    message: str


BatchEvent = InstanceStarted | StepDone | InstanceDone | InstanceFatal
