"""The thought-action parser (paper-era-behaviour 4.2) and the function-calling parser."""

from __future__ import annotations

import pytest

from swe_aci.aci.interface import ArgumentDoc, CommandDoc
from swe_aci.agent.parsing import (
    THOUGHT_ACTION,
    FormatError,
    ThoughtActionParser,
    ToolCallsParser,
)
from swe_aci.models.base import ModelReply, ToolCall
from swe_aci.models.tools import RAW_ARGUMENTS_KEY


def test_discussion_then_block() -> None:
    text = "DISCUSSION\nLet's list the files.\n```\nls -F\n```\n"
    thought, action = THOUGHT_ACTION.parse(text)
    assert action == "ls -F\n"
    assert thought == "DISCUSSION\nLet's list the files.\n"


def test_thought_is_text_before_and_after_the_block() -> None:
    text = "Before.\n```bash\ncat a.py\n```\nAfter the block.\n"
    thought, action = THOUGHT_ACTION.parse(text)
    assert action == "cat a.py\n"
    assert thought == "Before.\nAfter the block.\n"


def test_last_top_level_block_wins_and_earlier_blocks_stay_in_thought() -> None:
    text = "First idea:\n```\nls\n```\nBetter:\n```\npwd\n```\n"
    thought, action = THOUGHT_ACTION.parse(text)
    assert action == "pwd\n"
    assert thought == "First idea:\n```\nls\n```\nBetter:\n"


def test_tagged_fence_inside_a_block_nests() -> None:
    text = (
        "Write a markdown file.\n```\ncat > notes.md <<'EOF'\n```python\nprint(1)\n```\nEOF\n```\n"
    )
    thought, action = THOUGHT_ACTION.parse(text)
    assert action == "cat > notes.md <<'EOF'\n```python\nprint(1)\n```\nEOF\n"
    assert thought == "Write a markdown file.\n"


def test_block_without_trailing_newline_at_end() -> None:
    thought, action = THOUGHT_ACTION.parse("Go.\n```\nsubmit\n```")
    assert (thought, action) == ("Go.\n", "submit\n")


def test_edit_body_keeps_its_indentation() -> None:
    text = "Fix it.\n```\nedit 3:3\n        return x\nend_of_edit\n```\n"
    assert THOUGHT_ACTION.parse(text)[1] == "edit 3:3\n        return x\nend_of_edit\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("DISCUSSION\nJust talking, no command.\n", "no command"),
        ("Run `ls` please.\n", "no command"),
        ("Here:\n```\nls -F\n", "never closed"),
        ("Here:\n    ```\n    ls\n    ```\n", "beginning of a line"),
        ("Inline ```ls``` fence.\n", "no command"),
        ("Empty:\n```\n\n```\n", "holds no command"),
        ("Tag with a space:\n``` bash x\nls\n```\n", "never closed"),
    ],
)
def test_format_errors(text: str, reason: str) -> None:
    with pytest.raises(FormatError, match=reason):
        THOUGHT_ACTION.parse(text)


def test_closed_block_before_a_trailing_unclosed_fence_still_counts() -> None:
    # As in the paper-era parser: the last *complete* top-level block is the action.
    thought, action = THOUGHT_ACTION.parse("```\nls\n```\nthen\n```\npwd\n")
    assert action == "ls\n"
    assert thought == "then\n```\npwd\n"


def test_thought_action_parser_on_a_reply() -> None:
    parsed = ThoughtActionParser().parse(ModelReply(content="ok\n```\nls\n```\n"))
    assert (parsed.thought, parsed.action, parsed.tool_call) == ("ok\n", "ls\n", None)


# -- function calling ---------------------------------------------------------------------------

DOCS = [
    CommandDoc(
        name="open",
        signature="open <path> [<line_number>]",
        docstring="opens the file at path, optionally with line_number in the window",
        arguments=(
            ArgumentDoc("path", "string", "the file to open", True),
            ArgumentDoc("line_number", "integer", "the line to show", False),
        ),
    ),
    CommandDoc(
        name="edit",
        signature="edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit",
        docstring="replaces lines start_line..end_line of the open file",
        arguments=(
            ArgumentDoc("start_line", "integer", "first line replaced", True),
            ArgumentDoc("end_line", "integer", "last line replaced", True),
            ArgumentDoc("replacement_text", "string", "the new lines", True),
        ),
        ends=("end_of_edit",),
    ),
    CommandDoc(name="submit", signature="submit", docstring="submits the diff", arguments=()),
]


def call(name: str, **arguments: object) -> ModelReply:
    return ModelReply(content="thinking", tool_calls=(ToolCall("c1", name, dict(arguments)),))


def test_tool_specs_have_typed_arguments_and_bash() -> None:
    specs = {spec.name: spec for spec in ToolCallsParser(DOCS).tools() or []}
    assert set(specs) == {"open", "edit", "submit", "bash"}
    assert specs["open"].parameters["properties"]["line_number"]["type"] == "integer"
    assert specs["open"].parameters["required"] == ["path"]
    assert specs["edit"].parameters["required"] == ["start_line", "end_line", "replacement_text"]


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        (call("open", path="src/a b.py", line_number=40), "open 'src/a b.py' 40"),
        (call("open", path="src/a.py"), "open src/a.py"),
        (
            call("edit", start_line=3, end_line=4, replacement_text="    x = 1"),
            "edit 3:4\n    x = 1\nend_of_edit",
        ),
        (call("edit", start_line=3, end_line=2, replacement_text=""), "edit 3:2\nend_of_edit"),
        (call("submit"), "submit"),
        (call("bash", command="ls -la"), "ls -la"),
    ],
)
def test_tool_call_becomes_command_text(reply: ModelReply, action: str) -> None:
    parsed = ToolCallsParser(DOCS).parse(reply)
    assert parsed.action == action
    assert parsed.thought == "thinking"
    assert parsed.tool_call == reply.tool_calls[0]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (ModelReply(content="no call"), "exactly one function call"),
        (
            ModelReply(
                content="", tool_calls=(ToolCall("a", "submit", {}), ToolCall("b", "submit", {}))
            ),
            "got 2",
        ),
        (call("rm_everything"), "unknown function"),
        (call("open"), "missing argument"),
        (call("open", path="a", colour="red"), "has no argument"),
        (call("bash", command="  "), "non-empty 'command'"),
        (call("open", **{RAW_ARGUMENTS_KEY: "{oops"}), "not a JSON object"),
    ],
)
def test_tool_call_format_errors(reply: ModelReply, reason: str) -> None:
    with pytest.raises(FormatError, match=reason):
        ToolCallsParser(DOCS).parse(reply)
