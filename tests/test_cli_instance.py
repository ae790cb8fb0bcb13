"""`swe-aci run --instance FILE:ID`: one task of a task file, in the environment its recipe gives,
so a single instance of a batch can be debugged alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from batch_helpers import SECRET, generated_task_file, scripted_overrides

PROBE = "DISCUSSION\nLook around.\n```\ncat calc/__init__.py; git log --all --oneline\n```\n"
FIX = "DISCUSSION\nFix it.\n```\nsed -i 's/a - b/a + b/' calc/__init__.py\n```\n"
SUBMIT = "DISCUSSION\nDone.\n```\nsubmit\n```\n"


def swe_aci(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    return subprocess.run(
        [sys.executable, "-m", "swe_aci", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def overrides(replies: list[str]) -> list[str]:
    return [arg for override in scripted_overrides(replies) for arg in ("--set", override)]


@pytest.mark.parametrize("backend", ["local", "bwrap"])
def test_one_task_runs_in_its_recipe_environment(tmp_path: Path, backend: str) -> None:
    task_file = generated_task_file(tmp_path, 2)
    result = swe_aci(
        "run",
        "--instance",
        f"{task_file}:demo__calc-1",
        "--env",
        backend,
        "--output-dir",
        "out",
        *overrides([PROBE, FIX, SUBMIT]),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    directory = tmp_path / "out" / "demo__calc-1"
    prediction = json.loads((directory / "demo__calc-1.pred").read_text())
    assert "+    return a + b" in prediction["model_patch"]
    trajectory = json.loads((directory / "demo__calc-1.traj").read_text())
    assert trajectory["info"]["exit_status"] == "submitted"
    assert trajectory["problem_statement"] == "add() subtracts instead of adding"
    # The gold patch and the hints of the row are not in what the agent saw.
    assert SECRET not in (directory / "demo__calc-1.traj").read_text()


@pytest.mark.parametrize(
    ("spec", "extra", "message"),
    [
        ("{file}", [], "expected FILE:ID"),
        ("{file}:nope", [], "nope"),
        ("missing.jsonl:x", [], "missing.jsonl"),
        ("{file}:demo__calc-0", ["--repo", "."], "drop --repo/--issue/--commit"),
    ],
)
def test_bad_instances_are_one_line(
    tmp_path: Path, spec: str, extra: list[str], message: str
) -> None:
    task_file = generated_task_file(tmp_path, 1)
    result = swe_aci(
        "run",
        "--instance",
        spec.format(file=task_file),
        *extra,
        "--env",
        "local",
        *overrides([SUBMIT]),
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not (tmp_path / "trajectories").exists()


def test_run_needs_a_repository_and_an_issue_or_an_instance(tmp_path: Path) -> None:
    result = swe_aci("run", "--issue", "fix it", cwd=tmp_path)
    assert result.returncode == 2
    assert "--instance FILE:ID" in result.stderr
