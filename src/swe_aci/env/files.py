"""Host-side file I/O on paths the agent controls: regular files only, bounded, never blocking.

Files are opened with O_NONBLOCK (a FIFO cannot stall the open) and checked with fstat on the
open descriptor before a byte moves; a read stops at the size cap. `open_beneath` opens a path
inside a host directory one component at a time without following any symlink, so a link the
agent swaps in after the path was resolved cannot lead out of that directory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from swe_aci.env.base import FileTooLargeError, NotARegularFileError

PSEUDO_FILESYSTEMS = ("/proc", "/dev", "/sys")
PSEUDO_REASON = "not a regular file: /proc, /dev and /sys are not read or written by the ACI"
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
CHUNK = 1 << 20


def is_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def refuse_pseudo(resolved: str, path: str) -> None:
    """Refuse a symlink-free absolute path on /proc, /dev or /sys."""
    if any(is_under(resolved, root) for root in PSEUDO_FILESYSTEMS):
        raise NotARegularFileError(PSEUDO_REASON, path)


def open_file(host_path: str, flags: int, path: str) -> int:
    """os.open with ENXIO (a FIFO without reader, a socket) reported as not a regular file."""
    try:
        return os.open(host_path, flags, 0o666)
    except OSError as error:
        raise _renamed(error, path) from None


def open_beneath(
    root: str,
    relative: str,
    flags: int,
    path: str,
    *,
    make_dirs: bool = False,
    owner: tuple[int, int] | None = None,
) -> int:
    """Open `root/relative` following no symlink at any component (ELOOP if one is met).

    `root` itself is trusted (a directory we created); `relative` has no `..` components.
    With `make_dirs`, missing parent directories are created. With `owner` (uid, gid), the
    directory belongs to another user, whose files alone are opened (PermissionError for another
    one's, e.g. a hard link to a host file), and what is created is given to that user.
    """
    parts = [part for part in relative.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EINVAL, "path escapes its directory", path)
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            child = _descend(directory, part, path, make_dirs, owner)
            os.close(directory)
            directory = child
        if not parts:
            return os.dup(directory)
        try:
            if owner is None:
                return os.open(parts[-1], flags | os.O_NOFOLLOW, 0o666, dir_fd=directory)
            return _open_owned(directory, parts[-1], flags, owner, path)
        except OSError as error:
            raise _renamed(error, path) from None
    finally:
        os.close(directory)


def _open_owned(directory: int, name: str, flags: int, owner: tuple[int, int], path: str) -> int:
    """Open `name` only if it is `owner`'s; a file it creates becomes `owner`'s."""
    if flags & os.O_CREAT:
        try:
            descriptor = os.open(name, flags | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=directory)
        except FileExistsError:
            pass
        else:
            os.fchown(descriptor, *owner)
            return descriptor
    descriptor = os.open(name, (flags & ~os.O_CREAT) | os.O_NOFOLLOW, dir_fd=directory)
    if os.fstat(descriptor).st_uid != owner[0]:
        os.close(descriptor)
        raise PermissionError(errno.EACCES, "not a file of the sandbox's user", path)
    return descriptor


def _descend(
    directory: int, part: str, path: str, make_dirs: bool, owner: tuple[int, int] | None
) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        try:
            child = os.open(part, flags, dir_fd=directory)
        except FileNotFoundError:
            if not make_dirs:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o777, dir_fd=directory)
            child = os.open(part, flags, dir_fd=directory)
            if owner is not None and os.fstat(child).st_uid != owner[0]:
                os.fchown(child, *owner)
    except OSError as error:
        raise _renamed(error, path) from None
    return child


def read_regular(descriptor: int, path: str, limit: int) -> bytes:
    """Read a whole regular file from an open descriptor (closed afterwards), at most `limit`
    bytes."""
    try:
        info = os.fstat(descriptor)
        _require_regular(info, path)
        if info.st_size > limit:
            raise FileTooLargeError(info.st_size, limit, path)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(descriptor, min(CHUNK, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise FileTooLargeError(size, limit, path)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def write_regular(descriptor: int, path: str, content: bytes) -> None:
    """Replace the content of a regular file open for writing (closed afterwards)."""
    try:
        _require_regular(os.fstat(descriptor), path)
        os.ftruncate(descriptor, 0)
        view = memoryview(content)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)


def _require_regular(info: os.stat_result, path: str) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if not stat.S_ISREG(info.st_mode):
        raise NotARegularFileError(f"not a regular file ({_kind(info.st_mode)})", path)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _renamed(error: OSError, path: str) -> OSError:
    """The same error about the sandbox path; ENXIO becomes NotARegularFileError."""
    if error.errno == errno.ENXIO:
        return NotARegularFileError("not a regular file (a FIFO or socket)", path)
    if error.errno == errno.ELOOP:
        return OSError(errno.ELOOP, "the path changed into a symbolic link while opening", path)
    return type(error)(error.errno, error.strerror, path)
