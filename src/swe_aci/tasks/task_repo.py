"""SWE-bench 5 task repositories as a task source, in and out.

A task repository (`swebench.task.repo`) is a directory with `sweb.yaml` (the datasets it
publishes and their splits) and one directory per instance under `tasks/`: `task.yaml` (metadata:
`instance_id`, `repo`, `version`, `base_commit`, `split`, `datasets`, `image`, `log_parser`,
`eval_type`), `tests.json` (FAIL_TO_PASS, PASS_TO_PASS), `problem_statement.md`, `gold.patch`,
`test.patch`, `eval.sh`, `Dockerfile` (the image's build context is the task directory), optional
`hints.md` and `test_assets/`.

Read here without swebench (it stays an optional extra), file for file as `load_task_repo` reads
it; a task directory that cannot be read is one row problem naming it, and the others load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CONFIG_FILE = "sweb.yaml"
TASKS_DIR = "tasks"
TASK_FILE = "task.yaml"
TESTS_FILE = "tests.json"
ASSETS_DIR = "test_assets"
DOCKERFILE = "Dockerfile"
# Columns kept as files of their own, as swebench.task.repo.AS_FILE has them.
AS_FILE = {
    "patch": "gold.patch",
    "test_patch": "test.patch",
    "eval_script": "eval.sh",
    "problem_statement": "problem_statement.md",
}
HINTS_FILE = "hints.md"
TEST_KEYS = ("FAIL_TO_PASS", "PASS_TO_PASS")
MAX_FILE_BYTES = 50_000_000  # a task's patch or problem statement; larger is not a task


class TaskRepoError(Exception):
    """The directory is not a usable task repository (one line)."""


@dataclass(frozen=True)
class UnreadableTask:
    """A task directory that could not be read: still a row, reported where it stands."""

    reason: str


def is_task_repo(path: Path) -> bool:
    return (path / CONFIG_FILE).is_file() and (path / TASKS_DIR).is_dir()


def read_config(root: Path) -> dict[str, Any]:
    """`sweb.yaml`: the datasets the repository publishes (at least one) and its splits."""
    try:
        config = yaml.safe_load(read_text(root / CONFIG_FILE))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as error:
        raise TaskRepoError(f"{root / CONFIG_FILE}: cannot read it ({reason(error)})") from None
    if not isinstance(config, dict) or not config.get("datasets"):
        raise TaskRepoError(f"{root / CONFIG_FILE} does not name any datasets")
    config.setdefault("splits", ["test"])
    return config


def read_task_repo(
    root: Path, *, dataset: str | None = None, split: str | None = None
) -> list[tuple[str, Any]]:
    """(location, row) for each task the repository publishes in `dataset` (default: any it
    publishes) and `split` (default: any of its splits), in the order of the instance ids; an
    unreadable task is an `UnreadableTask` row at its location."""
    config = read_config(root)
    datasets = [str(name) for name in config["datasets"]]
    splits = [str(name) for name in config["splits"]]
    if dataset is not None and dataset not in datasets:
        raise TaskRepoError(
            f"{root / CONFIG_FILE} does not publish {dataset!r}; it publishes {', '.join(datasets)}"
        )
    if split is not None and split not in splits:
        raise TaskRepoError(
            f"{root / CONFIG_FILE} has no split {split!r}; its splits: {', '.join(splits)}"
        )
    wanted_datasets = {dataset} if dataset else set(datasets)
    wanted_splits = {split} if split else set(splits)
    rows: list[tuple[str, Any]] = []
    for task_dir in sorted((root / TASKS_DIR).iterdir()):
        if not task_dir.is_dir():
            continue
        location = f"{TASKS_DIR}/{task_dir.name}"
        try:
            row = read_task(task_dir)
        except TaskRepoError as error:
            rows.append((location, UnreadableTask(str(error))))
            continue
        published = set(map(str, row.get("datasets") or [])) & wanted_datasets
        if row.get("split") in wanted_splits and published:
            rows.append((location, row))
    return rows


def read_task(task_dir: Path) -> dict[str, Any]:
    """One task directory as a row (`task_dir` set to it). Raises TaskRepoError."""
    try:
        row = yaml.safe_load(read_text(task_dir / TASK_FILE))
        if not isinstance(row, dict):
            raise TaskRepoError(f"{TASK_FILE} is not a mapping")
        for column, name in AS_FILE.items():
            row[column] = read_text(task_dir / name)
        hints = task_dir / HINTS_FILE
        row["hints_text"] = read_text(hints) if hints.is_file() else ""
        tests = json.loads(read_text(task_dir / TESTS_FILE))
        if not isinstance(tests, dict):
            raise TaskRepoError(f"{TESTS_FILE} is not an object")
        row.update({key: tests[key] for key in TEST_KEYS if key in tests})
    except TaskRepoError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError, RecursionError) as error:
        raise TaskRepoError(reason(error)) from None
    if not (task_dir / DOCKERFILE).is_file():
        raise TaskRepoError(f"no {DOCKERFILE}")
    if row.get("instance_id") != task_dir.name:
        raise TaskRepoError(f"{TASK_FILE}'s instance_id is not the directory's name")
    row["task_dir"] = str(task_dir.resolve())
    return row


def read_text(path: Path) -> str:
    """A regular file's text, bounded, with CRLF inside a patch kept as it is."""
    if path.is_symlink() or not path.is_file():
        raise TaskRepoError(f"{path.name} is missing or not a regular file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise TaskRepoError(f"{path.name} is larger than {MAX_FILE_BYTES} bytes")
    with open(path, encoding="utf-8", newline="") as handle:
        return handle.read()


def reason(error: BaseException) -> str:
    if isinstance(error, OSError):
        return error.strerror or type(error).__name__
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    text = " ".join(str(error).split())
    return text[:200] or type(error).__name__
