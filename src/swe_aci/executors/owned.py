"""Processes that die with their owner: the build steps of recipes and the local Ray instance.

What such a process starts carries a marker in its environment, `SWE_ACI_SANDBOX=<kind>-<owner
pid>` (inherited by every descendant). A watchdog process, one per owner, holds the read end of a
pipe only the owner can write to: when the owner ends, however it ends (kill -9 included), the
read gives end-of-file and the watchdog kills every process marked with the owner's pid. What a
watchdog could not kill (it was killed too) is swept by the next start (`sweep_dead_owners`).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator

from swe_aci.env.cleanup import MARKER_VARIABLE, kill_marked_processes, pid_alive

KINDS = ("build", "ray")
_watchdog: tuple[int, subprocess.Popen[bytes]] | None = None  # (owner pid, its watchdog)
_lock = threading.Lock()


def owner_marker(kind: str, owner: int | None = None) -> str:
    return f"{kind}-{owner or os.getpid()}"


def watch_owner() -> None:
    """Start this process's watchdog unless it runs (once per process, a forked child included)."""
    global _watchdog
    with _lock:
        if _watchdog is not None and _watchdog[0] == os.getpid() and _watchdog[1].poll() is None:
            return
        environment = {key: value for key, value in os.environ.items() if key != MARKER_VARIABLE}
        process = subprocess.Popen(
            [sys.executable, "-m", "swe_aci.executors.watchdog", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=environment,
            start_new_session=True,  # a Ctrl-C of the terminal does not reach it
        )
        _watchdog = (os.getpid(), process)


def track_descendants() -> None:
    """Have the watchdog also kill, when this process ends, what its marked processes started
    while it ran, found or not by the marker then: Ray's agents (`watchdog.py` says why)."""
    watch_owner()
    assert _watchdog is not None and _watchdog[1].stdin is not None
    with _lock, contextlib.suppress(OSError):
        _watchdog[1].stdin.write(b"track\n")
        _watchdog[1].stdin.flush()


def environments() -> Iterator[tuple[int, list[str]]]:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as handle:
                environ = handle.read(1 << 20)
        except OSError:
            continue
        yield int(entry.name), environ.decode(errors="replace").split("\0")


@contextlib.contextmanager
def owned_environment(kind: str) -> Iterator[str]:
    """Inside the block, processes this process starts carry the marker of `kind` (through
    `os.environ`, for libraries that start processes themselves, such as Ray), after the
    processes of dead owners of that kind are swept and the watchdog is started."""
    sweep_dead_owners(kind)
    watch_owner()
    marker = owner_marker(kind)
    previous = os.environ.get(MARKER_VARIABLE)
    os.environ[MARKER_VARIABLE] = marker
    try:
        yield marker
    finally:
        if previous is None:
            os.environ.pop(MARKER_VARIABLE, None)
        else:
            os.environ[MARKER_VARIABLE] = previous


def sweep_dead_owners(kind: str) -> list[int]:
    """SIGKILL the processes marked `kind` whose owner died without ending them, with their
    descendants; return the dead owners' pids. Processes of a live owner are left alone."""
    pattern = re.compile(re.escape(f"{MARKER_VARIABLE}={kind}-") + r"(\d+)")
    owners = {
        int(match.group(1))
        for _, environ in environments()
        for variable in environ
        if (match := pattern.fullmatch(variable))
    }
    orphaned = sorted(owner for owner in owners if owner != os.getpid() and not pid_alive(owner))
    for owner in orphaned:
        kill_marked_processes(owner_marker(kind, owner))
    return orphaned


def kill_owned(owner: int) -> None:
    """Kill every process marked with `owner`'s pid, of every kind, and their descendants."""
    for kind in KINDS:
        kill_marked_processes(owner_marker(kind, owner))
