"""What a new user sees: progress while the episode runs, a plain outcome and exit code, errors
before any work (the model never loaded), outputs kept out of the repository, readable help."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from test_cli import assert_one_line_error, cli

MISSING_MODEL = "local/never-touched.gguf"  # loading it would fail: model file not found


def act(command: str) -> str:
    return f"DISCUSSION\nNext.\n```\n{command}\n```\n"


def scripted(*replies: str) -> list[str]:
    return ["--model", "scripted", "--set", f"model.script={json.dumps(list(replies))}"]


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"hello.py": "print('hello')\n"}, name="hello")


def test_rejected_replies_are_shown_with_their_reason(work: Path, repo: Path) -> None:
    result = cli(
        "run", "--repo", repo, "--issue", "Say hello.", "--env", "local", "--output-dir", "out",
        *scripted("no fenced action at all", act("vim hello.py"), act("ls"), act("submit")),
    )  # fmt: skip
    assert result.exit_code == 3, result.output  # nothing changed
    status = result.stderr.splitlines()
    assert status[0] == "turn 1: waiting for the model (0 tokens sent, 0 received so far)"
    assert status[1].startswith("turn 1: malformed reply, asking again: ")
    assert status[2].startswith("turn 1: refused command, asking again: ") and "vim" in status[2]
    assert (
        status[3].startswith("step took ") and ": model " in status[3] and ", action " in status[3]
    )
    assert status[4].startswith("turn 2: waiting for the model (")


def test_the_step_limit_prints_its_steps_and_says_how_it_ended(work: Path, repo: Path) -> None:
    replies = [act(f"echo {n} >> hello.py") for n in range(5)]
    result = cli(
        "run", "--repo", repo, "--issue", "Say hello.", "--env", "local", "--output-dir", "out",
        "--set", "agent.limits.max_steps=3", *scripted(*replies),
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # a patch was produced
    assert "exit status: exit_step_limit" in result.stdout
    assert "3 steps)" in result.stdout and "4 steps" not in result.stdout
    assert result.stdout.splitlines()[-1] == (
        "result: a patch was produced (1 file changed); the episode ended on the step limit "
        "(exit_step_limit), its changes were submitted automatically"
    )
    assert "submitted (" not in result.stdout


def test_a_scratch_file_alone_is_named_and_exits_4(work: Path, repo: Path) -> None:
    result = cli(
        "run", "--repo", repo, "--issue", "Say hello.", "--env", "local", "--output-dir", "out",
        *scripted(act("echo 'import hello' > reproduce.py"), act("submit")),
    )  # fmt: skip
    assert result.exit_code == 4, result.output
    assert "only adds files the agent created that nothing else uses (reproduce.py)" in (
        result.stdout
    )
    assert (work / "out").is_dir()  # the prediction is written all the same


def test_docker_without_an_image_fails_before_the_model_loads(work: Path, repo: Path) -> None:
    result = cli("run", "--repo", repo, "--issue", "x", "--env", "docker", "--model", MISSING_MODEL)
    assert_one_line_error(result, "the docker sandbox needs an image: pass --image")
    assert not (work / "trajectories").exists()


def test_sandbox_errors_come_before_the_model_loads(work: Path, repo: Path) -> None:
    result = cli(
        "run", "--repo", repo, "--issue", "x", "--env", "local", "--commit", "no-such-commit",
        "--model", MISSING_MODEL,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "no-such-commit" in result.stderr and "model file not found" not in result.stderr
    assert "never-touched" not in result.stderr


def test_run_inside_the_repository_leaves_no_outputs_in_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data_home = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data_home))
    monkeypatch.chdir(repo)
    result = cli(
        "run", "--repo", ".", "--issue", "Say hello.", "--env", "local", "--instance-id", "here",
        *scripted(act("submit")),
    )  # fmt: skip
    assert result.exit_code == 3, result.output
    assert not (repo / "trajectories").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert status.stdout == ""
    outputs = data_home / "swe-aci" / "trajectories" / "here"
    assert (outputs / "here.traj").is_file()
    assert f"trajectory: {outputs / 'here.traj'}" in result.stdout


def test_batch_help_shows_the_ray_extra_and_no_type_tags_on_flags() -> None:
    result = cli("batch", "--help")
    assert result.exit_code == 0
    assert "pipinstall'swe-aci[ray]'" in "".join(result.stdout.split())  # however it wraps
    assert "<bool>" not in result.stdout
    assert "--redo / --no-redo" in result.stdout


@pytest.mark.docker
def test_a_missing_image_points_at_the_base_image_script_only_for_the_base_image(
    work: Path, repo: Path
) -> None:
    from env_helpers import docker_problem

    if problem := docker_problem():
        pytest.skip(problem)
    args = ["run", "--repo", repo, "--issue", "x", "--env", "docker", "--model", MISSING_MODEL]
    other = cli(*args, "--image", "swe-aci/no-such-image:1")
    assert_one_line_error(other, "docker image 'swe-aci/no-such-image:1' does not exist here")
    assert "build_base_image" not in other.stderr and "never-touched" not in other.stderr
