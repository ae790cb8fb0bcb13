"""The environment protocol: one sandbox holding a repository and one persistent shell.

Every backend (local, bwrap, docker) offers the same small surface; the ACI and the agent loop
only ever talk to this protocol. What each backend guarantees against the agent's commands is in
docs/security.md; the rules a new backend must keep are in docs/extending.md ("An environment
backend").
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


class SandboxError(Exception):
    """A sandbox could not be created or used (bad repository, unknown commit, engine down...).

    The message is meant for the user: one clear line.
    """


class NotARegularFileError(OSError):
    """read_file/write_file met a FIFO, device, socket or a pseudo-filesystem (/proc, /dev, /sys):
    only regular files are read or written. `strerror` says what it was, for the observation."""

    def __init__(self, reason: str, path: str) -> None:
        super().__init__(errno.EINVAL, reason, path)


class FileTooLargeError(OSError):
    """read_file met a file over `EnvConfig.max_file_bytes`."""

    def __init__(self, size: int, limit: int, path: str) -> None:
        reason = (
            f"the file has {size} bytes, over the {limit}-byte limit for reading it whole "
            "(look at parts of it with head, tail or sed -n)"
        )
        super().__init__(errno.EFBIG, reason, path)


@dataclass(frozen=True)
class Exclusion:
    """A changed file left out of a submission, and why (binary, or too large)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Submission:
    """The diff of the repository against the base commit, as `git apply` takes it, and the
    changed files that were left out of it (never mentioned inside the patch itself)."""

    patch: str
    excluded: tuple[Exclusion, ...] = field(default_factory=tuple)


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
        """Read a regular file by its sandbox path (symlinks resolved as the sandbox sees them).

        Raises FileNotFoundError / IsADirectoryError, NotARegularFileError (FIFO, device,
        socket, /proc...), FileTooLargeError (over `EnvConfig.max_file_bytes`); never blocks.
        """
        ...

    def write_file(self, path: str, content: bytes) -> None:
        """Write a regular file by its sandbox path, creating parent directories; never through
        a symlink out of the sandbox's writable directories, never into a FIFO or device."""
        ...

    def submission(self) -> Submission:
        """Every change in the working tree against the base commit (new files included,
        ignored ones not), without binary files or files over `EnvConfig.max_diff_file_bytes`
        (listed in `excluded`).

        Taken by a fresh git process that obeys no configuration the agent could write on the
        host, bounded by `EnvConfig.diff_timeout`; neither the shell, nor the repository's
        index, nor its working tree is touched.
        """
        ...

    def close(self) -> None:
        """Stop the shell and remove everything the sandbox created. Safe to call twice, and
        from a signal handler (it takes no lock and logs nothing)."""
        ...
