"""Recipes on docker: three instances whose images are built offline from recipes, run as a batch."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from batch_helpers import make_project, recipe_row, scripted_overrides, write_rows
from env_helpers import skip_unavailable
from swe_aci.cli import app
from swe_aci.env import EnvConfig, make_environment
from swe_aci.recipes import task_workspace
from swe_aci.tasks import load_tasks

pytestmark = pytest.mark.docker

INSTALL = ["pip install --no-build-isolation --no-deps -e ."]


@pytest.fixture
def docker_tasks(tmp_path: Path) -> Iterator[Path]:
    """Three recipe rows (two interpreters, git and path sources); their images are removed after."""
    skip_unavailable("docker")
    rows = []
    for number, python in enumerate(["3.9", "3.11", "3.9"]):
        project = make_project(tmp_path / f"p{number}", number=number, git=number != 1)
        source = {"path": str(project)} if number == 1 else {"git": str(project)}
        # The second installs through the package index (setuptools into an isolated build).
        install = ["pip install -e ."] if number == 1 else INSTALL
        rows.append(recipe_row(f"demo__docker-{number}", source, python=python, install=install))
    task_file = write_rows(tmp_path / "tasks.jsonl", rows)
    yield task_file
    import docker

    client = docker.from_env()
    for log in (tmp_path / "cache").glob("*/docker-build.log"):
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(f"swe-aci/task:{log.parent.name}", force=True)


def test_recipe_image_has_the_interpreter_the_install_and_the_base(docker_tasks: Path) -> None:
    task = load_tasks(docker_tasks).tasks[0]
    prepared = task_workspace(
        task, EnvConfig(backend="docker"), cache_dir=docker_tasks.parent / "cache"
    )
    assert prepared.source is None and prepared.config.repo_in_image == "/testbed"
    with make_environment(prepared) as env:
        assert env.base_commit == prepared.commit
        output = env.run("python --version; python -c 'import calc; print(calc.__file__)'").output
        assert "Python 3.9" in output and "/testbed/calc/__init__.py" in output
        assert env.run("git status --porcelain").output.strip() == ""
        assert env.run("ls /testbed/.git/info; cat /testbed/.git/info/exclude").exit_code == 0
    again = task_workspace(
        task, EnvConfig(backend="docker"), cache_dir=docker_tasks.parent / "cache"
    )
    assert (again.config.image, again.commit) == (prepared.config.image, prepared.commit)


def test_three_docker_instances_from_recipes_as_a_batch(docker_tasks: Path) -> None:
    out = docker_tasks.parent / "out"
    args = ["batch", "--instances", str(docker_tasks), "--output-dir", str(out), "--env", "docker"]
    args += ["--workers", "2", "--cache-dir", str(docker_tasks.parent / "cache")]
    for override in scripted_overrides():
        args += ["--set", override]
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, args)
    assert result.exit_code == 0, result.output
    preds = json.loads((out / "preds.json").read_text())
    assert sorted(preds) == ["demo__docker-0", "demo__docker-1", "demo__docker-2"]
    for prediction in preds.values():
        patch = prediction["model_patch"]
        assert "+    return a + b" in patch and "egg-info" not in patch


def test_images_build_reports_each_failure_and_builds_the_rest(docker_tasks: Path) -> None:
    rows = [json.loads(line) for line in docker_tasks.read_text().splitlines()]
    rows[2]["environment"]["install"] = ["echo broken >&2; exit 4"]
    write_rows(docker_tasks, rows)
    args = ["images", "build", "--instances", str(docker_tasks), "--workers", "2"]
    args += ["--cache-dir", str(docker_tasks.parent / "cache")]
    result = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "300"}).invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "2 built, 1 failed" in result.output
    assert "FAILED demo__docker-2:" in result.output and "build log:" in result.output
