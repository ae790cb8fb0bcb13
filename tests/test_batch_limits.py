"""A batch within bounds, performing the attacks: a huge `--workers` starts no more threads than
there are tasks (and never more than the documented limit); a full output disk stops the batch
with one line, loses nothing, and the batch resumes; the build steps of a batch killed with -9
die with it (real `swe-aci` processes, a real tmpfs, real kills)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from batch_helpers import EDIT, SUBMIT, generated_task_file, scripted_overrides
from process_helpers import alive, wait_for

SRC = str(Path(__file__).resolve().parents[1] / "src")
SLOW_STEP = "DISCUSSION\nWait.\n```\nsleep 1\n```\n"
MEMORY_LIMIT = 3 << 30  # bytes of address space: the attack reached 23 GB resident


def batch(task_file: Path, out: Path, cache: Path, replies: list[str], *extra: str) -> list[str]:
    command = [sys.executable, "-m", "swe_aci", "batch", "--instances", str(task_file)]
    command += ["--output-dir", str(out), "--env", "local", "--cache-dir", str(cache), *extra]
    for override in scripted_overrides(replies):
        command += ["--set", override]
    return command


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1", "COLUMNS": "200"}


def bounded_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def test_a_huge_workers_value_runs_one_worker_per_task(tmp_path: Path) -> None:
    task_file = generated_task_file(tmp_path, 1)
    out = tmp_path / "out"
    command = batch(task_file, out, tmp_path / "cache", [EDIT, SUBMIT])
    result = subprocess.run(
        [*command, "--workers", "99999999999999999999"],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=bounded_memory,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    capped = [line for line in result.stdout.splitlines() if "--workers capped at" in line]
    assert len(capped) == 1 and "(8 per CPU)" in capped[0]
    assert "Traceback" not in result.stderr
    assert json.loads((out / "results.json").read_text())["demo__calc-0"]["exit_status"] == (
        "submitted"
    )


@pytest.mark.parametrize("value", ["0", "-3", "1.5", "many", ""])
def test_workers_that_are_not_a_positive_integer_are_a_usage_error(
    tmp_path: Path, value: str
) -> None:
    task_file = generated_task_file(tmp_path, 1)
    command = batch(task_file, tmp_path / "out", tmp_path / "cache", [SUBMIT])
    result = subprocess.run(
        [*command, "--workers", value], env=environment(), capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "--workers" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


@contextlib.contextmanager
def small_disk(path: Path, size: str) -> Iterator[Path]:
    path.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(directory: Path) -> Path:
    """Write to `directory` until its filesystem is full."""
    filler = directory / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC
    return filler


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
@pytest.mark.timeout(600)
def test_a_full_output_disk_stops_the_batch_with_one_line_and_resume_finishes(
    tmp_path: Path,
) -> None:
    task_file = generated_task_file(tmp_path, 4)
    cache = tmp_path / "cache"
    with small_disk(tmp_path / "disk", "8m") as disk:
        out = disk / "out"
        replies = [EDIT, SLOW_STEP, SLOW_STEP, SUBMIT]
        command = batch(task_file, out, cache, replies)
        first = subprocess.Popen(
            command, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

        def recorded() -> dict[str, dict[str, object]]:
            with contextlib.suppress(OSError, ValueError):
                return json.loads((out / "results.json").read_text())
            return {}

        try:
            assert wait_for(lambda: len(recorded()) >= 1, 240)
            filler = fill(disk)
            output, _ = first.communicate(timeout=240)
        finally:
            if first.poll() is None:
                first.kill()
                first.wait()
        before = recorded()
        assert first.returncode == 1, output
        assert "Traceback" not in output and "Logging error" not in output, output
        full = [line for line in output.splitlines() if "output disk is full" in line]
        assert len(full) == 1, output
        assert str(out) in full[0] and "MB free" in full[0]
        assert len(before) < 4  # the batch stopped: the last instances never ran
        started = [line for line in output.splitlines() if line.endswith(": started")]
        assert len(started) <= len(before) + 1, output
        filler.unlink()
        second = subprocess.run(
            command, env=environment(), capture_output=True, text=True, timeout=300
        )
        assert second.returncode == 0, second.stdout + second.stderr
        after = recorded()
        assert sorted(after) == [f"demo__calc-{number}" for number in range(4)]
        assert all(result["exit_status"] == "submitted" for result in after.values())
        for instance_id, result in before.items():  # nothing recorded was lost or redone
            assert after[instance_id] == result
        preds = json.loads((out / "preds.json").read_text())
        assert all("+    return a + b" in preds[key]["model_patch"] for key in after)


OWNER = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from swe_aci.recipes.tree import run_logged
    pidfile = sys.argv[1]
    script = f"sleep 600 & echo $! > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}; wait"
    run_logged(["bash", "-c", script], Path("."), print)
    """
)


def test_the_build_steps_of_an_owner_killed_with_9_die_with_it(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild"
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(pidfile)], env=environment(), cwd=tmp_path
    )
    try:
        assert wait_for(pidfile.exists, 60)
        grandchild = int(pidfile.read_text())
        assert alive(grandchild)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()
        # the step's own child (as pip's would be), not only the step, is gone at once (the
        # next start's sweep, here any swe-aci starting a build, would take it only later)
        assert wait_for(lambda: not alive(grandchild), 3, interval=0.05)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
        if pidfile.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_the_next_start_sweeps_the_ray_processes_of_a_dead_owner_only(tmp_path: Path) -> None:
    from swe_aci.env.cleanup import MARKER_VARIABLE
    from swe_aci.executors.owned import owner_marker, sweep_dead_owners

    dead_owner = subprocess.Popen(["true"])
    dead_owner.wait()

    def ray_process(owner: int) -> subprocess.Popen[bytes]:
        env = {**os.environ, MARKER_VARIABLE: owner_marker("ray", owner)}
        return subprocess.Popen(["bash", "-c", "sleep 60 & wait"], env=env, start_new_session=True)

    def started(process: subprocess.Popen[bytes]) -> bool:
        return MARKER_VARIABLE.encode() in Path(f"/proc/{process.pid}/environ").read_bytes()

    orphan, ours = ray_process(dead_owner.pid), ray_process(os.getpid())
    try:
        assert wait_for(lambda: started(orphan) and started(ours), 10)
        assert dead_owner.pid in sweep_dead_owners("ray")
        assert orphan.wait(timeout=10) == -signal.SIGKILL
        assert ours.poll() is None
    finally:
        for process in (orphan, ours):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_a_marked_parent_never_sees_its_child_die(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All marked processes are stopped before any is killed: a parent that would respawn its
    child, or exit on its own when the child dies, gets no chance to run, even on a machine so
    busy that each signal takes a while (as CI's is, where the parent once exited first)."""
    from swe_aci.env.cleanup import MARKER_VARIABLE, kill_marked_processes

    send = os.kill

    def slow_kill(pid: int, sig: int) -> None:
        send(pid, sig)
        time.sleep(0.02)

    monkeypatch.setattr(os, "kill", slow_kill)

    log = tmp_path / "respawned"
    env = {**os.environ, MARKER_VARIABLE: "respawn-test"}
    script = f"while :; do sleep 60; echo again >> {log}; done"
    parents = [
        subprocess.Popen(["bash", "-c", script], env=env, start_new_session=True) for _ in range(24)
    ]
    try:
        assert wait_for(lambda: all(len(children(p.pid)) == 1 for p in parents), 10)
        kill_marked_processes("respawn-test")
        assert [p.wait(timeout=10) for p in parents] == [-signal.SIGKILL] * len(parents)
        assert not log.exists()
    finally:
        for process in parents:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []
