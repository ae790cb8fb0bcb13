"""The holder of a sandbox's bounded disk, for a swe-aci run as an ordinary user (env/bwrap/disk.py).

Run as a script (`python holder.py <directory> <bytes> <owner pid>`; swe-aci imports it only for
its path): it enters a user namespace and a mount namespace of its own (unshare before any thread
or exec, mapping only its own uid and gid), mounts a tmpfs of `<bytes>` at `<directory>` there,
drops every capability, prints `ready` and sleeps until it is killed; it dies with the thread
that started it (PDEATHSIG). Its owner reaps it only when stopping it, so its pid, which names
the tmpfs (`/proc/<pid>/root`), is never reused meanwhile.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
PR_SET_PDEATHSIG = 1
MS_NOSUID = 2
MS_NODEV = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def hold(directory: str, size: int, owner: int) -> None:
    """Mount the tmpfs in namespaces of our own, say so, and wait to be killed."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    if os.getppid() != owner:  # the owner died before PDEATHSIG was armed
        sys.exit(1)
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    for name, content in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(content)
    options = f"size={size},mode=0755".encode()
    flags = MS_NOSUID | MS_NODEV
    _check(libc.mount(b"swe-aci-disk", os.fsencode(directory), b"tmpfs", flags, options), "mount")
    # With no capability left, processes entering our namespaces (git, bwrap) may reach the
    # tmpfs through /proc/<our pid>/root: the kernel refuses that to one holding fewer of them.
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    _check(libc.capset(header, (ctypes.c_uint32 * 6)()), "capset")
    print("ready", flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    try:
        hold(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
    except OSError as exc:
        print(exc.strerror or exc, file=sys.stderr)
        sys.exit(1)
