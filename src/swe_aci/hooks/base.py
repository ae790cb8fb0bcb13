"""The event after an instance and the protocol of its listeners.

Hooks that change the record (a batch's grading) run where the instance ran, on its worker, so
grading overlaps the other episodes; listeners that show it (the displays) hear the same event on
the driver once it is recorded. A hook that cannot do its job raises `HookError` (one line), which
stops the hooks after it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from swe_aci.tasks import Task

Record = TypeVar("Record")
Record_contra = TypeVar("Record_contra", contravariant=True)


@dataclass
class InstanceCompleted(Generic[Record]):
    """An instance has ended. `record` is what its runner keeps of it (a batch's
    `InstanceResult`, `run`'s `EpisodeResult`); a hook may replace it (grading adds the report).
    `task` is the task row, when it came from one."""

    instance_id: str
    submission: str
    trajectory_path: Path
    record: Record
    task: Task | None = None

    @property
    def patch_path(self) -> Path:
        return self.trajectory_path.with_suffix(".patch")


class RunHook(Protocol[Record_contra]):
    def on_instance_completed(self, completed: InstanceCompleted[Record_contra]) -> None: ...


class HookError(Exception):
    """A hook could not do its job (one line for the user; the patch is kept)."""


def notify(hooks: Iterable[RunHook[Record]], completed: InstanceCompleted[Record]) -> None:
    """Every hook in order; an exception stops the ones after it."""
    for hook in hooks:
        hook.on_instance_completed(completed)
