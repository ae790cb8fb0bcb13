"""The batch driver: hands the instances to an executor (threads or Ray, `swe_aci.executors`),
records each result as it arrives (the only writer of the output files), and stops cleanly on
Ctrl-C, a cost limit, a fatal error or a full output disk.

Each instance runs as `InstanceWork` on a worker: it starts the instance, runs its episode,
tells its hooks (grading), and returns `InstanceDone`; the driver records it and tells its
listeners (the display). On Ray each instance is one task, retried once if its worker dies; the
output directory must then be on a filesystem all nodes share (see executors/ray.py).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import signal
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from swe_aci.batch.events import InstanceDone, InstanceFatal, InstanceStarted, StepDone
from swe_aci.batch.hooks import completed_instance
from swe_aci.batch.instance import FatalBatchError, run_instance
from swe_aci.batch.outputs import EXCEPTION_ERROR, WORKER_DIED, BatchOutputs
from swe_aci.episode import EpisodeConfig
from swe_aci.executors.base import Channel, Executor, Jobs, WorkerLost, bounded_workers
from swe_aci.hooks.base import RunHook, notify
from swe_aci.tasks import Task
from swe_aci.trajectory.instance import InstanceResult

if TYPE_CHECKING:
    from swe_aci.evaluate.options import GradingOptions

logger = logging.getLogger("swe_aci.batch")

ExecutorName = Literal["threads", "ray"]


@dataclass
class BatchOptions:
    workers: int = 1
    executor: ExecutorName = "threads"
    ray_address: str | None = None
    redo: bool = False
    total_cost: float = 0.0  # USD; 0 means no limit
    cache_dir: Path | None = None
    evaluation: GradingOptions | None = None  # how each instance is graded on its worker; None: not
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


class Display(RunHook[InstanceResult], Protocol):
    """A listener on the driver: `update` with the state (before the first event and after
    each batch of events), `on_instance_completed` as each result is recorded."""

    def update(self, state: BatchState) -> None: ...


@dataclass
class InstanceWork:
    """One instance on a worker (a thread, or a Ray worker process: pickled with its hooks)."""

    config: EpisodeConfig
    output_dir: Path
    cache_dir: Path | None
    hooks: list[RunHook[InstanceResult]]

    def __call__(self, task: Task, channel: Channel) -> InstanceDone | InstanceFatal:
        instance_id = task.instance_id
        channel.post(InstanceStarted(instance_id))
        try:
            BatchOutputs.start_instance_in(self.output_dir, instance_id)
            result = run_instance(
                task,
                self.config,
                self.output_dir,
                cache_dir=self.cache_dir,
                on_step=lambda *step: channel.post(StepDone(*step)),
                should_stop=channel.stopping,
            )
        except FatalBatchError as error:
            return InstanceFatal(instance_id, str(error))
        if (problem := output_problem(self.output_dir)) is not None:
            channel.request_stop()  # this worker starts nothing new before the driver hears it
            return InstanceFatal(instance_id, problem)
        if result.exit_status is None:
            return InstanceDone(result)
        completed = completed_instance(result, self.output_dir, task)
        notify(self.hooks, completed)
        return InstanceDone(completed.record)


def lost_instance(task: Task, error: BaseException) -> InstanceDone | InstanceFatal:
    """The last event of an instance whose work raised, or whose worker died."""
    if isinstance(error, FatalBatchError):
        return InstanceFatal(task.instance_id, f"{task.instance_id}: {error}")
    if isinstance(error, WorkerLost):
        logger.error("%s: worker lost: %s", task.instance_id, error)
        return InstanceDone(InstanceResult(task.instance_id, WORKER_DIED, error=str(error)))
    logger.error("%s: worker error: %r", task.instance_id, error, exc_info=error)
    return InstanceDone(InstanceResult(task.instance_id, EXCEPTION_ERROR, error=repr(error)[:500]))


PROBE_BYTES = 1 << 20  # an output disk with less room than this is full


def output_problem(directory: Path, error: OSError | None = None) -> str | None:
    """Why results cannot be written to `directory` (one line: a full disk names the path and
    its free space), from `error` or from writing a probe of PROBE_BYTES; None when they can."""
    if error is None:
        probe = directory / f".space-probe-{os.getpid()}-{threading.get_ident()}"
        try:
            with open(probe, "wb") as handle:
                handle.write(bytes(PROBE_BYTES))
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as caught:
            error = caught
        finally:
            with contextlib.suppress(OSError):
                probe.unlink()
        if error is None:
            return None
    if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        try:
            free = f"{shutil.disk_usage(directory).free / 1e6:.1f} MB free"
        except OSError:
            free = "free space unknown"
        return (
            f"the output disk is full: cannot write to {directory} ({free}); "
            "free space and run again to resume"
        )
    return f"cannot write to {directory}: {error.strerror or error}"


class BatchRunner:
    def __init__(
        self,
        tasks: list[Task],
        config: EpisodeConfig,
        outputs: BatchOutputs,
        options: BatchOptions,
        display: Display | None = None,
        hooks: list[RunHook[InstanceResult]] | None = None,
    ) -> None:
        """`hooks` run on the worker after each finished instance (grading); with
        `options.evaluation` the grading hook is the first of them."""
        from swe_aci.batch.hooks import GradeInstance

        self.config = config
        self.outputs = outputs
        self.options = options
        self.display = display
        self.hooks = list(hooks or [])
        if options.evaluation is not None:
            self.hooks.insert(0, GradeInstance(config, outputs.directory, options.evaluation))
        todo = [task for task in tasks if options.redo or not outputs.is_done(task.instance_id)]
        self.pending = list(reversed(todo))  # popped from the end, in order
        self.state = BatchState(total=len(tasks), skipped=len(tasks) - len(todo))
        self.state.cost = self._recorded_cost()
        self.workers = bounded_workers(options.workers, len(todo))
        self.executor = self._executor()
        self._lock = threading.Lock()
        self._interrupts = 0
        self._ended: set[str] = set()

    def _executor(self) -> Executor:
        if self.options.executor == "ray":
            from swe_aci.executors.ray import RayExecutor

            return RayExecutor(
                self.workers, address=self.options.ray_address, on_idle=self._refresh
            )
        from swe_aci.executors.threads import ThreadExecutor

        return ThreadExecutor(
            self.workers,
            start_delay=self.options.start_delay,
            on_idle=self._refresh,
            finish_running=False,  # a second Ctrl-C stops at once
        )

    # -- control ---------------------------------------------------------------------------

    def request_stop(self, reason: str) -> None:
        """Start no new instance; running episodes stop after their current step."""
        if self.state.stop_reason is None:
            self.state.stop_reason = reason
            logger.info("stopping: %s", reason)
        self.executor.stop()

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
        work = InstanceWork(self.config, self.outputs.directory, self.options.cache_dir, self.hooks)
        jobs = Jobs(self._next_task, len(self.pending), work, lost_instance)
        self._refresh()
        try:
            self.executor.run(jobs, self._handle)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        if self.state.fatal:
            raise FatalBatchError(self.state.fatal)
        return self.state

    # -- events (driver thread only) -------------------------------------------------------

    def _refresh(self) -> None:
        if self.display is not None:
            self.display.update(self.state)

    def _handle(self, event: object) -> None:
        match event:
            case InstanceStarted(instance_id):
                if instance_id in self._ended:
                    return  # on Ray the start may arrive after the end (the board lags)
                self.state.running[instance_id] = Running(time.monotonic())
                logger.info("%s: started", instance_id)
            case StepDone(instance_id, steps, action):
                if (running := self.state.running.get(instance_id)) is not None:
                    running.steps, running.action = steps, action
            case InstanceFatal(instance_id, message):
                self.state.running.pop(instance_id, None)
                self._ended.add(instance_id)
                if self.state.fatal is None:
                    self.state.fatal = message
                self.request_stop("fatal error")
            case InstanceDone(result):
                self._finished(result)

    def _finished(self, result: InstanceResult) -> None:
        self.state.running.pop(result.instance_id, None)
        self._ended.add(result.instance_id)
        if result.exit_status is None:
            logger.info("%s: interrupted, will be redone", result.instance_id)
            return
        try:
            self.outputs.record(result)
        except OSError as error:
            self._output_failed(result, error)
            return
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
            completed = completed_instance(result, self.outputs.directory)
            self.display.on_instance_completed(completed)

    def _output_failed(self, result: InstanceResult, error: OSError) -> None:
        """A result that cannot be written (a full disk): the batch stops; the result is not
        recorded (the files on disk are as before: atomic writes), so a resume redoes it."""
        message = output_problem(self.outputs.directory, error)
        logger.error("%s: not recorded: %s", result.instance_id, message)
        if self.state.fatal is None:
            self.state.fatal = message
        self.request_stop("output directory not writable")

    def _recorded_cost(self) -> float:
        return sum(result.cost for result in self.outputs.results.values())
