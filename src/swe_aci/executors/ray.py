"""The Ray executor: each item one Ray task (retried once if its worker dies), its events posted
to a board actor on the driver's node that the driver reads every poll.

Without an address a new local Ray instance is started (never one some other program runs here;
`RAY_ADDRESS` in the environment joins a cluster); to outgrow one machine, start a cluster
(`ray start --head` on one machine, `ray start --address=HEAD:6379` on the others) and pass its
address (`HEAD:6379`, or `ray://HEAD:10001` from outside the cluster). The local Ray instance binds
127.0.0.1 only, and its processes die with the process that started it (`owned.py`). A cluster on
one machine can be bound so too, with `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` in the environment of
every Ray process and of this one; tests/test_batch_ray_cluster.py runs a batch on two such nodes
and kills one mid-run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from swe_aci.executors.base import Jobs, WorkerLost, bounded_workers
from swe_aci.executors.owned import owned_environment, track_descendants

POLL_SECONDS = 0.2
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray's node address is 127.0.0.1


class RayExecutor:
    """`on_idle` is called after each poll (a display's refresh)."""

    def __init__(
        self,
        workers: int,
        *,
        address: str | None = None,
        poll: float = POLL_SECONDS,
        on_idle: Callable[[], None] | None = None,
    ) -> None:
        self.workers = workers
        self.address = address
        self.poll = poll
        self.on_idle = on_idle
        self._stopping = False
        self._board: Any = None

    def stop(self) -> None:
        self._stopping = True
        if self._board is not None:
            self._board.request_stop.remote()

    def run(self, jobs: Jobs[Any], on_event: Callable[[object], None]) -> None:
        ray = start_ray(self.address)
        remote = ray.remote(max_retries=1, num_cpus=1)(run_on_ray_worker)
        board = ray.remote(num_cpus=0, scheduling_strategy=driver_node(ray))(StepBoard).remote()
        self._board = board
        if self._stopping:
            board.request_stop.remote()
        workers = bounded_workers(self.workers, jobs.size)
        in_flight: dict[Any, Any] = {}
        try:
            while True:
                while len(in_flight) < workers and not self._stopping:
                    item = jobs.next()
                    if item is None:
                        break
                    in_flight[remote.remote(jobs.work, item, board)] = item
                if not in_flight:
                    break
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=self.poll)
                for event in ray_get(board.drain.remote(), []):
                    on_event(event)
                for ref in ready:
                    on_event(self._last_event(ray, ref, in_flight.pop(ref), jobs))
                if self.on_idle is not None:
                    self.on_idle()
        finally:
            self._board = None
            for ref in in_flight:
                ray.cancel(ref, force=True)
            ray.kill(board)

    @staticmethod
    def _last_event(ray: Any, ref: Any, item: Any, jobs: Jobs[Any]) -> object:
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as error:
            cause = error.cause if isinstance(error.cause, Exception) else error
            if jobs.failed is None:
                raise cause from None
            return jobs.failed(item, cause)
        except ray.exceptions.RayError as error:  # the worker died, twice
            lost = WorkerLost(str(error).splitlines()[0][:300])
            if jobs.failed is None:
                raise lost from None
            return jobs.failed(item, lost)


class StepBoard:
    """A Ray actor between the driver and the workers: the events the workers post, until the
    driver takes them, and whether the run is stopping."""

    def __init__(self) -> None:
        self.events: list[object] = []
        self.stop = False

    def post(self, event: object) -> None:
        self.events.append(event)

    def drain(self) -> list[object]:
        events, self.events = self.events, []
        return events

    def request_stop(self) -> None:
        self.stop = True

    def stopping(self) -> bool:
        return self.stop


class BoardChannel:
    """A Ray worker's channel: posts go to the board (not waited for); `stopping` asks it."""

    def __init__(self, board: Any) -> None:
        self.board = board

    def post(self, event: object) -> None:
        self.board.post.remote(event)

    def stopping(self) -> bool:
        return bool(ray_get(self.board.stopping.remote(), False))

    def request_stop(self) -> None:
        self.board.request_stop.remote()


def run_on_ray_worker(work: Callable[[Any, Any], object], item: Any, board: Any) -> object:
    """A Ray task: one item, from scratch (a retried task starts over)."""
    return work(item, BoardChannel(board))


def start_ray(address: str | None) -> Any:
    """Ray, connected: to `address`, to `RAY_ADDRESS`, or to a new local instance of our own
    (never a cluster another program runs on this machine, which Ray would otherwise join from
    /tmp/ray/ray_current_cluster), bound to the loopback and owned by this process."""
    if address is None:
        bind_local_ray_to_loopback()
    import ray

    if ray.is_initialized():
        return ray
    if address is None and not os.environ.get("RAY_ADDRESS"):
        with owned_environment("ray"):
            track_descendants()  # the agents the raylet starts (about 185 MB)
            ray.init(address="local", log_to_driver=False)
    else:
        ray.init(address=address, log_to_driver=False)
    return ray


def bind_local_ray_to_loopback() -> None:
    """The Ray instance a run starts for itself serves this machine only: every Ray server binds
    127.0.0.1 (on Linux Ray otherwise uses the interface address). Ray reads the variable when it
    is imported, so this must run first; a user's setting, or a `RAY_ADDRESS` to join, wins."""
    if "ray" not in sys.modules and not os.environ.get("RAY_ADDRESS"):
        os.environ.setdefault(LOOPBACK_ONLY, "0")


def driver_node(ray: Any) -> Any:
    """The board's place: the driver's node, which the run cannot outlive anyway (on another
    node it would die with that node, and the display and the stop requests with it)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    try:
        node_id = ray.get_runtime_context().get_node_id()
    except Exception:  # a Ray client (ray://) may not know its node: Ray's default place
        return "DEFAULT"
    return NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)


def ray_get(ref: Any, default: Any, timeout: float = 10.0) -> Any:
    """A bounded wait on the board: its answer, or `default` when it does not come."""
    import ray

    try:
        return ray.get(ref, timeout=timeout)
    except (ray.exceptions.GetTimeoutError, ray.exceptions.RayActorError):
        return default
