"""A batch that crashes or collides must lose nothing: a kill -9 during an environment build
leaves no build process behind once the next run starts and the instance still runs; an instance
that ended in an infrastructure error is run again on resume; two commands on one output
directory never both run (real `swe-aci` processes)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batch_helpers import (
    EDIT,
    SUBMIT,
    generated_task_file,
    recipe_row,
    scripted_overrides,
    write_rows,
)
from process_helpers import alive, wait_for
from swe_aci.cli import app
from swe_aci.records import OutputLock

SRC = str(Path(__file__).resolve().parents[1] / "src")
SLOW_STEP = "DISCUSSION\nWait.\n```\nsleep 1\n```\n"
PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}


def batch_command(task_file: Path, out: Path, replies: list[str]) -> list[str]:
    command = [sys.executable, "-m", "swe_aci", "batch", "--instances", str(task_file)]
    command += [
        "--output-dir",
        str(out),
        "--env",
        "local",
        "--cache-dir",
        str(out.parent / "cache"),
    ]
    for override in scripted_overrides(replies):
        command += ["--set", override]
    return command


def start(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command,
        env={**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # kill -9 takes the whole process group, as a crash would
    )


def results(out: Path) -> dict[str, dict[str, object]]:
    return json.loads((out / "results.json").read_text())


def slow_install_task(tmp_path: Path) -> tuple[Path, Path]:
    """A task whose recipe install runs a setup.py that, the first time only, records its pid
    and sleeps for minutes (the flag lives outside the source, so the recipe hash is stable)."""
    flag = tmp_path / "setup-py-pid"
    project = tmp_path / "project"
    (project / "calc").mkdir(parents=True)
    (project / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    (project / "setup.py").write_text(
        "import os, time\n"
        f"flag = {str(flag)!r}\n"
        "if not os.path.exists(flag):\n"
        "    with open(flag + '.tmp', 'w') as handle:\n"
        "        handle.write(str(os.getpid()))\n"
        "    os.replace(flag + '.tmp', flag)\n"
        "    time.sleep(600)\n"
        "print('calc 0.1')\n"
    )
    row = recipe_row("demo__calc-slow", {"path": str(project)}, install=["python setup.py"])
    return write_rows(tmp_path / "tasks.jsonl", [row]), flag


@pytest.mark.slow
@pytest.mark.timeout(600)  # two batches and a build, on a shared machine
def test_kill_9_during_the_build_then_resume(tmp_path: Path) -> None:
    task_file, flag = slow_install_task(tmp_path)
    out = tmp_path / "out"
    command = batch_command(task_file, out, [EDIT, SUBMIT])
    first = start(command)
    assert wait_for(flag.exists, 120), first.communicate(timeout=10)[0]
    builder = int(flag.read_text())
    os.kill(first.pid, signal.SIGKILL)  # swe-aci alone, as the OOM killer would
    first.wait()
    # the build step dies with the batch (its watchdog) ...
    assert wait_for(lambda: not alive(builder), 10)
    attempts = list((tmp_path / "cache").glob("*/swe-aci-*-build-*"))
    assert len(attempts) == 1
    second = start(command)
    output, _ = second.communicate(timeout=300)
    # ... and the next run's sweep removes its attempt and builds afresh
    assert second.returncode == 0, output
    assert not attempts[0].exists()
    recorded = results(out)["demo__calc-slow"]
    assert recorded["exit_status"] == "submitted" and recorded["tries"] == 1, recorded
    assert "a + b" in json.loads((out / "preds.json").read_text())["demo__calc-slow"]["model_patch"]


def test_an_infrastructure_error_is_retried_on_resume_and_counted(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 2)
    rows = [json.loads(line) for line in task_file.read_text().splitlines()]
    ready = tmp_path / "ready-now"
    rows[1]["environment"]["prepare"] = [f"test -e {ready}"]  # the build fails until it exists
    write_rows(task_file, rows)
    out = tmp_path / "out"
    args = ["batch", "--instances", str(task_file), "--output-dir", str(out), "--env", "local"]
    args += ["--cache-dir", str(tmp_path / "cache")]
    for override in scripted_overrides():
        args += ["--set", override]
    result = CliRunner(env=PLAIN).invoke(app, args)
    assert result.exit_code == 0, result.output
    first = results(out)
    assert first["demo__calc-1"]["exit_status"] == "error_environment"
    assert first["demo__calc-1"]["tries"] == 1
    ready.touch()
    result = CliRunner(env=PLAIN).invoke(app, args)
    assert result.exit_code == 0, result.output
    second = results(out)
    assert second["demo__calc-1"]["exit_status"] == "submitted"
    assert second["demo__calc-1"]["tries"] == 2
    # the instance that finished for good was not run again
    assert second["demo__calc-0"] == first["demo__calc-0"]


@pytest.mark.timeout(600)  # two real batches, the first one running three instances
def test_two_batches_on_one_output_directory_run_each_instance_once(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 3)
    out = tmp_path / "out"
    command = batch_command(task_file, out, [EDIT, SLOW_STEP, SUBMIT])
    first = start(command)
    time.sleep(0.3)
    second = start(command)
    outputs = {process.pid: process.communicate(timeout=300)[0] for process in (first, second)}
    codes = {first.pid: first.returncode, second.pid: second.returncode}
    losers = [pid for pid, code in codes.items() if code != 0]
    assert len(losers) == 1, outputs
    (winner,) = set(codes) - set(losers)
    lines = [line for line in outputs[losers[0]].splitlines() if line.strip()]
    assert len(lines) == 1 and f"pid {winner}" in lines[0], lines
    assert codes[winner] == 0, outputs[winner]
    recorded = results(out)
    assert sorted(recorded) == ["demo__calc-0", "demo__calc-1", "demo__calc-2"]
    assert all(entry["tries"] == 1 for entry in recorded.values())
    log = (out / "batch.log").read_text()
    for instance_id in recorded:
        assert log.count(f"{instance_id}: started") == 1, log


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_evaluate_and_compare_refuse_a_directory_in_use(tmp_path: Path, command: str) -> None:
    task_file = generated_task_file(tmp_path, 1)
    out = tmp_path / "out"
    if command == "evaluate":
        args = ["evaluate", "gold", "--instances", str(task_file), "--env", "local"]
    else:
        args = ["compare", "--configs", "default", "--instances", str(task_file), "--env", "local"]
    with OutputLock.acquire(out, "test"):
        result = CliRunner(env=PLAIN).invoke(app, [*args, "--output-dir", str(out)])
    assert result.exit_code == 2, result.output
    assert f"another run is writing {out} (pid {os.getpid()})" in result.output
    assert list(out.iterdir()) == []  # the lock adds no file


@pytest.mark.docker
def test_layers_of_a_build_whose_owner_died_are_removed(tmp_path: Path) -> None:
    from swe_aci.env.docker.environment import connect
    from swe_aci.recipes.docker_image import OWNER_LABEL, remove_orphan_images

    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from swe_aci.env.docker.environment import connect\n"
        "from swe_aci.recipes.cache import BuildLog\n"
        "from swe_aci.recipes.docker_image import BASE_IMAGE, run_build\n"
        "from swe_aci.recipes.errors import RecipeError\n"
        "context = Path(sys.argv[1])\n"
        "lines = [f'FROM {BASE_IMAGE}', 'RUN echo layer > /layer', 'RUN exit 3']\n"
        "try:\n"
        "    run_build(connect(), context, lines, 'swe-aci/test:orphan', BuildLog(context / 'log'))\n"
        "except RecipeError:\n"
        "    pass\n"
    )
    owner = subprocess.run(
        [sys.executable, "-c", f"import os; print(os.getpid()); exec({script!r})", str(tmp_path)],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    pid = owner.stdout.split()[0]
    client = connect()
    left = client.images.list(filters={"dangling": True, "label": f"{OWNER_LABEL}={pid}"})
    assert left, "the failed build left no untagged layer to sweep"
    removed = remove_orphan_images(client)
    assert {image.id for image in left} <= set(removed)
    assert not client.images.list(filters={"dangling": True, "label": f"{OWNER_LABEL}={pid}"})


def test_the_sweep_kills_a_dead_owners_build_steps_only(tmp_path: Path) -> None:
    from swe_aci.env.cleanup import MARKER_VARIABLE
    from swe_aci.recipes.tree import build_marker, sweep_orphan_builds

    dead_owner = subprocess.Popen(["true"])
    dead_owner.wait()

    def step(owner: int) -> subprocess.Popen[bytes]:
        env = {**os.environ, MARKER_VARIABLE: build_marker(owner)}
        # the step's child, as pip's would be, carries the marker too
        return subprocess.Popen(["bash", "-c", "sleep 60 & wait"], env=env, start_new_session=True)

    def started(process: subprocess.Popen[bytes]) -> bool:  # exec'd, with its environment
        return MARKER_VARIABLE.encode() in Path(f"/proc/{process.pid}/environ").read_bytes()

    orphan, ours = step(dead_owner.pid), step(os.getpid())
    try:
        assert wait_for(lambda: started(orphan) and started(ours), 10)
        assert dead_owner.pid in sweep_orphan_builds()
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        assert ours.poll() is None
    finally:
        for process in (orphan, ours):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
