"""The str_replace set offered as Anthropic's text editor tool: a whole episode with the real
anthropic client against the fake Anthropic server on 127.0.0.1, and the config's checks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fake_model_server import FakeModelServer, anthropic_message
from swe_aci.aci.commands import BY_NAME
from swe_aci.aci.interface import ACI
from swe_aci.agent.loop import Agent
from swe_aci.agent.parsing import ToolCallsParser, reply_format
from swe_aci.configuration import ConfigError
from swe_aci.env.local import LocalEnvironment
from swe_aci.episode import load_config
from swe_aci.models.base import ModelReply, ToolCall
from swe_aci.models.factory import make_model
from swe_aci.models.reply_format import FormatError
from swe_aci.trajectory.store import load_trajectory

pytest_plugins = ["fake_model_server"]

CALC = "def add(a, b):\n    return a - b\n"
TOOL = "str_replace_based_edit_tool"


def settings(server: FakeModelServer, *overrides: str) -> Any:
    return load_config(
        "tools/str_replace",
        [
            "agent.parser=tool_calls",
            "agent.anthropic_text_editor=text_editor_20250728",
            "model.name=anthropic/claude-fake",
            f"model.base_url={server.url}",
            "model.api_key=test-key",
            "model.retry.max_attempts=1",
            *overrides,
        ],
    )


def editor(call_id: str, **arguments: Any) -> tuple[str, str, dict[str, Any]]:
    return (call_id, TOOL, arguments)


def test_an_episode_through_the_text_editor_tool(
    fake_server: FakeModelServer, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    fake_server.push(
        anthropic_message("Look.", tool_uses=[editor("t1", command="view", path="calc.py")]),
        anthropic_message("Bad.", tool_uses=[editor("t2", command="rename", path="calc.py")]),
        anthropic_message(
            "Fix.",
            tool_uses=[
                editor(
                    "t3",
                    command="str_replace",
                    path="calc.py",
                    old_str="return a - b",
                    new_str="return a + b",
                )
            ],
        ),
        anthropic_message(
            "Scratch.",
            tool_uses=[editor("t4", command="create", path="notes.txt", file_text="x\n")],
        ),
        anthropic_message("Remove it.", tool_uses=[("t5", "undo_edit", {"path": "notes.txt"})]),
        anthropic_message("Done.", tool_uses=[("t6", "submit", {})]),
        anthropic_message("Sure.", tool_uses=[("t7", "submit", {})]),
    )
    config = settings(fake_server)
    env = LocalEnvironment(str(make_repo({"calc.py": CALC})))
    try:
        agent = Agent(
            config.agent,
            make_model(config.model, reply_format(config.agent.parser)),
            ACI(env, config.aci),
            output_dir=tmp_path / "out",
            instance_id="calc-1",
            environment="local",
        )
        result = agent.run("add() subtracts")
    finally:
        env.close()
    assert result.exit_status == "submitted"
    assert "+    return a + b" in result.submission and "notes.txt" not in result.submission
    first = fake_server.requests[0].body
    tools = {tool["name"]: tool for tool in first["tools"]}
    assert tools[TOOL] == {"type": "text_editor_20250728", "name": TOOL}
    assert set(tools) == {
        TOOL,
        "undo_edit",
        "find_file",
        "search_file",
        "search_dir",
        "submit",
        "bash",
    }  # fmt: skip  (text_editor_20250728 has no undo_edit: it stays a function)
    assert "view" not in tools and "str_replace" not in tools and "create" not in tools

    def tool_result(request: int) -> str:
        last_turn = fake_server.requests[request].body["messages"][-1]["content"]
        return next(block for block in last_turn if block["type"] == "tool_result")["content"]

    assert tool_result(1).startswith("Here's the result of running `cat -n` on ")
    assert "the text editor's command must be one of view, create, str_replace, insert" in (
        tool_result(2)
    )  # a bad call is answered with the error and asked again
    assert "has been edited" in tool_result(3)
    assert tool_result(6).startswith("Nothing has been submitted yet")
    steps = load_trajectory(result.trajectory_path)["trajectory"]
    assert steps[1]["action"] == (
        "str_replace calc.py\nreturn a - b\nend_of_old_str\nreturn a + b\nend_of_new_str"
    )


def test_each_command_of_the_tool_becomes_the_sets_command() -> None:
    config = load_config(
        "tools/str_replace",
        [
            "agent.parser=tool_calls",
            "agent.anthropic_text_editor=text_editor_20250124",
            "model.name=anthropic/claude-fake",
        ],
    )
    docs = [BY_NAME[key].doc(config.aci) for key in config.aci.commands]
    parser = ToolCallsParser(docs, "text_editor_20250124")
    assert "undo_edit" not in {spec.name for spec in parser.tools() or []}

    def action(**arguments: Any) -> str:
        reply = ModelReply("", (ToolCall("c", "str_replace_editor", arguments),))
        return parser.parse(reply).action

    assert action(command="view", path="a.py", view_range=[3, -1]) == "view a.py 3 -1"
    assert action(command="view", path="my dir") == "view 'my dir'"
    assert action(command="create", path="n.py", file_text="x = 1\n") == (
        "create n.py\nx = 1\n\nend_of_file_text"
    )
    assert action(command="str_replace", path="a.py", old_str="x\n") == (
        "str_replace a.py\nx\n\nend_of_old_str\n\nend_of_new_str"
    )  # new_str left out: delete old_str
    assert action(command="insert", path="a.py", insert_line=0, new_str="y") == (
        "insert a.py 0\ny\nend_of_new_str"
    )
    assert action(command="undo_edit", path="a.py") == "undo_edit a.py"
    for bad, message in [
        ({"command": "view", "path": "a", "view_range": [1]}, "view_range must be a list"),
        ({"command": "insert", "path": "a", "view_range": [1, 2]}, "takes no view_range"),
        ({"command": "create", "path": "a", "mode": "x"}, "takes no mode"),
        ({"command": "create", "path": "a"}, "missing argument(s): file_text"),
        (
            {"command": "str_replace", "path": "a", "old_str": "x\nend_of_old_str\ny"},
            "holds a line `end_of_old_str`, which the interface reads as the end of a block",
        ),
    ]:
        with pytest.raises(FormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
            action(**bad)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["model.name=openai/gpt-4o"], "is Anthropic's tool; model 'openai/gpt-4o' is not"),
        (["agent.parser=thought_action"], "needs agent.parser: tool_calls"),
        (["aci.commands=[view, str_replace, submit]"], "lacks the str_replace set's create_file"),
    ],
)
def test_the_switch_needs_an_anthropic_model_tool_calls_and_the_set(
    fake_server: FakeModelServer, overrides: list[str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        settings(fake_server, *overrides)
