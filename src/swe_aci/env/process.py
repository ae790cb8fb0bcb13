"""A shell transport over a child process's pipes (used by the local and bwrap backends)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Collection

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class ProcessTransport:
    """bash (or bwrap running bash) as a child in its own session, stderr merged into stdout."""

    def __init__(
        self, argv: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None
    ):
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
            bufsize=0,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin = self.process.stdin
        self._stdout_fd = self.process.stdout.fileno()
        os.set_blocking(self._stdout_fd, False)

    def fileno(self) -> int:
        return self._stdout_fd

    def write(self, data: bytes) -> None:
        self._stdin.write(data)
        self._stdin.flush()

    def read_available(self) -> bytes | None:
        try:
            return os.read(self._stdout_fd, 1 << 16)
        except BlockingIOError:
            return None

    def is_alive(self) -> bool:
        return self.process.poll() is None

    def interrupt(self, since_boot_seconds: float) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGUSR1)
        kill_session_members(self.process.pid, since_boot_seconds)

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self._stdin.close()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5)
        with contextlib.suppress(Exception):
            assert self.process.stdout is not None
            self.process.stdout.close()


def kill_session_members(
    session_id: int, since_boot_seconds: float, spare: Collection[int] = ()
) -> None:
    """SIGKILL the processes of a session that started at or after the given boot-clock time.

    Start times in /proc are whole clock ticks since boot (rounded down, as is the threshold). Processes started
    before the command (the shell, earlier background jobs) are left alone, and so are the session
    leader and the pids in `spare` (a shell that is not the leader may start within the same tick
    as the command).
    """
    threshold = int(since_boot_seconds * CLOCK_TICKS)
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == session_id or pid in spare:
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Fields after the parenthesised command name: state ppid pgrp session ... starttime(22).
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[3]) != session_id or int(fields[19]) < threshold:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
