"""git against GitHub with the token kept out of every file and argument: it reaches git through
environment variables (`GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` setting
`http.extraheader`), which no other user can read and git writes nowhere. Remotes are named by
URL on the command line, so no `.git/config` ever holds credentials."""

from __future__ import annotations

import base64
import os
import subprocess
import tempfile
from pathlib import Path

from swe_aci.env.repo import GIT_IDENTITY
from swe_aci.github.client import GitHubError
from swe_aci.github.redaction import Redactor

GIT_TIMEOUT = 600.0  # seconds a clone or push may take


def git_environment(token: str | None, home: Path) -> dict[str, str]:
    """The environment of our git processes: no system or global configuration (nothing of the
    user's or the agent's names a program to run), no prompt, and the token as an HTTP header."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("GIT_") and name not in ("GITHUB_TOKEN", "GH_TOKEN")
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="",
        SSH_ASKPASS="",
    )
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="http.extraheader",
            GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}",
        )
    return env


class Git:
    """git with that environment; failures are GitHubErrors with git's last line, the token's
    every form (`redaction.py`) taken out of it."""

    def __init__(self, token: str | None) -> None:
        self._home = tempfile.TemporaryDirectory(prefix="swe-aci-git-home-")
        self.env = git_environment(token, Path(self._home.name))
        self.redact = Redactor(token)

    def close(self) -> None:
        self._home.cleanup()

    def __call__(self, args: list[str], cwd: Path | None = None, stdin: str | None = None) -> str:
        try:
            result = subprocess.run(
                ["git", *GIT_IDENTITY, "-c", "commit.gpgsign=false", *args],
                cwd=cwd,
                env=self.env,
                input=stdin,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=GIT_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise GitHubError(f"git {args[0]} took more than {GIT_TIMEOUT:.0f} s") from None
        if result.returncode != 0:
            lines = (result.stderr or result.stdout).strip().splitlines()
            raise GitHubError(self.redact(f"git {args[0]} failed: {complaint(lines)}"))
        return result.stdout


def complaint(lines: list[str]) -> str:
    """git's own statement of the failure: its first `fatal:`/`error:` line, else its last."""
    for line in lines:
        if line.startswith(("fatal: ", "error: ")):
            return line
    return lines[-1] if lines else "unknown error"


def clone(git: Git, url: str, destination: Path) -> None:
    git(["clone", "--quiet", "--no-hardlinks", url, str(destination)])


def commit_patch(git: Git, source: str, base: str, branch: str, patch: str, work: Path) -> None:
    """A clone of `source` in `work` with `branch` at `base` plus one commit: the patch."""
    git(["clone", "--quiet", "--no-hardlinks", "--no-checkout", source, str(work)])
    git(["checkout", "--quiet", "-B", branch, base], cwd=work)
    git(["apply", "--index", "--whitespace=nowarn", "-"], cwd=work, stdin=patch)
    git(["commit", "--quiet", "-m", f"swe-aci: {branch}"], cwd=work)


def push_branch(git: Git, work: Path, url: str, branch: str) -> None:
    """Push the branch to the remote named by URL (the branch is swe-aci's: a rerun replaces it)."""
    git(["push", "--quiet", "--force", url, f"{branch}:refs/heads/{branch}"], cwd=work)


def apply_patch(git: Git, repository: Path, patch: str) -> None:
    """Apply the patch to a working tree: all of it, or nothing (`git apply` is atomic)."""
    git(["apply", "--whitespace=nowarn", "-"], cwd=repository, stdin=patch)


def resolve_commit(git: Git, repository: str, commit: str | None) -> str:
    return git(
        ["rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}"], cwd=Path(repository)
    ).strip()
