"""`swe-aci replay`: re-executing recorded trajectories (paper-era SWE-agent files and ours) on a
repository must reproduce the recorded submission exactly, on every sandbox."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from conftest import commit_tree
from env_helpers import BACKENDS, DOCKER_IMAGE, skip_unavailable
from swe_aci.cli import app
from swe_aci.trajectory.store import load_trajectory, recorded_problem_statement

ROOT = Path(__file__).resolve().parents[1]
PAPER_ERA = ROOT / "tests" / "fixtures" / "paper_era" / "calc__calc-1.traj"
WORDCOUNT = ROOT / "examples" / "wordcount"
WORDCOUNT_TRAJ = ROOT / "examples" / "wordcount.traj"
WORDCOUNT_STR_REPLACE = ROOT / "examples" / "wordcount_str_replace.traj"
PLAIN = {"NO_COLOR": "1", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "COLUMNS": "200"}

# The repository the paper-era trajectory ran on, at its base commit. The recorded submission
# (blob hashes included) depends on these exact bytes.
OPS = (
    '"""Small arithmetic helpers."""\n\n\ndef add(a, b):\n    return a + b\n\n\n'
    "def mean(values):\n    total = 0\n    for value in values:\n        total += value\n"
    "    return total / len(values) - 1\n"
)
CALC_BASE: dict[str, str | bytes] = {
    "README.md": "# calc\n\nArithmetic helpers.\n",
    "calc/__init__.py": '"""A tiny arithmetic package."""\n',
    "calc/ops.py": OPS,
}
# A later commit moves `mean` down: replaying at HEAD instead of the base edits the wrong line.
CALC_LATER: dict[str, str | bytes] = {
    "calc/ops.py": OPS.replace("\n\ndef mean", "\n\ndef sub(a, b):\n    return a - b\n\n\ndef mean")
}
ISSUE = "mean() is off by one\n\nThe average of a list comes out one less than it should:\n"
LINT_REJECTION = "Your proposed edit has introduced new syntax error(s)."


def cli(*args: str | Path) -> Result:
    return CliRunner(env=PLAIN).invoke(app, [str(arg) for arg in args])


def replay(trajectory: Path, repo: Path, output: Path, *options: str) -> Result:
    if "docker" in options:
        options = (*options, "--image", DOCKER_IMAGE)
    if "bwrap" in options:  # the sandbox shows the host's interpreter only when asked to
        prefixes = sorted({sys.prefix, sys.base_prefix})
        options = (*options, "--set", f"env.ro_paths={json.dumps(prefixes)}")
        options = (*options, "--set", f"env.path_prepend={json.dumps([f'{sys.prefix}/bin'])}")
    return cli("replay", trajectory, "--repo", repo, "--output-dir", output, *options)


@pytest.fixture
def calc(tmp_path: Path) -> tuple[Path, str]:
    """The paper-era fixture repository (named as SWE-agent named it) and its base commit."""
    root = tmp_path / "calc__calc"
    base = commit_tree(root, CALC_BASE, "base")
    commit_tree(root, CALC_LATER, "later work")
    return root, base


def edited_paper_era(path: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    data = json.loads(PAPER_ERA.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return path


def test_the_fixture_is_a_paper_era_trajectory() -> None:
    raw = json.loads(PAPER_ERA.read_text())
    assert set(raw) == {"environment", "trajectory", "history", "info"}
    for step in raw["trajectory"]:
        assert set(step) == {"action", "observation", "response", "state", "thought"}
        assert isinstance(step["state"], str) and step["state"].endswith("}\n")
    assert raw["info"]["submission"].startswith("\ndiff --git ")
    assert set(raw["info"]["model_stats"]) == {
        "total_cost", "instance_cost", "tokens_sent", "tokens_received", "api_calls",
    }  # fmt: skip
    assert [m["role"] for m in raw["history"][:3]] == ["system", "user", "user"]
    assert raw["history"][1]["is_demo"] is True
    loaded = load_trajectory(PAPER_ERA)  # the states become dicts, the issue is found
    assert loaded["trajectory"][0]["state"] == {"open_file": "n/a", "working_dir": "/calc__calc"}
    assert (recorded_problem_statement(loaded) or "").startswith(ISSUE)
    actions = [step["action"].split()[0] for step in raw["trajectory"]]
    assert actions == [
        "create", "edit", "python", "search_dir", "open", "edit", "edit", "python",
        "search_file", "rm", "submit",
    ]  # fmt: skip
    assert raw["trajectory"][5]["observation"].startswith(LINT_REJECTION)


@pytest.mark.parametrize("backend", BACKENDS)
def test_paper_era_replay_reproduces_the_submission(
    backend: str, calc: tuple[Path, str], tmp_path: Path
) -> None:
    skip_unavailable(backend)
    repo, base = calc
    result = replay(PAPER_ERA, repo, tmp_path / "out", "--commit", base, "--env", backend)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "replayed patch matches the recorded submission" in result.stdout
    recorded = json.loads(PAPER_ERA.read_text())["info"]["submission"]
    directory = tmp_path / "out" / PAPER_ERA.stem
    patch = (directory / f"{PAPER_ERA.stem}.patch").read_text()
    assert patch == recorded.removeprefix("\n")  # exact, apart from the paper-era leading newline
    prediction = json.loads((directory / f"{PAPER_ERA.stem}.pred").read_text())
    assert prediction["model_patch"] == patch
    replayed = load_trajectory(directory / f"{PAPER_ERA.stem}.traj")
    assert replayed["problem_statement"].startswith(ISSUE)
    assert replayed["info"]["exit_status"] == "submitted"
    assert "error" not in replayed["info"]
    steps = replayed["trajectory"]
    assert [step["action"] for step in steps] == [
        step["action"] for step in json.loads(PAPER_ERA.read_text())["trajectory"]
    ]
    assert steps[5]["observation"].startswith(LINT_REJECTION)  # the guardrail refused the edit
    assert steps[6]["observation"].rstrip().endswith("Edit the file again if necessary.")
    if backend != "docker":  # the base image holds bash and git, no Python
        assert [steps[2]["observation"].strip(), steps[7]["observation"].strip()] == ["1.0", "2.0"]
    assert "reproduce.py" not in patch  # created, then removed before submitting
    assert not (repo / "reproduce.py").exists()  # the replay ran on a copy


def test_replay_at_another_commit_reports_a_different_patch(
    calc: tuple[Path, str], tmp_path: Path
) -> None:
    repo, _ = calc
    result = replay(PAPER_ERA, repo, tmp_path / "out", "--env", "local")  # HEAD, not the base
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert errors == ["error: the replayed patch differs from the recorded submission (diff above)"]
    assert result.stderr.splitlines()[-1] == errors[0]
    assert "--- recorded submission" in result.stdout and "+++ replayed patch" in result.stdout


def trailing_space(data: dict[str, Any]) -> None:
    data["info"]["submission"] = data["info"]["submission"].replace(
        "+    return total / len(values)\n", "+    return total / len(values)  \n"
    )


def extra_newlines(data: dict[str, Any]) -> None:
    data["info"]["submission"] = "\n\n" + data["info"]["submission"].lstrip("\n") + "\n\n"


def no_submission(data: dict[str, Any]) -> None:
    data["info"]["submission"] = None  # paper-era: an empty diff was recorded as null


@pytest.mark.parametrize(
    ("edit", "exit_code"),
    [(extra_newlines, 0), (trailing_space, 1), (no_submission, 1)],
)
def test_the_comparison_ignores_only_newlines_at_the_ends(
    edit: Callable[[dict[str, Any]], None], exit_code: int, calc: tuple[Path, str], tmp_path: Path
) -> None:
    repo, base = calc
    trajectory = edited_paper_era(tmp_path / "calc__calc-1.traj", edit)
    result = replay(trajectory, repo, tmp_path / "out", "--commit", base, "--env", "local")
    assert result.exit_code == exit_code, result.stdout + result.stderr


@pytest.mark.parametrize("status", [None, "exit_interrupted"])
def test_unfinished_recording_is_replayed_without_comparison(
    calc: tuple[Path, str], tmp_path: Path, status: str | None
) -> None:
    repo, base = calc

    def unfinished(data: dict[str, Any]) -> None:
        del data["trajectory"][-1]
        data["info"] = {"exit_status": status, "submission": None}

    trajectory = edited_paper_era(tmp_path / "killed.traj", unfinished)
    result = replay(trajectory, repo, tmp_path / "out", "--commit", base, "--env", "local")
    assert result.exit_code == 0, result.stderr
    assert "the recorded episode did not finish" in result.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_our_example_replays_to_its_recorded_submission(backend: str, tmp_path: Path) -> None:
    skip_unavailable(backend)
    result = replay(WORDCOUNT_TRAJ, WORDCOUNT, tmp_path / "out", "--init-copy", "--env", backend)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "replayed patch matches the recorded submission" in result.stdout
    recorded = json.loads(WORDCOUNT_TRAJ.read_text())["info"]["submission"]
    assert (tmp_path / "out/wordcount/wordcount.patch").read_text() == recorded
    assert not (WORDCOUNT / ".git").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_str_replace_recording_replays_through_its_tool_set(
    backend: str, tmp_path: Path
) -> None:
    """The bundled fix through view, create, str_replace and the review before submit."""
    skip_unavailable(backend)
    result = replay(
        WORDCOUNT_STR_REPLACE, WORDCOUNT, tmp_path / "out", "--init-copy", "--env", backend,
        "--config", "tools/str_replace",
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "replayed patch matches the recorded submission" in result.stdout
    recorded = json.loads(WORDCOUNT_STR_REPLACE.read_text())
    produced = load_trajectory(tmp_path / "out/wordcount_str_replace/wordcount_str_replace.traj")
    assert [step["action"].split()[0] for step in produced["trajectory"]] == [
        step["action"].split()[0] for step in recorded["trajectory"]
    ]
    assert produced["info"]["review"] == recorded["info"]["review"] == {"step": 9}
    review = produced["trajectory"][8]["observation"]
    assert "Created and never changed since: reproduce.py." in review
    assert "reproduce.py" not in produced["info"]["submission"]


def test_replay_never_overwrites_the_trajectory_it_replays(
    calc: tuple[Path, str], tmp_path: Path
) -> None:
    repo, base = calc
    recording = tmp_path / "out" / PAPER_ERA.stem / PAPER_ERA.name
    recording.parent.mkdir(parents=True)
    shutil.copy(PAPER_ERA, recording)
    result = replay(recording, repo, tmp_path / "out", "--commit", base, "--env", "local")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert recording.read_bytes() == PAPER_ERA.read_bytes()
    name = f"{PAPER_ERA.stem}-replay"
    assert (tmp_path / "out" / name / f"{name}.traj").is_file()
    assert f"trajectory: {tmp_path / 'out' / name / name}.traj" in result.stdout


# -- recordings that ended by an autosubmitted exit instead of `submit` --------------------------


def paper_era_exit_cost(tmp_path: Path, repo: Path, base: str) -> Path:
    """The paper-era recording, ended by the cost limit before `submit` (as SWE-agent wrote it)."""

    def cost_limit(data: dict[str, Any]) -> None:
        last = data["trajectory"].pop()
        data["trajectory"].append(
            {
                "action": "exit_cost",
                "observation": "Exited (autosubmitted)",
                "response": "Exit due to cost limit",
                "state": last["state"],
                "thought": "Exit due to cost limit",
            }
        )
        data["info"]["exit_status"] = "submitted (exit_cost)"

    return edited_paper_era(tmp_path / "calc__calc-cost.traj", cost_limit)


def ours_exit_step_limit(tmp_path: Path, repo: Path, base: str) -> Path:
    """Our own recording of the same session, stopped by the step limit before `submit`."""
    responses = [step["response"] for step in json.loads(PAPER_ERA.read_text())["trajectory"]]
    result = cli(
        "run", "--repo", repo, "--commit", base, "--issue", ISSUE, "--env", "local",
        "--instance-id", "calc-steps", "--output-dir", tmp_path / "recorded",
        "--model", "scripted", "--set", f"model.script={json.dumps(responses[:-1])}",
        "--set", f"agent.limits.max_steps={len(responses) - 1}",
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    return tmp_path / "recorded/calc-steps/calc-steps.traj"


@pytest.fixture(
    scope="module",
    params=[paper_era_exit_cost, ours_exit_step_limit],
    ids=["paper-era-exit-cost", "ours-exit-step-limit"],
)
def replayed_exit(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], Result, dict[str, Any]]:
    """(recorded trajectory, CLI result, replayed trajectory) of a recording ended by an exit."""
    tmp_path = tmp_path_factory.mktemp("exit")
    repo = tmp_path / "calc__calc"
    base = commit_tree(repo, CALC_BASE, "base")
    recording = request.param(tmp_path, repo, base)
    recorded = load_trajectory(recording)
    assert recorded["info"]["exit_status"].startswith("submitted (exit_")
    result = replay(recording, repo, tmp_path / "out", "--commit", base, "--env", "local")
    replayed = load_trajectory(tmp_path / "out" / recording.stem / f"{recording.stem}.traj")
    return recorded, result, replayed


def test_replay_of_an_autosubmitted_exit_reproduces_the_patch(
    replayed_exit: tuple[dict[str, Any], Result, dict[str, Any]],
) -> None:
    recorded, result, replayed = replayed_exit
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "replayed patch matches the recorded submission" in result.stdout
    assert replayed["info"]["submission"] == recorded["info"]["submission"].lstrip("\n")
    assert replayed["info"]["exit_status"].startswith("submitted (")


def test_replay_does_not_run_the_recorded_exit_as_a_command(
    replayed_exit: tuple[dict[str, Any], Result, dict[str, Any]],
) -> None:
    recorded, _, replayed = replayed_exit
    exit_action = recorded["trajectory"][-1]["action"].strip()
    executed = [step["action"].strip() for step in replayed["trajectory"][:-1]]
    assert exit_action not in executed


def test_replay_that_runs_out_of_replies_is_not_an_api_failure(
    replayed_exit: tuple[dict[str, Any], Result, dict[str, Any]],
) -> None:
    _, _, replayed = replayed_exit
    assert "exit_api" not in replayed["info"]["exit_status"]
    assert "error" not in replayed["info"]
