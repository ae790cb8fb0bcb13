"""Trajectory files: atomic writes, loading ours and paper-era ones, predictions, demonstrations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_aci.agent.templates import demonstration_text
from swe_aci.records import instance_id_from, is_valid_instance_id, write_json_atomic
from swe_aci.trajectory.store import (
    TrajectoryError,
    TrajectoryWriter,
    load_trajectory,
    recorded_problem_statement,
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


def test_lone_surrogates_are_written_and_read_back(tmp_path: Path) -> None:
    """JSON keeps other text as it is and escapes lone surrogates (so it loads back the same); a
    text file gets back the byte a surrogateescape'd character stands for, U+FFFD for others."""
    text = "caf\u00e9 \udcff \\\udcfe \ud800 end"
    write_json_atomic(tmp_path / "x.json", {"k\udc80": text})
    raw = (tmp_path / "x.json").read_text(encoding="utf-8")
    assert "caf\u00e9" in raw and "\\udcff" in raw
    assert json.loads(raw) == {"k\udc80": text}
    write_predictions(tmp_path, "repo-1", "scripted", f"diff {text}\n")
    assert (tmp_path / "repo-1.patch").read_bytes() == (
        "diff caf\u00e9 ".encode() + b"\xff \\\xfe \xef\xbf\xbd end\n"
    )
    assert json.loads((tmp_path / "repo-1.pred").read_text())["model_patch"] == f"diff {text}\n"


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


COMPACT = {
    "problem_statement": "Bug... [preview]",
    "problem_statement_ref": [1, 6, 9],
    "trajectory": [
        {
            "action": "cat x\n",
            "observation": "0123... [preview]",
            "observation_ref": [3, 0, 10],
            "query": [
                0,
                {"message": 1, "cache_breakpoint": True},
                {"role": "user", "content": "x"},
            ],
        }
    ],
    "history": [
        {"role": "system", "content": "SYS", "message_type": "system_prompt"},
        {"role": "user", "content": "Issue Bug here", "message_type": "instance"},
        {"role": "assistant", "content": "cat", "thought": "", "message_type": "action"},
        {"role": "user", "content": "0123456789\n(Open file: n/a)", "message_type": "observation"},
    ],
    "info": {},
}


def test_references_to_the_history_are_resolved(tmp_path: Path) -> None:
    loaded = load_trajectory(write(tmp_path / "c.traj", COMPACT))
    step = loaded["trajectory"][0]
    assert step["query"] == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "Issue Bug here", "cache_breakpoint": True},
        {"role": "user", "content": "x"},
    ]
    assert step["observation"] == "0123456789" and "observation_ref" not in step
    assert loaded["problem_statement"] == "Bug" and "problem_statement_ref" not in loaded


def test_a_reference_to_a_missing_message_is_one_clear_error(tmp_path: Path) -> None:
    broken = {**COMPACT, "history": COMPACT["history"][:2]}
    with pytest.raises(TrajectoryError, match="refers to a message it does not hold"):
        load_trajectory(write(tmp_path / "c.traj", broken))


def test_a_journal_loads_without_its_cut_last_line_but_not_with_a_bad_middle_one(
    tmp_path: Path,
) -> None:
    header = {"header": {"problem_statement": "P"}, "messages": [], "info": {}}
    step = {"messages": [], "step": {"action": "ls"}, "info": {"exit_status": None}}
    lines = [json.dumps(header), json.dumps(step), json.dumps(step)[:20]]
    (tmp_path / "j.traj.jsonl").write_text("\n".join(lines))
    loaded = load_trajectory(tmp_path / "j.traj")  # no .traj yet: its journal is read
    assert [s["action"] for s in loaded["trajectory"]] == ["ls"]
    assert loaded["problem_statement"] == "P"
    (tmp_path / "j.traj.jsonl").write_text("\n".join([lines[0], lines[2], lines[1]]))
    with pytest.raises(TrajectoryError, match="line 2 is not valid JSON"):
        load_trajectory(tmp_path / "j.traj")


@pytest.mark.parametrize("good", ["calc-1", "django__django-11099", "a.b_c", "x..y"])
def test_valid_instance_ids(good: str) -> None:
    assert is_valid_instance_id(good)


@pytest.mark.parametrize("bad", ["", ".", "..", "a/b", "../x", "/abs", "a b", "a\nb", "é"])
def test_invalid_instance_ids(bad: str) -> None:
    assert not is_valid_instance_id(bad)
    assert is_valid_instance_id(instance_id_from(bad, "fallback"))


def write_long_episode(path: Path, steps: int, observation: str) -> dict:
    """An episode whose every observation is `observation`, written through the writer as the
    agent loop records it (the query: the whole history so far)."""
    writer = TrajectoryWriter(path)
    history = [{"role": "system", "content": "SYS"}, {"role": "user", "content": "issue"}]
    writer.start({"problem_statement": "issue"}, history, {})
    for number in range(steps):
        query = list(history)
        messages = [
            {"role": "assistant", "content": f"cat big.txt  # {number}"},
            {"role": "user", "content": f"{observation}\n(Open file: n/a)"},
        ]
        history += messages
        step = {"action": "cat big.txt", "observation": observation, "query": query}
        writer.append(messages, step, {})
    writer.finish({})
    return json.loads(path.read_text())


def test_a_long_observation_is_stored_in_full_in_its_step_and_the_size_stays_linear(
    tmp_path: Path,
) -> None:
    """SWE-agent's readers see each step's observation as it was, not a preview."""
    observation = "".join(f"line {n}\n" for n in range(2_000))  # ~16 KB
    stored = write_long_episode(tmp_path / "a.traj", 40, observation)
    for step in stored["trajectory"]:
        assert step["observation"] == observation and "observation_ref" not in step
    twice = write_long_episode(tmp_path / "b.traj", 80, observation)
    assert len(twice["trajectory"]) == 80
    small, large = (tmp_path / "a.traj").stat().st_size, (tmp_path / "b.traj").stat().st_size
    assert large < 2.2 * small  # twice the steps, about twice the bytes: not quadratic
    assert load_trajectory(tmp_path / "b.traj")["trajectory"][-1]["observation"] == observation
