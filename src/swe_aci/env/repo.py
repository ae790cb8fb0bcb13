"""Preparing a working copy of a repository at a commit, and taking its diff.

The user's own checkout is only ever read: we clone it into a directory of our own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from swe_aci.env.base import SandboxError

GIT_IDENTITY = ["-c", "user.name=swe-aci", "-c", "user.email=swe-aci@localhost"]


def is_remote(source: str) -> bool:
    return "://" in source or bool(re.match(r"^[\w.-]+@[\w.-]+:", source))


def repo_name(source: str) -> str:
    """A directory name for the working copy: the repository's last path component."""
    if not is_remote(source):
        source = str(Path(source).expanduser().resolve())  # "." names the current directory
    name = source.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    name = name.removesuffix(".git")
    name = re.sub(r"[^\w.-]", "_", name)
    return name if name not in {"", ".", ".."} else "repo"


def git(args: list[str], cwd: Path | str | None = None, check: bool = True) -> str:
    """Run git and return stdout; a failure becomes a SandboxError with git's own message."""
    result = subprocess.run(
        ["git", *GIT_IDENTITY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        errors="replace",
    )
    if check and result.returncode != 0:
        message = (result.stderr or result.stdout).strip().splitlines()
        raise SandboxError(f"git {args[0]} failed: {message[-1] if message else 'unknown error'}")
    return result.stdout


def is_git_repository(path: Path) -> bool:
    result = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
    )
    return result.returncode == 0 and Path(result.stdout.strip()).resolve() == path.resolve()


def prepare_working_copy(source: str, dest: Path, commit: str | None = None) -> str:
    """Clone `source` (a local git repository or a URL) into `dest` at `commit`; return its sha.

    The copy is reset and cleaned, so it holds exactly the commit's tree.
    """
    if not is_remote(source):
        path = Path(source).expanduser()
        if not path.exists():
            raise SandboxError(f"repository path does not exist: {source}")
        if not path.is_dir():
            raise SandboxError(f"repository path is not a directory: {source}")
        if not is_git_repository(path):
            raise SandboxError(f"not a git repository (or not its top-level directory): {source}")
        source = str(path.resolve())
    git(["clone", "--quiet", "--no-checkout", source, str(dest)])
    target = commit or "HEAD"
    resolved = git(
        ["rev-parse", "--verify", "--quiet", f"{target}^{{commit}}"], cwd=dest, check=False
    )
    if not resolved.strip():
        raise SandboxError(f"unknown commit {target!r} in {source}")
    sha = resolved.strip()
    git(["checkout", "--quiet", "--detach", sha], cwd=dest)
    git(["reset", "--quiet", "--hard", sha], cwd=dest)
    git(["clean", "-fdxq"], cwd=dest)
    return sha


def init_copy(source: Path, dest: Path) -> str:
    """Copy a plain directory (not a git repository) to `dest` and commit it there.

    Used when the user points at a directory without git: their tree is never touched.
    """
    shutil.copytree(source, dest, symlinks=True)
    git(["init", "--quiet"], cwd=dest)
    git(["add", "-A"], cwd=dest)
    git(["commit", "--quiet", "--allow-empty", "-m", "swe-aci: initial snapshot"], cwd=dest)
    return git(["rev-parse", "HEAD"], cwd=dest).strip()


def diff_against(repo: Path, base_commit: str) -> str:
    """`git add -A` then the staged diff against the base commit (new files included,
    ignored files not)."""
    git(["add", "-A"], cwd=repo)
    return git(["diff", "--cached", base_commit, "--"], cwd=repo)
