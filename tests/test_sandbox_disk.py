"""What one bwrap sandbox may write in total (`env.disk`), tested by the attack: writing past the
bound in /tmp, HOME and the repository (see env/bwrap/disk.py), from a swe-aci run as root and
as an ordinary user (tests/unprivileged.py)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import commit_tree
from env_helpers import DOCKER_IMAGE, skip_unavailable
from swe_aci.env import EnvConfig, Workspace, make_environment
from swe_aci.env.bwrap.disk import DISK_DIR, mount_disk
from swe_aci.env.bwrap.environment import BwrapEnvironment
from swe_aci.env.cleanup import sweep_stale_dirs
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
    ("No space left on device" is what the agent reads); the session goes on, and once the
    files are removed there is room again."""
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
            "rm -f /tmp/first ~/second third; " + FILL.format(size=8 * MIB, path="again"),
            "stat -f -c %T /tmp",
        ],
        disk="64m",
    )
    assert results[0][1].strip().endswith("status=0")
    if mode == "user" or os.geteuid() != 0:
        # An ordinary user cannot mount a bounded file system the host sees (env/bwrap/disk.py).
        assert all(output.strip().endswith("status=0") for _, output in results[1:4])
        return
    for _, output in results[1:3]:
        assert "No space left on device" in output and not output.strip().endswith("status=0")
    assert results[3][1].strip().endswith("status=0")
    assert results[4][1].strip() == "tmpfs"


def test_the_bounded_disk_is_unmounted_at_close_and_by_the_sweep(
    make_repo: Callable[..., Path],
) -> None:
    """Root only: the tmpfs is detached at close, and a dead owner's is by the next run's sweep."""
    skip_unavailable("bwrap")
    if os.geteuid() != 0:
        pytest.skip("the disk is bounded only when swe-aci runs as root")
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
