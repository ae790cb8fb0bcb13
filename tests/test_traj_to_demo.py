"""`swe-aci traj-to-demo`: a real episode made into a demonstration that a config uses, that
replays to the same patch, and the trajectories that cannot be one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner, Result

from swe_aci.cli import app
from swe_aci.trajectory.store import load_trajectory

SESSION = [
    "DISCUSSION\nLook at the file.\n```\nopen calc.py\n```\n",
    "DISCUSSION\nFix it.\n```\nedit 2:2\n    return a + b\nend_of_edit\n```\n",
    "DISCUSSION\nDone.\n```\nsubmit\n```\n",
]
ISSUE = "add() subtracts instead of adding"


def cli(*args: object) -> Result:
    return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, [str(a) for a in args])


def episode(repo: Path, out: Path, replies: list[str], *extra: str) -> Path:
    result = cli(
        "run", "--repo", repo, "--issue", ISSUE, "--env", "local", "--output-dir", out,
        "--instance-id", "calc", "--model", "scripted",
        "--set", f"model.script={json.dumps(replies)}", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out / "calc" / "calc.traj"


def test_a_good_trajectory_becomes_a_demonstration_that_is_used_and_replays(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo({"calc.py": "def add(a, b):\n    return a - b\n"})
    recorded = episode(repo, tmp_path / "first", SESSION)
    demo = tmp_path / "demos" / "calc_demo.traj"
    made = cli("traj-to-demo", recorded, demo)
    assert made.exit_code == 0, made.output
    assert "wrote" in made.output and "3 steps" in made.output
    stored = json.loads(demo.read_text())
    assert all("query" not in step for step in stored["trajectory"])
    assert [s["action"].split()[0] for s in stored["trajectory"]] == ["open", "edit", "submit"]

    # It replays: the same actions on the same repository give the recorded patch.
    replayed = cli("replay", demo, "--repo", repo, "--env", "local", "--output-dir", tmp_path / "r")
    assert replayed.exit_code == 0, replayed.output
    assert "replayed patch matches the recorded submission" in replayed.output

    # A config shows it to the model: the demonstration message holds its actions.
    used = episode(repo, tmp_path / "second", SESSION, "--set", f"agent.demonstrations=[{demo}]")
    (message,) = [
        m for m in load_trajectory(used)["history"] if m.get("message_type") == "demonstration"
    ]
    assert "edit 2:2\n    return a + b\nend_of_edit" in message["content"]
    assert "open calc.py" in message["content"]


def test_trajectories_that_cannot_be_demonstrations(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo({"calc.py": "def add(a, b):\n    return a - b\n"})
    limited = episode(repo, tmp_path / "limited", SESSION, "--set", "agent.limits.max_steps=2")
    refused = cli("traj-to-demo", limited, tmp_path / "demo.traj")
    assert refused.exit_code == 2 and "ended with submit" in refused.output
    assert "submitted (exit_step_limit)" in refused.output
    assert not (tmp_path / "demo.traj").exists()

    good = episode(repo, tmp_path / "good", SESSION)
    shell_only = cli("traj-to-demo", good, tmp_path / "demo.traj", "--config", "shell_only")
    assert shell_only.exit_code == 2 and "would not run step 1 (open calc.py)" in shell_only.output
    assert not (tmp_path / "demo.traj").exists()

    missing = cli("traj-to-demo", tmp_path / "absent.traj", tmp_path / "demo.traj")
    assert missing.exit_code == 2 and "not found" in missing.output
