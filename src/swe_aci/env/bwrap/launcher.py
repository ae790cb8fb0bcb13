"""How bwrap is started: as whom, with which host paths staged for it, in which cgroup.

Started as an ordinary user, bwrap runs as that user. Started as root, it runs as `nobody`
(`sandbox_identity`), so the sandbox is no process of host root. `nobody` may not reach the host
paths bwrap binds (an interpreter under root's 0700 /root, a temporary directory under a private
one), so in a mount namespace of bwrap's own that nothing else sees they are bind-mounted into a
staging directory, bound at /run/swe-aci on a fresh tmpfs; bwrap binds them from there
(`launcher`). The writable directories are handed over to that user (`hand_over`).

When the sandbox has a cgroup of its own (env/bwrap/cgroups.py), the launcher joins it before anything
else: the launcher is a `sh` that writes its own pid (`$$`) into the cgroup's `cgroup.procs`
files and only then execs the rest (unshare's staging, setpriv, bwrap). A process's children
are born in its cgroup, so bwrap and every process of the sandbox start inside it: there is no
moment at which a sandbox process runs outside (writing the child's pid from the host after the
spawn would leave it running, and forking, until the write lands).
"""

from __future__ import annotations

import functools
import os
import posixpath
import pwd
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from swe_aci.env.base import SandboxError
from swe_aci.env.shell import shell_quote

SYSTEM_TOP_LEVEL = ("bin", "etc", "lib", "lib32", "lib64", "libx32", "sbin", "sys", "usr")
# Who the sandbox runs as when swe-aci runs as root.
SANDBOX_USER = "nobody"
NOBODY_ID = 65534
# Where bwrap, started as that user, finds the host paths it binds (see `launcher`).
STAGE_MOUNT = "/run/swe-aci"

MountKind = Literal["rw", "ro", "hidden-file", "hidden-dir", "pseudo"]


@dataclass(frozen=True)
class Mount:
    """One entry of the sandbox's file system: a sandbox path and the host path behind it."""

    sandbox: str
    host: str
    kind: MountKind


@functools.cache
def sandbox_identity() -> tuple[int, int] | None:
    """The host (uid, gid) bwrap runs as: None (our own) unless we are root, then nobody's."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SANDBOX_USER)
    except KeyError:
        return NOBODY_ID, NOBODY_ID
    return entry.pw_uid, entry.pw_gid


def as_symlink(mount: Mount) -> bool:
    """A top-level system link such as /lib -> usr/lib, recreated as a link."""
    return mount.kind == "ro" and os.path.islink(mount.host) and mount.sandbox.count("/") == 1


def launcher(
    mounts: list[Mount], stage: Path | None, join: Sequence[str] = ()
) -> tuple[list[str], dict[int, str]]:
    """The command that starts bwrap (put before bwrap's argv) and where bwrap finds the host
    paths it binds (by index in `mounts`, when they are staged).

    `join` are `cgroup.procs` files the launcher writes its own pid into before it execs
    anything. As root, the launcher also stages the paths into `stage` in a mount namespace of
    its own and becomes the sandbox's user; as an ordinary user with nothing to join it is
    nothing (bwrap is started directly)."""
    lines = ["set -e", *(f"echo $$ > {shell_quote(path)}" for path in join)]
    identity = sandbox_identity()
    if identity is None:
        if not join:
            return [], {}
        lines.append('exec "$@"')
        return ["sh", "-c", "\n".join(lines), "sh"], {}
    sources: dict[int, str] = {}
    for index, mount in enumerate(mounts):
        if mount.kind not in ("ro", "rw") or as_symlink(mount):
            continue
        if mount.host.split("/")[1] in SYSTEM_TOP_LEVEL:
            continue
        if stage is None:
            raise SandboxError(f"no staging directory for {mount.host}")
        target = stage / str(index)
        if os.path.isdir(mount.host):
            target.mkdir()
        else:
            target.touch()
        lines.append(f"mount --bind {shell_quote(mount.host)} {shell_quote(str(target))}")
        sources[index] = f"{STAGE_MOUNT}/{index}"
    if sources:
        assert stage is not None
        lines.append(f"mount -t tmpfs -o mode=0755 swe-aci {posixpath.dirname(STAGE_MOUNT)}")
        lines.append(
            f"mkdir {STAGE_MOUNT} && mount --rbind {shell_quote(str(stage))} {STAGE_MOUNT}"
        )
    uid, gid = identity
    lines.append(f'exec setpriv --reuid={uid} --regid={gid} --clear-groups -- "$@"')
    return ["unshare", "--mount", "--", "sh", "-c", "\n".join(lines), "sh"], sources


def hand_over(path: Path) -> None:
    """Make a directory tree ours to write for the sandbox's user (when that is not us)."""
    identity = sandbox_identity()
    if identity is None:
        return
    uid, gid = identity
    os.lchown(path, uid, gid)
    for parent, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.lchown(os.path.join(parent, name), uid, gid)
