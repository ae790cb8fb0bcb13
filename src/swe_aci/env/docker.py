"""The `docker` backend: a container from `EnvConfig.image`, one bash attached over a socket.

The repository is either copied in (a host working copy made by `prepare_working_copy`, sent with
put_archive) or already in the image at `EnvConfig.repo_in_image` (then reset to the commit). The
shell is one `docker exec` with stdin attached, spoken to by BashSession's protocol. Files move
through a second long-lived exec (FileChannel: milliseconds, not capped like shell output), or
through the archive API (~40 ms a call) in images without GNU coreutils. The docker SDK is
imported only when a DockerEnvironment is created.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import posixpath
import secrets
import shutil
import socket
import tarfile
import time
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from swe_aci.env.base import FileTooLargeError, NotARegularFileError, SandboxError, Submission
from swe_aci.env.cleanup import make_root, pid_alive
from swe_aci.env.config import EnvConfig, parse_bytes
from swe_aci.env.diff import GIT_HARDENING, SUBMISSION_ATTRIBUTES, take_submission
from swe_aci.env.docker_io import (
    ChannelBroken,
    DockerShellTransport,
    FileChannel,
    docker_module,
    explain,
    run_exec,
)
from swe_aci.env.repo import prepare_working_copy, repo_name
from swe_aci.env.session import SessionEnvironment
from swe_aci.env.shell import shell_quote

if TYPE_CHECKING:
    from collections.abc import Callable

    from docker import APIClient

# Go's os.FileMode bits, as the archive API reports them in its stat header.
GO_MODE_DIR = 1 << 31
GO_MODE_SYMLINK = 1 << 27
GO_MODE_SPECIAL = {
    1 << 26: "a device",
    1 << 25: "a FIFO",
    1 << 24: "a socket",
    1 << 19: "irregular",
}
MAX_SYMLINK_HOPS = 40
# Room for the tar headers around one file in an archive-API answer.
TAR_OVERHEAD = 1 << 16
# Our own git calls must not stop at "dubious ownership" when the image's user does not own
# the repository; the agent's shell is left as the image has it.
GIT_FUNCTION = "git() { command git -c safe.directory='*' \"$@\"; }"
SAFE_DIRECTORY = ["-c", "safe.directory=*"]
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
    """A fresh container holding the repository at its base commit; removed on close.

    With `EnvConfig.repo_in_image` the image's repository is used and `source` may be None.
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
                self._base_commit = self._reset_repo_in_image(commit)
            else:
                assert source is not None
                self._repo = posixpath.join(self.config.container_repo_dir, repo_name(source))
                self._base_commit = self._copy_repo_in(source, commit)
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
        host_config = self._api.create_host_config(
            network_mode=None if self.config.network else "none",
            nano_cpus=int(min(cpus, os.cpu_count() or 1) * 1e9) if cpus else None,
            mem_limit=self.config.memory,
            pids_limit=self.config.pids_limit,
            cap_drop=["ALL"],
            cap_add=list(CONTAINER_CAPABILITIES),
            security_opt=["no-new-privileges"],
            ulimits=ulimits,
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

    def _copy_repo_in(self, source: str, commit: str | None) -> str:
        staging = make_root("docker-")
        try:
            working_copy = staging / repo_name(source)
            sha = prepare_working_copy(source, working_copy, commit)
            archive = staging / "repo.tar"
            with tarfile.open(archive, "w") as tar:
                tar.add(working_copy, arcname=working_copy.name, filter=_anonymous)
            with open(archive, "rb") as data:
                self._archive().put(self.config.container_repo_dir, data)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return sha

    def _reset_repo_in_image(self, commit: str | None) -> str:
        script = (
            f"{GIT_FUNCTION}\n"
            # The agent's own git commands must work too, whoever owns the repository.
            "git config --global --add safe.directory '*' 2>/dev/null\n"
            'cd "$1" || exit 3\n'
            'sha=$(git rev-parse --verify --quiet "$2^{commit}") || exit 4\n'
            # Untracked files go, ignored ones stay: an image's build products (compiled
            # extensions, egg-info) are ignored files the package needs.
            'git checkout -q -f --detach "$sha" && git reset -q --hard "$sha" && git clean -fdq\n'
            "[ $? = 0 ] || exit 5\n"
            # The attributes the submission is taken with (env/diff.py).
            f"mkdir -p .git/info && printf %s {shell_quote(SUBMISSION_ATTRIBUTES)} "
            "> .git/info/attributes || exit 5\n"
            'printf %s "$sha"\n'
        )
        code, out, err = self._exec(["bash", "-c", script, "reset", self._repo, commit or "HEAD"])
        if code == 3:
            raise SandboxError(f"the image has no repository at {self._repo}")
        if code == 4:
            raise SandboxError(f"unknown commit {commit or 'HEAD'!r} in {self._repo}")
        if code != 0:
            raise SandboxError(f"could not reset {self._repo}: {(err or out).strip()[-300:]}")
        return out.strip()

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

    def _exec(self, command: list[str], workdir: str | None = None) -> tuple[int, str, str]:
        """Run a helper command in the container; its output is not capped."""
        assert self._container_id is not None
        try:
            exec_id = self._api.exec_create(self._container_id, command, workdir=workdir)["Id"]
            out, err = self._api.exec_start(exec_id, demux=True)
            code = self._api.exec_inspect(exec_id)["ExitCode"]
        except docker_module().errors.APIError as exc:
            raise SandboxError(
                f"could not run {command[0]} in the container: {explain(exc)}"
            ) from None
        return code, _text(out), _text(err)


class ArchiveFiles:
    """Files through docker's archive API: works in any image, ~40 ms a call."""

    def __init__(
        self, api: APIClient, container_id: str, run: Callable[[list[str]], tuple[int, str, str]]
    ) -> None:
        self._api = api
        self._url = api._url("/containers/{0}/archive", container_id)
        self._run = run

    def read(self, path: str, limit: int) -> bytes:
        for _ in range(MAX_SYMLINK_HOPS):
            with self._request("head", path) as response:
                mode, target = self._stat(response)
                size = self._size(response)
            if mode & GO_MODE_DIR:
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            if mode & GO_MODE_SYMLINK:
                path = target
                continue
            for bit, kind in GO_MODE_SPECIAL.items():
                if mode & bit:
                    raise NotARegularFileError(f"not a regular file ({kind})", path)
            if size > limit:
                raise FileTooLargeError(size, limit, path)
            with self._request("get", path, stream=True) as response:
                archive = _bounded_body(response, limit + TAR_OVERHEAD)
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                member = tar.next()
                handle = tar.extractfile(member) if member is not None else None
                if handle is None or member is None or not member.isreg():
                    raise OSError(errno.EIO, "the container sent no regular file", path)
                if member.size > limit:
                    raise FileTooLargeError(member.size, limit, path)
                return handle.read()
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)

    def write(self, path: str, content: bytes) -> None:
        mode = 0o644
        for _ in range(MAX_SYMLINK_HOPS):
            try:
                with self._request("head", path) as response:
                    found, target = self._stat(response)
            except FileNotFoundError:
                break
            if found & GO_MODE_SYMLINK:
                path = target
                continue
            if found & GO_MODE_DIR:
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            mode = found & 0o7777
            break
        info = tarfile.TarInfo(posixpath.basename(path))
        info.size, info.mode, info.mtime = len(content), mode, int(time.time())
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.addfile(info, io.BytesIO(content))
        self.put(posixpath.dirname(path), buffer.getvalue())

    def put(self, directory: str, data: Any) -> None:
        """Extract a tar into `directory` (created if missing), owned by the container's user."""
        params = {"path": directory, "copyUIDGID": "1"}
        response = self._api.put(self._url, params=params, data=data)
        if response.status_code == 404:
            code, out, err = self._run(["mkdir", "-p", directory])
            if code != 0:
                raise OSError(errno.EACCES, (err or out).strip(), directory)
            if hasattr(data, "seek"):
                data.seek(0)
            response = self._api.put(self._url, params=params, data=data)
        if response.status_code >= 400:
            message = response.text.strip()[:300]
            number = errno.ENOTDIR if "not a directory" in message else errno.EIO
            raise OSError(number, f"could not write into the container: {message}", directory)

    def close(self) -> None:
        """Nothing to release: every call is one HTTP request."""

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        response = getattr(self._api, method)(self._url, params={"path": path}, **kwargs)
        if response.status_code == 404:
            response.close()
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        if response.status_code >= 400:
            response.close()
            raise OSError(errno.EIO, f"docker archive request failed: {response.text[:200]}", path)
        return response

    @staticmethod
    def _size(response: Any) -> int:
        stat = docker_module().utils.decode_json_header(
            response.headers["X-Docker-Container-Path-Stat"]
        )
        return int(stat.get("size", 0))

    @staticmethod
    def _stat(response: Any) -> tuple[int, str]:
        stat = docker_module().utils.decode_json_header(
            response.headers["X-Docker-Container-Path-Stat"]
        )
        return stat["mode"], stat["linkTarget"]


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Host owners mean nothing in the container: put_archive's copyUIDGID sets its user."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _bounded_body(response: Any, limit: int) -> bytes:
    """The response body, stopping once it exceeds `limit` bytes (the file grew meanwhile)."""
    body = bytearray()
    for chunk in response.iter_content(1 << 16):
        body += chunk
        if len(body) > limit:
            break
    return bytes(body)


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")
