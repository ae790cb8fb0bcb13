"""A bwrap sandbox bounded as a whole by a cgroup of its own (env/bwrap/cgroups.py), tested by the attack
itself through the real backend: many processes each under the per-process memory rlimit but
together over the sandbox's memory, forks past pids.max, an agent trying to leave its cgroup or
raise its limits (as root and as an ordinary user given a delegated cgroup), the cgroup gone at
close, a dead owner's cgroup swept at the next start.

These run only where the host gives our process a writable cgroup hierarchy with memory and pids
(cgroup v1 as root here; a delegated v2 subtree elsewhere); elsewhere the sandbox keeps its
rlimits only and the tests are skipped with the reason. Only what the kernel of the machine
running them offers is exercised: v1 here, v2 nowhere yet.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from env_helpers import skip_unavailable
from swe_aci.env import EnvConfig, Workspace, make_environment
from swe_aci.env.bwrap.cgroupfs import Hierarchy, kill_and_remove, members
from swe_aci.env.bwrap.cgroups import cgroup_name, find_hierarchy, sweep_stale
from swe_aci.env.bwrap.environment import BwrapEnvironment, mount_table, sandbox_argv
from swe_aci.env.cleanup import owner_dead
from test_sandbox_privileges import FORK_PROBE
from unprivileged import give_to_test_user, run_probe, shared_dir, unprivileged_user

assert shared_dir  # a fixture of another module, used here

MODES = ["root", "user"]
# Four processes of 600 MB, each under the 1 GiB rlimit of a process, 2.4 GB together.
FOUR_ALLOCATIONS = (
    "for i in 1 2 3 4; do python3 -c \"import time; b = b'x' * (600 * 2**20); time.sleep(3); "
    "print('kept', len(b))\" & done; wait; echo all-ended"
)


@pytest.fixture
def hierarchy() -> Iterator[Hierarchy]:
    """The cgroup hierarchy sandboxes get their cgroups in. Skipped when there is none: on a host
    whose cgroups our process may not write (an unprivileged user on cgroup v1, v2 without a
    delegated subtree enabling memory and pids) the sandbox is bounded by rlimits only, which
    tests/test_sandbox_privileges.py covers. Every sandbox cgroup the test leaves is removed:
    ours (named after our pid) and those of probes that died; never another live run's."""
    skip_unavailable("bwrap")
    found, reason = find_hierarchy()
    if found is None:
        pytest.skip(f"no writable cgroup hierarchy for our process: {reason}")
    try:
        yield found
    finally:
        for parent in found.parents():
            for entry in _children(parent):
                if os.path.basename(entry).startswith(f"swe-aci-{os.getpid()}-"):
                    kill_and_remove((entry,))
        sweep_stale(owner_dead)


def _children(parent: str) -> set[str]:
    return {
        entry.path
        for entry in os.scandir(parent)
        if entry.is_dir() and entry.name.startswith("swe-aci-")
    }


@pytest.fixture
def repo(shared_dir: Path) -> Path:
    from conftest import commit_tree

    root = shared_dir / "demo"
    commit_tree(root, {"a.txt": "alpha\n", "forks.py": FORK_PROBE})
    return root


def open_bwrap(repo: Path, **config: object) -> BwrapEnvironment:
    env = make_environment(Workspace(EnvConfig(backend="bwrap", **config), str(repo)))  # type: ignore[arg-type]
    assert isinstance(env, BwrapEnvironment)
    return env


def survivors(output: str) -> int:
    """How many of the four allocations lived to print their size."""
    return sum(line.startswith("kept ") for line in output.splitlines())


def read(directory: str, name: str) -> dict[str, int]:
    with open(os.path.join(directory, name)) as handle:
        return {key: int(value) for key, value in (line.split() for line in handle)}


