"""Container files read and written through a long-lived bash loop (`FileChannel`)."""

from __future__ import annotations

import base64
import errno
import os
import re
import secrets
from typing import TYPE_CHECKING

from swe_aci.env.base import FileTooLargeError, NotARegularFileError
from swe_aci.env.docker.exec import HANDSHAKE_SECONDS, ChannelBroken, ExecSocket

if TYPE_CHECKING:
    from docker import APIClient

FILE_OP_SECONDS = 120.0

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
