"""One persistent bash session spoken to over a byte stream.

The protocol costs no process per command. Each command is handed to bash as a quoted here-document
on file descriptor 3, whose delimiter is a fresh random nonce, and `source`d from there with stdin
at EOF; then bash prints an end marker carrying the same nonce, the exit status and the working
directory:

    source /dev/fd/3 3<<'__SWE_ACI_<nonce>' </dev/null
    <command text, verbatim>
    __SWE_ACI_<nonce>
    printf '\\n%s %s %s\\n' __SWE_ACI_DONE_<nonce> "$?" "$PWD"

A command cannot forge the marker (it never sees the nonce), syntax errors in it stay inside
`source`, and `cd`, variables (even `declare`d ones) and functions persist because `source` runs in
the shell itself. Interrupting works like Ctrl-C at a terminal: the transport kills the command's
processes and sends the shell SIGUSR1, whose trap `return`s from the sourced command, so the rest
of it (`sleep 30; echo after`, or a builtin loop) is abandoned too.

Backends differ only in how bytes reach bash and in how a runaway command is interrupted; that is
the `ShellTransport` protocol below.
"""

from __future__ import annotations

import secrets
import select
import time
from collections.abc import Callable
from typing import Protocol

from swe_aci.env.base import CommandResult, SandboxError

DEFAULT_OUTPUT_CAP = 100_000
MARKER_PREFIX = b"__SWE_ACI_DONE_"
# How long to wait for the end marker after the command was interrupted, before concluding the
# shell itself is stuck (it ignores SIGUSR1) and restarting it.
INTERRUPT_GRACE_SECONDS = 2.0
# While waiting for output, how often to check that the shell itself is still alive.
LIVENESS_POLL_SECONDS = 0.25
# After a timeout, how often to interrupt again (each SIGUSR1 unwinds one shell function).
INTERRUPT_POLL_SECONDS = 0.02
# Bytes kept unflushed at the end of the buffer so a marker split across reads is still found.
TAIL_KEEP = 8192

SHELL_SETUP = r"""
export PAGER=cat GIT_PAGER=cat MANPAGER=cat TERM=dumb LC_ALL=C.UTF-8 PIP_PROGRESS_BAR=off
export PYTHONDONTWRITEBYTECODE=1 PIP_NO_INPUT=1 DEBIAN_FRONTEND=noninteractive
unset HISTFILE PROMPT_COMMAND
trap 'return 130 2>/dev/null' USR1
"""


class ShellTransport(Protocol):
    """A bidirectional byte stream to a running `bash` (stderr already merged into stdout)."""

    def fileno(self) -> int:
        """A file descriptor that becomes readable when output (or EOF) is available."""
        ...

    def write(self, data: bytes) -> None:
        """Send bytes to the shell's standard input. Raises OSError if the shell is gone."""
        ...

    def read_available(self) -> bytes | None:
        """Read what is available now without blocking: None if nothing, b"" at end of file."""
        ...

    def is_alive(self) -> bool:
        """Whether the shell process still runs (its stream may outlive it via background jobs)."""
        ...

    def interrupt(self, since_boot_seconds: float) -> None:
        """Send the shell SIGUSR1 (it abandons the running command), then kill every process of
        its session started at or after `since_boot_seconds` (CLOCK_BOOTTIME), never the shell."""
        ...

    def reap_runaway(self) -> int:
        """Kill the processes earlier commands left behind when they are a runaway (a fork bomb
        in the background: so many that the next command could not start); return how many."""
        ...

    def close(self) -> None:
        """Terminate the shell and release the stream."""
        ...


def boot_clock() -> float:
    """Seconds since boot, the clock /proc/<pid>/stat start times are measured against."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


class ShellDied(Exception):
    """The shell's stream closed while a command was running."""


