"""The environment protocol: one sandbox holding a repository and one persistent shell.

Every backend (local, bwrap, docker) offers the same small surface; the ACI and the agent loop
only ever talk to this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class SandboxError(Exception):
    """A sandbox could not be created or used (bad repository, unknown commit, engine down...).

    The message is meant for the user: one clear line.
    """


@dataclass(frozen=True)
class CommandResult:
    """What one command in the persistent shell produced."""

    output: str
    exit_code: int | None
    timed_out: bool = False
    truncated: bool = False
    shell_restarted: bool = False


@runtime_checkable
class Environment(Protocol):
    """A sandbox with a repository at its base commit and one persistent bash session."""

    @property
    def repo_path(self) -> str:
        """Absolute path of the repository root as seen inside the sandbox."""
        ...

    @property
    def base_commit(self) -> str:
        """The commit the repository was reset to; diffs are taken against it."""
        ...

    @property
    def cwd(self) -> str:
        """The shell's current working directory (inside the sandbox)."""
        ...

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run `command` in the persistent shell; stdout and stderr merged, stdin at EOF."""
        ...

    def read_file(self, path: str) -> bytes:
        """Read a file by its absolute sandbox path. Raises FileNotFoundError / IsADirectoryError."""
        ...

    def write_file(self, path: str, content: bytes) -> None:
        """Write a file by its absolute sandbox path, creating parent directories."""
        ...

    def diff(self) -> str:
        """`git add -A` then the staged diff of the repository against the base commit."""
        ...

    def close(self) -> None:
        """Stop the shell and remove everything the sandbox created. Safe to call twice."""
        ...
