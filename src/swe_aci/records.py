"""The ground floor every layer writes on: atomic file writes, the instance-id rule, the prediction
record, the names of the files a run leaves and the lock of an output directory. Imports nothing
of swe_aci."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel

FILE_MODE = 0o644  # mkstemp creates 0600; outputs are meant to be shared like any other file

# The files a run leaves, by the command that writes them.
PREDS_FILE = "preds.json"  # batch, rag: SWE-bench's predictions, a dict by instance id
RESULTS_FILE = "results.json"  # batch: the record of finished instances
EXIT_STATUSES_FILE = "exit_statuses.yaml"  # batch: instance ids by exit status
RUN_RECORD_FILE = "run.yaml"  # batch: the command, the task file and the config of the run
BATCH_LOG_FILE = "batch.log"  # batch: one line per event
REPORT_FILE = "report.json"  # evaluate: the run's report, and each instance's
EVALUATION_DIR = "evaluation"  # batch --evaluate, compare: where the grading goes in a run
COMPARISON_FILE = "comparison.json"  # compare: the table of configs
BATCH_DIR = "batch"  # compare: the batch of each config, under <output>/<config>/
TRAJECTORY_SUFFIX = ".traj"  # an episode's <id>.traj, <id>.patch, <id>.pred
PATCH_SUFFIX = ".patch"
PREDICTION_SUFFIX = ".pred"

INSTANCE_ID = re.compile(r"[A-Za-z0-9_.-]+")
# It names files and directories (with suffixes), docker containers and image tags (<= 128).
MAX_INSTANCE_ID_LENGTH = 128
INSTANCE_ID_RULE = (
    f"use letters, digits, '_', '.' and '-' only, at most {MAX_INSTANCE_ID_LENGTH} characters; "
    "it cannot be . or .. (it names a directory)"
)


def is_valid_instance_id(instance_id: str) -> bool:
    """Usable as a file and directory name inside the output directory, and nothing else."""
    return (
        INSTANCE_ID.fullmatch(instance_id) is not None
        and len(instance_id) <= MAX_INSTANCE_ID_LENGTH
        and instance_id not in (".", "..")
    )


class InstanceIdError(ValueError):
    """An instance id that cannot name files inside the output directory (one line)."""


def check_instance_id(instance_id: str) -> str:
    """The id, if it can name files inside the output directory; else InstanceIdError."""
    if not is_valid_instance_id(instance_id):
        raise InstanceIdError(f"invalid instance id {instance_id!r}: {INSTANCE_ID_RULE}")
    return instance_id


def instance_id_from(text: str, fallback: str) -> str:
    """`text` made a valid instance id: other characters become `_`, edge dots go."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip(".")
    return cleaned if is_valid_instance_id(cleaned) else fallback


class Prediction(BaseModel):
    """One instance's predicted patch, as SWE-bench reads it: every writer of a prediction
    (`<id>.pred`, `preds.json` of batch and rag) builds this record, every reader validates it."""

    instance_id: str
    model_name_or_path: str = ""
    model_patch: str = ""

    @property
    def is_empty(self) -> bool:
        return not self.model_patch.strip()

    def to_json(self) -> dict[str, str]:
        return self.model_dump(mode="json")


def predictions_json(predictions: dict[str, Prediction]) -> dict[str, dict[str, str]]:
    """`preds.json`'s content: the records by instance id."""
    return {instance_id: record.to_json() for instance_id, record in predictions.items()}


# A lone surrogate is a str that UTF-8 cannot encode: text decoded with surrogateescape (bytes
# that were not UTF-8, each as U+DC80..U+DCFF) or a model's reply carrying one.
SURROGATE = re.compile(r"[\ud800-\udfff]")
NOT_ESCAPED_BYTE = re.compile(r"[\ud800-\udc7f\udd00-\udfff]")


