"""What every executor does: run `work(item, channel)` for each item `next()` hands out, at most
`workers` at a time, and deliver every event a worker posts (and the event its work returns) to
`on_event` on the calling thread, in the order each worker posted them."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

Item = TypeVar("Item")

WORKERS_PER_CPU = 8


def worker_limit() -> int:
    """The most workers an executor starts: 8 per CPU (an episode mostly waits on its model and
    its sandbox, so more than one per CPU pays; a thread and a sandbox each still cost memory)."""
    return WORKERS_PER_CPU * (os.cpu_count() or 1)


def bounded_workers(requested: int, items: int) -> int:
    """`requested`, at most one per item and at most `worker_limit()`, at least 1."""
    return max(1, min(requested, items, worker_limit()))


class Channel(Protocol):
    """A worker's line to the driver."""

    def post(self, event: object) -> None: ...

    def stopping(self) -> bool: ...

    def request_stop(self) -> None:
        """No new item starts (what the driver does on a fatal event, done at once)."""


class WorkerLost(Exception):
    """The process running an item died (and its retry too)."""


@dataclass
class Jobs(Generic[Item]):
    """What to run. `next()` returns None once nothing more should start; `size` bounds how many
    items it will hand out. `work` runs on a worker and returns the item's last event; `failed`
    gives the last event of an item whose work raised (or whose worker was lost); without it the
    first such error is raised by `run` once the running items have ended."""

    next: Callable[[], Item | None]
    size: int
    work: Callable[[Item, Channel], object]
    failed: Callable[[Item, BaseException], object] | None = None


class Executor(Protocol):
    def run(self, jobs: Jobs[Any], on_event: Callable[[object], None]) -> None: ...

    def stop(self) -> None:
        """Hand out no new item; running work sees `channel.stopping()`."""
