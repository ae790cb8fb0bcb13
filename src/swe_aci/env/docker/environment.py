"""The `docker` backend: the container (`DockerEnvironment`), the engine, stale containers."""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import posixpath
import secrets
import socket
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from swe_aci.env.base import SandboxError, Submission
from swe_aci.env.cleanup import pid_alive
from swe_aci.env.config import EnvConfig, parse_bytes
from swe_aci.env.diff import GIT_HARDENING, take_submission
from swe_aci.env.docker.archive import ArchiveFiles
from swe_aci.env.docker.exec import ChannelBroken, docker_module, explain, run_exec
from swe_aci.env.docker.file_channel import FileChannel
from swe_aci.env.docker.repository import copy_repo_in, reset_repo_in_image
from swe_aci.env.docker.shell import DockerShellTransport
from swe_aci.env.repo import repo_name
from swe_aci.env.session import SessionEnvironment

if TYPE_CHECKING:
    from collections.abc import Callable

    from docker import APIClient

# Our own git calls must not stop at "dubious ownership" when the image's user does not own
# the repository (as `repository.py`'s GIT_FUNCTION); the agent's shell is left as it is.
SAFE_DIRECTORY = ["-c", "safe.directory=*"]
HELPER_SECONDS = 60.0  # a helper command's bound (rm, mkdir)
KILLED_BY_TIMEOUT = 128 + 9  # `timeout -s KILL` exits so when it had to kill
# Labels that let a later run find containers whose owner died without removing them.
LABEL = "swe-aci"
OWNER_PID_LABEL = "swe-aci.owner-pid"
BASE_IMAGE = "swe-aci/base:bookworm"  # built by scripts/build_base_image.sh
OWNER_HOST_LABEL = "swe-aci.owner-host"
# The capabilities the container keeps (all others are dropped): its root works on files it
# does not own, as test suites and pip do (a repository in the image owned by another user,
# chown/chmod in temporary directories). No mount, ptrace, raw sockets, setuid/setgid...
CONTAINER_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER")
T = TypeVar("T")
# Storage drivers that take `--storage-opt size=` (overlay2 does on xfs with project quotas).
SIZED_DRIVERS = frozenset({"btrfs", "zfs", "devicemapper"})
logger = logging.getLogger(__name__)


@functools.cache
def _report_unbounded_disk(driver: str) -> None:
    logger.info(
        "docker's storage driver (%s) cannot bound a container's disk: env.disk not in force",
        driver,
    )


def connect() -> Any:
    """A docker client for the engine of the environment (DOCKER_HOST or the default socket)."""
    docker = docker_module()
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxError(
            f"the Docker engine is not reachable ({explain(exc)[:200]}); "
            "start it with scripts/ensure_docker.sh"
        ) from None
    return client


def sweep_stale_containers(api: APIClient) -> list[str]:
    """Remove our containers on this host whose owner process is gone; return their names.

    Owners are told apart by host name and pid, so runs in other pid namespaces that share the
    engine must not share a host name (containers do not, by default)."""
    host = socket.gethostname()
    removed = []
    with contextlib.suppress(Exception):
        for container in api.containers(all=True, filters={"label": f"{OWNER_HOST_LABEL}={host}"}):
            owner = (container.get("Labels") or {}).get(OWNER_PID_LABEL, "")
            if not owner.isdigit() or int(owner) == os.getpid() or pid_alive(int(owner)):
                continue
            with contextlib.suppress(Exception):
                api.remove_container(container["Id"], force=True)
                removed.append(container["Id"])
    return removed


class FileTransfer(Protocol):
    """Reading and writing files of the container by absolute path."""

    def read(self, path: str, limit: int) -> bytes: ...

    def write(self, path: str, content: bytes) -> None: ...

    def close(self) -> None: ...


