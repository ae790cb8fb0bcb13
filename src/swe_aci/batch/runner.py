"""The batch driver: schedules instances on worker threads or Ray tasks, records each result as it
arrives (the only writer of the output files), and stops cleanly on Ctrl-C or a cost limit.

On Ray each instance is one task (retried once if its worker dies), which builds or finds its own
environment. Without `--ray-address` a new local Ray instance is started (never one some other
program runs here; `RAY_ADDRESS` in the environment joins a cluster); to outgrow one machine, start
a cluster (`ray start --head` on one machine, `ray start --address=HEAD:6379` on the others) and
pass `--ray-address HEAD:6379` (or `ray://HEAD:10001` from outside the cluster). Every node needs
swe-aci and its sandbox (bwrap, or docker with swe-aci/base:bookworm), and the output directory
must be on a filesystem all nodes share: workers write the trajectories there. The local Ray
instance binds 127.0.0.1 only. A cluster on one machine can be bound so too, with
`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0` in the environment of every Ray process and of this one;
tests/test_batch_ray_cluster.py runs a batch on two such nodes and kills one mid-run.
"""

from __future__ import annotations

import logging
import os
import queue
import random
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from swe_aci.batch.evaluation import evaluate_result
from swe_aci.batch.instance import FatalBatchError, run_instance
from swe_aci.batch.outputs import EXCEPTION_ERROR, WORKER_DIED, BatchOutputs, InstanceResult
from swe_aci.episode import EpisodeConfig
from swe_aci.tasks import Task

logger = logging.getLogger("swe_aci.batch")

Executor = Literal["threads", "ray"]
POLL_SECONDS = 0.2


@dataclass
class BatchOptions:
    workers: int = 1
    executor: Executor = "threads"
    ray_address: str | None = None
    redo: bool = False
    total_cost: float = 0.0  # USD; 0 means no limit
    cache_dir: Path | None = None
    evaluation_timeout: float | None = None  # seconds of each instance's tests; None: no grading
    start_delay: float = 0.5  # seconds: the most a thread worker waits before its first instance


@dataclass
class Running:
    started: float
    steps: int = 0
    action: str = ""


@dataclass
class BatchState:
    """What the display shows; only the driver thread changes it."""

    total: int
    skipped: int
    started: float = field(default_factory=time.monotonic)
    finished: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    running: dict[str, Running] = field(default_factory=dict)
    cost: float = 0.0
    stop_reason: str | None = None
    fatal: str | None = None

    @property
    def done(self) -> int:
        return self.skipped + self.finished

    def eta(self) -> float | None:
        remaining = self.total - self.done
        if not self.finished or remaining <= 0:
            return None
        return (time.monotonic() - self.started) / self.finished * remaining


class Display(Protocol):
    def update(self, state: BatchState) -> None: ...

    def instance_finished(self, state: BatchState, result: InstanceResult) -> None: ...


