"""The total disk bound of a bwrap sandbox (`env.disk`): its writable directories on one tmpfs.

Everything the sandbox may write (the repository's working copy, /tmp and HOME) is put on a tmpfs
of `env.disk` bytes, so a write past the bound fails in the sandbox with ENOSPC ("No space left
on device") while the host's own disks are untouched. A tmpfs lives in memory: what the sandbox
writes there is charged to its cgroup's memory (where it has one), the working copy to swe-aci's.

Started as root, swe-aci mounts the tmpfs on the host at `<root>/disk` (`mount_disk`): the host
sees these directories where they are, bwrap binds them as before. At close (and when the sweep
removes a dead owner's directory) it is detached (`umount2(MNT_DETACH)`).

An ordinary user may mount nothing the host sees, so a `Holder` process (env/bwrap/holder.py)
mounts the tmpfs at `<root>/disk` in a user and mount namespace of its own and keeps them alive
across restarts of the shell. The host reaches it by the magic link `/proc/<holder>/root`: the
writable root is `/proc/<holder>/root<root>/disk`, a path that means the tmpfs both on the host
(our Python file I/O) and inside the holder's namespaces, where git and bwrap are run
(`Holder.enter`: git canonicalises its paths, and bwrap may bind only mounts of its own
namespace, from the plain path `Holder.inside`). The holder carries the environment's marker
variable and dies with its owner (PDEATHSIG), so close and the sweep of a dead owner's directory
kill it like the sandbox's other processes.
"""

from __future__ import annotations

import ctypes
import functools
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from swe_aci.env.bwrap import holder

DISK_DIR = "disk"
HOLDER_START_TIMEOUT = 30
MS_NOSUID = 2
MS_NODEV = 4
MNT_DETACH = 2


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def disk_problem() -> str | None:
    """Why the disk of a sandbox cannot be bounded here, or None."""
    if os.geteuid() != 0 and shutil.which("nsenter") is None:
        return "nsenter is not on PATH (an ordinary user's bounded disk is entered with it)"
    return None


def mount_disk(path: Path, size: int) -> None:
    """Create `path` and mount a tmpfs of `size` bytes there (OSError when the kernel refuses)."""
    path.mkdir(mode=0o755)
    options = f"size={size},mode=0755".encode()
    flags = MS_NOSUID | MS_NODEV
    if _libc().mount(b"swe-aci-disk", os.fsencode(path), b"tmpfs", flags, options) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"mount tmpfs: {os.strerror(number)}", str(path))


def unmount_disk(root: Path | str) -> None:
    """Detach the tmpfs at `root/disk`, if one is mounted there (safe in a signal handler)."""
    path = os.path.join(root, DISK_DIR)
    if os.path.ismount(path):
        _libc().umount2(os.fsencode(path), MNT_DETACH)


class Holder:
    """The process holding an ordinary user's tmpfs of `size` bytes at `path` (see above)."""

    def __init__(self, path: Path, size: int, env: dict[str, str]) -> None:
        path.mkdir(mode=0o755)
        self._path = str(path)
        argv = [sys.executable, "-S", holder.__file__, self._path, str(size), str(os.getpid())]
        self._process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd="/", text=True
        )
        assert self._process.stdout is not None and self._process.stderr is not None
        ready, _, _ = select.select([self._process.stdout], [], [], HOLDER_START_TIMEOUT)
        if not ready:
            self.stop()
            raise OSError(f"the disk's holder did not start within {HOLDER_START_TIMEOUT} s")
        if self._process.stdout.readline().strip() != "ready":
            message = self.stop()[-4096:].strip() or "it exited"
            raise OSError(f"the disk's holder failed: {message}")

    @property
    def root(self) -> Path:
        """The tmpfs, seen from the host and from inside the holder's namespaces alike."""
        return Path(f"/proc/{self._process.pid}/root{self._path}")

    def inside(self, path: str) -> str:
        """A path under `root` as a plain path of the holder's mount namespace."""
        prefix = f"/proc/{self._process.pid}/root"
        return path[len(prefix) :] if path.startswith(f"{prefix}/") else path

    def enter(self) -> list[str]:
        """The command prefix that runs a program in the holder's namespaces (from /)."""
        return ["nsenter", "--preserve-credentials", "-U", "-m", "-t", str(self._process.pid), "--"]

    def stop(self) -> str:
        """Kill the holder (its namespaces and the tmpfs go with it); what it wrote on stderr."""
        self._process.send_signal(signal.SIGKILL)
        return self._process.communicate()[1]
