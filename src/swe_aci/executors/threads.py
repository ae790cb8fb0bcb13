"""The thread executor: `workers` threads pull items and post events into one queue, which the
calling thread drains. Used by the batch runner, the evaluation of many predictions and the
building of many recipes."""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from swe_aci.executors.base import Jobs, bounded_workers

POLL_SECONDS = 0.2


class ThreadExecutor:
    """`on_idle` is called on the calling thread after each batch of events (and at least every
    `poll` seconds): a display's refresh. `start_delay` spreads the first items of the workers
    (the most one waits, in seconds). With `finish_running`, an interrupt of the calling thread
    waits for the running items (nothing new starts) before it propagates; otherwise the worker
    threads (daemons) are left to die with the process."""

    def __init__(
        self,
        workers: int,
        *,
        start_delay: float = 0.0,
        poll: float = POLL_SECONDS,
        on_idle: Callable[[], None] | None = None,
        finish_running: bool = True,
    ) -> None:
        self.workers = workers
        self.start_delay = start_delay
        self.poll = poll
        self.on_idle = on_idle
        self.finish_running = finish_running
        self._stopping = False
        self._lock = threading.Lock()

    def stop(self) -> None:
        self._stopping = True

    def stopping(self) -> bool:
        return self._stopping

    def run(self, jobs: Jobs[Any], on_event: Callable[[object], None]) -> None:
        events: queue.Queue[object] = queue.Queue()
        errors: list[BaseException] = []
        channel = _QueueChannel(events, self)

        def next_item() -> Any:
            with self._lock:
                return None if self._stopping or errors else jobs.next()

        def worker(index: int) -> None:
            if index and self.start_delay:
                time.sleep(random.uniform(0, self.start_delay))
            while (item := next_item()) is not None:
                try:
                    events.put(jobs.work(item, channel))
                except Exception as error:
                    if jobs.failed is None:
                        errors.append(error)
                        return
                    events.put(jobs.failed(item, error))

        threads = [
            threading.Thread(target=worker, args=(index,), daemon=True, name=f"worker-{index}")
            for index in range(bounded_workers(self.workers, jobs.size))
        ]
        for thread in threads:
            thread.start()
        try:
            while any(thread.is_alive() for thread in threads) or not events.empty():
                self._drain(events, on_event)
        except BaseException:
            if self.finish_running:
                self.stop()
                for thread in threads:
                    thread.join()
            raise
        if errors:
            raise errors[0]

    def _drain(self, events: queue.Queue[object], on_event: Callable[[object], None]) -> None:
        try:
            on_event(events.get(timeout=self.poll))
            while True:
                on_event(events.get_nowait())
        except queue.Empty:
            pass
        if self.on_idle is not None:
            self.on_idle()


class _QueueChannel:
    def __init__(self, events: queue.Queue[object], executor: ThreadExecutor) -> None:
        self.events = events
        self.executor = executor

    def post(self, event: object) -> None:
        self.events.put(event)

    def stopping(self) -> bool:
        return self.executor.stopping()

    def request_stop(self) -> None:
        self.executor.stop()