class BatchRunner:
    def __init__(
        self,
        tasks: list[Task],
        config: EpisodeConfig,
        outputs: BatchOutputs,
        options: BatchOptions,
        display: Display | None = None,
    ) -> None:
        self.config = config
        self.outputs = outputs
        self.options = options
        self.display = display
        todo = [task for task in tasks if options.redo or not outputs.is_done(task.instance_id)]
        self.pending = list(reversed(todo))  # popped from the end, in order
        self.state = BatchState(total=len(tasks), skipped=len(tasks) - len(todo))
        self.state.cost = self._recorded_cost()
        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._lock = threading.Lock()
        self._stopping = False
        self._interrupts = 0
        self._on_stop: Callable[[], object] | None = None  # tells remote workers to stop

    # -- control ---------------------------------------------------------------------------

    def request_stop(self, reason: str) -> None:
        """Start no new instance; running episodes stop after their current step."""
        if self.state.stop_reason is None:
            self.state.stop_reason = reason
            logger.info("stopping: %s", reason)
        self._stopping = True
        if self._on_stop is not None:
            self._on_stop()

    def _next_task(self) -> Task | None:
        with self._lock:
            limit = self.options.total_cost
            if limit and self.state.cost >= limit and self.state.stop_reason is None:
                # running instances finish; only new ones are not started
                self.state.stop_reason = f"total cost limit ${limit:.2f} reached"
                logger.info("no new instances: %s", self.state.stop_reason)
            if self.state.stop_reason is not None or not self.pending:
                return None
            return self.pending.pop()

    def _on_sigint(self, signum: int, frame: object) -> None:
        self._interrupts += 1
        if self._interrupts > 1:
            raise KeyboardInterrupt
        self.request_stop("interrupted (Ctrl-C again to stop at once)")

    # -- the run ---------------------------------------------------------------------------

    def run(self) -> BatchState:
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            if self.options.executor == "ray":
                self._run_ray()
            else:
                self._run_threads()
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        if self.state.fatal:
            raise FatalBatchError(self.state.fatal)
        return self.state

    def _run_threads(self) -> None:
        def worker(index: int) -> None:
            if index and self.options.start_delay:
                time.sleep(random.uniform(0, self.options.start_delay))
            while (task := self._next_task()) is not None:
                self.events.put(("start", task.instance_id))
                try:
                    self.outputs.start_instance(task.instance_id)
                    result = run_instance(
                        task,
                        self.config,
                        self.outputs.directory,
                        cache_dir=self.options.cache_dir,
                        on_step=lambda *step: self.events.put(("step", step)),
                        should_stop=lambda: self._stopping,
                    )
                    if self.options.evaluation_timeout is not None:
                        result = evaluate_result(
                            task,
                            result,
                            self.config,
                            self.outputs.directory,
                            self.options.evaluation_timeout,
                            self.options.cache_dir,
                        )
                except FatalBatchError as error:
                    self.events.put(("fatal", (task.instance_id, str(error))))
                    return
                except Exception as error:
                    logger.exception("%s: worker error", task.instance_id)
                    result = InstanceResult(task.instance_id, EXCEPTION_ERROR, error=repr(error))
                self.events.put(("done", result))

        threads = [
            threading.Thread(target=worker, args=(index,), daemon=True, name=f"batch-{index}")
            for index in range(max(1, self.options.workers))
        ]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads) or not self.events.empty():
            self._drain(POLL_SECONDS)

    def _run_ray(self) -> None:
        if self.options.ray_address is None:
            bind_local_ray_to_loopback()
        import ray

        if not ray.is_initialized():
            address = self.options.ray_address
            if address is None and not os.environ.get("RAY_ADDRESS"):
                # A new instance of our own, never a cluster another program runs on this machine
                # (which Ray would otherwise join, from /tmp/ray/ray_current_cluster).
                address = "local"
            ray.init(address=address, log_to_driver=False)
        remote = ray.remote(max_retries=1, num_cpus=1)(run_on_ray_worker)
        board = ray.remote(num_cpus=0, scheduling_strategy=driver_node(ray))(StepBoard).remote()
        self._on_stop = lambda: board.request_stop.remote()
        if self._stopping:
            board.request_stop.remote()
        in_flight: dict[Any, str] = {}
        try:
            while True:
                while len(in_flight) < max(1, self.options.workers):
                    task = self._next_task()
                    if task is None:
                        break
                    ref = remote.remote(
                        task,
                        self.config,
                        self.outputs.directory,
                        self.options.cache_dir,
                        board,
                        self.options.evaluation_timeout,
                    )
                    in_flight[ref] = task.instance_id
                    self._handle("start", task.instance_id)
                if not in_flight:
                    break
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL_SECONDS)
                for ref in ready:
                    self._handle("done", self._ray_result(ray, ref, in_flight.pop(ref)))
                for instance_id, (steps, action) in ray_get(board.snapshot.remote(), {}).items():
                    self._handle("step", (instance_id, steps, action))
                self._drain(0)
                if self.state.fatal:
                    break
        finally:
            for ref in in_flight:
                ray.cancel(ref, force=True)
            ray.kill(board)

    def _ray_result(self, ray: Any, ref: Any, instance_id: str) -> InstanceResult:
        try:
            result: InstanceResult = ray.get(ref)
            return result
        except ray.exceptions.RayTaskError as error:
            cause = error.cause
            if isinstance(cause, FatalBatchError):
                self.state.fatal = f"{instance_id}: {cause}"
                self.request_stop("fatal error")
            return InstanceResult(instance_id, EXCEPTION_ERROR, error=str(cause or error)[:500])
        except ray.exceptions.RayError as error:  # the worker died, twice
            logger.error("%s: Ray task failed: %s", instance_id, error)
            return InstanceResult(instance_id, WORKER_DIED, error=str(error).splitlines()[0][:300])

    # -- events (driver thread only) -------------------------------------------------------

    def _drain(self, timeout: float) -> None:
        try:
            kind, payload = (
                self.events.get(timeout=timeout) if timeout else self.events.get_nowait()
            )
            self._handle(kind, payload)
            while True:
                self._handle(*self.events.get_nowait())
        except queue.Empty:
            pass
        if self.display is not None:
            self.display.update(self.state)

    def _handle(self, kind: str, payload: Any) -> None:
        if kind == "start":
            self.state.running[payload] = Running(time.monotonic())
            logger.info("%s: started", payload)
        elif kind == "step":
            instance_id, steps, action = payload
            if (running := self.state.running.get(instance_id)) is not None:
                running.steps, running.action = steps, action
        elif kind == "fatal":
            instance_id, message = payload
            self.state.running.pop(instance_id, None)
            self.state.fatal = message
            self.request_stop("fatal error")
        elif kind == "done":
            self._finished(payload)

    def _finished(self, result: InstanceResult) -> None:
        self.state.running.pop(result.instance_id, None)
        if result.exit_status is None:
            logger.info("%s: interrupted, will be redone", result.instance_id)
            return
        self.outputs.record(result)
        self.state.finished += 1
        self.state.counts[result.exit_status] += 1
        self.state.cost = self._recorded_cost()
        detail = f" ({result.error})" if result.error else ""
        if result.evaluation:
            detail += f", {result.evaluation}"
        logger.info(
            "%s: %s, $%.4f, %d steps, %.1f s%s",
            result.instance_id,
            result.exit_status,
            result.cost,
            result.steps,
            result.elapsed,
            detail,
        )
        if self.display is not None:
            self.display.instance_finished(self.state, result)

    def _recorded_cost(self) -> float:
        return sum(result.cost for result in self.outputs.results.values())


