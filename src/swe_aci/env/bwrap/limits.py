"""Resource limits of a sandbox's processes: what `EnvConfig` asks for and how bwrap enforces it.

bwrap enforces them with rlimits, set by the shell on itself (`ulimit`, soft and hard) inside the
sandbox's user namespace before it becomes the agent's shell, so every command inherits them and
none can raise them again:

- memory: RLIMIT_DATA, the private writable memory of each process (heap, anonymous mappings,
  thread stacks: an allocation past it fails). Unlike RLIMIT_AS it does not count address space
  only reserved (PROT_NONE), which some runtimes (V8, sanitizers) reserve by terabytes;
- processes: RLIMIT_NPROC. Since Linux 5.14 it counts per user *namespace* and uid, so it counts
  the processes of this sandbox only: never the host's processes of the same uid, nor another
  sandbox's. Host root is exempt from it, which is one reason the sandbox never runs as host root;
- file size: RLIMIT_FSIZE (a write past it fails, SIGXFSZ kills the writer);
- CPU time: RLIMIT_CPU, seconds of CPU per process (SIGXCPU kills it).

Where the host offers a writable cgroup hierarchy, the sandbox as a whole is bounded too: its
own cgroup (env/bwrap/cgroups.py) holds `memory` for all its processes together and `processes` as its
pids.max. The rlimits stay in force either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from swe_aci.env.bwrap.cgroups import find_hierarchy
from swe_aci.env.bwrap.disk import disk_problem
from swe_aci.env.config import EnvConfig, parse_bytes


@dataclass(frozen=True)
class ResourceLimits:
    """The rlimits of every process in a sandbox (None: not limited)."""

    memory: int | None
    processes: int | None
    file_size: int | None
    cpu_seconds: int | None

    @classmethod
    def from_config(cls, config: EnvConfig) -> ResourceLimits:
        return cls(
            memory=parse_bytes(config.memory) if config.memory else None,
            processes=config.pids_limit,
            file_size=parse_bytes(config.file_size) if config.file_size else None,
            cpu_seconds=config.cpu_seconds,
        )

    def ulimit_command(self) -> str:
        """bash's `ulimit` setting them (soft and hard); ':' when there is nothing to set."""
        options = []
        if self.memory is not None:
            options.append(f"-d {max(1, self.memory // 1024)}")  # KiB
        if self.processes is not None:
            options.append(f"-u {self.processes}")
        if self.file_size is not None:
            options.append(f"-f {max(1, self.file_size // 1024)}")  # 1024-byte blocks
        if self.cpu_seconds is not None:
            options.append(f"-t {self.cpu_seconds}")
        return " && ".join(f"ulimit {option}" for option in options) or ":"

    def describe(self) -> str:
        parts = [
            f"memory {_size(self.memory)} per process",
            f"{self.processes or 'unlimited'} processes",
            f"file size {_size(self.file_size)}",
            f"CPU {self.cpu_seconds or 'unlimited'} s per process",
        ]
        return "rlimits: " + ", ".join(parts)


def _size(value: int | None) -> str:
    return "unlimited" if value is None else f"{value / 2**30:g} GiB"


def limits_in_force(config: EnvConfig) -> str:
    """One line saying how a bwrap sandbox of this config is bounded."""
    limits = ResourceLimits.from_config(config)
    hierarchy, reason = find_hierarchy()
    if hierarchy is None:
        line = f"{limits.describe()}; no cgroup ({reason})"
    else:
        line = (
            f"{limits.describe()}; a cgroup per sandbox ({reason}): memory "
            f"{_size(limits.memory)} for the whole sandbox, {limits.processes or 'unlimited'} "
            "processes"
        )
    return f"{line}; {disk_in_force(config)}"


def disk_in_force(config: EnvConfig) -> str:
    if config.disk is None:
        return "disk not bounded in total (env.disk is null)"
    problem = disk_problem()
    if problem is not None:
        return f"disk not bounded in total ({problem})"
    return f"disk {_size(parse_bytes(config.disk))} in total (a tmpfs holding the writable directories)"
