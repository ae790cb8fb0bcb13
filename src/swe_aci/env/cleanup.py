"""Leaving nothing behind: owner-labelled temporary directories, and the processes of a local shell.

A process killed with SIGKILL cannot clean up, so what it creates carries its pid: temporary
directories are named `swe-aci-<pid>-...`, containers carry labels (see docker.py). Creating an
environment removes those of ours whose owner is dead. A pid reused by an unrelated process keeps
its stale directory until that process is gone too (never the other way round).

Processes of the local shell that leave its session (`setsid`) are found at close by two traits:
an environment variable holding the environment's token, the name of its temporary directory
(inherited by every child), or descent from a process that has it (parent links in /proc). The
sweep of a dead owner's directory kills the processes marked with its name the same way, so
background processes of a run killed with SIGKILL go with its directory. Only a process that both drops the variable
(`env -i`) and daemonises away from the tree (its parent exits) escapes; bwrap and docker have no
such gap (their pid namespace ends with the shell).

A bwrap sandbox's cgroup (cgroups.py) is named after its temporary directory too, and the same
sweep removes those of dead owners, killing what is left in them.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

from swe_aci.env.bwrap.cgroups import sweep_stale as sweep_stale_cgroups
from swe_aci.env.bwrap.disk import unmount_disk

PREFIX = "swe-aci-"
OWNED = re.compile(rf"^{PREFIX}(\d+)-")
MARKER_VARIABLE = "SWE_ACI_SANDBOX"
KILL_ROUNDS = 5


def make_root(kind: str = "") -> Path:
    """A fresh temporary directory named after this process, after sweeping stale ones."""
    sweep_stale_dirs()
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-{kind}"))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_dead(name: str) -> bool:
    """Whether `name` is one of ours (`swe-aci-<pid>-...`) whose owner process is gone."""
    match = OWNED.match(name)
    if match is None:
        return False
    owner = int(match.group(1))
    return owner != os.getpid() and not pid_alive(owner)


def sweep_stale_dirs(parent: str | None = None) -> list[Path]:
    """Remove `swe-aci-<pid>-*` directories whose owner process is gone, and kill the processes
    marked with their names, and the sandbox cgroups of dead owners; return the directories."""
    with contextlib.suppress(OSError):
        sweep_stale_cgroups(owner_dead)
    removed = []
    directory = Path(parent or tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            if not owner_dead(entry.name) or not entry.is_dir(follow_symlinks=False):
                continue
            kill_marked_processes(entry.name)
            unmount_disk(entry.path)
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def kill_marked_processes(token: str) -> None:
    """SIGKILL every process whose environment holds the token, and their descendants, in rounds
    until none is left (a process may fork while we look).

    /proc/<pid>/environ is the environment a process started with: `unset` in the shell does not
    hide the shell itself, and a pid reused by an unrelated process is never mistaken for ours.
    """
    needle = f"{MARKER_VARIABLE}={token}".encode()
    for _ in range(KILL_ROUNDS):
        parents: dict[int, int] = {}
        marked: set[int] = set()
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            pid = int(entry.name)
            try:
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    stat = handle.read()
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    environ = handle.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if fields[0] in (b"Z", b"X"):
                continue
            parents[pid] = int(fields[1])
            if needle in environ.split(b"\0"):
                marked.add(pid)
        victims = marked | _descendants(marked, parents)
        victims.discard(os.getpid())
        if not victims:
            return
        # stopped first, all of them, so that no parent sees a child die and acts on it
        # (respawns it, or exits on its own before its SIGKILL lands)
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in victims:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)


def _descendants(roots: set[int], parents: dict[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found
