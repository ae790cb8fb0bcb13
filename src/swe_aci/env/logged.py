"""Running a command (a test suite) in the repository with its output in a log, read back bounded.

A command's output through the shell is capped at `EnvConfig.output_cap` and keeps its start;
a test runner's summary is at the end. So the command writes stdout and stderr to a log file in
the sandbox, and the end of the log (at most `max_bytes`) is read back. The command could have
replaced the log with a FIFO, a link to /dev/zero or a huge file, so the host never opens it: only
a regular file is read, through the sandbox's shell, in base64 chunks that each fit one command's
capped output, every command under a timeout. Used by the evaluation (the task's tests) and
usable by any strategy that runs tests in its sandbox.
"""

from __future__ import annotations

import base64
import binascii
import secrets
import shlex
from dataclasses import dataclass

from swe_aci.env.base import Environment

# Keep at most this much of a log (its end: the summaries are there).
MAX_LOG_BYTES = 20_000_000
# Reading the log back: seconds per command, raw bytes per command.
READ_TIMEOUT = 30.0
LOG_CHUNK_BYTES = 3_000_000


@dataclass(frozen=True)
class LoggedRun:
    """The end of the command's log, its exit status and whether it ran past its timeout."""

    log: str
    exit_code: int | None
    timed_out: bool


def run_logged(
    environment: Environment,
    command: str,
    *,
    timeout: float,
    log_path: str | None = None,
    max_bytes: int = MAX_LOG_BYTES,
) -> LoggedRun:
    """Run `command` (shell text; may span lines) in the repository, its output into `log_path`
    (None: a private file under /tmp, removed after reading), and read the log's end back."""
    path = log_path or f"/tmp/swe-aci-log-{secrets.token_hex(8)}.txt"
    quoted = shlex.quote(path)
    root = shlex.quote(environment.repo_path)
    try:
        result = environment.run(f"cd {root} && ( {command}\n) > {quoted} 2>&1", timeout=timeout)
        log = read_log(environment, path, max_bytes)
    finally:
        if log_path is None:
            environment.run(f"rm -f -- {quoted}", timeout=READ_TIMEOUT)
    return LoggedRun(log, result.exit_code, result.timed_out)


def read_log(environment: Environment, path: str, max_bytes: int = MAX_LOG_BYTES) -> str:
    """The end of the file at `path` in the sandbox, at most `max_bytes`, read through the shell
    (see the module's docstring); "" when it is not a regular file."""
    quoted = shlex.quote(path)
    probe = environment.run(
        f"[ -f {quoted} ] && stat -L -c %s {quoted} || echo none", timeout=READ_TIMEOUT
    )
    size_text = probe.output.strip().splitlines()[-1:] or ["none"]
    if probe.timed_out or not size_text[0].isdigit():
        return ""
    size = int(size_text[0])
    start = max(0, size - max_bytes)
    chunk = max(1024, min(LOG_CHUNK_BYTES, _chunk_for(environment)))
    data = bytearray()
    while start + len(data) < size:
        offset = start + len(data)
        result = environment.run(
            f"tail -c +{offset + 1} {quoted} | head -c {chunk} | base64 -w0", timeout=READ_TIMEOUT
        )
        try:
            piece = base64.b64decode(result.output.strip(), validate=True)
        except (ValueError, binascii.Error):
            break
        if result.timed_out or result.truncated or not piece:
            break
        data += piece
    return data.decode("utf-8", errors="replace")


def _chunk_for(environment: Environment) -> int:
    """Raw bytes per chunk whose base64 fits the environment's output cap."""
    cap = getattr(getattr(environment, "config", None), "output_cap", LOG_CHUNK_BYTES)
    return (cap - 1024) * 3 // 4
