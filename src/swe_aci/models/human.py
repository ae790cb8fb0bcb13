"""A person at the terminal plays the model: useful to try the interface by hand.

The last message (the observation) is shown, then the action is read: any number of lines, ended
by a line holding only `.` or by end of input; an `edit` block also ends at its `end_of_edit` line.
Input without a fenced block is wrapped as the action of a thought-action response; input that
already contains a fence line is taken as the whole response.
"""

from __future__ import annotations

import sys
from typing import TextIO

from swe_aci.models.base import Message, ModelAPIError, ModelReply, ToolSpec, message_text


class HumanModel:
    """Reads each reply from `stdin`, showing the conversation's last message on `stdout`."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.name = "human"
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def query(self, messages: list[Message], tools: list[ToolSpec] | None = None) -> ModelReply:
        if messages:
            self.stdout.write(message_text(messages[-1]).rstrip("\n") + "\n")
        self.stdout.write("action (end with a line holding only '.')> ")
        self.stdout.flush()
        text = self.read_action()
        if not text.strip():
            raise ModelAPIError("human input ended")
        if any(line.startswith("```") for line in text.splitlines()):
            return ModelReply(content=text)
        return ModelReply(content=f"DISCUSSION\n(typed by a human)\n\n```\n{text}\n```\n")

    def read_action(self) -> str:
        lines: list[str] = []
        for raw in iter(self.stdin.readline, ""):
            line = raw.rstrip("\n")
            if line == ".":
                break
            lines.append(line)
            if line == "end_of_edit" and lines[0].split()[:1] == ["edit"]:
                break
        return "\n".join(lines)
