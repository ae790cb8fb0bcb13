"""The total disk bound of a bwrap sandbox (`env.disk`): its writable directories on one tmpfs.

Started as root, swe-aci mounts a tmpfs of `env.disk` bytes on the host at `<root>/disk` and puts
there everything the sandbox may write: the repository's working copy, /tmp and HOME. The host
still sees these directories where they are (its file I/O and the diff read the copy in place,
as for an unbounded sandbox), bwrap binds them as before, and a write past the bound fails in the
sandbox with ENOSPC ("No space left on device") while the host's own disks are untouched. A
tmpfs lives in memory: what the sandbox writes there is charged to its cgroup's memory (where it
has one), the working copy to swe-aci's. At close (and when the sweep removes a dead owner's
directory) the tmpfs is detached (`umount2(MNT_DETACH)`, no process started, no lock taken).

An ordinary user may mount nothing the host sees (a tmpfs inside the sandbox's own mount
namespace would be invisible to the host-side file I/O and the diff, and would not outlive a
restart of the shell), so without root there is no total bound, only `env.file_size` per file;
the limits line logged once says which holds.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

DISK_DIR = "disk"
MS_NOSUID = 2
MS_NODEV = 4
MNT_DETACH = 2


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def disk_problem() -> str | None:
    """Why the disk of a sandbox cannot be bounded here, or None."""
    if os.geteuid() != 0:
        return "an ordinary user cannot mount a size-bounded file system the host can read"
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
