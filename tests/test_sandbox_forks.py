"""A fork bomb dies with the command that started it, whether the command timed out or returned
at once leaving the bomb in the background (env/process.py), tested by the attack under the
sandbox's process limit, from a swe-aci run as root and as an ordinary user
(tests/unprivileged.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import commit_tree
from env_helpers import DOCKER_IMAGE, skip_unavailable
from swe_aci.env import EnvConfig, Workspace, make_environment
from unprivileged import MODES, give_to_test_user, run_probe, shared_dir

assert shared_dir  # a fixture of another module, used here
# `bomb` forks two copies of itself in the background and returns: the command ends at once.
BACKGROUND_BOMB = "bomb() { bomb | bomb & }; bomb; echo returned"
FOREGROUND_BOMB = "bomb() { bomb | bomb & }; bomb; sleep 30"
# The agent's next command comes after a model call: the bomb has grown by then (a builtin
# loop: it needs no fork).
THINK = "SECONDS=0; while ((SECONDS < 2)); do :; done"
# Timed in microseconds: bash's SECONDS counts crossed second boundaries, so a command of a few
# milliseconds can read 1. A fork refused under the process limit makes bash retry after a second.
NEXT = (
    "start=${EPOCHREALTIME/./}; echo next; ls > /dev/null; "
    "echo took_ms=$(( (${EPOCHREALTIME/./} - start) / 1000 ))"
)


def took_ms(output: str) -> int:
    return int(output.strip().rsplit("took_ms=", 1)[1])


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    skip_unavailable("bwrap")
    return request.param


@pytest.fixture
def repo(shared_dir: Path, mode: str) -> Path:
    root = shared_dir / "demo"
    commit_tree(root, {"a.txt": "alpha\n"})
    if mode == "user":
        give_to_test_user(root)
    return root


@pytest.mark.parametrize("bomb", [BACKGROUND_BOMB, FOREGROUND_BOMB], ids=["returns", "times-out"])
def test_a_fork_bomb_does_not_outlive_its_command(mode: str, repo: Path, bomb: str) -> None:
    """The next command runs at once in the same shell (no timeout, no restart), and no process
    of the bomb is left."""
    results = run_probe(
        mode,
        repo,
        [bomb, THINK, NEXT, "ls /proc | grep -c '^[0-9]'"],
        timeout=5,
        pids_limit=200,
    )
    assert results[2][0] == 0, results
    assert "next" in results[2][1] and took_ms(results[2][1]) < 1000, results
    assert "restarted" not in results[2][1]
    assert int(results[3][1].split()[-1]) < 10  # the shell, ls, grep and their pipeline


@pytest.mark.docker
@pytest.mark.parametrize("bomb", [BACKGROUND_BOMB, FOREGROUND_BOMB], ids=["returns", "times-out"])
def test_a_fork_bomb_does_not_outlive_its_command_in_a_container(
    make_repo: Callable[..., Path], bomb: str
) -> None:
    skip_unavailable("docker")
    config = EnvConfig(backend="docker", image=DOCKER_IMAGE, pids_limit=200)
    env = make_environment(Workspace(config, str(make_repo({"a.txt": "a\n"}))))
    try:
        env.run(bomb, timeout=5)
        time.sleep(2)  # the model's turn
        result = env.run(NEXT, timeout=10)
        assert result.exit_code == 0 and not result.shell_restarted, result.output
        assert took_ms(result.output) < 1000, result.output
    finally:
        env.close()