class DockerEnvironment(SessionEnvironment):
    """A fresh container from `EnvConfig.image` holding the repository at its base commit, one
    bash attached over a socket; removed on close.

    The repository is either copied in (a host working copy made by `prepare_working_copy`, sent
    with put_archive) or already in the image at `EnvConfig.repo_in_image` (then reset to the
    commit, and `source` may be None): `repository.py`. The shell is one `docker exec` with stdin
    attached, spoken to by BashSession's protocol (`shell.py`). Files move through a second
    long-lived exec (`file_channel.py`: milliseconds, not capped like shell output), or through
    the archive API (`archive.py`, ~40 ms a call) in images without GNU coreutils. The docker SDK
    is imported only when a DockerEnvironment is created.
    """

    def __init__(
        self, source: str | None, commit: str | None = None, config: EnvConfig | None = None
    ) -> None:
        self.config = config or EnvConfig(backend="docker")
        self._container_name: str | None = None
        self._container_id: str | None = None
        self._files: FileTransfer | None = None
        if source is None and not self.config.repo_in_image:
            raise SandboxError("no repository: give a source, or EnvConfig.repo_in_image")
        try:
            self._client = connect()
            self._api: APIClient = self._client.api
            sweep_stale_containers(self._api)
            self._start_container()
            if self.config.repo_in_image:
                self._repo = posixpath.normpath(self.config.repo_in_image)
                self._base_commit = reset_repo_in_image(
                    self._exec, self._repo, commit, self.config.setup_timeout
                )
            else:
                assert source is not None
                self._repo = posixpath.join(self.config.container_repo_dir, repo_name(source))
                self._base_commit = copy_repo_in(
                    self._archive(), source, commit, self.config.container_repo_dir
                )
            self._open_session(self._start_shell, self._repo)
        except BaseException:
            self.close()
            raise

    # -- setup -----------------------------------------------------------------------------

    def _start_container(self) -> None:
        image = self.config.image
        if not image:
            raise SandboxError("the docker sandbox needs an image: pass --image (or set env.image)")
        errors = docker_module().errors
        try:
            self._api.inspect_image(image)
        except errors.ImageNotFound:
            how = (
                "build it with scripts/build_base_image.sh"
                if image == BASE_IMAGE
                else "build or load it first (`docker images` lists the images present)"
            )
            raise SandboxError(f"docker image {image!r} does not exist here: {how}") from None
        cpus = self.config.cpus
        ulimits = []
        if self.config.file_size:
            size = parse_bytes(self.config.file_size)
            ulimits.append(docker_module().types.Ulimit(name="fsize", soft=size, hard=size))
        if self.config.cpu_seconds:
            seconds = self.config.cpu_seconds
            ulimits.append(docker_module().types.Ulimit(name="cpu", soft=seconds, hard=seconds))
        storage = self._storage_options()
        host_config = self._api.create_host_config(
            network_mode=None if self.config.network else "none",
            nano_cpus=int(min(cpus, os.cpu_count() or 1) * 1e9) if cpus else None,
            mem_limit=self.config.memory,
            pids_limit=self.config.pids_limit,
            # docker-init as pid 1 reaps the orphans the agent's commands leave (`sleep` would
            # not: their zombies would hold the pids limit).
            init=True,
            cap_drop=["ALL"],
            cap_add=list(CONTAINER_CAPABILITIES),
            security_opt=["no-new-privileges"],
            ulimits=ulimits,
            storage_opt=storage,
        )
        # Named before it exists, so that an interrupt during creation cannot leak it.
        self._container_name = f"swe-aci-{secrets.token_hex(6)}"
        try:
            created = self._api.create_container(
                image,
                command=["infinity"],
                entrypoint=["sleep"],
                environment=self.config.env_vars,
                host_config=host_config,
                labels={
                    LABEL: "1",
                    OWNER_PID_LABEL: str(os.getpid()),
                    OWNER_HOST_LABEL: socket.gethostname(),
                },
                name=self._container_name,
            )
            self._container_id = created["Id"]
            self._api.start(self._container_id)
        except errors.APIError as exc:
            raise SandboxError(
                f"could not start a container from {image!r}: {explain(exc)}"
            ) from None

    def _storage_options(self) -> dict[str, str] | None:
        """`env.disk` as the size of the container's writable layer, where the engine's storage
        driver can bound it (overlay2 on xfs with project quotas, btrfs, zfs, devicemapper);
        elsewhere (overlay2 on ext4, docker's default) the engine refuses the option, so the
        layer is not bounded, and the log says so once. (A tmpfs /tmp would bound that much, but
        the archive API, the file transfer of images without GNU coreutils, cannot reach into a
        tmpfs mount.)"""
        if self.config.disk is None:
            return None
        try:
            info = self._api.info()
        except docker_module().errors.APIError:
            info = {}
        driver = info.get("Driver", "")
        backing = dict(info.get("DriverStatus") or []).get("Backing Filesystem", "")
        if driver in SIZED_DRIVERS or (driver == "overlay2" and backing == "xfs"):
            return {"size": self.config.disk}
        _report_unbounded_disk(f"{driver} on {backing or 'an unknown file system'}")
        return None

    def _start_shell(self) -> DockerShellTransport:
        assert self._container_id is not None
        return DockerShellTransport(self._api, self._container_id)

    # -- the protocol ----------------------------------------------------------------------

    @property
    def repo_path(self) -> str:
        return self._repo

    @property
    def base_commit(self) -> str:
        return self._base_commit

    @property
    def container_id(self) -> str | None:
        return self._container_id

    def read_file(self, path: str) -> bytes:
        absolute = self._absolute(path)
        limit = self.config.max_file_bytes
        return self._with_files(lambda files: files.read(absolute, limit), absolute)

    def write_file(self, path: str, content: bytes) -> None:
        absolute = self._absolute(path)
        self._with_files(lambda files: files.write(absolute, content), absolute)

    def submission(self) -> Submission:
        """Taken by fresh git processes in the container (never the agent's shell), with a
        private index under /tmp; the host waits at most `diff_timeout` for each."""
        self._live_session()
        index = f"/tmp/swe-aci-submission-{secrets.token_hex(8)}.index"
        environment = {
            "GIT_DIR": posixpath.join(self._repo, ".git"),
            "GIT_WORK_TREE": self._repo,
            "GIT_INDEX_FILE": index,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
        }

        def git(args: list[str], stdin: bytes | None, timeout: float) -> tuple[int, bytes, bytes]:
            assert self._container_id is not None
            command = ["timeout", "-s", "KILL", f"{timeout:.0f}", "git", *SAFE_DIRECTORY]
            code, out, err = run_exec(
                self._api,
                self._container_id,
                [*command, *GIT_HARDENING, *args],
                stdin,
                timeout + 5,
                environment=environment,
                workdir=self._repo,
            )
            if code == KILLED_BY_TIMEOUT:
                raise TimeoutError(f"git {args[0]} was killed after {timeout:.0f} seconds")
            return code, out, err

        try:
            return take_submission(
                git,
                self._base_commit,
                max_file_bytes=self.config.max_diff_file_bytes,
                timeout=self.config.diff_timeout,
            )
        finally:
            with contextlib.suppress(Exception):
                self._exec(["rm", "-f", "--", index, f"{index}.lock"])

    def close(self) -> None:
        """Remove the container (one HTTP request; no lock, nothing logged)."""
        name, self._container_name = self._container_name, None
        self._container_id = None
        if name is not None:
            with contextlib.suppress(Exception):
                self._api.remove_container(name, force=True)
        files, self._files = self._files, None
        if files is not None:
            with contextlib.suppress(Exception):
                files.close()
        with contextlib.suppress(Exception):
            self._close_session()

    # -- internals -------------------------------------------------------------------------

    def _absolute(self, path: str) -> str:
        return posixpath.normpath(path if path.startswith("/") else posixpath.join(self.cwd, path))

    def _with_files(self, operation: Callable[[FileTransfer], T], path: str) -> T:
        """Run a file operation; a broken channel is replaced once before giving up."""
        try:
            return operation(self._file_transfer())
        except ChannelBroken:
            self._drop_file_transfer()
        try:
            return operation(self._file_transfer())
        except ChannelBroken as exc:
            self._drop_file_transfer()
            raise OSError(errno.EIO, f"file transfer failed: {exc}", path) from None

    def _file_transfer(self) -> FileTransfer:
        self._live_session()
        if self._files is None:
            assert self._container_id is not None
            channel = FileChannel.open(self._api, self._container_id)
            self._files = channel if channel is not None else self._archive()
        return self._files

    def _drop_file_transfer(self) -> None:
        if self._files is not None:
            self._files.close()
            self._files = None

    def _archive(self) -> ArchiveFiles:
        assert self._container_id is not None
        return ArchiveFiles(self._api, self._container_id, self._exec)

    def _exec(self, command: list[str], timeout: float = HELPER_SECONDS) -> tuple[int, str, str]:
        """Run a helper command in the container (its output is not capped), for at most
        `timeout` seconds (TimeoutError)."""
        assert self._container_id is not None
        code, out, err = run_exec(self._api, self._container_id, command, None, timeout)
        return code, _text(out), _text(err)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
