"""Shared fixtures: small git repositories built on the fly."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

# Every Ray instance the tests start serves this machine only: its servers bind 127.0.0.1 (Ray
# reads this when it is first imported; without it, on Linux, the interface address).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost"]


def commit_tree(root: Path, files: dict[str, str | bytes], message: str = "init") -> str:
    """Write `files` under `root`, commit them, and return the commit sha."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        subprocess.run([*GIT, "init", "-q", "-b", "main", str(root)], check=True)
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "--allow-empty", "-m", message], cwd=root, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current directory, so outputs written by mistake would show up here."""
    directory = tmp_path / "work"
    directory.mkdir()
    monkeypatch.chdir(directory)
    return directory


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """Factory: make_repo({"a.py": "x = 1\\n"}, name="repo") -> path of a committed git repo."""

    def make(files: dict[str, str | bytes], name: str = "repo") -> Path:
        root = tmp_path / name
        commit_tree(root, files)
        return root

    return make
