"""A process exec'd in a container over one socket (`ExecSocket`), and `run_exec` for helpers."""

from __future__ import annotations

import contextlib
import re
import select
import socket
import time
from typing import TYPE_CHECKING, Any

from swe_aci.env.base import SandboxError

if TYPE_CHECKING:
    from docker import APIClient

# How long a long-lived helper (the shell, the file channel) may take to answer its first line.
HANDSHAKE_SECONDS = 30.0
# How far back a pattern is searched again when more bytes arrive (longer than any pattern).
PATTERN_OVERLAP = 256


def docker_module() -> Any:
    try:
        import docker
    except ImportError as exc:
        raise SandboxError(
            "the docker backend needs the docker package: pip install docker"
        ) from exc
    return docker


def explain(exc: BaseException) -> str:
    """The first line of a docker error, for a one-line SandboxError."""
    return str(getattr(exc, "explanation", None) or exc).splitlines()[0][:300]


class ChannelBroken(Exception):
    """A stream to a helper process ended, stalled or answered nonsense; start a new one."""

    def __init__(self, message: str, received: bytes = b"") -> None:
        super().__init__(message)
        self.received = received


class _FrameDecoder:
    """Docker's multiplexed stream without a tty: frames of an 8-byte header (stream type, 3
    zero bytes, big-endian payload size) and the payload. Returns payload bytes as they come."""

    def __init__(self) -> None:
        self._header = bytearray()
        self._left = 0
        self._stream = 1

    def feed(self, data: bytes) -> bytes:
        return b"".join(payload for _, payload in self.frames(data))

    def frames(self, data: bytes) -> list[tuple[int, bytes]]:
        """(stream, payload) pieces: stream 1 is stdout, 2 stderr."""
        out: list[tuple[int, bytes]] = []
        index = 0
        while index < len(data):
            if self._left == 0:
                take = 8 - len(self._header)
                self._header += data[index : index + take]
                index += take
                if len(self._header) == 8:
                    self._stream = self._header[0]
                    self._left = int.from_bytes(self._header[4:8], "big")
                    self._header.clear()
                continue
            piece = data[index : index + self._left]
            out.append((self._stream, piece))
            index += len(piece)
            self._left -= len(piece)
        return out


class ExecSocket:
    """One process exec'd in a container with stdin, stdout and stderr attached to a socket.

    Over it run the persistent shell (`shell.py`), the file channel (`file_channel.py`) and every
    short helper command (`run_exec`: git for the submission, the interrupt's kill script, the
    repository's reset, rm, mkdir), each bounded by a timeout. Every exec costs ~40 ms (runc), and
    so does each archive-API call (dockerd re-execs itself to chroot), so anything done per
    command or per file goes through these already running processes instead.
    """

    def __init__(
        self,
        api: APIClient,
        container_id: str,
        command: list[str],
        *,
        environment: dict[str, str] | None = None,
        workdir: str | None = None,
    ) -> None:
        self.api = api
        self.container_id = container_id
        try:
            self.exec_id = api.exec_create(
                container_id,
                command,
                stdin=True,
                stdout=True,
                stderr=True,
                environment=environment,
                workdir=workdir,
            )["Id"]
            self._response = api.exec_start(self.exec_id, socket=True)
        except docker_module().errors.APIError as exc:
            raise SandboxError(
                f"could not start {command[0]} in the container: {explain(exc)}"
            ) from None
        self._sock = getattr(self._response, "_sock", self._response)
        self._sock.setblocking(False)
        self._decoder = _FrameDecoder()
        self._pending = bytearray()

    def fileno(self) -> int:
        return self._sock.fileno()

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                sent = self._sock.send(view)
            except BlockingIOError:
                select.select([], [self._sock], [], 1.0)
                continue
            view = view[sent:]

    def receive(self) -> bytes | None:
        """Payload bytes available now: None if nothing yet, b"" at end of stream."""
        try:
            data = self._sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""
        if not data:
            return b""
        return self._decoder.feed(data) or None

    def receive_until(self, pattern: re.Pattern[bytes], timeout: float) -> tuple[bytes, re.Match]:
        """Read until `pattern` matches; return the bytes before the match, and the match."""
        buffer, self._pending = self._pending, bytearray()
        searched = 0
        deadline = time.monotonic() + timeout
        while True:
            match = pattern.search(buffer, max(0, searched - PATTERN_OVERLAP))
            if match:
                self._pending = buffer[match.end() :]
                return bytes(buffer[: match.start()]), match
            searched = len(buffer)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelBroken(f"no answer within {timeout:g} seconds", bytes(buffer))
            select.select([self._sock], [], [], remaining)
            chunk = self.receive()
            if chunk == b"":
                raise ChannelBroken("the stream ended", bytes(buffer))
            if chunk:
                buffer += chunk

    def close_input(self) -> None:
        """End the process's standard input."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)

    def read_to_end(self, timeout: float) -> tuple[bytes, bytes]:
        """stdout and stderr until the process closes them; ChannelBroken after `timeout`."""
        streams = {1: bytearray(), 2: bytearray()}
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelBroken(f"no end within {timeout:g} seconds")
            select.select([self._sock], [], [], remaining)
            try:
                data = self._sock.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                return bytes(streams[1]), bytes(streams[2])
            for stream, payload in self._decoder.frames(data):
                streams.setdefault(stream, bytearray()).extend(payload)

    def exit_code(self) -> int | None:
        try:
            return self.api.exec_inspect(self.exec_id)["ExitCode"]
        except Exception:
            return None

    def running(self) -> bool:
        try:
            return bool(self.api.exec_inspect(self.exec_id)["Running"])
        except Exception:
            return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(Exception):
            self._response.close()


def run_exec(
    api: APIClient,
    container_id: str,
    command: list[str],
    stdin: bytes | None,
    timeout: float,
    *,
    environment: dict[str, str] | None = None,
    workdir: str | None = None,
) -> tuple[int, bytes, bytes]:
    """Run a fresh process in the container with `stdin`; (exit code, stdout, stderr).

    The host waits at most `timeout` seconds, whatever the process does (TimeoutError).
    """
    stream = ExecSocket(api, container_id, command, environment=environment, workdir=workdir)
    try:
        if stdin:
            stream.send(stdin)
        stream.close_input()
        out, err = stream.read_to_end(timeout)
    except ChannelBroken as exc:
        raise TimeoutError(f"{command[0]} in the container: {exc}") from None
    finally:
        stream.close()
    code = stream.exit_code()
    for _ in range(50):
        if code is not None:
            break
        time.sleep(0.01)
        code = stream.exit_code()
    return (code if code is not None else -1), out, err
