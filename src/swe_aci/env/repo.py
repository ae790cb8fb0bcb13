"""Preparing a working copy of a repository at a commit, and running git on it safely.

The user's own checkout is only ever read: it is cloned without hard links into a directory of
our own, so no file of the copy is a file of the user's repository.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from swe_aci.env.base import SandboxError
from swe_aci.env.diff import GIT_HARDENING, SUBMISSION_ATTRIBUTES, GitRunner

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


def git(
    args: list[str], cwd: Path | str | None = None, check: bool = True, enter: Sequence[str] = ()
) -> str:
    """Run git and return stdout; a failure becomes a SandboxError with git's own message.
    `enter` is a command prefix git runs under (in other namespaces: `cwd` is given by `-C`)."""
    where = ["-C", str(cwd)] if enter and cwd is not None else []
    result = subprocess.run(
        [*enter, "git", *GIT_IDENTITY, *where, *args],
        cwd=None if enter else cwd,
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


def prepare_working_copy(
    source: str,
    dest: Path,
    commit: str | None = None,
    store: Path | None = None,
    enter: Sequence[str] = (),
) -> str:
    """Clone `source` (a local git repository or a URL) into `dest` at `commit`; return its sha.

    With `store`, the source is first cloned bare there (the host's private copy, which the agent
    cannot write in a sandbox and whose configuration is ours) and `dest` is cloned from it.
    The copy is reset and cleaned, so it holds exactly the commit's tree. The git commands that
    write `dest` run under `enter` (see `git`).
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
    if store is None:
        git(["clone", "--quiet", "--no-hardlinks", "--no-checkout", source, str(dest)], enter=enter)
    else:
        git(["clone", "--quiet", "--no-hardlinks", "--bare", source, str(store)])
        clone = ["clone", "--quiet", "--no-hardlinks", "--no-checkout", str(store), str(dest)]
        git(clone, enter=enter)
        git(["remote", "set-url", "origin", source], cwd=dest, enter=enter)
    if not is_remote(source):
        copy_exclude_rules(Path(source), [dest / ".git"] + ([store] if store else []))
    write_submission_attributes(store or dest / ".git")
    target = commit or "HEAD"
    resolved = git(
        ["rev-parse", "--verify", "--quiet", f"{target}^{{commit}}"],
        cwd=dest,
        check=False,
        enter=enter,
    )
    if not resolved.strip():
        raise SandboxError(f"unknown commit {target!r} in {source}")
    sha = resolved.strip()
    git(["checkout", "--quiet", "--detach", sha], cwd=dest, enter=enter)
    git(["reset", "--quiet", "--hard", sha], cwd=dest, enter=enter)
    git(["clean", "-fdxq"], cwd=dest, enter=enter)
    return sha


def copy_exclude_rules(source: Path, git_dirs: list[Path]) -> None:
    """Carry the source's `.git/info/exclude` over (clone does not): it names what the source's
    owner keeps out of diffs, e.g. a recipe's build products. The source is the user's or our
    own repository, never one the agent wrote."""
    rules = source / ".git" / "info" / "exclude"
    if not rules.is_file() or rules.is_symlink():
        return
    content = rules.read_bytes()[:1_000_000]
    for git_dir in git_dirs:
        (git_dir / "info").mkdir(parents=True, exist_ok=True)
        (git_dir / "info" / "exclude").write_bytes(content)


def write_submission_attributes(git_dir: Path) -> None:
    """The attributes the submission is taken with (see env/diff.py), in the git directory it is
    taken from."""
    (git_dir / "info").mkdir(parents=True, exist_ok=True)
    (git_dir / "info" / "attributes").write_text(SUBMISSION_ATTRIBUTES)


def init_copy(source: Path, dest: Path) -> str:
    """Copy a plain directory (not a git repository) to `dest` and commit it there.

    Used when the user points at a directory without git: their tree is never touched.
    """
    shutil.copytree(source, dest, symlinks=True)
    git(["init", "--quiet"], cwd=dest)
    git(["add", "-A"], cwd=dest)
    git(["commit", "--quiet", "--allow-empty", "-m", "swe-aci: initial snapshot"], cwd=dest)
    return git(["rev-parse", "HEAD"], cwd=dest).strip()


def host_git_runner(
    git_dir: Path, work_tree: Path, index: Path, enter: Sequence[str] = ()
) -> GitRunner:
    """A GitRunner for a working tree the agent writes, on the host: the git directory is our
    private store, and no system, global or XDG configuration is read, so nothing the agent wrote
    can name a program for git to run. The tree's .gitattributes still apply, but the filters
    and drivers they name exist in no configuration. git never follows the tree's symlinks.
    `enter`: a command prefix git runs under (see `git`)."""
    env = {
        "PATH": os.defpath + ":/usr/local/bin",
        "HOME": str(git_dir),
        "XDG_CONFIG_HOME": str(git_dir),
        "LC_ALL": "C",
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(work_tree),
        "GIT_INDEX_FILE": str(index),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
    }

    def run(args: list[str], stdin: bytes | None, timeout: float) -> tuple[int, bytes, bytes]:
        if not enter:
            return run_bounded(
                ["git", *GIT_HARDENING, *args], stdin, timeout, cwd=work_tree, env=env
            )
        argv = [*enter, "git", *GIT_HARDENING, "-C", str(work_tree), *args]
        return run_bounded(argv, stdin, timeout, cwd=Path("/"), env=env)

    return run


def run_bounded(
    argv: list[str], stdin: bytes | None, timeout: float, *, cwd: Path, env: dict[str, str]
) -> tuple[int, bytes, bytes]:
    """Run a process in its own session; after `timeout` seconds kill the whole session and
    raise TimeoutError."""
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except BaseException as exc:
        _kill_session(process.pid)
        process.communicate()
        if isinstance(exc, subprocess.TimeoutExpired):
            raise TimeoutError(f"{argv[0]} did not finish within {timeout:.0f} seconds") from None
        raise
    _kill_session(process.pid)
    return process.returncode, out, err


def _kill_session(session_id: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(session_id, signal.SIGKILL)
