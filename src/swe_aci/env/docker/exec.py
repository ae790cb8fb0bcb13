"""Every process swe-aci execs in a docker container, through one kind of stream.

`ExecSocket` is one `docker exec` with stdin attached; over it run the persistent shell
(`DockerShellTransport`, a ShellTransport), the file channel (`FileChannel`) and every short
helper command (`run_exec`: git for the submission, the interrupt's kill script, the repository's
reset, rm, mkdir), each bounded by a timeout. Every exec costs
~40 ms (runc), and so does each archive-API call (dockerd re-execs itself to chroot), so anything
done per command or per file goes through these already running processes instead.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import re
import secrets
import select
import socket
import time
from typing import TYPE_CHECKING, Any

from swe_aci.env.base import FileTooLargeError, NotARegularFileError, SandboxError
from swe_aci.env.process import CLOCK_TICKS, RUNAWAY_PROCESSES, count_descendants

if TYPE_CHECKING:
    from docker import APIClient

HANDSHAKE_SECONDS = 30.0
FILE_OP_SECONDS = 120.0
KILL_SECONDS = 30.0
# How far back a pattern is searched again when more bytes arrive (longer than any pattern).
PATTERN_OVERLAP = 256

# Sends the shell (pid = session id $1) SIGUSR1 so it abandons its command, then kills the processes
# of that session started at or after clock tick $2; or, when $3 is "all", kills all of them, the
# shell included. /proc start times count from the boot of the host, which containers
# share, so the host's CLOCK_BOOTTIME sets the threshold.
KILL_SCRIPT = r"""
sid=$1 min=$2 scope=$3
[ "$scope" = all ] || kill -USR1 "$sid" 2>/dev/null
for stat in /proc/[0-9]*/stat; do
    read -r line < "$stat" 2>/dev/null || continue
    pid=${line%% *}
    set -- ${line##*) }
    [ "$4" = "$sid" ] || continue
    [ "$scope" = all ] || { [ "$pid" != "$sid" ] && [ "${20}" -ge "$min" ]; } || continue
    kill -9 "$pid" 2>/dev/null
done
exit 0
"""

# Kills every process of the shell's session ($1) but the shell when they are a runaway (see
# env/process.py: stopped round after round, then killed together); prints how many there were.
RUNAWAY_SCRIPT = r"""
sid=$1 found=0
for ((round = 0; round < 200; round++)); do
    members=() running=()
    for stat in /proc/[0-9]*/stat; do
        read -r line < "$stat" 2>/dev/null || continue
        pid=${line%% *}
        set -- ${line##*) }
        [ "$4" = "$sid" ] && [ "$pid" != "$sid" ] || continue
        case $1 in Z|X|x) continue ;; T|t) ;; *) running+=("$pid") ;; esac
        members+=("$pid")
    done
    [ ${#members[@]} -gt 0 ] || break
    [ ${#members[@]} -gt $found ] && found=${#members[@]}
    if [ ${#running[@]} -gt 0 ]; then kill -STOP "${running[@]}" 2>/dev/null
    else kill -9 "${members[@]}" 2>/dev/null
    fi
done
echo "$found"
"""

# The file channel: a loop that only ever parses NUL-separated requests (verb, tag, size, path;
# then `size` raw bytes for WRITE; for READ, `size` is the largest file read) and never evaluates
# input, so even a desynchronised stream cannot run anything. GNU head reads exactly `size` bytes
# (busybox's over-reads: not used). Only regular files are read or written. Each answer ends with
# "\n<tag> <code>": 0, an errno name, "E <strerror>", "EFBIG <size>" or "ENOTREG <kind>". Nothing is printed
# before a first request arrives (a "HELLO"), so no output can race the HTTP upgrade's headers.
FILE_LOOP = r"""
exec 2>/dev/null
special() {
    if [ -p "$1" ]; then echo "ENOTREG a FIFO"; elif [ -S "$1" ]; then echo "ENOTREG a socket"
    elif [ -b "$1" ] || [ -c "$1" ]; then echo "ENOTREG a device"
    else echo "ENOTREG a special file"; fi
}
IFS= read -r -d '' hello
if [[ $(head --version) != *GNU* ]] || ! command -v base64 >/dev/null; then echo UNSUPPORTED; exit; fi
echo READY
while IFS= read -r -d '' verb && IFS= read -r -d '' tag && IFS= read -r -d '' size &&
      IFS= read -r -d '' path; do
    code=0
    case $verb in
    READ)
        if [ -d "$path" ]; then code=EISDIR
        elif [ ! -e "$path" ]; then code=ENOENT
        elif [ ! -f "$path" ]; then code=$(special "$path")
        elif [ ! -r "$path" ]; then code=EACCES
        elif length=$(stat -L -c %s -- "$path") && [ "$length" -gt "$size" ]; then
            code="EFBIG $length"
        else timeout -s KILL 60 head -c "$((size + 1))" -- "$path" | base64 -w0 || code=EIO
        fi ;;
    WRITE)
        if [ -d "$path" ]; then code=EISDIR
        elif [ -e "$path" ] && [ ! -f "$path" ]; then code=$(special "$path")
        else
            [ -d "${path%/*}/" ] || mkdir -p -- "${path%/*}"
            { : > "$path"; } || { msg=$({ : > "$path"; } 2>&1); code="E ${msg##*: }"; }
        fi
        if [ "$code" = 0 ]; then head -c "$size" >> "$path" || code=EIO
        else head -c "$size" > /dev/null
        fi ;;
    *) code=EPROTO ;;
    esac
    printf '\n%s %s\n' "$tag" "$code"
done
"""
STRERRORS = {
    os.strerror(code): code
    for code in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR, errno.ENOSPC)
}


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
    """One process exec'd in a container with stdin, stdout and stderr attached to a socket."""

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


class DockerShellTransport:
    """A ShellTransport: one `bash` exec'd in the container, stderr merged into stdout.

    runc starts each exec in a new session, so the shell's pid is the session id of every command
    it runs; `interrupt` kills that session's recent processes with one small exec.
    """

    def __init__(self, api: APIClient, container_id: str) -> None:
        self._stream = ExecSocket(api, container_id, ["bash", "--noprofile", "--norc"])
        tag = b"__SWE_ACI_SHELL_" + secrets.token_hex(8).encode()
        # Merge stderr first, so that frame order is output order; then learn the session id.
        self._stream.send(
            b"exec 2>&1; read -r -a __swe_aci_stat < /proc/$$/stat\n"
            b"printf '%s %s\\n' " + tag + b' "${__swe_aci_stat[5]}"; unset __swe_aci_stat\n'
        )
        try:
            _, match = self._stream.receive_until(re.compile(tag + rb" (\d+)\n"), HANDSHAKE_SECONDS)
        except ChannelBroken as exc:
            self._stream.close()
            detail = " ".join(exc.received.decode("utf-8", errors="replace").split())[-300:]
            detail = detail or str(exc)
            raise SandboxError(f"bash did not start in the container: {detail}") from None
        self.session_id = int(match.group(1))
        self._host_pids = _host_pids(api, container_id, self._stream.exec_id)

    def fileno(self) -> int:
        return self._stream.fileno()

    def write(self, data: bytes) -> None:
        self._stream.send(data)

    def read_available(self) -> bytes | None:
        return self._stream.receive()

    def is_alive(self) -> bool:
        return self._stream.running()

    def interrupt(self, since_boot_seconds: float) -> None:
        threshold = max(1, int(since_boot_seconds * CLOCK_TICKS))
        self._kill(str(threshold), "recent")

    def reap_runaway(self) -> int:
        """Counted on the host when the engine runs here (the descendants of the shell and of
        the container's init, which adopts orphans), so a command costs no exec; only a runaway
        is killed, by one exec of RUNAWAY_SCRIPT. With a remote engine nothing is checked."""
        if self._host_pids is None:
            return 0
        count = sum(count_descendants(pid, RUNAWAY_PROCESSES) for pid in self._host_pids)
        if count < RUNAWAY_PROCESSES:
            return 0
        api, container_id = self._stream.api, self._stream.container_id
        command = ["bash", "-c", RUNAWAY_SCRIPT, "reap", str(self.session_id)]
        _, out, _ = run_exec(api, container_id, command, None, KILL_SECONDS)
        found = out.decode(errors="replace").split()
        return int(found[-1]) if found and found[-1].isdigit() else 0

    def _kill(self, threshold: str, scope: str) -> None:
        api, container_id = self._stream.api, self._stream.container_id
        command = ["bash", "-c", KILL_SCRIPT, "kill", str(self.session_id), threshold, scope]
        run_exec(api, container_id, command, None, KILL_SECONDS)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._kill("0", "all")
        self._stream.close()


def _host_pids(api: APIClient, container_id: str, exec_id: str) -> tuple[int, int] | None:
    """The host pids of the container's init and of the shell, when the engine runs on this
    host (each pid's command line is checked: a remote engine's pids mean nothing here)."""
    try:
        init = int(api.inspect_container(container_id)["State"]["Pid"])
        shell = int(api.exec_inspect(exec_id)["Pid"])
        with open(f"/proc/{init}/cmdline", "rb") as handle:
            init_line = handle.read()
        with open(f"/proc/{shell}/cmdline", "rb") as handle:
            shell_line = handle.read()
    except Exception:  # a remote engine, a pid gone: nothing checked
        return None
    if b"sleep\0infinity\0" not in init_line or not shell_line.startswith(b"bash\0"):
        return None
    return init, shell


class FileChannel:
    """Container files read and written by a long-lived bash loop (see FILE_LOOP).

    Writes go through `: > path` then `>>`, so an existing file keeps its mode and owner and a
    symlink is followed, as with open(); missing parent directories are created.
    """

    def __init__(self, stream: ExecSocket) -> None:
        self._stream = stream

    @classmethod
    def open(cls, api: APIClient, container_id: str) -> FileChannel | None:
        """Start the loop; None when the image lacks GNU head or base64."""
        stream = ExecSocket(api, container_id, ["bash", "--noprofile", "--norc", "-c", FILE_LOOP])
        try:
            stream.send(b"HELLO\0")
            _, match = stream.receive_until(
                re.compile(rb"(READY|UNSUPPORTED)\n"), HANDSHAKE_SECONDS
            )
        except (ChannelBroken, OSError):
            match = None
        if match is None or match.group(1) != b"READY":
            stream.close()
            return None
        return cls(stream)

    def read(self, path: str, limit: int) -> bytes:
        payload = self._request(b"READ", path, b"", limit)
        try:
            data = base64.b64decode(payload, validate=True)
        except ValueError as exc:
            raise ChannelBroken(f"bad file data for {path}") from exc
        if len(data) > limit:
            raise FileTooLargeError(len(data), limit, path)
        return data

    def write(self, path: str, content: bytes) -> None:
        self._request(b"WRITE", path, content, len(content))

    def close(self) -> None:
        self._stream.close()

    def _request(self, verb: bytes, path: str, content: bytes, size: int) -> bytes:
        if "\0" in path:
            raise ValueError("embedded null byte")
        tag = b"__SWE_ACI_FILE_" + secrets.token_hex(8).encode()
        fields = [verb, tag, str(size).encode(), os.fsencode(path)]
        try:
            self._stream.send(b"".join(field + b"\0" for field in fields) + content)
        except OSError as exc:
            raise ChannelBroken(f"the file channel is gone: {exc}") from exc
        payload, match = self._stream.receive_until(
            re.compile(rb"\n" + tag + rb" ([^\n]*)\n"), FILE_OP_SECONDS
        )
        code = match.group(1).decode("utf-8", errors="replace")
        if code == "0":
            return payload
        if code == "EIO" or payload:
            # head may have stopped half-way through the content: the stream is out of step.
            raise ChannelBroken(f"{verb.decode()} {path} failed ({code})")
        if code.startswith("ENOTREG "):
            raise NotARegularFileError(f"not a regular file ({code[8:]})", path)
        if code.startswith("EFBIG ") and code[6:].isdigit():
            raise FileTooLargeError(int(code[6:]), size, path)
        if code.startswith("E "):
            number = STRERRORS.get(code[2:], errno.EIO)
        else:
            value = getattr(errno, code, None) if code.isupper() else None
            number = value if isinstance(value, int) else errno.EIO
        raise OSError(number, os.strerror(number), path)


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
