"""A fork bomb dies with the command that started it, whether the command timed out or returned
at once leaving the bomb in the background (env/process.py), tested by the attack under the
sandbox's process limit, from a swe-aci run as root and as an ordinary user
(tests/unprivileged.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import commit_tree
from env_helpers import skip_unavailable
from unprivileged import MODES, give_to_test_user, run_probe, shared_dir

assert shared_dir  # a fixture of another module, used here
# `bomb` forks two copies of itself in the background and returns: the command ends at once.
BACKGROUND_BOMB = "bomb() { bomb | bomb & }; bomb; echo returned"
FOREGROUND_BOMB = "bomb() { bomb | bomb & }; bomb; sleep 30"
NEXT = "sleep 1.5; SECONDS=0; echo next; ls > /dev/null; echo took=$SECONDS"


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
        [bomb, NEXT, "ls /proc | grep -c '^[0-9]'"],
        timeout=5,
        pids_limit=200,
    )
    assert results[1][0] == 0, results
    assert "next" in results[1][1] and results[1][1].strip().endswith("took=0")
    assert "restarted" not in results[1][1]
    assert int(results[2][1].split()[-1]) < 10  # the shell, ls, grep and their pipeline
