"""Reading and writing the cgroup file system, for both versions (see cgroups.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Protocol

PROC_CGROUP = "/proc/self/cgroup"
MOUNTINFO = "/proc/self/mountinfo"
KILL_ROUNDS = 100
ROUND_SECONDS = 0.02


class Cgroup(Protocol):
    """One sandbox's cgroup (a directory per hierarchy, for v1)."""

    @property
    def procs_files(self) -> tuple[str, ...]:
        """The `cgroup.procs` files a process joins it through."""
        ...

    @property
    def directories(self) -> tuple[str, ...]: ...

    def kill(self) -> None:
        """SIGKILL every process in it now (one round, not waiting for them to die)."""
        ...

    def remove(self) -> None:
        """SIGKILL every process in it until none is left, and remove it (bounded; safe to call
        twice)."""
        ...


class Hierarchy(Protocol):
    version: str

    def create(self, name: str, memory: int | None, pids: int | None) -> Cgroup:
        """A child cgroup of ours with these limits (raises OSError when the kernel refuses)."""
        ...

    def parents(self) -> tuple[str, ...]:
        """The directories children are made in (where `sweep_stale` looks)."""
        ...


def own_cgroups() -> dict[str, str]:
    """Our cgroup per hierarchy, as /proc/self/cgroup lists it: "memory", "pids"... for v1,
    "" for v2."""
    found: dict[str, str] = {}
    with open(PROC_CGROUP) as handle:
        for line in handle:
            number, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if number != "0" else [""]:
                found[controller] = path
    return found


def cgroup_mounts() -> dict[str, tuple[str, str]]:
    """The mounted cgroup hierarchies: controller ("" for v2) -> (root in the hierarchy,
    mount point), from /proc/self/mountinfo (the first mount of each)."""
    found: dict[str, tuple[str, str]] = {}
    with open(MOUNTINFO) as handle:
        for line in handle:
            fields = line.split()
            tail = fields[fields.index("-") + 1 :]
            root, point = fields[3], fields[4]
            if tail[0] == "cgroup2":
                found.setdefault("", (root, point))
            elif tail[0] == "cgroup":
                for option in tail[2].split(","):
                    if option in ("memory", "pids"):
                        found.setdefault(option, (root, point))
    return found


def directory_of(controller: str) -> str | None:
    """The directory of our own cgroup in a hierarchy, where it is mounted (None: not)."""
    try:
        mounts = cgroup_mounts()
        own = own_cgroups()
    except (OSError, ValueError, IndexError):
        return None
    if controller not in mounts or controller not in own:
        return None
    root, point = mounts[controller]
    path = own[controller]
    if root != "/" and not (path == root or path.startswith(root.rstrip("/") + "/")):
        return None
    relative = path[len(root) :] if root != "/" else path
    directory = point.rstrip("/") + "/" + relative.strip("/")
    return directory.rstrip("/") or "/"


def writable(directory: str) -> bool:
    return os.access(directory, os.W_OK | os.X_OK) and os.access(
        os.path.join(directory, "cgroup.procs"), os.W_OK
    )


def write(directory: str, name: str, value: int | str) -> None:
    with open(os.path.join(directory, name), "w") as handle:
        handle.write(str(value))


def members(directories: tuple[str, ...]) -> set[int]:
    pids: set[int] = set()
    for directory in directories:
        with (
            contextlib.suppress(OSError, ValueError),
            open(os.path.join(directory, "cgroup.procs")) as handle,
        ):
            pids.update(int(word) for word in handle.read().split())
    return pids


def kill_members(directories: tuple[str, ...]) -> None:
    for pid in members(directories):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def kill_and_remove(directories: tuple[str, ...], kill_file: str | None = None) -> None:
    """SIGKILL the processes of these cgroup directories until none is left (a process may fork
    while we look), then remove the directories; bounded by KILL_ROUNDS."""
    if kill_file is not None:
        with contextlib.suppress(OSError):
            write(directories[0], kill_file, 1)
    for _ in range(KILL_ROUNDS):
        kill_members(directories)
        left = []
        for directory in directories:
            try:
                os.rmdir(directory)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(directory)
        if not left:
            return
        directories = tuple(left)
        time.sleep(ROUND_SECONDS)
