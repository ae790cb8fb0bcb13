"""cgroup v2: a sandbox's cgroup is a child of our own cgroup, whose `cgroup.subtree_control`
enables the memory and pids controllers (see cgroups.py)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

from swe_aci.env.bwrap.cgroupfs import (
    Hierarchy,
    directory_of,
    kill_and_remove,
    kill_members,
    writable,
    write,
)

NEEDED = ("memory", "pids")


@dataclass(frozen=True)
class V2Cgroup:
    directory: str

    @property
    def directories(self) -> tuple[str, ...]:
        return (self.directory,)

    @property
    def procs_files(self) -> tuple[str, ...]:
        return (os.path.join(self.directory, "cgroup.procs"),)

    def kill(self) -> None:
        kill_file = os.path.join(self.directory, "cgroup.kill")
        if os.path.exists(kill_file):
            with contextlib.suppress(OSError):
                write(self.directory, "cgroup.kill", 1)
        kill_members(self.directories)

    def remove(self) -> None:
        kill = (
            "cgroup.kill" if os.path.exists(os.path.join(self.directory, "cgroup.kill")) else None
        )
        kill_and_remove(self.directories, kill)


@dataclass(frozen=True)
class V2Hierarchy:
    parent: str
    version: str = "v2"

    @classmethod
    def find(cls) -> tuple[Hierarchy | None, str]:
        directory = directory_of("")
        if directory is None:
            return None, "no cgroup v2 hierarchy holds us"
        try:
            with open(os.path.join(directory, "cgroup.subtree_control")) as handle:
                enabled = set(handle.read().split())
        except OSError:
            return None, f"cannot read {directory}/cgroup.subtree_control"
        missing = [name for name in NEEDED if name not in enabled]
        if missing:
            return None, f"our cgroup v2 {directory} does not enable {' and '.join(missing)}"
        if not writable(directory):
            return None, f"our cgroup v2 {directory} is not writable"
        return cls(directory), f"cgroup v2 under {directory}"

    def parents(self) -> tuple[str, ...]:
        return (self.parent,)

    def create(self, name: str, memory: int | None, pids: int | None) -> V2Cgroup:
        cgroup = V2Cgroup(os.path.join(self.parent, name))
        os.mkdir(cgroup.directory, 0o755)
        try:
            if memory is not None:
                write(cgroup.directory, "memory.max", memory)
                if os.path.exists(os.path.join(cgroup.directory, "memory.swap.max")):
                    write(cgroup.directory, "memory.swap.max", 0)
            if pids is not None:
                write(cgroup.directory, "pids.max", pids)
        except BaseException:
            cgroup.remove()
            raise
        return cgroup
