"""The `local` backend: a private clone in a temporary directory, bash as a child process."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from swe_aci.env.config import EnvConfig
from swe_aci.env.process import ProcessTransport
from swe_aci.env.repo import diff_against, prepare_working_copy, repo_name
from swe_aci.env.session import SessionEnvironment
from swe_aci.env.shell import ShellTransport

BASH_ARGV = ["bash", "--noprofile", "--norc"]


class LocalEnvironment(SessionEnvironment):
    """The repository cloned into a fresh temporary directory; no isolation beyond that.

    Subclasses that run the shell elsewhere (bwrap) override `_shell_argv`, `_sandbox_repo_path`
    and `_host_path`.
    """

    def __init__(self, source: str, commit: str | None = None, config: EnvConfig | None = None):
        self.config = config or EnvConfig()
        self._root = Path(tempfile.mkdtemp(prefix="swe-aci-"))
        try:
            self._host_repo = self._root / repo_name(source)
            self._base_commit = prepare_working_copy(source, self._host_repo, commit)
            self._prepare_sandbox()
            self._open_session(self._start_shell, self.repo_path)
        except BaseException:
            self.close()
            raise

    # -- hooks for subclasses --------------------------------------------------------------

    def _prepare_sandbox(self) -> None:
        """Create whatever the sandbox needs on the host before the shell starts."""

    def _shell_argv(self) -> list[str]:
        return BASH_ARGV

    def _sandbox_repo_path(self) -> str:
        return str(self._host_repo)

    def _host_path(self, path: str) -> Path:
        """The host path behind a sandbox path (a relative one is taken from the shell's cwd)."""
        return Path(self.cwd, path)

    # -- the protocol ----------------------------------------------------------------------

    @property
    def repo_path(self) -> str:
        return self._sandbox_repo_path()

    @property
    def base_commit(self) -> str:
        return self._base_commit

    def read_file(self, path: str) -> bytes:
        return self._host_path(path).read_bytes()

    def write_file(self, path: str, content: bytes) -> None:
        target = self._host_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)

    def diff(self) -> str:
        return diff_against(self._host_repo, self._base_commit)

    def close(self) -> None:
        self._close_session()
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self._root)

    # -- internals -------------------------------------------------------------------------

    def _start_shell(self) -> ShellTransport:
        return ProcessTransport(self._shell_argv(), cwd=str(self._host_repo), env=self._shell_env())

    def _shell_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.config.env_vars)
        env["ROOT"] = self.repo_path
        return env