class StepBoard:
    """A Ray actor between the driver and the workers: each worker posts its instance's step
    (for the live display) and asks after each step whether the batch is stopping."""

    def __init__(self) -> None:
        self.steps: dict[str, tuple[int, str]] = {}
        self.stop = False

    def report(self, instance_id: str, steps: int, action: str) -> None:
        self.steps[instance_id] = (steps, action)

    def request_stop(self) -> None:
        self.stop = True

    def stopping(self) -> bool:
        return self.stop

    def snapshot(self) -> dict[str, tuple[int, str]]:
        return dict(self.steps)


def run_on_ray_worker(
    task: Task,
    config: EpisodeConfig,
    output_dir: Path,
    cache_dir: Path | None,
    board: Any,
    evaluation_timeout: float | None = None,
) -> InstanceResult:
    """A Ray task: one instance, from scratch (a retried task starts over), graded after its
    episode when `evaluation_timeout` is set."""
    from swe_aci.batch.outputs import BatchOutputs

    BatchOutputs.start_instance_in(output_dir, task.instance_id)
    result = run_instance(
        task,
        config,
        output_dir,
        cache_dir=cache_dir,
        on_step=lambda instance_id, steps, action: board.report.remote(instance_id, steps, action),
        should_stop=lambda: bool(ray_get(board.stopping.remote(), False)),
    )
    if evaluation_timeout is None:
        return result
    return evaluate_result(task, result, config, output_dir, evaluation_timeout, cache_dir)


LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray's node address is 127.0.0.1


def bind_local_ray_to_loopback() -> None:
    """The Ray instance a batch starts for itself serves this machine only: every Ray server binds
    127.0.0.1 (on Linux Ray otherwise uses the interface address). Ray reads the variable when it
    is imported, so this must run first; a user's setting, or a `RAY_ADDRESS` to join, wins."""
    if "ray" not in sys.modules and not os.environ.get("RAY_ADDRESS"):
        os.environ.setdefault(LOOPBACK_ONLY, "0")


def driver_node(ray: Any) -> Any:
    """The step board's place: the driver's node, which the batch cannot outlive anyway (on another
    node it would die with that node, and the display and the stop requests with it)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    try:
        node_id = ray.get_runtime_context().get_node_id()
    except Exception:  # a Ray client (ray://) may not know its node: Ray's default place
        return "DEFAULT"
    return NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)


def ray_get(ref: Any, default: Any, timeout: float = 10.0) -> Any:
    """A bounded wait on the step board: its answer, or `default` when it does not come."""
    import ray

    try:
        return ray.get(ref, timeout=timeout)
    except (ray.exceptions.GetTimeoutError, ray.exceptions.RayActorError):
        return default
