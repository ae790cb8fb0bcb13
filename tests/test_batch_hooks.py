"""The executors and the hooks after an instance: the thread executor bounds its threads by the
items and delivers every event on the calling thread; a hook given to the batch runner hears each
finished instance on its worker, and the display hears the same event once it is recorded."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from batch_helpers import EDIT, SUBMIT, generated_task_file, scripted_overrides
from swe_aci.batch.outputs import BatchOutputs
from swe_aci.batch.runner import BatchOptions, BatchRunner, BatchState
from swe_aci.episode import load_config
from swe_aci.executors.base import Channel, Jobs, bounded_workers, worker_limit
from swe_aci.executors.threads import ThreadExecutor
from swe_aci.hooks.base import InstanceCompleted
from swe_aci.tasks import load_tasks
from swe_aci.trajectory.instance import InstanceResult


def test_workers_are_bounded_by_the_items_and_the_limit() -> None:
    assert bounded_workers(99999999999999999999, 1) == 1
    assert bounded_workers(99999999999999999999, 10**9) == worker_limit()
    assert bounded_workers(3, 0) == 1


def test_the_thread_executor_starts_no_more_threads_than_items_and_delivers_on_its_caller() -> None:
    items = list(range(5))
    threads: set[str] = set()
    delivered: list[tuple[object, str]] = []

    def work(item: int, channel: Channel) -> object:
        threads.add(threading.current_thread().name)
        channel.post(("step", item))
        return ("done", item)

    before = set(threading.enumerate())
    jobs = Jobs(lambda: items.pop() if items else None, len(items), work)
    ThreadExecutor(10**6).run(
        jobs, lambda event: delivered.append((event, threading.current_thread().name))
    )
    # no thread of the executor outlives its run (threads of earlier tests may end meanwhile)
    assert len(threads) <= 5 and not set(threading.enumerate()) - before
    assert {thread for _, thread in delivered} == {threading.main_thread().name}
    events = [event for event, _ in delivered]
    for item in range(5):  # each worker's events in the order it posted them
        assert events.index(("step", item)) < events.index(("done", item))


def test_the_first_error_of_a_work_is_raised_once_the_running_items_end() -> None:
    items = list(range(20))
    finished: list[int] = []

    def work(item: int, channel: Channel) -> object:
        if item == 19:
            raise ValueError("bad item")
        finished.append(item)
        return item

    jobs = Jobs(lambda: items.pop() if items else None, len(items), work)
    with pytest.raises(ValueError, match="bad item"):
        ThreadExecutor(1).run(jobs, lambda event: None)
    assert finished == [] and len(items) == 19  # nothing new started after the error


class Recorder:
    def __init__(self) -> None:
        self.heard: list[tuple[str, str, bool]] = []

    def on_instance_completed(self, completed: InstanceCompleted[InstanceResult]) -> None:
        on_worker = threading.current_thread() is not threading.main_thread()
        self.heard.append((completed.instance_id, completed.record.exit_status or "", on_worker))


class RecordingDisplay(Recorder):
    def update(self, state: BatchState) -> None:
        pass


def test_hooks_hear_each_instance_on_its_worker_and_the_display_on_the_driver(
    tmp_path: Path,
) -> None:
    task_file = generated_task_file(tmp_path, 3)
    config = load_config(None, [*scripted_overrides([EDIT, SUBMIT]), "env.backend=local"])
    hook, display = Recorder(), RecordingDisplay()
    runner = BatchRunner(
        load_tasks(task_file).tasks,
        config,
        BatchOutputs(tmp_path / "out"),
        BatchOptions(workers=2, cache_dir=tmp_path / "cache", start_delay=0),
        display=display,
        hooks=[hook],
    )
    assert runner.workers == 2
    runner.run()
    expected = {(f"demo__calc-{number}", "submitted") for number in range(3)}
    assert {(name, status) for name, status, _ in hook.heard} == expected
    assert all(on_worker for *_, on_worker in hook.heard)
    assert {(name, status) for name, status, _ in display.heard} == expected
    assert not any(on_worker for *_, on_worker in display.heard)
