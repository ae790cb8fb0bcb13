"""Trajectory files: atomic writes, loading ours and paper-era ones, predictions, demonstrations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_aci.agent.templates import demonstration_text
from swe_aci.agent.trajectory import (
    TrajectoryError,
    load_trajectory,
    recorded_problem_statement,
    write_json_atomic,
    write_predictions,
)

PAPER_ERA = {
    "environment": "swe_main",
    "trajectory": [
        {
            "action": "ls -F\n",
            "observation": "src/\n",
            "response": "DISCUSSION\nlook\n```\nls -F\n```",
            "state": '{"open_file": "n/a", "working_dir": "/marshmallow-code__marshmallow"}\n',
            "thought": "DISCUSSION\nlook\n",
        },
        {
            "action": "submit\n",
            "observation": None,
            "response": "```\nsubmit\n```",
            "state": '{"open_file": "/m/a.py", "working_dir": "/m"}\n',
            "thought": "",
        },
    ],
    "history": [
        {"role": "system", "content": "SETTING", "agent": "primary"},
        {
            "role": "user",
            "content": "We're currently solving the following issue within our repository. "
            "Here's the issue text:\nISSUE:\nTimeDelta rounds wrong\nsecond line\n\n"
            "INSTRUCTIONS:\nNow, you're going to solve this issue",
            "agent": "primary",
        },
        {"role": "assistant", "content": "DISCUSSION\nlook\n```\nls -F\n```", "agent": "primary"},
        {"role": "user", "content": "src/\n(Open file: n/a)", "agent": "primary"},
    ],
    "info": {"exit_status": "submitted", "submission": None},
}


def write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_paper_era_trajectory_loads_with_state_parsed(tmp_path: Path) -> None:
    loaded = load_trajectory(write(tmp_path / "p.traj", PAPER_ERA))
    first, second = loaded["trajectory"]
    assert first["state"] == {"open_file": "n/a", "working_dir": "/marshmallow-code__marshmallow"}
    assert second["observation"] == ""
    assert first["execution_time"] == 0.0 and first["query"] == []
    assert recorded_problem_statement(loaded) == "TimeDelta rounds wrong\nsecond line"


def test_missing_optional_keys_are_filled(tmp_path: Path) -> None:
    loaded = load_trajectory(write(tmp_path / "t.traj", {"trajectory": [{"action": "ls"}]}))
    step = loaded["trajectory"][0]
    assert step["thought"] == "" and step["state"] == {} and step["response"] == ""
    assert loaded["history"] == [] and loaded["info"] == {}
    assert recorded_problem_statement(loaded) is None


def test_our_problem_statement_is_stored_verbatim(tmp_path: Path) -> None:
    data = {"problem_statement": "Bug: x", "trajectory": [{"action": "ls", "state": {"a": 1}}]}
    loaded = load_trajectory(write(tmp_path / "t.traj", data))
    assert recorded_problem_statement(loaded) == "Bug: x"
    assert loaded["trajectory"][0]["state"] == {"a": 1}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"trajectory": []}), "no steps"),
        (json.dumps({"history": []}), "no steps"),
        (json.dumps([1, 2]), "no steps"),
        (json.dumps({"trajectory": ["ls"]}), "not a JSON object"),
    ],
)
def test_bad_trajectories_raise_one_clear_error(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "bad.traj"
    path.write_text(content)
    with pytest.raises(TrajectoryError, match=reason) as raised:
        load_trajectory(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryError, match="not found"):
        load_trajectory(tmp_path / "nope.traj")
    with pytest.raises(TrajectoryError, match="directory"):
        load_trajectory(tmp_path)


def test_atomic_write_replaces_whole_file_and_leaves_no_temporaries(tmp_path: Path) -> None:
    target = tmp_path / "out" / "x.traj"
    write_json_atomic(target, {"trajectory": [1]})
    write_json_atomic(target, {"trajectory": [1, 2]})
    assert json.loads(target.read_text()) == {"trajectory": [1, 2]}
    assert [p.name for p in target.parent.iterdir()] == ["x.traj"]


def test_failed_write_keeps_the_previous_content(tmp_path: Path) -> None:
    target = tmp_path / "x.traj"
    write_json_atomic(target, {"ok": True})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"bad": object()})
    assert json.loads(target.read_text()) == {"ok": True}
    assert [p.name for p in tmp_path.iterdir()] == ["x.traj"]


def test_predictions_written(tmp_path: Path) -> None:
    write_predictions(tmp_path, "repo-1", "scripted", "diff --git a/x b/x\n")
    assert (tmp_path / "repo-1.patch").read_text() == "diff --git a/x b/x\n"
    assert json.loads((tmp_path / "repo-1.pred").read_text()) == {
        "instance_id": "repo-1",
        "model_name_or_path": "scripted",
        "model_patch": "diff --git a/x b/x\n",
    }
    write_predictions(tmp_path, "repo-2", "scripted", "")
    assert not (tmp_path / "repo-2.patch").exists()
    assert json.loads((tmp_path / "repo-2.pred").read_text())["model_patch"] == ""


def test_demonstration_text_joins_non_system_messages(tmp_path: Path) -> None:
    loaded = load_trajectory(write(tmp_path / "p.traj", PAPER_ERA))
    text = demonstration_text(loaded)
    assert text.startswith("We're currently solving")
    assert "SETTING" not in text
    assert text.endswith("src/\n(Open file: n/a)")
    assert text.count("\n") == sum(m["content"].count("\n") for m in PAPER_ERA["history"][1:]) + 2


def test_demonstration_text_skips_nested_demos_and_shows_tool_call_actions() -> None:
    trajectory = {
        "history": [
            {"role": "user", "content": "old demo", "is_demo": True},
            {"role": "user", "content": "issue", "message_type": "instance"},
            {
                "role": "assistant",
                "content": "I list files.",
                "action": "ls\n",
                "tool_calls": [{"id": "1", "function": {"name": "bash", "arguments": "{}"}}],
            },
            {"role": "tool", "content": [{"type": "text", "text": "a.py"}], "tool_call_id": "1"},
        ]
    }
    assert demonstration_text(trajectory) == "issue\nI list files.\n```\nls\n```\n\na.py"
