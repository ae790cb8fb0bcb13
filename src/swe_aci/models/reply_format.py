"""The thought-action reply format, defined once: how it is read, written and constrained.

A reply is a header line (`DISCUSSION`), the thought, then the command in a fenced block. The agent's
`thought_action` parser reads replies with `parse`; the models that write or constrain replies
themselves get the same object from the agent (see `make_model`): the human and replay models write
replies with `compose`, the local model decodes under `grammar`. So changing the header or the
fence in the parser's definition changes all of them together.

It lives here, not in `agent/`, because models must not import the agent; the agent owns the
instance (`agent.parsing.THOUGHT_ACTION`) and passes it down.
"""

from __future__ import annotations

from dataclasses import dataclass

from swe_aci.models.grammar import thought_action_grammar


class FormatError(Exception):
    """The reply does not follow the expected layout; the message says what is wrong (one line)."""


@dataclass(frozen=True)
class ThoughtActionFormat:
    """`header` opens the thought (the grammar requires it, the parser tolerates its absence);
    `fence` opens and closes the command's block at the start of a line."""

    header: str
    fence: str

    def __post_init__(self) -> None:
        if not self.fence or any(char.isspace() for char in self.fence):
            raise ValueError(f"a fence is a non-empty word, not {self.fence!r}")
        if "\n" in self.header:
            raise ValueError(f"a header is one line, not {self.header!r}")

    def parse(self, text: str) -> tuple[str, str]:
        """Split a reply into (thought, action): the action is the last top-level fenced block.

        Fence lines start at column 0. An opening fence is the fence optionally followed by a
        tag without spaces; a closing fence is bare. Fences nest through a stack (a tagged fence
        inside an open block opens a nested one), and only blocks at depth 0 count. The thought is
        the reply with the chosen block, fence lines included, cut out: the text before and after
        it. The action keeps its trailing newline.
        """
        fence = self.fence
        stack: list[tuple[int, int]] = []  # (start of the fence line, end of it incl. newline)
        chosen: tuple[int, int, int, int] | None = None
        saw_indented_fence = False
        position = 0
        for line in text.splitlines(keepends=True):
            start, end = position, position + len(line)
            position = end
            body = line.rstrip("\r\n")
            if not body.startswith(fence):
                saw_indented_fence = saw_indented_fence or body.lstrip().startswith(fence)
                continue
            rest = body[len(fence) :]
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
                    f"the fence lines ({fence}) of the command block must start at the beginning "
                    "of a line, without indentation"
                )
            raise FormatError(f"no command in a fenced code block ({fence}) was found")
        open_start, open_end, close_start, close_end = chosen
        action = text[open_end:close_start]
        if not action.strip():
            raise FormatError("the fenced code block holds no command")
        return text[:open_start] + text[close_end:], action

    def compose(self, thought: str, action: str) -> str:
        """The reply `parse` reads back as this thought and action (each plus a newline); no
        thought gives the bare block. The header is not added: a recorded thought carries its own.
        """
        block = f"{self.fence}\n{action}\n{self.fence}\n"
        return f"{thought}\n{block}" if thought else block

    def discussion(self, text: str) -> str:
        """`text` as a thought under the header."""
        return f"{self.header}\n{text}\n"

    def holds_block(self, text: str) -> bool:
        """Whether `text` already has a fence line: it was written as a whole reply, not a bare
        command."""
        return any(line.startswith(self.fence) for line in text.splitlines())

    def grammar(self, max_tokens: int) -> str:
        """GBNF admitting the well-formed replies of at most `max_tokens` tokens (see grammar.py);
        ValueError if the budget is too small for a thought and a command."""
        return thought_action_grammar(max_tokens, self.header, self.fence)
