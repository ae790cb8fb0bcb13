"""What every backend shares: its persistent shell session, the session's setup, closing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Self

from swe_aci.env.base import CommandResult, SandboxError
from swe_aci.env.config import EnvConfig
from swe_aci.env.shell import BashSession, ShellTransport, shell_quote


class SessionEnvironment:
    """Base of the backends: owns the BashSession; subclasses prepare the repository and say how
    to start bash (`_open_session`), and release their own resources in `close`."""

    config: EnvConfig
    _session: BashSession | None = None

    def _open_session(self, start_transport: Callable[[], ShellTransport], repo: str) -> None:
        """Start the shell in the repository with the configured variables (and directories
        first on PATH), then run the
        configured setup commands (a failing one is a SandboxError)."""
        exports = {**self.config.env_vars, "ROOT": repo}
        script = "".join(f"export {k}={shell_quote(v)}\n" for k, v in exports.items())
        if self.config.path_prepend:
            script += f'export PATH={shell_quote(":".join(self.config.path_prepend))}:"$PATH"\n'
        self._session = BashSession(
            start_transport,
            output_cap=self.config.output_cap,
            setup_script=script,
            initial_cwd=repo,
        )
        for command in self.config.setup_commands:
            result = self.run(command, timeout=self.config.setup_timeout)
            if result.exit_code != 0:
                raise SandboxError(
                    f"setup command failed ({command!r}): {result.output.strip()[-300:]}"
                )

    @property
    def cwd(self) -> str:
        return self._live_session().cwd

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        return self._live_session().run(command, timeout)

    def _live_session(self) -> BashSession:
        if self._session is None:
            raise SandboxError("the environment is closed")
        return self._session

    def _close_session(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def close(self) -> None:
        self._close_session()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
