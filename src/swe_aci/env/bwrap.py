"""The `bwrap` backend: the local working copy, with the shell inside a bubblewrap sandbox.

The sandbox root is bwrap's own tmpfs (remounted read-only) holding the host's top-level
directories bound read-only one by one, so the repository can sit at `/<repo_name>` as in the
paper (`/marshmallow`). Writable: the repository and a private /tmp, both host directories under
the environment's temporary root, so read_file/write_file stay plain host file I/O. /run is an
empty directory (the host's holds sockets such as docker.sock; with the network on, only the
resolver's directory is bound), the network is unshared unless `EnvConfig.network`, and the
shell dies with its parent.

bwrap runs in the session ProcessTransport creates, and sandbox processes keep that host session
id (no `--new-session`), so a timed-out command is interrupted from the host's /proc as for local.
bash runs as the namespace's pid 1 (`--as-pid-1`): it is bwrap's only child, which the interrupt
spares, and when it exits every process of the sandbox goes with it.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import posixpath
import shutil
import signal
import subprocess
from collections import deque
from pathlib import Path

from swe_aci.env.local import BASH_ARGV, LocalEnvironment
from swe_aci.env.process import ProcessTransport, kill_session_members

# Top-level names the sandbox provides itself instead of binding the host's.
OWN_TOP_LEVEL = frozenset({"proc", "dev", "tmp", "run"})
# Where the repository goes when its name clashes with a top-level directory (/usr, /work...).
FALLBACK_PARENT = "/swe-aci"
DNS_DIR = "/run/systemd/resolve"
MAX_SYMLINK_HOPS = 40


def sandbox_argv(binds: dict[str, str], *, network: bool, chdir: str, skip: set[str]) -> list[str]:
    """The bwrap arguments (without the command) for a read-only host view plus `binds`.

    `binds` maps sandbox paths to writable host directories; `skip` names top-level host entries
    that are not bound (the repository's mount point shadows them).
    """
    argv = ["bwrap", "--die-with-parent", "--unshare-pid", "--as-pid-1", "--unshare-ipc"]
    argv.append("--unshare-uts")
    if not network:
        argv.append("--unshare-net")
    for entry in sorted(os.scandir("/"), key=lambda e: e.name):
        if entry.name in OWN_TOP_LEVEL or entry.name in skip:
            continue
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(entry.path), entry.path]
        else:
            argv += ["--ro-bind-try", entry.path, entry.path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--dir", "/run"]
    for sandbox_path, host_path in binds.items():
        argv += ["--bind", host_path, sandbox_path]
    if network and os.path.isdir(DNS_DIR):
        argv += ["--ro-bind", DNS_DIR, DNS_DIR]
    argv += ["--remount-ro", "/", "--chdir", chdir]
    return argv


@functools.cache
def bwrap_problem() -> str | None:
    """Why bwrap cannot be used here (one line), or None when a trial sandbox runs fine."""
    if shutil.which("bwrap") is None:
        return "bwrap is not on PATH"
    argv = sandbox_argv({}, network=False, chdir="/", skip=set())
    try:
        result = subprocess.run([*argv, "true"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        return f"bwrap failed: {lines[-1] if lines else f'exit code {result.returncode}'}"
    return None


class BwrapTransport(ProcessTransport):
    """ProcessTransport for bwrap: the shell is bwrap's child, not the session leader."""

    def interrupt(self, since_boot_seconds: float) -> None:
        leader = self.process.pid
        try:
            with open(f"/proc/{leader}/task/{leader}/children") as handle:
                shell = {int(pid) for pid in handle.read().split()}
        except OSError:
            shell = set()
        for pid in shell:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGUSR1)
        kill_session_members(leader, since_boot_seconds, spare=shell)


class BwrapEnvironment(LocalEnvironment):
    """A LocalEnvironment whose shell runs in a bubblewrap sandbox with the repo at /<name>."""

    def _prepare_sandbox(self) -> None:
        name = self._host_repo.name
        top_level = set(os.listdir("/")) | OWN_TOP_LEVEL
        if name in top_level:
            self._repo_in_sandbox = f"{FALLBACK_PARENT}/{name}"
            self._skip = {FALLBACK_PARENT.lstrip("/")}
        else:
            self._repo_in_sandbox = f"/{name}"
            self._skip = {name}
        (self._root / "tmp").mkdir()
        self._binds = {self._repo_in_sandbox: str(self._host_repo), "/tmp": str(self._root / "tmp")}

    def _shell_argv(self) -> list[str]:
        argv = sandbox_argv(
            self._binds, network=self.config.network, chdir=self._repo_in_sandbox, skip=self._skip
        )
        read_only = [arg for path in self.config.ro_paths for arg in ("--ro-bind", path, path)]
        return [*argv[:-4], *read_only, *argv[-4:], *BASH_ARGV]  # before --remount-ro

    def _start_shell(self) -> BwrapTransport:
        return BwrapTransport(self._shell_argv(), cwd=str(self._host_repo), env=self._shell_env())

    def _shell_env(self) -> dict[str, str]:
        env = super()._shell_env()
        env.update(TMPDIR="/tmp", HOME="/tmp")
        return env

    def _sandbox_repo_path(self) -> str:
        return self._repo_in_sandbox

    def _host_path(self, path: str) -> Path:
        return self._mounted(self._resolve(path))

    def write_file(self, path: str, content: bytes) -> None:
        resolved = self._resolve(path)
        if not any(_is_under(resolved, root) for root in self._binds):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        super().write_file(path, content)

    # -- sandbox path resolution -----------------------------------------------------------

    def _mounted(self, sandbox_path: str) -> Path:
        """The host path behind a symlink-free absolute sandbox path: a bound directory, else the
        same path on the host (for the sandbox's own /proc, /dev and /run, only near enough)."""
        for prefix, host in self._binds.items():
            if _is_under(sandbox_path, prefix):
                return Path(host + sandbox_path[len(prefix) :])
        return Path(sandbox_path)

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
            host = self._mounted(candidate)
            if not host.is_symlink():
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


def _is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
