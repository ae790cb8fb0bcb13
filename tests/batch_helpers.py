"""Generated task sets for the tasks, recipes and batch tests: small projects with a bug, their
rows (with a gold patch and a test patch), and scripted replies that edit and submit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import commit_tree

SECRET = "GOLD-FIX-7f3a"  # only in the patch: the agent must never be able to read it

EDIT = "DISCUSSION\nFix it.\n```\nsed -i 's/a - b/a + b/' calc/__init__.py\n```\n"
SUBMIT = "DISCUSSION\nDone.\n```\nsubmit\n```\n"

BUGGY = "def add(a, b):\n    return a - b\n"
GOLD_PATCH = f"""\
diff --git a/calc/__init__.py b/calc/__init__.py
--- a/calc/__init__.py
+++ b/calc/__init__.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b  # {SECRET}
"""
TEST_PATCH = """\
diff --git a/tests/test_add.py b/tests/test_add.py
new file mode 100644
--- /dev/null
+++ b/tests/test_add.py
@@ -0,0 +1,5 @@
+from calc import add
+
+
+def test_add():
+    assert add(2, 3) == 5
"""


def make_project(root: Path, *, number: int = 0, git: bool = True) -> Path:
    """A tiny installable package `calc` whose add() subtracts."""
    files = {
        "calc/__init__.py": BUGGY,
        "setup.py": 'from setuptools import setup\nsetup(name="calc", version="0.1", packages=["calc"])\n',
        "README": f"project {number}\n",
    }
    if git:
        commit_tree(root, files)
    else:
        for relative, content in files.items():
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_text(content)
    return root


def recipe_row(instance_id: str, source: dict[str, str], **recipe: Any) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "repo": "demo/calc",
        "problem_statement": "add() subtracts instead of adding",
        "hints_text": f"hint {SECRET}",
        "patch": GOLD_PATCH,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": json.dumps(["tests/test_add.py::test_add"]),
        "PASS_TO_PASS": "[]",
        "environment": {
            "source": source,
            "test_cmd": "pytest -q",
            "log_parser": "pytest",
            **recipe,
        },
    }


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def generated_task_file(tmp_path: Path, count: int, **recipe: Any) -> Path:
    """`count` rows, each on its own git project, with a recipe that needs no network."""
    rows = []
    for number in range(count):
        project = make_project(tmp_path / "projects" / f"p{number}", number=number)
        rows.append(recipe_row(f"demo__calc-{number}", {"git": str(project)}, **recipe))
    return write_rows(tmp_path / "tasks.jsonl", rows)


def scripted_overrides(replies: list[str] | None = None) -> list[str]:
    return ["model.name=scripted", f"model.script={json.dumps(replies or [EDIT, SUBMIT])}"]
