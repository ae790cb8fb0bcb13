"""The Ray executor on a real two-node cluster on this machine (two raylets, every Ray server bound
to 127.0.0.1, started by ray_two_nodes.py), driven as a user drives it: `swe-aci batch
--ray-address` in a process of its own. The batch spreads over both nodes; one node is killed
mid-run; every instance still ends exactly once, the step board (on the driver's node) survives,
and no socket of the cluster or of the batch leaves 127.0.0.1."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from batch_helpers import EDIT, SUBMIT, generated_task_file, scripted_overrides
from process_helpers import alive, wait_for

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TESTS = Path(__file__).resolve().parent
SRC = str(TESTS.parent / "src")
SLOW_STEP = "DISCUSSION\nWait.\n```\nsleep 1\n```\n"
# Ray replaces 127.0.0.1 by the interface address unless told not to (ray_two_nodes.py)
LOOPBACK_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
INSTANCES = 6


def children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rfind(")") + 2 :].split()[1])
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(*roots: int) -> set[int]:
    """`roots` and every process under them."""
    tree, found, todo = children(), set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(tree.get(pid, []))
    return found


def title(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def kill_all(pids: set[int]) -> None:
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def two_nodes() -> Iterator[dict[str, Any]]:
    """The cluster; torn down (and checked gone) even when the test fails."""
    temp_dir = tempfile.mkdtemp(prefix="ray2n", dir="/tmp")  # socket paths must stay short
    log = open(os.path.join(temp_dir, "helper.log"), "w")  # noqa: SIM115
    helper = subprocess.Popen(
        [sys.executable, str(TESTS / "ray_two_nodes.py"), temp_dir],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        env={**os.environ, **LOOPBACK_ENV},
        text=True,
        start_new_session=True,
    )
    seen: set[int] = {helper.pid}
    try:
        assert helper.stdout is not None
        ready, _, _ = select.select([helper.stdout], [], [], 240)
        line = helper.stdout.readline() if ready else ""
        seen |= descendants(helper.pid)
        assert line, (
            f"the cluster did not start: {Path(temp_dir, 'helper.log').read_text()[-3000:]}"
        )
        info: dict[str, Any] = json.loads(line)
        info["helper"] = helper.pid
        info["seen"] = seen
        yield info
    finally:
        seen |= descendants(helper.pid)
        if helper.stdin is not None:
            helper.stdin.close()  # the helper shuts the cluster down
        with contextlib.suppress(subprocess.TimeoutExpired):
            helper.wait(timeout=90)
        kill_all(seen | descendants(*seen))
        helper.wait(timeout=30)
        log.close()
        left = [f"{pid} {title(pid)[:80]}" for pid in seen if alive(pid)]
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert not left, f"Ray processes left behind: {left}"


def task_pids(raylet: int) -> list[int]:
    """The Ray workers under one raylet running an instance now."""
    return [
        pid
        for pid in descendants(raylet) - {raylet}
        if title(pid).startswith("ray::run_on_ray_worker")
    ]


def sockets(pids: set[int]) -> list[tuple[str, str, str]]:
    """(state, local, peer) of every TCP and UDP socket of `pids`, as `ss` reports them."""
    found = []
    output = subprocess.run(
        ["ss", "-tuanpH"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    for row in output.splitlines():
        owners = {int(pid) for pid in re.findall(r"pid=(\d+)", row)}
        if owners & pids:
            _, state, _, _, local, peer, *_ = row.split()
            found.append((state, local, peer))
    return found


def off_loopback(table: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The sockets listening on, or connected from or to, anything but 127.0.0.1."""
    return [
        (state, local, peer)
        for state, local, peer in table
        if not on_loopback(local) or (state not in ("LISTEN", "UNCONN") and not on_loopback(peer))
    ]


def on_loopback(address: str) -> bool:
    return address.rsplit(":", 1)[0].strip("[]") in ("127.0.0.1", "::ffff:127.0.0.1")


def batch_command(task_file: Path, out: Path, *options: str) -> list[str]:
    command = [sys.executable, "-m", "swe_aci", "batch", "--instances", str(task_file)]
    command += ["--executor", "ray", "--workers", "2", *options]
    command += ["--output-dir", str(out), "--env", "local", "--cache-dir", str(out.parent / "c")]
    for override in scripted_overrides([EDIT, *[SLOW_STEP] * 4, SUBMIT]):
        command += ["--set", override]
    return command