class BashSession:
    """A persistent bash session with per-command timeouts, output caps and self-healing.

    `start_transport` starts a fresh bash and returns its stream; it is called again when the shell
    dies or wedges, after which the last known working directory is restored.
    """

    def __init__(
        self,
        start_transport: Callable[[], ShellTransport],
        *,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        default_timeout: float = 25.0,
        setup_script: str = "",
        initial_cwd: str | None = None,
    ) -> None:
        self._start_transport = start_transport
        self.output_cap = output_cap
        self.default_timeout = default_timeout
        self._setup_script = SHELL_SETUP + setup_script
        self._transport: ShellTransport | None = None
        self.cwd = initial_cwd or "/"
        self._start(initial_cwd)

    # -- lifecycle -------------------------------------------------------------------------

    def _start(self, cwd: str | None) -> None:
        self._transport = self._start_transport()
        script = self._setup_script
        if cwd:
            script += f"\ncd {shell_quote(cwd)}"
        result = self._exchange(script, timeout=60.0)
        if result.timed_out or result.exit_code != 0:
            raise SandboxError(f"the sandbox shell failed to start: {result.output.strip()[:500]}")

    def restart(self) -> None:
        """Replace the shell with a fresh one in the same working directory."""
        self._close_transport()
        self._start(self.cwd)

    def close(self) -> None:
        self._close_transport()

    def _close_transport(self) -> None:
        if self._transport is not None:
            try:
                self._transport.close()
            finally:
                self._transport = None

    # -- commands --------------------------------------------------------------------------

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run one command; restart the shell (and say so) if it died or had to be killed."""
        if self._transport is None:
            raise SandboxError("the shell session is closed")
        try:
            return self._exchange(command, timeout if timeout is not None else self.default_timeout)
        except ShellDied as died:
            partial = died.args[0] if died.args else ""
            self.restart()
            notice = (
                "The shell exited and was restarted; exported variables and functions were lost."
            )
            return CommandResult(
                output=_join_notice(partial, notice),
                exit_code=None,
                shell_restarted=True,
            )

    def _exchange(self, command: str, timeout: float, late_jobs: bool = True) -> CommandResult:
        assert self._transport is not None
        nonce = secrets.token_hex(16)
        while f"__SWE_ACI_{nonce}" in command:
            nonce = secrets.token_hex(16)
        delimiter = f"__SWE_ACI_{nonce}"
        marker = MARKER_PREFIX + nonce.encode()
        if not command.endswith("\n"):
            command += "\n"
        script = (
            f"source /dev/fd/3 3<<'{delimiter}' </dev/null\n"
            f"{command}"
            f"{delimiter}\n"
            f'printf \'\\n%s %s %s\\n\' {marker.decode()} "$?" "$PWD"\n'
        )
        reaped = self._transport.reap_runaway()
        started = boot_clock()
        try:
            self._transport.write(script.encode("utf-8", errors="surrogateescape"))
        except OSError as exc:
            raise ShellDied("") from exc
        reader = _MarkerReader(marker, self.output_cap)
        deadline = time.monotonic() + timeout
        timed_out = False
        while not reader.done:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if timed_out:
                    # Interrupted, yet the shell never answered: it is wedged (or the command
                    # replaced the USR1 trap and loops). Start over.
                    self.restart()
                    return CommandResult(
                        output=_join_notice(
                            reader.text(),
                            f"The command timed out after {timeout:g} seconds and the shell was "
                            "restarted; exported variables and functions were lost.",
                        ),
                        exit_code=None,
                        timed_out=True,
                        truncated=reader.dropped > 0,
                        shell_restarted=True,
                    )
                timed_out = True
                self._transport.interrupt(started)
                deadline = time.monotonic() + INTERRUPT_GRACE_SECONDS
                continue
            wait = min(remaining, INTERRUPT_POLL_SECONDS if timed_out else LIVENESS_POLL_SECONDS)
            ready, _, _ = select.select([self._transport.fileno()], [], [], wait)
            if not ready:
                if not self._transport.is_alive():
                    raise ShellDied(reader.text())
                if timed_out:
                    # A loop may keep starting new processes: kill those too.
                    self._transport.interrupt(started)
                continue
            chunk = self._transport.read_available()
            if chunk is None:
                continue
            if not chunk:
                raise ShellDied(reader.text())
            reader.feed(chunk)
        if reader.cwd:
            self.cwd = reader.cwd
        output = reader.text()
        if timed_out and late_jobs:
            # bash reports a job the interrupt killed ("line 1: 3 Killed  sleep 200") when it
            # next reaps it, which may be after the end marker: let it do so here, in this
            # command's output, not at the start of the next command's. An empty command: no
            # name the agent's command could have redefined as a function.
            output += self._exchange("", INTERRUPT_GRACE_SECONDS, late_jobs=False).output
        if reaped:
            output = (
                f"[{reaped} processes left running by earlier commands were killed first: "
                "a runaway, e.g. a fork bomb.]\n" + output
            )
        return CommandResult(
            output=output,
            exit_code=reader.exit_code,
            timed_out=timed_out,
            truncated=reader.dropped > 0,
        )


class _MarkerReader:
    """Accumulates a command's output up to a cap, watching for the end marker.

    Memory stays bounded: bytes past the cap are counted and dropped, only a short tail is kept
    so the marker can still be recognised.
    """

    def __init__(self, marker: bytes, cap: int) -> None:
        self.marker = marker
        self.cap = cap
        self.kept = bytearray()
        self.pending = bytearray()
        self.dropped = 0
        self.done = False
        self.exit_code: int | None = None
        self.cwd: str | None = None

    def feed(self, chunk: bytes) -> None:
        search_from = max(0, len(self.pending) - len(self.marker) - 1)
        self.pending += chunk
        index = self.pending.find(b"\n" + self.marker, search_from)
        if index < 0:
            if len(self.pending) > 2 * TAIL_KEEP:
                self._flush(len(self.pending) - TAIL_KEEP)
            return
        line_end = self.pending.find(b"\n", index + 1 + len(self.marker))
        if line_end < 0:
            return
        trailer = bytes(self.pending[index + 1 + len(self.marker) : line_end]).decode(
            "utf-8", errors="replace"
        )
        status, _, cwd = trailer.strip().partition(" ")
        self.exit_code = int(status) if status.lstrip("-").isdigit() else None
        self.cwd = cwd or None
        self._flush(index)
        self.pending.clear()
        self.done = True

    def _flush(self, upto: int) -> None:
        room = self.cap - len(self.kept)
        piece = self.pending[:upto]
        if room > 0:
            self.kept += piece[:room]
        self.dropped += max(0, len(piece) - max(room, 0))
        del self.pending[:upto]

    def text(self) -> str:
        if not self.done and self.pending:
            self._flush(len(self.pending))
        text = bytes(self.kept).decode("utf-8", errors="replace")
        if self.dropped:
            text = _join_notice(
                text,
                f"[Output truncated: {self.dropped} more bytes were not shown "
                f"(limit {self.cap} bytes).]",
            )
        return text


def _join_notice(text: str, notice: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return text + notice


def shell_quote(value: str) -> str:
    """Single-quote a string for bash."""
    return "'" + value.replace("'", "'\\''") + "'"
