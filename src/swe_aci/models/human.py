"""A person at the terminal plays the model: useful to try the interface by hand.

The last message (the observation) is shown, then the action is read: any number of lines, ended
by a line holding only `.` or by end of input; an `edit` block also ends at its `end_of_edit` line.
Input without a fence line is wrapped as the action of a reply in the agent's format; input that
already contains one is taken as the whole reply.
"""

from __future__ import annotations

import sys
from typing import TextIO

from swe_aci.models.base import Message, ModelAPIError, ModelReply, ToolSpec, message_text
from swe_aci.models.reply_format import ThoughtActionFormat


class HumanModel:
    """Reads each reply from `stdin`, showing the conversation's last message on `stdout`."""

    def __init__(
        self,
        reply_format: ThoughtActionFormat,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
    ) -> None:
        self.name = "human"
        self.reply_format = reply_format
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def query(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> ModelReply:
        if messages:
            self.stdout.write(message_text(messages[-1]).rstrip("\n") + "\n")
        self.stdout.write("action (end with a line holding only '.')> ")
        self.stdout.flush()
        text = self.read_action()
        if not text.strip():
            raise ModelAPIError("human input ended")
        if self.reply_format.holds_block(text):
            return ModelReply(content=text)
        thought = self.reply_format.discussion("(typed by a human)")
        return ModelReply(content=self.reply_format.compose(thought, text))

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
