"""Build small_bugs.jsonl from small_bugs/specs.yaml and the packages under small_bugs/.

    python datasets/build_small_bugs.py      # rewrites datasets/small_bugs.jsonl

A row's `patch` is the spec's replacement as a git diff of its file, `test_patch` adds the hidden
tests as `tests/test_issue.py`; FAIL_TO_PASS are the hidden tests, PASS_TO_PASS the package's
own tests. The recipe copies the package directory (`source.path`), installs pytest and runs the
tests with `-rA`.
"""

from __future__ import annotations

import ast
import difflib
import json
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE / "small_bugs"
HIDDEN = "tests/test_issue.py"
TEST_COMMAND = "python -m pytest -rA -p no:cacheprovider tests"


def git_diff(path: str, before: str, after: str) -> str:
    if before:
        header = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=3)
    else:
        header = (
            f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        )
        lines = difflib.unified_diff([], after.splitlines(True), n=3)
    body = [line for line in lines if not line.startswith(("---", "+++"))]
    return header + "".join(body)


def test_ids(path: str, text: str) -> list[str]:
    tree = ast.parse(text)
    return [
        f"{path}::{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    ]


def row(spec: dict) -> dict:
    package = ROOT / spec["name"]
    relative = spec["file"]
    before = (package / relative).read_text()
    if before.count(spec["old"]) != 1:
        raise SystemExit(f"{spec['name']}: `old` must occur exactly once in {relative}")
    after = before.replace(spec["old"], spec["new"])
    existing = sorted((package / "tests").glob("test_*.py"))
    passing = [
        test for path in existing for test in test_ids(f"tests/{path.name}", path.read_text())
    ]
    return {
        "instance_id": f"small__{spec['name']}",
        "repo": f"small/{spec['name']}",
        "problem_statement": spec["issue"],
        "patch": git_diff(relative, before, after),
        "test_patch": git_diff(HIDDEN, "", spec["test"]),
        "FAIL_TO_PASS": test_ids(HIDDEN, spec["test"]),
        "PASS_TO_PASS": passing,
        "environment": {
            "python": "3.11",
            "source": {"path": f"small_bugs/{spec['name']}"},
            "install": ["pip install pytest==8.3.4"],
            "test_cmd": TEST_COMMAND,
            "log_parser": "pytest",
        },
    }


def main() -> None:
    specs = yaml.safe_load((ROOT / "specs.yaml").read_text())
    rows = [row(spec) for spec in specs]
    target = HERE / "small_bugs.jsonl"
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} tasks: {target}")


if __name__ == "__main__":
    main()