def test_processes_under_their_rlimit_are_capped_by_the_sandbox_memory(
    hierarchy: Hierarchy, repo: Path
) -> None:
    env = open_bwrap(repo, memory="1g")
    try:
        cgroup = env._cgroup
        assert cgroup is not None
        where = env.run("cat /proc/self/cgroup").output
        assert os.path.basename(cgroup.directories[0]) in where  # the shell was born inside
        result = env.run(FOUR_ALLOCATIONS, timeout=60)
        after = env.run("echo next")
        if hierarchy.version == "v1":
            oom_kills = read(cgroup.directories[0], "memory.oom_control")["oom_kill"]
        else:
            oom_kills = read(cgroup.directories[0], "memory.events")["oom_kill"]
    finally:
        env.close()
    assert result.output.count("Killed") >= 1, result.output
    assert survivors(result.output) <= 1, result.output  # 1 GiB holds one of them
    assert "MemoryError" not in result.output  # not the rlimit: each is under it
    assert result.output.rstrip().endswith("all-ended") and result.exit_code == 0
    assert oom_kills >= 1
    assert after.exit_code == 0 and after.output == "next\n"
    assert not any(os.path.exists(d) for d in cgroup.directories)


def test_pids_max_caps_the_forks_of_the_whole_sandbox(hierarchy: Hierarchy, repo: Path) -> None:
    env = open_bwrap(repo, pids_limit=50)
    try:
        cgroup = env._cgroup
        assert cgroup is not None
        result = env.run("python3 forks.py", timeout=60)
        pids_dir = cgroup.directories[-1]
        hit = read(pids_dir, "pids.events")["max"]
        after = env.run("echo next")
    finally:
        env.close()
    assert 30 < int(result.output.split()[0]) < 50, result.output
    assert hit >= 1  # the cgroup refused the fork (RLIMIT_NPROC would not count here)
    assert after.output == "next\n"
    assert not any(os.path.exists(d) for d in cgroup.directories)