def json_text(data: Any, indent: int | None = None) -> str:
    """`data` as JSON with its text as it is (not \\u-escaped) but for lone surrogates, which are
    escaped (`"\\udcff"`): the text always encodes as UTF-8 and loads back to the same strings."""
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def utf8_bytes(text: str) -> bytes:
    """`text` in UTF-8; a lone surrogate standing for a byte (surrogateescape) is that byte again,
    any other one U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return NOT_ESCAPED_BYTE.sub("\ufffd", text).encode("utf-8", "surrogateescape")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that `path` always holds either the old or the new complete content."""
    write_text_atomic(path, json_text(data, indent=2))


def write_text_atomic(path: Path, text: str) -> None:
    """Write a temporary file beside `path`, flush it to disk, then rename it over `path` (the
    text in UTF-8, see `utf8_bytes`)."""
    data = utf8_bytes(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# -- one process per directory ---------------------------------------------------------------------
# A command writing a run's directory (`batch`, `evaluate`, `compare`) holds an exclusive lock on
# it for its whole life, and every episode one on its instance's directory; a second process fails
# at once with one line naming the holder's pid. The lock is the kernel's (`flock` on the
# directory itself), so it goes with the process however it ends, and it adds no file to the
# directory.

LOCKS_FILE = Path("/proc/locks")
LOCKS_BYTES = 4 << 20  # read at most this much of /proc/locks to name a holder


class OutputLockError(Exception):
    """The directory is held by another process, or the lock cannot be taken (one line)."""


class OutputLock:
    """A held lock: `with OutputLock.acquire(directory, "evaluate"):` for a command's output
    directory, `with OutputLock.instance(directory):` for an episode's; released when the block
    ends. Either creates the directory if missing."""

    def __init__(self, handle: int, created: list[Path]) -> None:
        self.handle: int | None = handle
        self.created = created  # removed again on release while still empty (instance locks)

    @classmethod
    def acquire(cls, directory: Path, command: str) -> OutputLock:
        """Take the lock of a command's output directory now, or raise OutputLockError."""
        return cls._take(directory, f"give {command} another --output-dir", tidy=False)

    @classmethod
    def instance(cls, directory: Path) -> OutputLock:
        """Take the lock of an instance's directory for its episode, or raise OutputLockError.
        Directories it had to create are removed again if the run left them empty (it failed
        before writing anything)."""
        return cls._take(directory, "choose another --output-dir or --instance-id", tidy=True)

    @classmethod
    def _take(cls, directory: Path, advice: str, *, tidy: bool) -> OutputLock:
        absolute = Path(os.path.abspath(directory))
        created = [path for path in (absolute, *absolute.parents) if not path.exists()]
        try:
            directory.mkdir(parents=True, exist_ok=True)
            handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise OutputLockError(f"cannot lock {directory}: {exc.strerror}") from None
        lock = cls(handle, created if tidy else [])
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = lock_holder(os.fstat(handle))
            lock.release()
            raise OutputLockError(
                f"another run is writing {directory} (pid {holder or '?'}): wait for it to end, "
                f"or {advice}"
            ) from None
        if not same_directory(handle, directory):  # removed by the run that held it before
            lock.release()
            raise OutputLockError(f"{directory} was removed while this run started; run it again")
        return lock

    def release(self) -> None:
        if self.handle is None:
            return
        for path in self.created:  # deepest first; only while still empty
            with contextlib.suppress(OSError):
                path.rmdir()
        os.close(self.handle)
        self.handle = None

    def __enter__(self) -> OutputLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def same_directory(handle: int, directory: Path) -> bool:
    try:
        current = os.stat(directory)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle)
    return (opened.st_dev, opened.st_ino) == (current.st_dev, current.st_ino)


def lock_holder(stat: os.stat_result) -> str | None:
    """The pid holding a flock on the file of `stat`, from /proc/locks (None: not found)."""
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    try:
        with open(LOCKS_FILE, "rb") as handle:
            text = handle.read(LOCKS_BYTES).decode("ascii", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device:
            return fields[4]
    return None
