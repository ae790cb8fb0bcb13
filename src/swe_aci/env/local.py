"""The `local` backend: a private clone in a temporary directory, bash as a child process.

local isolates nothing: the shell runs on the host as the user. What it still guarantees is that
swe-aci's own host-side work is safe: the shell gets a small allow-listed environment (no host
secrets), the diff is taken with a private git directory (no configuration the agent writes is
obeyed), file reads and writes touch only regular files (never /proc, /dev, /sys, a FIFO or a
device) and are capped, and every process the shell started is killed at close, even `setsid`
ones (see cleanup.py for the one gap).

Layout of the temporary root `swe-aci-<pid>-*`: `repo/<name>` (the working copy), `git` (the
private bare clone the diff uses), `home` (an empty HOME), `tmp` (TMPDIR).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sysconfig
from pathlib import Path

from swe_aci.env.base import Submission
from swe_aci.env.cleanup import MARKER_VARIABLE, kill_marked_processes, make_root
from swe_aci.env.config import EnvConfig
from swe_aci.env.diff import take_submission
from swe_aci.env.files import (
    READ_FLAGS,
    WRITE_FLAGS,
    open_file,
    read_regular,
    refuse_pseudo,
    write_regular,
)
from swe_aci.env.process import ProcessTransport
from swe_aci.env.repo import host_git_runner, prepare_working_copy, repo_name
from swe_aci.env.session import SessionEnvironment
from swe_aci.env.shell import ShellTransport

BASH_ARGV = ["bash", "--noprofile", "--norc"]
# Host variables the shell inherits; everything else (API keys, tokens...) stays out.
INHERITED_VARIABLES = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME")


class LocalEnvironment(SessionEnvironment):
    """The repository cloned into a fresh temporary directory; no isolation beyond that.

    Subclasses that run the shell elsewhere (bwrap) override `_start_shell`,
    `_sandbox_repo_path`, `_sandbox_env`, `read_file` and `write_file`.
    """

    def __init__(self, source: str, commit: str | None = None, config: EnvConfig | None = None):
        self.config = config or EnvConfig()
        self._closed = False
        self._root = make_root()
        # Names the root, so that the sweep of a killed run's root finds its processes too.
        self._token = self._root.name
        try:
            writable = self._writable_root()
            (writable / "repo").mkdir()
            self._host_repo = writable / "repo" / repo_name(source)
            self._store = self._root / "git"
            self._home, self._tmp = writable / "home", writable / "tmp"
            for private in (self._home, self._tmp):
                private.mkdir()
            self._base_commit = prepare_working_copy(
                source, self._host_repo, commit, self._store, self._enter()
            )
            self._prepare_sandbox()
            self._open_session(self._start_shell, self.repo_path)
        except BaseException:
            self.close()
            raise

    # -- hooks for subclasses --------------------------------------------------------------

    def _writable_root(self) -> Path:
        """The directory holding what the shell may write (the working copy, HOME, TMPDIR)."""
        return self._root

    def _prepare_sandbox(self) -> None:
        """Create whatever the sandbox needs on the host before the shell starts."""

    def _sandbox_repo_path(self) -> str:
        return str(self._host_repo)

    def _sandbox_env(self) -> dict[str, str]:
        """HOME and TMPDIR as the shell sees them."""
        return {"HOME": str(self._home), "TMPDIR": str(self._tmp)}

    def _start_shell(self) -> ShellTransport:
        return ProcessTransport(BASH_ARGV, cwd=str(self._host_repo), env=self._shell_env())

    # -- the protocol ----------------------------------------------------------------------

    @property
    def repo_path(self) -> str:
        return self._sandbox_repo_path()

    @property
    def base_commit(self) -> str:
        return self._base_commit

    def read_file(self, path: str) -> bytes:
        resolved = os.path.realpath(os.path.join(self.cwd, path))
        refuse_pseudo(resolved, path)
        return read_regular(open_file(resolved, READ_FLAGS, path), path, self.config.max_file_bytes)

    def write_file(self, path: str, content: bytes) -> None:
        resolved = os.path.realpath(os.path.join(self.cwd, path))
        refuse_pseudo(resolved, path)
        os.makedirs(os.path.dirname(resolved), exist_ok=True)
        write_regular(open_file(resolved, WRITE_FLAGS, path), path, content)

    def submission(self) -> Submission:
        self._live_session()
        index = self._root / "submission.index"
        index.unlink(missing_ok=True)
        try:
            return take_submission(
                host_git_runner(self._store, self._host_repo, index, self._enter()),
                self._base_commit,
                max_file_bytes=self.config.max_diff_file_bytes,
                timeout=self.config.diff_timeout,
            )
        finally:
            index.unlink(missing_ok=True)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            kill_marked_processes(self._token)
        with contextlib.suppress(Exception):
            self._close_session()
        self._release_root()
        shutil.rmtree(self._root, ignore_errors=True)

    def _release_root(self) -> None:
        """Undo what `_writable_root` set up, before the root is removed."""

    def _enter(self) -> list[str]:
        """The command prefix git runs under to reach the writable root (none here)."""
        return []

    # -- internals -------------------------------------------------------------------------

    def _shell_env(self) -> dict[str, str]:
        env = {name: os.environ[name] for name in INHERITED_VARIABLES if name in os.environ}
        env.setdefault("PATH", os.defpath)
        if self.config.host_python:  # its python and tools first, as in an activated venv
            env["PATH"] = f"{sysconfig.get_path('scripts')}:{env['PATH']}"
        env.update(self._sandbox_env())
        env[MARKER_VARIABLE] = self._token
        return env
