"""cgroup v1: a sandbox's cgroup is one directory in the `memory` and one in the `pids`
hierarchy, children of our own cgroups there (see cgroups.py)."""

from __future__ import annotations

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


@dataclass(frozen=True)
class V1Cgroup:
    memory_dir: str
    pids_dir: str

    @property
    def directories(self) -> tuple[str, ...]:
        return (self.memory_dir, self.pids_dir)

    @property
    def procs_files(self) -> tuple[str, ...]:
        return tuple(os.path.join(d, "cgroup.procs") for d in self.directories)

    def kill(self) -> None:
        kill_members(self.directories)

    def remove(self) -> None:
        kill_and_remove(self.directories)


@dataclass(frozen=True)
class V1Hierarchy:
    memory_parent: str
    pids_parent: str
    version: str = "v1"

    @classmethod
    def find(cls) -> tuple[Hierarchy | None, str]:
        parents = {}
        for controller in ("memory", "pids"):
            directory = directory_of(controller)
            if directory is None:
                return None, f"no cgroup v1 {controller} hierarchy holds us"
            if not writable(directory):
                return None, f"our cgroup v1 {controller} directory {directory} is not writable"
            parents[controller] = directory
        found = cls(parents["memory"], parents["pids"])
        return found, f"cgroup v1 under {found.memory_parent} and {found.pids_parent}"

    def parents(self) -> tuple[str, ...]:
        return (self.memory_parent, self.pids_parent)

    def create(self, name: str, memory: int | None, pids: int | None) -> V1Cgroup:
        cgroup = V1Cgroup(
            os.path.join(self.memory_parent, name), os.path.join(self.pids_parent, name)
        )
        try:
            for directory in cgroup.directories:
                os.mkdir(directory, 0o755)
            if memory is not None:
                write(cgroup.memory_dir, "memory.limit_in_bytes", memory)
                if os.path.exists(os.path.join(cgroup.memory_dir, "memory.memsw.limit_in_bytes")):
                    write(cgroup.memory_dir, "memory.memsw.limit_in_bytes", memory)
                else:  # swap is not accounted: keep the sandbox's memory out of it
                    write(cgroup.memory_dir, "memory.swappiness", 0)
            if pids is not None:
                write(cgroup.pids_dir, "pids.max", pids)
        except BaseException:
            cgroup.remove()
            raise
        return cgroup
