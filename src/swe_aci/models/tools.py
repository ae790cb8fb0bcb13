"""Tool (function) calling: our ToolSpec/ToolCall to and from each API's wire format.

In a conversation, an assistant message carries `tool_calls` in the OpenAI wire format
(`{"id", "type": "function", "function": {"name", "arguments": <JSON text>}}`) or as ToolCall
objects; `assistant_message` builds the former from a reply. Tool results are messages
`{"role": "tool", "tool_call_id": ..., "content": ...}`.
"""

from __future__ import annotations

import json
from typing import Any

from swe_aci.models.base import Message, ModelReply, ToolCall, ToolSpec

RAW_ARGUMENTS_KEY = "_raw_arguments"
"""A call whose arguments are not a JSON object gets `{RAW_ARGUMENTS_KEY: <text>}` instead."""


def parse_arguments(raw: Any) -> dict[str, Any]:
    """Decoded call arguments; text that is not a JSON object is kept under RAW_ARGUMENTS_KEY."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        value = None
    return value if isinstance(value, dict) else {RAW_ARGUMENTS_KEY: str(raw)}


def calls_of(message: Message) -> list[ToolCall]:
    """The tool calls of an assistant message, whichever of the two accepted forms it uses."""
    calls = []
    for item in message.get("tool_calls") or []:
        if isinstance(item, ToolCall):
            calls.append(item)
        else:
            function = item.get("function", {})
            calls.append(
                ToolCall(
                    id=item.get("id", ""),
                    name=function.get("name", ""),
                    arguments=parse_arguments(function.get("arguments")),
                )
            )
    return calls


def openai_call(call: ToolCall) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
    }


def assistant_message(reply: ModelReply) -> Message:
    """The history entry for `reply`: its text, plus its tool calls in the OpenAI wire format."""
    message: Message = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [openai_call(call) for call in reply.tool_calls]
    return message


def openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


def anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": tool.type, "name": tool.name}
        if tool.type
        else {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}
        for tool in tools
    ]
