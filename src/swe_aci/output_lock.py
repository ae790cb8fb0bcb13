"""One process per output directory: `evaluate` (and any command writing a run's directory) holds
an exclusive lock on `<output>/.swe-aci.lock` for its whole life; a second process fails at once
with one line naming the holder's pid. The lock is the kernel's (`flock`), so it goes with the
process however it ends, and a stale lock file is simply taken over. Imports nothing of swe_aci.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from types import TracebackType

LOCK_FILE = ".swe-aci.lock"
PID_BYTES = 32


class OutputLockError(Exception):
    """The directory is held by another process, or the lock cannot be taken (one line)."""


class OutputLock:
    """A held lock: `with OutputLock.acquire(directory, "evaluate"):` (the directory is created
    if missing); released when the block ends."""

    def __init__(self, handle: int) -> None:
        self.handle: int | None = handle

    @classmethod
    def acquire(cls, directory: Path, command: str) -> OutputLock:
        """Take the lock now, or raise OutputLockError naming the holder's pid."""
        path = directory / LOCK_FILE
        try:
            directory.mkdir(parents=True, exist_ok=True)
            handle = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise OutputLockError(f"cannot lock {directory}: {exc.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle, PID_BYTES, 0).decode("ascii", "replace").strip()
            os.close(handle)
            raise OutputLockError(
                f"{directory} is in use by another swe-aci process (pid {holder or '?'}): "
                f"wait for it to end, or give {command} another --output-dir"
            ) from None
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{os.getpid()}\n".encode("ascii"), 0)
        return cls(handle)

    def __enter__(self) -> OutputLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.handle is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self.handle, 0)
            os.close(self.handle)
            self.handle = None
