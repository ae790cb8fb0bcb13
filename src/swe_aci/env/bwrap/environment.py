"""The `bwrap` backend: the local working copy, with the shell inside a bubblewrap sandbox.

The sandbox root is bwrap's own tmpfs (remounted read-only) holding only what programs need:
the system directories (/usr, /etc, /lib*, /bin, /sbin, /sys) read-only, with the host's secrets
in /etc (shadow files, ssh host keys, private TLS keys) hidden; the `EnvConfig.ro_paths` (a task's
interpreter or virtualenv) read-only at their own paths; and, writable, the repository at
`/<repo_name>` as in the paper (`/marshmallow`), a private /tmp and an empty HOME (/root), all
host directories under the environment's temporary root. Nothing else of the host is there:
not /home, /root, /opt, /var, /work... /run is an empty directory (the host's holds sockets such
as docker.sock; with the network on, only the resolver's directory is bound), the network is
unshared unless `EnvConfig.network`, and the shell dies with its parent.

read_file and write_file are host file I/O on that same view (`_resolve` follows symlinks as the
sandbox would, `mount_for` maps a sandbox path to its host path), refusing /proc, /dev and /sys.

bwrap runs in the session ProcessTransport creates, and sandbox processes keep that host session
id (no `--new-session`), so a timed-out command is interrupted from the host's /proc as for local.
bash runs as the namespace's pid 1 (`--as-pid-1`): it is bwrap's only child, which the interrupt
spares, and when it exits every process of the sandbox goes with it.

Privileges: the sandbox has a user namespace of its own (`--unshare-user`), in which it may not
create another (`--disable-userns`), and runs with no capability in any set (`--cap-drop ALL`) and
no_new_privs (bwrap always sets it: setuid binaries give nothing). Started as host root, bwrap
itself runs as `nobody` (`sandbox_identity`), so the sandbox is no process of host root: files
only root may read stay unreadable, a hard link to a root file cannot be made (protected
hardlinks), and RLIMIT_NPROC applies (host root is exempt from it). How bwrap is started (as
`nobody`, with the host paths it binds staged for it, in the sandbox's cgroup) is
env/bwrap/launcher.py. Whatever under /etc is not world-readable is hidden, for whoever runs swe-aci,
and so is the cgroup file system (/sys/fs/cgroup is an empty read-only tmpfs).
The shell sets the resource limits of env/bwrap/limits.py on itself before it becomes the agent's;
where the host allows it, the sandbox also has a cgroup of its own (env/bwrap/cgroups.py), removed
with everything in it at close.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import glob
import logging
import os
import posixpath
import shutil
import signal
import stat
import subprocess
import sys
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from swe_aci.env.base import NotARegularFileError, SandboxError
from swe_aci.env.bwrap.cgroupfs import Cgroup
from swe_aci.env.bwrap.cgroups import cgroup_name, find_hierarchy
from swe_aci.env.bwrap.disk import DISK_DIR, Holder, disk_problem, mount_disk, unmount_disk
from swe_aci.env.bwrap.launcher import (
    SYSTEM_TOP_LEVEL,
    Mount,
    as_symlink,
    hand_over,
    launcher,
    sandbox_identity,
)
from swe_aci.env.bwrap.limits import ResourceLimits, limits_in_force
from swe_aci.env.cleanup import MARKER_VARIABLE
from swe_aci.env.config import parse_bytes
from swe_aci.env.files import (
    READ_FLAGS,
    WRITE_FLAGS,
    is_under,
    open_beneath,
    open_file,
    read_regular,
    refuse_pseudo,
    write_regular,
)
from swe_aci.env.local import BASH_ARGV, LocalEnvironment
from swe_aci.env.process import ProcessTransport, kill_session_members

logger = logging.getLogger(__name__)
HIDDEN_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-")
HIDDEN_FILE_PATTERNS = ("/etc/ssh/ssh_host_*key", "/etc/security/opasswd")
HIDDEN_DIRS = ("/etc/ssl/private",)
# The cgroup file system: the sandbox neither sees its cgroup's files nor could write them.
CGROUP_MOUNT = "/sys/fs/cgroup"
# Scanned for entries that are not world-readable, which are hidden too.
PRIVATE_SCAN_ROOT = "/etc"
SANDBOX_HOME = "/root"
# Top-level names the sandbox provides itself; a repository of such a name goes elsewhere.
OWN_TOP_LEVEL = frozenset({"proc", "dev", "tmp", "run", SANDBOX_HOME.lstrip("/")})
# Where the repository goes when its name clashes with a top-level directory (/usr, /work...).
FALLBACK_PARENT = "/swe-aci"
DNS_DIR = "/run/systemd/resolve"
MAX_SYMLINK_HOPS = 40


def mount_table(binds: dict[str, str], ro_paths: list[str], *, network: bool) -> list[Mount]:
    """The sandbox's mounts in bwrap's order (later ones cover earlier ones)."""
    mounts = [
        Mount(f"/{name}", f"/{name}", "ro")
        for name in SYSTEM_TOP_LEVEL
        if os.path.lexists(f"/{name}")
    ]
    mounts += [Mount(path, path, "pseudo") for path in ("/proc", "/dev")]
    mounts += [Mount(sandbox, host, "rw") for sandbox, host in binds.items()]
    for path in ro_paths:
        real = os.path.realpath(path)
        if not os.path.exists(real):
            raise SandboxError(f"ro_paths: {path} does not exist")
        mounts.append(Mount(real, real, "ro"))
    private_files, private_dirs = not_world_readable(PRIVATE_SCAN_ROOT)
    named = [*HIDDEN_FILES, *(p for pattern in HIDDEN_FILE_PATTERNS for p in glob.glob(pattern))]
    hidden = dict.fromkeys([*named, *private_files])
    mounts += [Mount(path, os.devnull, "hidden-file") for path in hidden if os.path.isfile(path)]
    hidden_dirs = dict.fromkeys([*HIDDEN_DIRS, *private_dirs, CGROUP_MOUNT])
    mounts += [Mount(path, "", "hidden-dir") for path in hidden_dirs if os.path.isdir(path)]
    if network and os.path.isdir(DNS_DIR):
        mounts.append(Mount(DNS_DIR, DNS_DIR, "ro"))
    return mounts


def not_world_readable(top: str) -> tuple[list[str], list[str]]:
    """Regular files and directories under `top` that others may not read (a directory is not
    descended into). Symbolic links and special files are left alone."""
    files: list[str] = []
    dirs: list[str] = []
    for parent, subdirs, names in os.walk(top):
        for name in list(subdirs):
            path = os.path.join(parent, name)
            with contextlib.suppress(OSError):
                mode = os.lstat(path).st_mode
                if stat.S_ISDIR(mode) and mode & 0o005 != 0o005:
                    dirs.append(path)
                    subdirs.remove(name)
        for name in names:
            path = os.path.join(parent, name)
            with contextlib.suppress(OSError):
                mode = os.lstat(path).st_mode
                if stat.S_ISREG(mode) and not mode & stat.S_IROTH:
                    files.append(path)
    return files, dirs


def host_python_paths() -> list[str]:
    """The installation of the interpreter swe-aci runs on (and its virtualenv), when it is not
    already inside the system directories the sandbox shows."""
    paths = []
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        top = os.path.realpath(prefix).split("/")[1]
        if top not in SYSTEM_TOP_LEVEL and os.path.isdir(prefix):
            paths.append(prefix)
    return paths


def sandbox_argv(
    mounts: list[Mount],
    *,
    network: bool,
    chdir: str,
    stage: Path | None = None,
    join: Sequence[str] = (),
    holder: Holder | None = None,
) -> list[str]:
    """The command starting bwrap (without the command it runs) for a mount table; `stage` is
    where the host paths are staged when we are root, `join` the `cgroup.procs` files of the
    sandbox's cgroup (see env/bwrap/launcher.py), `holder` the holder of an ordinary user's
    bounded disk, in whose namespaces bwrap starts (env/bwrap/disk.py)."""
    prefix, sources = launcher(mounts, stage, join)
    argv = [
        *prefix,
        *(holder.enter() if holder is not None else []),
        "bwrap",
        "--die-with-parent",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
    ]
    argv += ["ALL", "--unshare-pid", "--as-pid-1", "--unshare-ipc", "--unshare-uts"]
    if not network:
        argv.append("--unshare-net")
    argv += ["--dir", "/run"]
    for index, mount in enumerate(mounts):
        if mount.kind == "pseudo":
            argv += [f"--{mount.sandbox.lstrip('/')}", mount.sandbox]
        elif mount.kind == "hidden-dir":
            argv += ["--tmpfs", mount.sandbox, "--remount-ro", mount.sandbox]
        elif as_symlink(mount):
            argv += ["--symlink", os.readlink(mount.host), mount.sandbox]
        elif mount.kind == "rw":
            source = holder.inside(mount.host) if holder is not None else mount.host
            argv += ["--bind", sources.get(index, source), mount.sandbox]
        else:
            argv += ["--ro-bind", sources.get(index, mount.host), mount.sandbox]
    argv += ["--remount-ro", "/", "--chdir", chdir]
    return argv


@functools.cache
def bwrap_problem() -> str | None:
    """Why bwrap cannot be used here (one line), or None when a trial sandbox runs fine."""
    if shutil.which("bwrap") is None:
        return "bwrap is not on PATH"
    argv = sandbox_argv(mount_table({}, [], network=False), network=False, chdir="/")
    try:
        result = subprocess.run(
            [*argv, "true"], capture_output=True, text=True, timeout=20, cwd="/"
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        return f"bwrap failed: {lines[-1] if lines else f'exit code {result.returncode}'}"
    return None


@functools.cache
def _report_limits(description: str) -> None:
    """Say once per process (and per kind of limits) how the sandboxes are bounded."""
    identity = sandbox_identity()
    user = f"uid {identity[0]}" if identity else "our own uid"
    logger.info("bwrap sandboxes run as %s in a user namespace of their own; %s", user, description)


class BwrapTransport(ProcessTransport):
    """ProcessTransport for bwrap: the shell is bwrap's child, not the session leader."""

    def interrupt(self, since_boot_seconds: float) -> None:
        shell = self.shell_pids()
        for pid in shell:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGUSR1)
        kill_session_members(self.process.pid, since_boot_seconds, spare=shell)

    def shell_pids(self) -> set[int]:
        leader = self.process.pid
        try:
            with open(f"/proc/{leader}/task/{leader}/children") as handle:
                return {int(pid) for pid in handle.read().split()}
        except OSError:
            return set()


