"""A shell transport over a child process's pipes (used by the local and bwrap backends)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Collection

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
KILL_ROUNDS = 200
STOPPED = frozenset("Tt")
DEAD = frozenset("ZXx")
# Processes left behind by earlier commands beyond which they are a runaway (a fork bomb run in
# the background) and are killed before the next command: background jobs are a few.
RUNAWAY_PROCESSES = 64


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

    def reap_runaway(self) -> int:
        return reap_runaway(self.process.pid, self.shell_pids())

    def shell_pids(self) -> set[int]:
        """The shell's own pids besides the session leader (none: the leader is the shell)."""
        return set()

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
) -> int:
    """SIGKILL the processes of a session that started at or after the given boot-clock time;
    return how many there were.

    Start times in /proc are whole clock ticks since boot (rounded down, as is the threshold).
    Processes started before the command (the shell, earlier background jobs) are left alone,
    and so are the session leader and the pids in `spare` (a shell that is not the leader may
    start within the same tick as the command). A fork bomb outruns one round of SIGKILL (its
    processes fork while the round goes on), so they are first stopped, round after round,
    until every one is stopped (a stopped process forks no more), then killed together.
    """
    threshold = int(since_boot_seconds * CLOCK_TICKS)
    found: set[int] = set()
    for _ in range(KILL_ROUNDS):
        members = session_members(session_id, threshold, spare)
        if not members:
            break
        found.update(members)
        running = [pid for pid, state in members.items() if state not in STOPPED]
        for pid in running or members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP if running else signal.SIGKILL)
    return len(found)


def session_members(session_id: int, threshold: int, spare: Collection[int] = ()) -> dict[int, str]:
    """The live processes of a session started at or after clock tick `threshold`, but the
    leader and `spare`, with their state letter (R, S, T...; zombies are not listed)."""
    members: dict[int, str] = {}
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
        state = fields[0].decode()
        if int(fields[3]) != session_id or int(fields[19]) < threshold or state in DEAD:
            continue
        members[pid] = state
    return members


def reap_runaway(session_id: int, spare: Collection[int]) -> int:
    """Kill every process of the session but the leader and `spare` when there are at least
    RUNAWAY_PROCESSES of them; return how many were killed (0: they were left alone).

    Counted first along the leader's descendants (a few reads of `children` files, where a scan
    of /proc costs a read per process of the host): in bwrap every orphan is the shell's child
    (it is the namespace's pid 1); the scan runs only when the count reaches the bound."""
    if count_descendants(session_id, RUNAWAY_PROCESSES + len(spare) + 1) < RUNAWAY_PROCESSES:
        return 0
    if len(session_members(session_id, 0, spare)) < RUNAWAY_PROCESSES:
        return 0
    return kill_session_members(session_id, 0, spare)


def count_descendants(pid: int, limit: int) -> int:
    """How many descendants `pid` has, counting up to `limit`."""
    seen: set[int] = set()
    queue = [pid]
    while queue and len(seen) < limit:
        parent = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as handle:
                    children = [int(child) for child in handle.read().split()]
            except OSError:
                continue
            fresh = [child for child in children if child not in seen]
            seen.update(fresh)
            queue.extend(fresh)
    return len(seen)
