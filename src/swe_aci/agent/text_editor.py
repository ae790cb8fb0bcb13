"""The str_replace command set offered as Anthropic's own text editor tool.

Claude models are trained on a built-in tool (`str_replace_based_edit_tool`) whose parameters the
API defines: one call names a `command` (view, create, str_replace, insert, and for the oldest type
undo_edit) and its arguments. With `agent.anthropic_text_editor` set, the parser offers that tool
instead of the set's functions and turns each call back into the command text the ACI runs, so
the observations are the same either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from swe_aci.models.base import ToolSpec
from swe_aci.models.reply_format import FormatError

if TYPE_CHECKING:
    from swe_aci.aci.interface import CommandDoc

TextEditorType = Literal["text_editor_20250728", "text_editor_20250429", "text_editor_20250124"]

TOOL_NAMES: dict[str, str] = {
    "text_editor_20250728": "str_replace_based_edit_tool",
    "text_editor_20250429": "str_replace_based_edit_tool",
    "text_editor_20250124": "str_replace_editor",
}
EDITING = ("view", "create", "str_replace", "insert")
SUBCOMMANDS: dict[str, tuple[str, ...]] = {
    "text_editor_20250728": EDITING,
    "text_editor_20250429": EDITING,
    "text_editor_20250124": (*EDITING, "undo_edit"),
}
# each sub-command's parameters in the tool, and the command argument each becomes
PARAMETERS: dict[str, dict[str, str]] = {
    "view": {"path": "path"},
    "create": {"path": "path", "file_text": "file_text"},
    "str_replace": {"path": "path", "old_str": "old_str", "new_str": "new_str"},
    "insert": {"path": "path", "insert_line": "insert_line", "new_str": "new_str"},
    "undo_edit": {"path": "path"},
}


def offered(tool_type: str, docs: Mapping[str, CommandDoc]) -> tuple[str, ...]:
    """The enabled commands the tool stands for (the others stay functions)."""
    return tuple(name for name in SUBCOMMANDS[tool_type] if name in docs)


def text_editor_spec(tool_type: str) -> ToolSpec:
    return ToolSpec(
        name=TOOL_NAMES[tool_type],
        description=f"Anthropic's text editor tool ({tool_type})",
        parameters={},
        type=tool_type,
    )


def command_arguments(tool_type: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(command name, its arguments) for a call of the text editor tool; FormatError otherwise."""
    command = arguments.get("command")
    if command not in SUBCOMMANDS[tool_type]:
        known = ", ".join(SUBCOMMANDS[tool_type])
        raise FormatError(f"the text editor's command must be one of {known}, got {command!r}")
    parameters = PARAMETERS[command]
    unknown = sorted(set(arguments) - {"command", "view_range", *parameters})
    if unknown or ("view_range" in arguments and command != "view"):
        extra = ", ".join(unknown or ["view_range"])
        raise FormatError(f"the text editor's {command} command takes no {extra}")
    converted = {target: arguments.get(source) for source, target in parameters.items()}
    if command == "str_replace" and converted["new_str"] is None:
        converted["new_str"] = ""  # the tool's new_str is optional: deleting old_str
    view_range = arguments.get("view_range")
    if view_range is not None:
        if not (
            isinstance(view_range, list)
            and len(view_range) == 2
            and all(isinstance(n, int) for n in view_range)
        ):
            raise FormatError("view_range must be a list of two integers [start, end]")
        converted["start_line"], converted["end_line"] = view_range
    return command, {name: value for name, value in converted.items() if value is not None}