def test_a_stale_cgroup_of_a_dead_owner_is_removed_at_the_next_start(
    hierarchy: Hierarchy, repo: Path
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    alive = subprocess.Popen(["sleep", "60"])
    stale = hierarchy.create(cgroup_name(f"swe-aci-{dead.pid}-stale"), 2**30, 10)
    kept = hierarchy.create(cgroup_name(f"swe-aci-{alive.pid}-kept"), 2**30, 10)
    joins = "".join(f"echo $$ > {path}\n" for path in stale.procs_files)
    orphan = subprocess.Popen(["sh", "-c", f"{joins}exec sleep 60"])
    try:
        for _ in range(100):
            if members(stale.directories):
                break
            subprocess.run(["sleep", "0.05"])
        assert members(stale.directories) == {orphan.pid}
        open_bwrap(repo).close()
        assert orphan.wait(timeout=10) == -9  # killed by the sweep
        assert not any(os.path.exists(d) for d in stale.directories)
        assert all(os.path.isdir(d) for d in kept.directories)  # its owner lives
    finally:
        orphan.kill()
        alive.kill()
        alive.wait()
        stale.remove()
        kept.remove()


@pytest.fixture
def delegated(hierarchy: Hierarchy) -> Iterator[tuple[str, ...]]:
    """For the ordinary user: a cgroup of each hierarchy handed over to it (as a delegated
    subtree is), which the probe is put in; its children are made by that user and so are
    their files. Root's probe stays in our own cgroups."""
    if os.geteuid() != 0:
        yield ()
        return
    uid, gid = unprivileged_user()
    directories = [
        os.path.join(p, f"swe-aci-test-delegated-{os.getpid()}") for p in hierarchy.parents()
    ]
    try:
        for directory in directories:
            os.mkdir(directory)
            for name in ("", "cgroup.procs", "tasks", "cgroup.subtree_control"):
                path = os.path.join(directory, name)
                if os.path.exists(path):
                    os.chown(path, uid, gid)
        yield tuple(os.path.join(d, "cgroup.procs") for d in directories)
    finally:
        for directory in directories:
            for child in _children(directory) if os.path.isdir(directory) else ():
                kill_and_remove((child,))
        kill_and_remove(tuple(d for d in directories if os.path.isdir(d)))


@pytest.mark.parametrize("mode", MODES)
def test_the_agent_can_neither_leave_its_cgroup_nor_raise_its_limits(
    mode: str, hierarchy: Hierarchy, delegated: tuple[str, ...], repo: Path
) -> None:
    mine = "sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup"
    pids = "sed -n 's/^[0-9]*:pids://p' /proc/self/cgroup"
    if hierarchy.version == "v2":
        mine = pids = "sed -n 's/^0:://p' /proc/self/cgroup"
    base = "/sys/fs/cgroup/memory" if hierarchy.version == "v1" else "/sys/fs/cgroup"
    pids_base = "/sys/fs/cgroup/pids" if hierarchy.version == "v1" else "/sys/fs/cgroup"
    limit = "memory.limit_in_bytes" if hierarchy.version == "v1" else "memory.max"
    if mode == "user":
        give_to_test_user(repo)
    results = run_probe(
        mode,
        repo,
        [
            "cat /proc/self/cgroup",
            "ls -A /sys/fs/cgroup",
            f'echo $$ > {base}"$({mine})"/../cgroup.procs',
            f"echo $$ > {base}/cgroup.procs",
            f'echo 99999999999 > {base}"$({mine})"/{limit}',
            f'echo max > {pids_base}"$({pids})"/pids.max',
            "mkdir -p /tmp/cg && mount -t cgroup -o memory none /tmp/cg",
            "mount -t cgroup2 none /tmp/cg",
            "unshare -C -m true",
            "touch /sys/fs/cgroup/x /sys/x",
            "cat /proc/self/cgroup",
            FOUR_ALLOCATIONS,
            "echo next",
        ],
        join_cgroups=delegated if mode == "user" else (),
        memory="1g",
        timeout=60,
    )
    before, after = results[0][1], results[10][1]
    assert ".pidns-" in before and before == after, (before, after)
    assert results[1] == (0, "")  # no cgroup file system inside
    for code, output in results[2:10]:
        assert code != 0, output
    allocations = results[11][1]
    assert allocations.count("Killed") >= 1 and survivors(allocations) <= 1, allocations
    assert results[12] == (0, "next\n")
    for procs in delegated:  # the user's sandbox cgroup was made in its subtree, and is gone
        assert _children(os.path.dirname(procs)) == set()


def test_a_launcher_that_cannot_join_its_cgroup_runs_nothing(tmp_path: Path) -> None:
    """The launcher joins before it execs: when the write fails, bwrap never starts (no sandbox
    runs outside its cgroup)."""
    skip_unavailable("bwrap")
    mounts = mount_table({}, [], network=False)
    argv = sandbox_argv(
        mounts, network=False, chdir="/", join=[str(tmp_path / "gone" / "cgroup.procs")]
    )
    result = subprocess.run(
        [*argv, "echo", "ran"], capture_output=True, text=True, timeout=20, cwd="/"
    )
    assert result.returncode != 0 and "ran" not in result.stdout


def test_which_hierarchy_is_chosen_from_mountinfo_and_our_cgroups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The choice of hierarchy read from fake /proc files over plain directories (no kernel
    here: what v2 does on a real v2 kernel is not tested)."""
    from swe_aci.env.bwrap import cgroupfs
    from swe_aci.env.bwrap.cgroups_v1 import V1Hierarchy
    from swe_aci.env.bwrap.cgroups_v2 import V2Hierarchy

    unified, memory, pids = tmp_path / "unified", tmp_path / "memory", tmp_path / "pids"
    for directory in (unified / "job", memory / "job", pids):
        directory.mkdir(parents=True)
        (directory / "cgroup.procs").write_text("")
    (tmp_path / "mountinfo").write_text(
        f"30 25 0:26 / {unified} rw - cgroup2 cgroup2 rw\n"
        f"31 25 0:27 /ns {memory} rw - cgroup cgroup rw,memory\n"
        f"32 25 0:28 / {pids} rw - cgroup cgroup rw,pids\n"
    )
    (tmp_path / "cgroup").write_text("0::/job\n4:memory:/ns/job\n8:pids:/\n")
    monkeypatch.setattr(cgroupfs, "MOUNTINFO", str(tmp_path / "mountinfo"))
    monkeypatch.setattr(cgroupfs, "PROC_CGROUP", str(tmp_path / "cgroup"))
    assert cgroupfs.directory_of("") == f"{unified}/job"
    assert cgroupfs.directory_of("memory") == f"{memory}/job"  # the mount's root is /ns
    assert cgroupfs.directory_of("pids") == str(pids)

    (unified / "job" / "cgroup.subtree_control").write_text("cpu memory\n")
    found, reason = V2Hierarchy.find()
    assert found is None and "does not enable pids" in reason
    (unified / "job" / "cgroup.subtree_control").write_text("cpu memory pids\n")
    found, reason = V2Hierarchy.find()
    assert found == V2Hierarchy(f"{unified}/job")
    found, reason = V1Hierarchy.find()
    assert found == V1Hierarchy(f"{memory}/job", str(pids))
