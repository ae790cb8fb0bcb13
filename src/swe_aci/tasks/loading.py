"""Reading task files (JSON list, JSONL, YAML list; a saved Hugging Face dataset; or a SWE-bench 5
task repository, `task_repo.py`) into Tasks.

A malformed row is reported (file, line or index, id, what is wrong) and left out; the others load.
Only a file that cannot be used at all raises TaskFileError.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from swe_aci.tasks.models import Task
from swe_aci.tasks.task_repo import TaskRepoError, UnreadableTask, is_task_repo, read_task_repo

TOO_DEEP = "nested too deeply to read (a task row is a flat object)"


class TaskFileError(Exception):
    """The task file (or a selection option) cannot be used; the message is one line."""


@dataclass
class RowProblem:
    """Why one row was left out."""

    file: str
    location: str  # "line N" (JSONL) or "index N" (JSON / YAML lists)
    instance_id: str | None
    message: str

    def __str__(self) -> str:
        name = f" ({self.instance_id})" if self.instance_id else ""
        return f"{self.file}, {self.location}{name}: {self.message}"


@dataclass
class TaskSet:
    tasks: list[Task]
    problems: list[RowProblem] = field(default_factory=list)
    source_hash: str = ""


def load_tasks(
    path: str | Path,
    *,
    filter: str | None = None,
    slice: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
    dataset: str | None = None,
    split: str | None = None,
) -> TaskSet:
    """Load, validate and select tasks. Selection order: shuffle (seeded), filter (a regex searched
    in the instance id), then slice (Python `A:B[:C]` over what is left). `dataset` and `split`
    choose among what a task repository publishes (default: all of it)."""
    pattern = compile_filter(filter)
    selection = parse_slice(slice)
    file = Path(path).expanduser()
    if (dataset or split) and not is_task_repo(file):
        raise TaskFileError(
            f"--dataset and --split choose from a task repository; {file} is not one"
        )
    rows, source_hash = read_rows(file, dataset=dataset, split=split)
    tasks: list[Task] = []
    problems: list[RowProblem] = []
    seen: set[str] = set()
    for location, row in rows:
        row_id = row.get("instance_id") if isinstance(row, dict) else None
        row_id = row_id if isinstance(row_id, str) else None
        try:
            task = parse_row(row, file.parent)
        except ValueError as error:
            problems.append(RowProblem(str(file), location, row_id, str(error)))
            continue
        if task.instance_id in seen:
            problems.append(RowProblem(str(file), location, row_id, "duplicate instance_id"))
            continue
        seen.add(task.instance_id)
        tasks.append(task)
    if shuffle:
        random.Random(seed).shuffle(tasks)
    if pattern is not None:
        tasks = [task for task in tasks if pattern.search(task.instance_id)]
    if selection is not None:
        tasks = tasks[selection]
    return TaskSet(tasks, problems, source_hash)


def load_task(spec: str) -> Task:
    """One task by `FILE:ID` (for debugging a single instance). Raises TaskFileError."""
    file, separator, instance_id = spec.rpartition(":")
    if not separator or not file or not instance_id:
        raise TaskFileError(f"bad instance {spec!r}: expected FILE:ID")
    task_set = load_tasks(file)
    for task in task_set.tasks:
        if task.instance_id == instance_id:
            return task
    for problem in task_set.problems:
        if problem.instance_id == instance_id:
            raise TaskFileError(str(problem))
    raise TaskFileError(f"no task {instance_id!r} in {file}")


def parse_row(row: Any, base_dir: Path) -> Task:
    """Validate one row; a relative `path` source becomes absolute against the task file's
    directory. Raises ValueError with a one-line reason."""
    if isinstance(row, InvalidLine | UnreadableTask):
        raise ValueError(row.reason)
    if not isinstance(row, dict):
        raise ValueError(f"a row must be an object, not {type(row).__name__}")
    try:
        task = Task.model_validate(row)
    except ValidationError as error:
        raise ValueError(describe(error)) from None
    source = task.environment.source if task.environment else None
    if source is not None and source.path and not Path(source.path).is_absolute():
        source.path = str((base_dir / source.path).resolve())
    return task


def describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "row"
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        return f"missing key {where}"
    return f"{where}: {message}"


def read_rows(
    file: Path, *, dataset: str | None = None, split: str | None = None
) -> tuple[list[tuple[str, Any]], str]:
    """(location, row) pairs and the sha256 of what was read."""
    if not file.exists() and looks_like_dataset_name(str(file)):
        return read_dataset(str(file))
    if is_task_repo(file):
        try:
            rows = read_task_repo(file, dataset=dataset, split=split)
        except TaskRepoError as error:
            raise TaskFileError(str(error)) from None
        return rows, rows_digest(rows)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise TaskFileError(f"task file not found: {file}") from None
    except IsADirectoryError:
        if (file / "dataset_info.json").is_file() or (file / "dataset_dict.json").is_file():
            return read_dataset(str(file))
        raise TaskFileError(
            f"task file is a directory: {file} (neither a task repository with sweb.yaml "
            "nor a saved dataset)"
        ) from None
    except OSError as error:
        raise TaskFileError(f"cannot read task file {file}: {error.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise TaskFileError(f"task file {file} is not UTF-8 text") from None
    suffix = file.suffix.lower()
    if suffix == ".jsonl":
        return read_jsonl(file, text), digest
    if suffix in {".yaml", ".yml"}:
        return as_list(file, load_yaml(file, text)), digest
    if suffix == ".json" or text.lstrip().startswith("["):
        try:
            return as_list(file, json.loads(text)), digest
        except json.JSONDecodeError as error:
            if suffix == ".json":
                raise TaskFileError(f"task file {file}: invalid JSON: {error}") from None
        except RecursionError:
            raise TaskFileError(f"task file {file}: {TOO_DEEP}") from None
    if text.lstrip().startswith("{"):
        return read_jsonl(file, text), digest
    return as_list(file, load_yaml(file, text)), digest


def rows_digest(rows: list[tuple[str, Any]]) -> str:
    """The sha256 of rows read from several files (a task repository)."""
    text = json.dumps(rows, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def read_jsonl(file: Path, text: str) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"line {number}", json.loads(line)))
        except json.JSONDecodeError as error:
            rows.append((f"line {number}", InvalidLine(f"invalid JSON: {error.msg}")))
        except RecursionError:
            rows.append((f"line {number}", InvalidLine(TOO_DEEP)))
    return rows


@dataclass
class InvalidLine:
    """A JSONL line that is not JSON: still a row, so it is reported where it stands."""

    reason: str


def load_yaml(file: Path, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise TaskFileError(f"task file {file}: invalid YAML{line}") from None
    except RecursionError:
        raise TaskFileError(f"task file {file}: {TOO_DEEP}") from None


def as_list(file: Path, data: Any) -> list[tuple[str, Any]]:
    if not isinstance(data, list):
        raise TaskFileError(f"task file {file}: expected a list of task rows")
    return [(f"index {index}", row) for index, row in enumerate(data)]


def looks_like_dataset_name(name: str) -> bool:
    """`owner/name` or `owner/name:split`, as Hugging Face dataset ids are written."""
    return bool(re.fullmatch(r"[\w.-]+/[\w.-]+(:[\w.-]+)?", name)) and not name.endswith(
        (".json", ".jsonl", ".yaml", ".yml")
    )


def read_dataset(name: str) -> tuple[list[tuple[str, Any]], str]:
    """Rows of a Hugging Face dataset: a directory saved with `save_to_disk`, or a hub id with an
    optional `:split` (default `test`). Needs the optional `datasets` extra."""
    try:
        import datasets
    except ImportError:
        raise TaskFileError(
            f"{name} is not a file; loading datasets needs the extra: pip install 'swe-aci[datasets]'"
        ) from None
    try:
        if Path(name).is_dir():
            split = datasets.load_from_disk(name)
            if isinstance(split, datasets.DatasetDict):  # the `test` split, else the first one
                split = split["test"] if "test" in split else next(iter(split.values()))
        else:
            dataset_id, _, split_name = name.partition(":")
            split = datasets.load_dataset(dataset_id, split=split_name or "test")
    except Exception as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise TaskFileError(f"cannot load dataset {name}: {reason}") from None
    rows = [(f"index {index}", dict(row)) for index, row in enumerate(split)]
    digest = hashlib.sha256(split._fingerprint.encode()).hexdigest()
    return rows, digest


def compile_filter(filter: str | None) -> re.Pattern[str] | None:
    if filter is None:
        return None
    try:
        return re.compile(filter)
    except re.error as error:
        raise TaskFileError(f"bad --filter {filter!r}: {error}") from None


def parse_slice(text: str | None) -> slice | None:
    if text is None:
        return None
    parts = text.split(":")
    try:
        if len(parts) == 1:
            return slice(int(parts[0]))
        if len(parts) > 3:
            raise ValueError
        return slice(*(int(part) if part.strip() else None for part in parts))
    except ValueError:
        raise TaskFileError(f"bad --slice {text!r}: expected A:B (e.g. 0:10)") from None
