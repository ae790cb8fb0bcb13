"""Turning a model reply into (thought, action).

Two parsers share one small protocol:
- `thought_action`: the paper's format, a discussion plus one fenced command (the action is the
  last top-level fenced block; paper-era-behaviour 4.2);
- `tool_calls`: the ACI commands offered as functions; the single call is turned back into the
  command text the ACI executes.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from swe_aci.models.base import ModelReply, ToolCall, ToolSpec
from swe_aci.models.tools import RAW_ARGUMENTS_KEY

if TYPE_CHECKING:
    from swe_aci.aci import CommandDoc

ParserName = Literal["thought_action", "tool_calls"]

FENCE = "```"


class FormatError(Exception):
    """The reply does not follow the expected layout; the message says what is wrong (one line)."""


@dataclass(frozen=True)
class ParsedAction:
    """One valid reply: what the model thought, the command to run, and its tool call if any."""

    thought: str
    action: str
    tool_call: ToolCall | None = None


class Parser(Protocol):
    name: ParserName

    def tools(self) -> list[ToolSpec] | None:
        """The functions offered to the model with every query (None: plain text replies)."""
        ...

    def parse(self, reply: ModelReply) -> ParsedAction:
        """The thought and action of `reply`; FormatError when there is no single valid action."""
        ...


def parse_thought_action(text: str) -> tuple[str, str]:
    """Split a reply into (thought, action): the action is the last top-level fenced block.

    Fence lines start at column 0. An opening fence is three backticks optionally followed by a
    tag without spaces; a closing fence is bare. Fences nest through a stack (a tagged fence
    inside an open block opens a nested one), and only blocks at depth 0 count. The thought is
    the reply with the chosen block, fence lines included, cut out: the text before and after it.
    The action keeps its trailing newline.
    """
    stack: list[tuple[int, int]] = []  # (start of the fence line, end of it incl. newline)
    chosen: tuple[int, int, int, int] | None = None
    saw_indented_fence = False
    position = 0
    for line in text.splitlines(keepends=True):
        start, end = position, position + len(line)
        position = end
        body = line.rstrip("\r\n")
        if not body.startswith(FENCE):
            saw_indented_fence = saw_indented_fence or body.lstrip().startswith(FENCE)
            continue
        rest = body[len(FENCE) :]
        if not rest.strip():  # a bare fence closes the open block, or opens one
            if stack:
                open_start, open_end = stack.pop()
                if not stack:
                    chosen = (open_start, open_end, start, end)
            else:
                stack.append((start, end))
        elif not any(char.isspace() for char in rest.rstrip()):  # a tagged fence always opens
            stack.append((start, end))
    if chosen is None:
        if stack:
            raise FormatError("a fenced code block was opened but never closed")
        if saw_indented_fence:
            raise FormatError(
                "the fence lines (```) of the command block must start at the beginning of a "
                "line, without indentation"
            )
        raise FormatError("no command in a fenced code block (```) was found")
    open_start, open_end, close_start, close_end = chosen
    action = text[open_end:close_start]
    if not action.strip():
        raise FormatError("the fenced code block holds no command")
    return text[:open_start] + text[close_end:], action


class ThoughtActionParser:
    """The paper's format: DISCUSSION text and one fenced command."""

    name: ParserName = "thought_action"

    def tools(self) -> list[ToolSpec] | None:
        return None

    def parse(self, reply: ModelReply) -> ParsedAction:
        thought, action = parse_thought_action(reply.content)
        return ParsedAction(thought=thought, action=action)


# -- function calling ----------------------------------------------------------------------------

BASH_TOOL = ToolSpec(
    name="bash",
    description="Run a command in the persistent bash shell (not an interactive one).",
    parameters={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "the command line to run"}},
        "required": ["command"],
    },
)

_JSON_TYPES = {"integer": "integer", "int": "integer", "number": "number", "float": "number"}
_PLACEHOLDER = re.compile(r"\[([^\[\]]*)\]|<(\w+)>")


