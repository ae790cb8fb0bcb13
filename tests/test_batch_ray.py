"""The Ray executor on a local Ray cluster (`ray.init(num_cpus=2)`, bound to 127.0.0.1): results
arrive at the driver, which writes them; a task whose worker dies is retried once, then recorded as
an error."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from batch_helpers import EDIT, SUBMIT, generated_task_file, scripted_overrides
from swe_aci.batch.outputs import WORKER_DIED, BatchOutputs
from swe_aci.batch.runner import BatchOptions, BatchRunner
from swe_aci.episode import load_config
from swe_aci.evaluate.options import GradingOptions
from swe_aci.tasks import load_tasks

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # starting a Ray cluster alone takes several seconds here

SLOW_STEP = "DISCUSSION\nWait.\n```\nsleep 1\n```\n"
KILL_WORKER = "DISCUSSION\nOops.\n```\nkill -9 $PPID\n```\n"


@pytest.fixture(scope="module")
def local_cluster() -> Iterator[None]:
    context = ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    # bound to 127.0.0.1 only (tests/conftest.py), never the machine's interface address
    assert context.address_info["node_ip_address"] == "127.0.0.1"
    assert context.address_info["gcs_address"].startswith("127.0.0.1:")
    assert {node["NodeManagerAddress"] for node in ray.nodes()} == {"127.0.0.1"}
    yield
    ray.shutdown()


def run_on_ray(tmp_path: Path, task_file: Path, replies: list[str]) -> tuple[BatchRunner, Path]:
    config = load_config(None, [*scripted_overrides(replies), "env.backend=local"])
    out = tmp_path / "out"
    runner = BatchRunner(
        load_tasks(task_file).tasks,
        config,
        BatchOutputs(out),
        BatchOptions(workers=2, executor="ray", cache_dir=tmp_path / "cache"),
    )
    runner.run()
    return runner, out


def test_twelve_instances_on_ray(local_cluster: None, tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 12)
    runner, out = run_on_ray(tmp_path, task_file, [EDIT, SUBMIT])
    preds = json.loads((out / "preds.json").read_text())
    assert len(preds) == 12 and runner.state.counts == {"submitted": 12}
    for instance_id, prediction in preds.items():
        assert "+    return a + b" in prediction["model_patch"]
        assert (out / instance_id / f"{instance_id}.traj").is_file()


def test_the_report_of_a_ray_worker_comes_back_with_its_result(
    local_cluster: None, tmp_path: Path
) -> None:
    """--evaluate on Ray: the worker's whole report is pickled back with the result, for the
    final grading to take as it is."""
    test_cmd = f"{sys.executable} -m pytest -rA -p no:cacheprovider"
    task_file = generated_task_file(tmp_path, 1, test_cmd=test_cmd)
    config = load_config(None, [*scripted_overrides([EDIT, SUBMIT]), "env.backend=local"])
    cache = tmp_path / "cache"
    options = BatchOptions(
        workers=1,
        executor="ray",
        cache_dir=cache,
        evaluation=GradingOptions(120, cache_dir=cache),
    )
    runner = BatchRunner(
        load_tasks(task_file).tasks, config, BatchOutputs(tmp_path / "out"), options
    )
    runner.run()
    result = runner.outputs.results["demo__calc-0"]
    assert result.evaluation == "resolved"
    assert result.report is not None and result.report.outcome == "resolved"
    assert result.report.tests_status is not None and result.report.tests_status.resolved


def test_a_task_whose_worker_dies_is_retried_once_then_an_error(
    local_cluster: None, tmp_path: Path
) -> None:
    task_file = generated_task_file(tmp_path, 1)
    runner, out = run_on_ray(tmp_path, task_file, [KILL_WORKER, SUBMIT])
    recorded = json.loads((out / "results.json").read_text())
    assert recorded["demo__calc-0"]["exit_status"] == WORKER_DIED
    assert runner.state.counts == {WORKER_DIED: 1}


def test_stop_on_ray_ends_running_episodes_after_their_step(
    local_cluster: None, tmp_path: Path
) -> None:
    task_file = generated_task_file(tmp_path, 4)
    config = load_config(
        None, [*scripted_overrides([EDIT, *[SLOW_STEP] * 20, SUBMIT]), "env.backend=local"]
    )
    out = tmp_path / "out"
    runner = BatchRunner(
        load_tasks(task_file).tasks,
        config,
        BatchOutputs(out),
        BatchOptions(workers=2, executor="ray", cache_dir=tmp_path / "cache"),
    )

    def stop_once_stepping() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(running.steps >= 2 for running in list(runner.state.running.values())):
                break
            time.sleep(0.1)
        runner.request_stop("interrupted")

    stopper = threading.Thread(target=stop_once_stepping)
    stopper.start()
    started = time.monotonic()
    state = runner.run()
    stopper.join()
    assert time.monotonic() - started < 20  # 20 one-second steps were left: they did not run
    assert state.finished == 0 and state.stop_reason == "interrupted"
    trajectories = list(out.glob("demo__calc-*/*.traj"))
    assert len(trajectories) == 2
    for path in trajectories:
        trajectory = json.loads(path.read_text())
        assert trajectory["info"]["exit_status"] is None and len(trajectory["trajectory"]) >= 2


def descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[stat.rfind(")") + 2 :].split()[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.timeout(300)
def test_the_ray_processes_of_a_batch_killed_with_9_die_with_it(tmp_path: Path) -> None:
    """Not the module's cluster: the batch starts its own local Ray instance, is killed with -9
    while a worker runs its instance, and every process of that instance goes (about 185 MB a
    kill were left before)."""
    import os
    import signal
    import subprocess

    from process_helpers import alive, wait_for

    task_file = generated_task_file(tmp_path, 1)
    command = [sys.executable, "-m", "swe_aci", "batch", "--instances", str(task_file)]
    command += ["--output-dir", str(tmp_path / "out"), "--executor", "ray", "--env", "local"]
    command += ["--cache-dir", str(tmp_path / "cache")]
    for override in scripted_overrides([EDIT, *[SLOW_STEP] * 60, SUBMIT]):
        command += ["--set", override]
    src = str(Path(__file__).resolve().parents[1] / "src")
    environment = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    driver = subprocess.Popen(
        command,
        env={**environment, "PYTHONPATH": src, "NO_COLOR": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:

        def worker_running() -> bool:
            return any(
                command_line(pid).startswith("ray::run_on_ray_worker")
                for pid in descendants(driver.pid)
            )

        assert wait_for(worker_running, 180, interval=0.5)
        ray_processes = descendants(driver.pid)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        gone = wait_for(lambda: not any(alive(pid) for pid in ray_processes), 30)
        left = [f"{pid} {command_line(pid)[:80]}" for pid in ray_processes if alive(pid)]
        assert gone, left
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for pid in descendants(driver.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
