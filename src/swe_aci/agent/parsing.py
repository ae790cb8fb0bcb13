"""Turning a model reply into (thought, action).

Two parsers share one small protocol:
- `thought_action`: the paper's format, a discussion plus one fenced command (the action is the
  last top-level fenced block). `THOUGHT_ACTION` is the one definition of that format: the parser
  reads with it, and `reply_format(name)` hands it to the models that write or constrain replies
  (human, replay, the local model's grammar);
- `tool_calls`: the ACI commands offered as functions; the single call is turned back into the
  command text the ACI executes. Its replies have no text format.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from swe_aci.agent.text_editor import (
    TextEditorType,
    command_arguments,
    offered,
    text_editor_spec,
)
from swe_aci.models.base import ModelReply, ToolCall, ToolSpec
from swe_aci.models.reply_format import FormatError, ThoughtActionFormat
from swe_aci.models.tools import RAW_ARGUMENTS_KEY

if TYPE_CHECKING:
    from swe_aci.aci.interface import CommandDoc

ParserName = Literal["thought_action", "tool_calls"]

THOUGHT_ACTION = ThoughtActionFormat(header="DISCUSSION", fence="```")


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


class ThoughtActionParser:
    """The paper's format: DISCUSSION text and one fenced command."""

    name: ParserName = "thought_action"

    def tools(self) -> list[ToolSpec] | None:
        return None

    def parse(self, reply: ModelReply) -> ParsedAction:
        thought, action = THOUGHT_ACTION.parse(reply.content)
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
    were given. The arguments absent from the first line are the multi-line blocks, each followed
    by its terminator (`doc.ends`, in order). A `text` argument is taken verbatim: its value plus
    one newline, so that the block's lines joined by newlines give the value back exactly (a final
    newline included); edit's replacement is lines, so only a missing final newline is added.
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

    parts = [" ".join(_PLACEHOLDER.sub(substitute, first_line).split())]
    blocks = [a for a in doc.arguments if a.name not in in_first_line]
    for argument, end in zip(blocks, doc.ends, strict=True):
        raw = arguments.get(argument.name)
        text = "" if raw is None else str(raw)
        if argument.type == "text" or (text and not text.endswith("\n")):
            text += "\n"  # a text block gives its value back exactly; edit's lines get their end
        parts.append(f"{text}{end}")
    return "\n".join(parts)


class ToolCallsParser:
    """Function calling: exactly one call of a known command (or `bash`) per reply. With a
    `text_editor` type, the editing commands are offered as Anthropic's text editor tool."""

    name: ParserName = "tool_calls"

    def __init__(
        self, docs: Sequence[CommandDoc], text_editor: TextEditorType | None = None
    ) -> None:
        self.docs = {doc.name: doc for doc in docs}
        self.text_editor = text_editor
        in_editor = offered(text_editor, self.docs) if text_editor else ()
        self.specs = [tool_spec(doc) for doc in docs if doc.name not in in_editor]
        if text_editor:
            self.specs.append(text_editor_spec(text_editor))
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
        name, arguments = call.name, call.arguments
        if self.text_editor and name == text_editor_spec(self.text_editor).name:
            name, arguments = command_arguments(self.text_editor, arguments)
            if name not in self.docs:
                raise FormatError(f"the text editor's {name} command is not enabled here")
        return ParsedAction(
            thought=reply.content, action=self._command(name, arguments), tool_call=call
        )

    def _command(self, name: str, arguments: dict[str, Any]) -> str:
        doc = self.docs.get(name)
        if doc is None:
            known = ", ".join(spec.name for spec in self.specs)
            raise FormatError(f"unknown function {name!r}; the functions are: {known}")
        missing = [a.name for a in doc.arguments if a.required and arguments.get(a.name) is None]
        if missing:
            raise FormatError(f"function {name!r} is missing argument(s): {', '.join(missing)}")
        unknown = sorted(set(arguments) - {a.name for a in doc.arguments})
        if unknown:
            raise FormatError(f"function {name!r} has no argument(s): {', '.join(unknown)}")
        for argument in doc.arguments:
            value = arguments.get(argument.name)
            lines = value.split("\n") if isinstance(value, str) and doc.ends else []
            ending = next((line.strip() for line in lines if line.strip() in doc.ends), None)
            if ending is not None:  # it would end its block early: another command than meant
                raise FormatError(
                    f"the {argument.name} of {name!r} holds a line `{ending}`, which the "
                    "interface reads as the end of a block; change that line"
                )
        return command_text(doc, arguments)


def make_parser(
    name: ParserName, docs: Sequence[CommandDoc], text_editor: TextEditorType | None = None
) -> Parser:
    if name == "tool_calls":
        return ToolCallsParser(docs, text_editor)
    return ThoughtActionParser()


def reply_format(name: ParserName) -> ThoughtActionFormat | None:
    """The text format the parser `name` reads (None: it reads function calls), for make_model."""
    return None if name == "tool_calls" else THOUGHT_ACTION
