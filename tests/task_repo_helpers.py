"""A small SWE-bench 5 task repository on disk, built as swebench's `task/repo.py` lays one out:
tasks whose Dockerfile copies a two-file Python project onto swe-aci/base:bookworm and commits
it with fixed dates (so the base commit is known before the image exists)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import yaml

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = (
    "import unittest\n"
    "from calc import add\n\n\n"
    "class TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n"
    "        self.assertEqual(add(2, 3), 5)\n\n"
    "    def test_zero(self):\n"
    "        self.assertEqual(add(0, 0), 0)\n"
)
F2P = "test_add (tests.test_calc.TestCalc.test_add)"
P2P = "test_zero (tests.test_calc.TestCalc.test_zero)"
COMMIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
}
COMMIT = (
    "git init -q -b main && git add -A && "
    "git -c core.fileMode=false commit -q -m base && git rev-parse HEAD"
)
DOCKERFILE = (
    "FROM swe-aci/base:bookworm\n"
    "COPY repo/ /testbed/\n"
    "WORKDIR /testbed\n"
    "ENV " + " ".join(f"{key}={value}" for key, value in COMMIT_ENV.items()) + "\n"
    f"RUN {COMMIT}\n"
)


def diff(path: str, before: str | None, after: str) -> str:
    """A git-style patch of one file (created when `before` is None)."""
    import difflib

    old = before.splitlines(keepends=True) if before is not None else []
    body = "".join(
        difflib.unified_diff(
            old,
            after.splitlines(keepends=True),
            "/dev/null" if before is None else f"a/{path}",
            f"b/{path}",
        )
    )
    header = f"diff --git a/{path} b/{path}\n"
    if before is None:
        header += "new file mode 100644\n"
    return header + body


GOLD = diff("calc.py", BUGGY, FIXED)
TEST_PATCH = diff("tests/test_calc.py", None, TESTS)


def base_commit(repo: Path) -> str:
    """The commit the Dockerfile's RUN line makes of `repo` (same files, same dates)."""
    environment = {**os.environ, **COMMIT_ENV}
    return subprocess.run(
        ["bash", "-c", COMMIT],
        cwd=repo,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[-1]


def eval_script(commit: str) -> str:
    return (
        "#!/bin/bash\nset -uxo pipefail\ncd /testbed\n"
        "rm -rf tests/test_calc.py\n"
        f"git apply --verbose - <<'EOF_114329324912'\n{TEST_PATCH}EOF_114329324912\n"
        ": '>>>>> Start Test Output'\n"
        "python3 -m unittest -v tests.test_calc\n"
        ": '>>>>> End Test Output'\n"
        f"git checkout {commit} -- tests 2>/dev/null; rm -f tests/test_calc.py\n"
    )


def write_task(root: Path, instance_id: str, *, eval_type: str, split: str = "test") -> Path:
    task_dir = root / "tasks" / instance_id
    project = task_dir / "repo"
    (project / "tests").mkdir(parents=True)
    (project / "calc.py").write_text(BUGGY)
    (project / "tests" / "__init__.py").write_text("")
    scratch = root.parent / f"{root.name}-commit-{instance_id}"
    subprocess.run(["cp", "-r", str(project), str(scratch)], check=True)
    commit = base_commit(scratch)
    metadata = {
        "instance_id": instance_id,
        "repo": "example/calc",
        "version": "1.0",
        "base_commit": commit,
        "split": split,
        "datasets": ["calc-bench"],
        "image": f"swebench/sweb.eval.x86_64.{instance_id.replace('__', '_1776_')}:latest",
        "log_parser": "parse_log_django",
        "eval_type": eval_type,
    }
    (task_dir / "task.yaml").write_text(yaml.safe_dump(metadata))
    tests = {"FAIL_TO_PASS": [F2P], "PASS_TO_PASS": [P2P]}
    (task_dir / "tests.json").write_text(json.dumps(tests))
    (task_dir / "problem_statement.md").write_text("add(2, 3) returns -1; it should return 5.\n")
    (task_dir / "gold.patch").write_text(GOLD)
    (task_dir / "test.patch").write_text(TEST_PATCH)
    (task_dir / "eval.sh").write_text(eval_script(commit))
    (task_dir / "Dockerfile").write_text(DOCKERFILE)
    return task_dir


def write_task_repo(root: Path, ids_and_types: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "sweb.yaml").write_text(
        yaml.safe_dump({"datasets": ["calc-bench"], "splits": ["test"]})
    )
    for instance_id, eval_type in ids_and_types.items():
        write_task(root, instance_id, eval_type=eval_type)
    return root
