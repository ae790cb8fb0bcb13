"""A cgroup of its own for each bwrap sandbox, bounding the sandbox as a whole.

Where the host gives our process a writable cgroup hierarchy, each sandbox gets a child of our
own cgroup, with `env.memory` as the memory of all its processes together (swap included, or no
swap) and `env.pids_limit` as the number of its processes and threads. Two implementations of one
small protocol (`Hierarchy`, `Cgroup`):

- cgroup v2 (`cgroups_v2.V2Hierarchy`): our cgroup is a writable directory whose
  `cgroup.subtree_control` already enables `memory` and `pids` (in practice the root cgroup: one
  that holds processes, as ours does, may not enable them; moving ourselves into a leaf of a
  delegated subtree first is not done);
  the child gets `memory.max`, `memory.swap.max` 0 and `pids.max`; it is killed by `cgroup.kill`.
- cgroup v1 (`cgroups_v1.V1Hierarchy`): our cgroups in the `memory` and `pids` hierarchies are
  writable directories; the child (one directory in each) gets `memory.limit_in_bytes` and
  `memory.memsw.limit_in_bytes` (when swap is accounted; else `memory.swappiness` 0) and
  `pids.max`.

The launcher (env/bwrap/launcher.py) writes its own pid into the child's `cgroup.procs` before it execs
bwrap, so every sandbox process is born inside. Inside the sandbox the cgroup file system is
not there (a read-only empty tmpfs covers /sys/fs/cgroup, and /sys is read-only), the sandbox has
no capability and may not create a user namespace, so it can neither leave its cgroup nor raise
its limits, even when the cgroup's files belong to its own uid (a delegated subtree).

A cgroup is named after the environment's temporary root (`swe-aci-<owner pid>-...`, see
cleanup.py) and the owner's pid namespace; `sweep_stale` removes those of dead owners of our pid
namespace. Nothing here logs or takes a lock: `Cgroup.remove` runs from signal handlers too.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable

from swe_aci.env.bwrap.cgroupfs import Hierarchy, kill_and_remove
from swe_aci.env.bwrap.cgroups_v1 import V1Hierarchy
from swe_aci.env.bwrap.cgroups_v2 import V2Hierarchy


def pid_namespace() -> int:
    """Our pid namespace's inode: pids in a cgroup's name mean something in it only."""
    return os.stat("/proc/self/ns/pid").st_ino


def cgroup_name(token: str) -> str:
    """The cgroup of the environment whose temporary root is named `token`."""
    return f"{token}.pidns-{pid_namespace()}"


@functools.cache
def find_hierarchy() -> tuple[Hierarchy | None, str]:
    """The hierarchy sandboxes get their cgroups in, preferring v2, and a line saying why (none
    is used when neither offers writable memory and pids controllers to our process)."""
    v2, v2_reason = V2Hierarchy.find()
    if v2 is not None:
        return v2, v2_reason
    v1, v1_reason = V1Hierarchy.find()
    if v1 is not None:
        return v1, v1_reason
    return None, f"{v2_reason}; {v1_reason}"


def sweep_stale(owner_dead: Callable[[str], bool]) -> list[str]:
    """Remove the cgroups (killing their processes) of our pid namespace whose owner is dead,
    as `owner_dead` tells by name; return their directories. Nothing when no hierarchy is used."""
    hierarchy, _ = find_hierarchy()
    if hierarchy is None:
        return []
    suffix = f".pidns-{pid_namespace()}"
    removed = []
    for parent in hierarchy.parents():
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                if entry.name.endswith(suffix) and entry.is_dir() and owner_dead(entry.name):
                    kill_and_remove((entry.path,))
                    removed.append(entry.path)
    return removed