class BwrapEnvironment(LocalEnvironment):
    """A LocalEnvironment whose shell runs in a bubblewrap sandbox with the repo at /<name>."""

    _cgroup: Cgroup | None = None
    _holder: Holder | None = None

    def _writable_root(self) -> Path:
        """With `env.disk`, a tmpfs of that size (env/bwrap/disk.py): mounted on the host as
        root, held by a holder process otherwise; without it, the root."""
        if self.config.disk is None or disk_problem() is not None:
            return self._root
        disk = self._root / DISK_DIR
        size = parse_bytes(self.config.disk)
        try:
            if os.geteuid() == 0:
                mount_disk(disk, size)
                return disk
            env = {"PATH": os.environ.get("PATH", os.defpath), MARKER_VARIABLE: self._token}
            self._holder = Holder(disk, size, env)
        except OSError as exc:
            raise SandboxError(
                f"cannot bound the sandbox's disk ({exc}); set env.disk: null to run without "
                "a total bound"
            ) from None
        return self._holder.root

    def _release_root(self) -> None:
        if self._holder is not None:
            self._holder.stop()
            self._holder = None
        unmount_disk(self._root)

    def _enter(self) -> list[str]:
        return self._holder.enter() if self._holder is not None else []

    def _prepare_sandbox(self) -> None:
        name = self._host_repo.name
        if name in set(os.listdir("/")) | OWN_TOP_LEVEL:
            self._repo_in_sandbox = f"{FALLBACK_PARENT}/{name}"
        else:
            self._repo_in_sandbox = f"/{name}"
        binds = {
            self._repo_in_sandbox: str(self._host_repo),
            "/tmp": str(self._tmp),
            SANDBOX_HOME: str(self._home),
        }
        ro_paths = [
            *self.config.ro_paths,
            *(host_python_paths() if self.config.host_python else []),
        ]
        self._mounts = mount_table(binds, ro_paths, network=self.config.network)
        for writable in binds.values():
            hand_over(Path(writable))
        _report_limits(limits_in_force(self.config))
        hierarchy, _ = find_hierarchy()
        if hierarchy is not None:
            limits = ResourceLimits.from_config(self.config)
            try:
                self._cgroup = hierarchy.create(
                    cgroup_name(self._token), limits.memory, limits.processes
                )
            except OSError as exc:
                raise SandboxError(f"cannot create the sandbox's cgroup: {exc}") from exc

    def _start_shell(self) -> BwrapTransport:
        limits = ResourceLimits.from_config(self.config).ulimit_command()
        shell = [*BASH_ARGV, "-c", f'{limits} && exec "$@"', "bash", *BASH_ARGV]
        stage = self._root / "stage"
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir()
        join = self._cgroup.procs_files if self._cgroup is not None else ()
        argv = sandbox_argv(
            self._mounts,
            network=self.config.network,
            chdir=self._repo_in_sandbox,
            stage=stage,
            join=join,
            holder=self._holder,
        )
        return BwrapTransport([*argv, *shell], cwd="/", env=self._shell_env())

    def _sandbox_env(self) -> dict[str, str]:
        return {"HOME": SANDBOX_HOME, "TMPDIR": "/tmp"}

    def close(self) -> None:
        """Kill everything in the sandbox's cgroup, close as local does, remove the cgroup."""
        cgroup = self._cgroup
        if cgroup is not None:
            with contextlib.suppress(Exception):
                cgroup.kill()
        super().close()
        if cgroup is not None:
            with contextlib.suppress(Exception):
                cgroup.remove()
            self._cgroup = None

    def _sandbox_repo_path(self) -> str:
        return self._repo_in_sandbox

    def read_file(self, path: str) -> bytes:
        resolved = self._resolve(path)
        refuse_pseudo(resolved, path)
        descriptor = self._open(resolved, READ_FLAGS, path, write=False)
        return read_regular(descriptor, path, self.config.max_file_bytes)

    def write_file(self, path: str, content: bytes) -> None:
        resolved = self._resolve(path)
        refuse_pseudo(resolved, path)
        write_regular(self._open(resolved, WRITE_FLAGS, path, write=True), path, content)

    # -- the sandbox's view of the file system ---------------------------------------------

    def mount_for(self, sandbox_path: str) -> Mount | None:
        """The mount a symlink-free absolute sandbox path lies in (None: not in the sandbox,
        or a directory of the sandbox's own root such as / or /swe-aci)."""
        found = None
        for mount in self._mounts:
            if is_under(sandbox_path, mount.sandbox):
                found = mount
        return found

    def _open(self, resolved: str, flags: int, path: str, *, write: bool) -> int:
        mount = self.mount_for(resolved)
        if mount is None:
            if any(is_under(m.sandbox, resolved) for m in self._mounts):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            number = errno.EROFS if write else errno.ENOENT
            raise OSError(number, os.strerror(number), path)
        if write and mount.kind != "rw":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        rest = resolved[len(mount.sandbox) :]
        if mount.kind == "rw":
            owner = sandbox_identity()
            return open_beneath(mount.host, rest, flags, path, make_dirs=write, owner=owner)
        if mount.kind == "hidden-file":
            raise NotARegularFileError("not a regular file (a device)", path)
        if mount.kind == "hidden-dir":
            if rest.strip("/"):
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        return open_file(mount.host + rest, flags | os.O_NOFOLLOW, path)

    def _resolve(self, path: str) -> str:
        """Resolve symlinks as the sandbox would: an absolute link target means the sandbox's
        root, not the host's (a link to /marshmallow/x must land in the repository)."""
        absolute = path if path.startswith("/") else posixpath.join(self.cwd, path)
        parts = deque(absolute.split("/"))
        resolved = "/"
        hops = 0
        while parts:
            part = parts.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                resolved = posixpath.dirname(resolved)
                continue
            candidate = posixpath.join(resolved, part)
            mount = self.mount_for(candidate)
            if mount is None or mount.kind in ("pseudo", "hidden-file", "hidden-dir"):
                resolved = candidate  # not resolved further: refused or not found when opened
                continue
            host = mount.host + candidate[len(mount.sandbox) :]
            if not os.path.islink(host):
                resolved = candidate
                continue
            hops += 1
            if hops > MAX_SYMLINK_HOPS:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
            target = os.readlink(host)
            if target.startswith("/"):
                resolved = "/"
            parts.extendleft(reversed(target.split("/")))
        return resolved