def tool_spec(doc: CommandDoc) -> ToolSpec:
    """A command as a function: its one-line doc and its typed arguments."""
    properties = {
        argument.name: {
            "type": _JSON_TYPES.get(argument.type, "string"),
            "description": argument.description,
        }
        for argument in doc.arguments
    }
    required = [argument.name for argument in doc.arguments if argument.required]
    return ToolSpec(
        name=doc.name,
        description=doc.docstring.strip().splitlines()[0] if doc.docstring.strip() else doc.name,
        parameters={"type": "object", "properties": properties, "required": required},
    )


def command_text(doc: CommandDoc, arguments: dict[str, Any]) -> str:
    """The command line a tool call stands for, built from the command's signature.

    Each `<name>` in the signature's first line is replaced by the argument's value (quoted for the
    shell when it holds spaces or quotes), an optional `[...]` part is kept only when its arguments
    were given. For a multi-line command (one with an `end_name`), the argument absent from the
    first line is the body, followed by the terminator.
    """
    first_line = doc.signature.splitlines()[0]
    in_first_line = set(re.findall(r"<(\w+)>", first_line))

    def value(name: str) -> str:
        raw = arguments[name]
        text = raw if isinstance(raw, str) else json.dumps(raw)
        return text if text and shlex.quote(text) == text else shlex.quote(text)

    def substitute(match: re.Match[str]) -> str:
        optional, name = match.group(1), match.group(2)
        if name is not None:
            return value(name)
        inner_names = re.findall(r"<(\w+)>", optional)
        if all(arguments.get(inner) is not None for inner in inner_names):
            return re.sub(r"<(\w+)>", lambda inner: value(inner.group(1)), optional)
        return ""

    line = " ".join(_PLACEHOLDER.sub(substitute, first_line).split())
    if doc.end_name is None:
        return line
    body_names = [a.name for a in doc.arguments if a.name not in in_first_line]
    body = "".join(str(arguments.get(name) or "") for name in body_names)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{line}\n{body}{doc.end_name}"


class ToolCallsParser:
    """Function calling: exactly one call of a known command (or `bash`) per reply."""

    name: ParserName = "tool_calls"

    def __init__(self, docs: Sequence[CommandDoc]) -> None:
        self.docs = {doc.name: doc for doc in docs}
        self.specs = [tool_spec(doc) for doc in docs]
        if BASH_TOOL.name not in self.docs:
            self.specs.append(BASH_TOOL)

    def tools(self) -> list[ToolSpec] | None:
        return self.specs

    def parse(self, reply: ModelReply) -> ParsedAction:
        if len(reply.tool_calls) != 1:
            count = len(reply.tool_calls)
            raise FormatError(f"exactly one function call is expected per reply, got {count}")
        call = reply.tool_calls[0]
        if RAW_ARGUMENTS_KEY in call.arguments:
            raise FormatError(f"the arguments of {call.name!r} are not a JSON object")
        if call.name == BASH_TOOL.name and call.name not in self.docs:
            command = call.arguments.get("command")
            if not isinstance(command, str) or not command.strip():
                raise FormatError("the bash function needs a non-empty 'command' argument")
            return ParsedAction(thought=reply.content, action=command, tool_call=call)
        doc = self.docs.get(call.name)
        if doc is None:
            known = ", ".join(spec.name for spec in self.specs)
            raise FormatError(f"unknown function {call.name!r}; the functions are: {known}")
        missing = [
            a.name for a in doc.arguments if a.required and call.arguments.get(a.name) is None
        ]
        if missing:
            raise FormatError(
                f"function {call.name!r} is missing argument(s): {', '.join(missing)}"
            )
        unknown = sorted(set(call.arguments) - {a.name for a in doc.arguments})
        if unknown:
            raise FormatError(f"function {call.name!r} has no argument(s): {', '.join(unknown)}")
        return ParsedAction(
            thought=reply.content, action=command_text(doc, call.arguments), tool_call=call
        )


def make_parser(name: ParserName, docs: Sequence[CommandDoc]) -> Parser:
    if name == "tool_calls":
        return ToolCallsParser(docs)
    return ThoughtActionParser()
