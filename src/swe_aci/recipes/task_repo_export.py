"""Writing a task set of ours as a SWE-bench 5 task repository (`swe-aci tasks export`).

Each row with an environment recipe becomes `tasks/<id>/` as `swebench.task.repo.load_task_repo`
reads it: `task.yaml`, `tests.json`, `problem_statement.md`, `gold.patch`, `test.patch`, an
`eval.sh` in SWE-bench's shape (the test files reset, the test patch applied, the row's test
command between SWE-bench's markers) and a `Dockerfile` that builds the recipe's environment from
the base tree written beside it (`tree/`), on the interpreter image swe-aci builds
(`swe-aci/python:...`, made now if the engine lacks it), so the repository builds offline on this
machine and is graded by SWE-bench's own harness or by swe-aci.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from swe_aci.env.diff import patch_paths
from swe_aci.recipes.cache import BuildLog, default_cache_dir
from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.interpreter import find_interpreter
from swe_aci.recipes.workspace import official_image
from swe_aci.tasks import Task
from swe_aci.tasks.task_repo import (
    AS_FILE,
    CONFIG_FILE,
    DOCKERFILE,
    TASK_FILE,
    TASKS_DIR,
    TESTS_FILE,
)

START_TEST_OUTPUT = ">>>>> Start Test Output"
END_TEST_OUTPUT = ">>>>> End Test Output"
# Our parser names -> the swebench parser `--grading swebench` uses for them.
SWEBENCH_PARSER_NAMES = {
    "pytest": "parse_log_pytest_options",
    "django": "parse_log_django",
    "unittest": "parse_log_django",
    "sympy": "parse_log_sympy",
}


@dataclass(frozen=True)
class Exported:
    written: list[str]
    skipped: list[str]  # "id: why"


def eval_script(task: Task, base_commit: str) -> str:
    """SWE-bench's eval script of a recipe row."""
    recipe = task.environment
    assert recipe is not None and recipe.test_cmd
    test_patch = task.test_patch or ""
    files = sorted(patch_paths(test_patch))
    base = shlex.quote(base_commit)
    reset = [
        f"git -c safe.directory='*' checkout -q {base} -- {shlex.quote(name)} 2>/dev/null "
        f"|| rm -rf -- {shlex.quote(name)}"
        for name in files
    ]
    lines = ["#!/bin/bash", "set -uxo pipefail", "cd /testbed", *reset]
    if test_patch.strip():
        # a line the patch cannot hold: it would have to contain its own digest
        delimiter = f"EOF_{hashlib.sha256(test_patch.encode()).hexdigest()[:16]}"
        lines += [f"git apply --verbose - <<'{delimiter}'", test_patch.rstrip("\n"), delimiter]
    lines += [f": '{START_TEST_OUTPUT}'", recipe.test_cmd, f": '{END_TEST_OUTPUT}'", *reset]
    return "\n".join(lines) + "\n"


def export_task_repo(
    tasks: list[Task],
    out: Path,
    *,
    dataset: str,
    split: str = "test",
    cache_dir: Path | None = None,
    echo: Callable[[str], None] | None = None,
) -> Exported:
    """Write `tasks` as a task repository at `out` (created; must not hold one already)."""
    from swe_aci.env.base import SandboxError
    from swe_aci.env.docker.environment import connect
    from swe_aci.recipes.docker_image import ensure_python_image, task_build_context

    if (out / CONFIG_FILE).exists() or (out / TASKS_DIR).exists():
        raise RecipeError(f"{out} already holds a task repository: choose an empty directory")
    cache_root = (cache_dir or default_cache_dir()).expanduser().resolve()
    try:
        client = connect()
    except SandboxError as error:
        raise RecipeError(f"the export builds on swe-aci's interpreter image: {error}") from None
    written: list[str] = []
    skipped: list[str] = []
    for task in tasks:
        recipe = task.environment
        if recipe is None or not recipe.test_cmd or not recipe.log_parser:
            skipped.append(
                f"{task.instance_id}: no environment recipe with test_cmd and log_parser"
            )
            continue
        task_dir = out / TASKS_DIR / task.instance_id
        task_dir.mkdir(parents=True)
        log = BuildLog(cache_root / "exports" / f"{task.instance_id}.log", echo)
        try:
            interpreter = find_interpreter(recipe.python)
            python_image = ensure_python_image(client, interpreter, cache_root, echo)
            commit, lines = task_build_context(
                task, interpreter, python_image, task_dir, cache_root, log
            )
        except RecipeError as error:
            shutil.rmtree(task_dir)
            skipped.append(f"{task.instance_id}: {error}")
            continue
        (task_dir / DOCKERFILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
        write_task_files(task, task_dir, commit, dataset, split)
        written.append(task.instance_id)
    out.mkdir(parents=True, exist_ok=True)
    config = {"datasets": [dataset], "splits": [split]}
    (out / CONFIG_FILE).write_text(yaml.safe_dump(config, sort_keys=True), encoding="utf-8")
    return Exported(written, skipped)


def write_task_files(task: Task, task_dir: Path, commit: str, dataset: str, split: str) -> None:
    recipe = task.environment
    assert recipe is not None and recipe.log_parser
    metadata = {
        "instance_id": task.instance_id,
        "repo": task.repo,
        "version": task.version or "0",
        "base_commit": commit,
        "split": split,
        "datasets": [dataset],
        "image": official_image(task.instance_id),  # the name swebench derives
        "log_parser": SWEBENCH_PARSER_NAMES[recipe.log_parser],
        "eval_type": task.eval_type,
    }
    (task_dir / TASK_FILE).write_text(
        yaml.safe_dump(metadata, sort_keys=True, allow_unicode=True), encoding="utf-8"
    )
    tests = {"FAIL_TO_PASS": task.FAIL_TO_PASS, "PASS_TO_PASS": task.PASS_TO_PASS}
    (task_dir / TESTS_FILE).write_text(json.dumps(tests, indent=2) + "\n", encoding="utf-8")
    columns = {
        "patch": task.patch or "",
        "test_patch": task.test_patch or "",
        "eval_script": eval_script(task, commit),
        "problem_statement": task.problem_statement,
    }
    for column, name in AS_FILE.items():
        with open(task_dir / name, "w", encoding="utf-8", newline="") as handle:
            handle.write(columns[column])
