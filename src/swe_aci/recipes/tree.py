"""The base tree of a recipe: the source after `revert` and `prepare`, committed as the one commit
of a fresh git repository (fixed identity and dates, so the same recipe gives the same sha)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

from swe_aci.env.base import SandboxError
from swe_aci.env.cleanup import MARKER_VARIABLE
from swe_aci.env.repo import prepare_working_copy
from swe_aci.executors.owned import owner_marker, sweep_dead_owners, watch_owner
from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.packages import fetch_debian, fetch_npm, unpack_debian
from swe_aci.recipes.sdist import fetch_sdist, unpack_sdist
from swe_aci.tasks import Task

COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "swe-aci",
    "GIT_AUTHOR_EMAIL": "swe-aci@localhost",
    "GIT_COMMITTER_NAME": "swe-aci",
    "GIT_COMMITTER_EMAIL": "swe-aci@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def build_marker(owner: int | None = None) -> str:
    """The marker every build process of `owner` (this process by default) carries in its
    environment: they die with it (its watchdog, executors/owned.py), and what the watchdog
    missed is swept by the next build."""
    return owner_marker("build", owner)


def run_logged(
    argv: list[str],
    cwd: Path,
    log: Callable[[str], None],
    *,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 1800.0,
    inherit: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run a build step, its output going to the log; never interactive, always bounded.
    `env` is added to this process's environment, or replaces it when not `inherit`.

    The step runs in its own session, killed whole when it ends however it ends (what it left in
    the background, a timeout, Ctrl-C); it carries `build_marker()` for the sweep of a run killed
    with -9 (`sweep_orphan_builds`) and for this process's watchdog, which kills it when this
    process dies."""
    watch_owner()
    environment = {**(os.environ if inherit else {}), **(env or {})}
    environment[MARKER_VARIABLE] = build_marker()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(stdin if stdin is not None else "", timeout=timeout)
    except subprocess.TimeoutExpired:
        log(f"timed out after {timeout:.0f} s: {argv}")
        return subprocess.CompletedProcess(argv, 124, "", "timed out")
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    for stream in (stdout, stderr):
        if stream.strip():
            log(stream.rstrip("\n"))
    return subprocess.CompletedProcess(argv, process.returncode, stdout, stderr)


def sweep_orphan_builds() -> list[int]:
    """SIGKILL the build steps whose swe-aci died without ending them (kill -9 mid-build), with
    their descendants; return the dead owners' pids. Steps of a live swe-aci are left alone."""
    return sweep_dead_owners("build")


def build_base_tree(task: Task, dest: Path, sdist_cache: Path, log: Callable[[str], None]) -> str:
    """Create the base tree at `dest` and return its commit sha. Raises RecipeError."""
    recipe = task.environment
    assert recipe is not None
    source = recipe.source
    if source.pypi_sdist:
        assert source.sha256 is not None
        log(f"fetching sdist {source.pypi_sdist}")
        unpack_sdist(fetch_sdist(source.pypi_sdist, source.sha256, sdist_cache), dest)
    elif source.npm:
        assert source.sha256 is not None
        log(f"fetching npm tarball {source.npm}")
        unpack_sdist(fetch_npm(source.npm, source.sha256, sdist_cache), dest)
    elif source.debian:
        assert source.sha256 is not None
        log(f"fetching Debian package {source.debian}")
        unpack_debian(fetch_debian(source.debian, source.sha256, sdist_cache), dest)
    elif source.git:
        log(f"cloning {source.git} at {task.base_commit or 'HEAD'}")
        try:
            prepare_working_copy(source.git, dest, task.base_commit)
        except SandboxError as error:
            raise RecipeError(str(error)) from None
        shutil.rmtree(dest / ".git")
    else:
        assert source.path is not None
        if not Path(source.path).is_dir():
            raise RecipeError(f"source path is not a directory: {source.path}")
        log(f"copying {source.path}")
        shutil.copytree(source.path, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    for field in recipe.revert:
        patch = getattr(task, field)
        if not patch:
            raise RecipeError(f"revert names {field}, but the row has no {field}")
        log(f"reverting {field}")
        result = run_logged(
            ["git", "apply", "-R", "--whitespace=nowarn", "-"], dest, log, stdin=patch
        )
        if result.returncode != 0:
            raise RecipeError(f"revert of {field} failed: {last_line(result)}")
    for command in recipe.prepare:
        log(f"prepare: {command}")
        result = run_logged(["bash", "-c", command], dest, log)
        if result.returncode != 0:
            raise RecipeError(f"prepare command failed ({command!r}): {last_line(result)}")
    return commit_tree(dest, recipe.exclude, log)


def commit_tree(root: Path, exclude: list[str], log: Callable[[str], None]) -> str:
    """`git init`, the recipe's `exclude` globs into .git/info/exclude, one commit of the rest."""
    for path in [path for path in root.rglob(".git") if path.parent != root]:
        # a nested repository would be committed as an opaque gitlink
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    git_init = run_logged(["git", "init", "--quiet"], root, log)
    if git_init.returncode != 0:
        raise RecipeError(f"git init failed: {last_line(git_init)}")
    info = root / ".git" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "exclude").write_text("".join(f"{pattern}\n" for pattern in exclude))
    for argv in (["git", "add", "-A"], ["git", "commit", "-q", "--allow-empty", "-m", "base"]):
        result = run_logged(argv, root, log, env=COMMIT_ENV)
        if result.returncode != 0:
            raise RecipeError(f"git {argv[1]} failed: {last_line(result)}")
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = (result.stderr or result.stdout or "").strip().splitlines()
    return lines[-1] if lines else f"exit code {result.returncode}"
