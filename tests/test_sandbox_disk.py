"""What one bwrap sandbox may write in total (`env.disk`), tested by the attack: writing past the
bound in /tmp, HOME and the repository (see env/bwrap/disk.py), from a swe-aci run as root and
as an ordinary user (tests/unprivileged.py), whose bounded disk is held by a holder process."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from conftest import commit_tree
from env_helpers import DOCKER_IMAGE, skip_unavailable
from swe_aci.env import EnvConfig, Workspace, make_environment
from swe_aci.env.bwrap.disk import DISK_DIR, Holder, mount_disk
from swe_aci.env.bwrap.environment import BwrapEnvironment
from swe_aci.env.cleanup import MARKER_VARIABLE, sweep_stale_dirs
from swe_aci.env.docker.environment import DockerEnvironment
from unprivileged import MODES, give_to_test_user, run_probe, shared_dir

assert shared_dir  # a fixture of another module, used here
FILL = "head -c {size} /dev/zero > {path}; echo status=$?"
MIB = 2**20


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    skip_unavailable("bwrap")
    return request.param


def test_writing_past_the_disk_bound_fails_in_the_sandbox_only(mode: str, shared_dir: Path) -> None:
    """40 MiB in /tmp fit a 64 MiB bound; 40 MiB more in HOME, and in the repository, do not
    ("No space left on device" is what the agent reads), as root and as an ordinary user; the
    session goes on, a restart of the shell keeps the files, and once they are removed there is
    room again. The holder of an ordinary user's disk is gone after close."""
    repo = shared_dir / "demo"
    commit_tree(repo, {"a.txt": "alpha\n"})
    if mode == "user":
        give_to_test_user(repo)
    results = run_probe(
        mode,
        repo,
        [
            FILL.format(size=40 * MIB, path="/tmp/first"),
            FILL.format(size=40 * MIB, path="~/second"),
            FILL.format(size=40 * MIB, path="third"),
            "rm -f /tmp/first ~/second third; echo kept | tee ~/kept /tmp/kept > kept",
            "exit",
            "cat ~/kept /tmp/kept kept; " + FILL.format(size=8 * MIB, path="again"),
            "stat -f -c %T /tmp",
        ],
        disk="64m",
    )
    assert results[0][1].strip().endswith("status=0")
    for _, output in results[1:3]:
        assert "No space left on device" in output and not output.strip().endswith("status=0")
    assert "restarted" in results[4][1]
    assert results[5][1].split() == ["kept", "kept", "kept", "status=0"]
    assert results[6][1].strip() == "tmpfs"
    assert not holders()


def holders() -> list[int]:
    """The pids of the disk holders running (env/bwrap/holder.py)."""
    found = []
    for entry in os.scandir("/proc"):
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if any(arg.endswith(b"swe_aci/env/bwrap/holder.py") for arg in argv):
            found.append(int(entry.name))
    return found


def test_the_bounded_disk_is_unmounted_at_close_and_by_the_sweep(
    make_repo: Callable[..., Path],
) -> None:
    """Root: the tmpfs is detached at close, and a dead owner's is by the next run's sweep."""
    skip_unavailable("bwrap")
    if os.geteuid() != 0:
        pytest.skip("the disk is mounted on the host only when swe-aci runs as root")
    env = make_environment(
        Workspace(EnvConfig(backend="bwrap", disk="32m"), str(make_repo({"a.txt": "a\n"})))
    )
    assert isinstance(env, BwrapEnvironment)
    disk = env._root / DISK_DIR
    assert os.path.ismount(disk)
    env.close()
    assert not os.path.ismount(disk) and not disk.exists()

    stale = Path(tempfile.mkdtemp(prefix="swe-aci-999999999-", dir=tempfile.gettempdir()))
    mount_disk(stale / DISK_DIR, 1 * MIB)
    assert stale in sweep_stale_dirs()
    assert not os.path.ismount(stale / DISK_DIR) and not stale.exists()


def test_the_sweep_kills_the_disk_holder_of_a_dead_owner() -> None:
    """An ordinary user's disk holder carries its environment's marker: the sweep of a dead
    owner's directory kills it (and with it the tmpfs)."""
    skip_unavailable("bwrap")
    stale = Path(tempfile.mkdtemp(prefix="swe-aci-999999999-", dir=tempfile.gettempdir()))
    holder = Holder(stale / DISK_DIR, 1 * MIB, {MARKER_VARIABLE: stale.name})
    (holder.root / "file").write_text("held\n")
    assert not (stale / DISK_DIR / "file").exists()  # the host sees an empty directory
    assert holder._process.pid in holders()
    assert stale in sweep_stale_dirs()
    assert holder._process.wait(timeout=10) == -signal.SIGKILL
    assert not stale.exists()


@pytest.mark.docker
def test_docker_bounds_the_container_where_its_storage_driver_can(
    make_repo: Callable[..., Path],
) -> None:
    """`--storage-opt size` where the driver takes it (writing past it fails in the container);
    overlay2 on ext4, docker's default, refuses it: the container then runs unbounded."""
    skip_unavailable("docker")
    config = EnvConfig(backend="docker", image=DOCKER_IMAGE, disk="16m")
    env = make_environment(Workspace(config, str(make_repo({"a.txt": "a\n"}))))
    assert isinstance(env, DockerEnvironment)
    try:
        bounded = env._storage_options() is not None
        result = env.run(FILL.format(size=40 * MIB, path="/tmp/fill"))
        assert ("No space left on device" in result.output) is bounded
        assert env.run("echo still").output == "still\n"
    finally:
        env.close()


@pytest.mark.parametrize("field", ["disk", "memory", "file_size"])
def test_a_size_of_zero_is_refused_since_it_would_bound_nothing(field: str) -> None:
    """A tmpfs of size 0 is unbounded (and an rlimit of 0 stops every process): refused."""
    with pytest.raises(ValidationError, match="a size of 0 bounds nothing"):
        EnvConfig.model_validate({field: "0g"})
    assert getattr(EnvConfig.model_validate({field: "1m"}), field) == "1m"


def test_a_holder_that_cannot_mount_fails_in_one_line(tmp_path: Path) -> None:
    """What the kernel says about the tmpfs reaches the user in one line, and nothing is left."""
    skip_unavailable("bwrap")
    with pytest.raises(OSError, match=r"^the disk's holder failed: mount: Invalid argument$"):
        Holder(tmp_path / DISK_DIR, -1, {})
    assert not holders()