def test_the_local_ray_of_a_batch_binds_loopback_only(
    two_nodes: dict[str, Any], tmp_path: Path
) -> None:
    """Without --ray-address the batch starts Ray itself, bound to 127.0.0.1 (on Linux Ray would
    take the interface address; the variable is not set for it here), and never joins the other
    cluster running on this machine (the two nodes), which a plain `ray.init()` would."""
    other_raylets = [
        next(pid for pid in node["pids"] if "raylet" in title(pid))
        for node in two_nodes["nodes"].values()
    ]
    task_file = generated_task_file(tmp_path, 2)
    env = {**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"}
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
    env.pop("RAY_ADDRESS", None)
    batch = subprocess.Popen(
        batch_command(task_file, tmp_path / "out"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen = {batch.pid}
    try:
        running = wait_for(lambda: task_pids(batch.pid), 240)
        seen |= descendants(batch.pid)
        assert running, "no instance ever ran"
        assert not [pid for raylet in other_raylets for pid in task_pids(raylet)]
        table = sockets(seen)
        assert any(state == "LISTEN" for state, _, _ in table)
        assert not off_loopback(table), f"sockets off 127.0.0.1: {off_loopback(table)}"
        output, _ = batch.communicate(timeout=300)
    finally:
        seen |= descendants(*seen)
        if batch.poll() is None:
            kill_all(seen)
            batch.wait(timeout=30)
    assert batch.returncode == 0, output[-3000:]
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert {result["exit_status"] for result in results.values()} == {"submitted"}
    assert wait_for(lambda: not [pid for pid in seen if alive(pid)], 60), "Ray left processes"


def test_a_batch_over_two_nodes_survives_losing_one(
    two_nodes: dict[str, Any], tmp_path: Path
) -> None:
    nodes = two_nodes["nodes"]
    assert {node["ip"] for node in nodes.values()} == {"127.0.0.1"}
    assert two_nodes["address"].startswith("127.0.0.1:")
    raylet_b = nodes["node_b"]["pids"][0]  # node_b's only process of its own: its raylet
    assert "raylet" in title(raylet_b)
    raylet_a = next(pid for pid in nodes["node_a"]["pids"] if "raylet/raylet" in title(pid))

    task_file = generated_task_file(tmp_path, INSTANCES)
    out = tmp_path / "out"
    batch = subprocess.Popen(
        batch_command(task_file, out, "--ray-address", two_nodes["address"]),
        env={**os.environ, **LOOPBACK_ENV, "PYTHONPATH": SRC, "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        # both nodes run an instance at once (one CPU each, one CPU a task)
        on_both = wait_for(lambda: task_pids(raylet_a) and task_pids(raylet_b), 240)
        assert on_both, "the batch never ran on both nodes"

        def find_boards() -> dict[str, list[int]]:
            return {
                name: [p for p in descendants(raylet) if title(p).startswith("ray::StepBoard")]
                for name, raylet in (("node_a", raylet_a), ("node_b", raylet_b))
            }

        # the board's worker takes its title once the actor is up, which may come after the tasks
        wait_for(lambda: any(find_boards().values()), 60)
        boards = find_boards()
        assert len(boards["node_a"]) == 1 and not boards["node_b"], boards  # the driver's node
        everything = descendants(two_nodes["helper"], batch.pid)
        two_nodes["seen"].update(everything)
        table = sockets(everything)
        assert any(state == "LISTEN" for state, _, _ in table)
        print(f"{len(table)} TCP sockets of the cluster and the batch:", *sorted(set(table)))
        assert not off_loopback(table), f"sockets off 127.0.0.1: {off_loopback(table)}"

        # node_b dies: its raylet and every process on it, at once
        node_b = descendants(raylet_b)
        two_nodes["seen"].update(node_b)
        kill_all(node_b)
        assert alive(boards["node_a"][0])
        output, _ = batch.communicate(timeout=400)
    finally:
        if batch.poll() is None:
            kill_all(descendants(batch.pid))
            batch.wait(timeout=30)
    assert batch.returncode == 0, output[-3000:]

    results = json.loads((out / "results.json").read_text())
    preds = json.loads((out / "preds.json").read_text())
    ids = {f"demo__calc-{number}" for number in range(INSTANCES)}
    assert set(results) == ids and set(preds) == ids
    for instance_id, result in results.items():
        assert result["exit_status"] == "submitted", result
        assert result["tries"] == 1  # the task Ray retried is one try: recorded once
        assert "+    return a + b" in preds[instance_id]["model_patch"]
        trajectories = list((out / instance_id).glob("*.traj"))
        assert len(trajectories) == 1
        trajectory = json.loads(trajectories[0].read_text())
        assert trajectory["info"]["exit_status"] == "submitted"
    log = (out / "batch.log").read_text()
    for instance_id in ids:
        assert len(re.findall(rf"{instance_id}: submitted", log)) == 1, log
