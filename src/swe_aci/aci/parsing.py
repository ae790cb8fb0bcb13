"""Cutting an action into steps: ACI commands and chunks of shell text, in order.

A line whose first word is an enabled ACI command is that command (`edit` takes the following
lines up to `end_of_edit`); runs of other lines are one shell chunk. A line that chains an ACI
command with `;`, `&&` or `||` (`cd src && open x.py`) is cut at those operators. Lines inside a
heredoc, a multi-line string or a continued line are shell text, whatever their first word.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection
from dataclasses import dataclass

from swe_aci.aci.shellwords import KEYWORDS, SEPARATORS, LexState, Token, lex_line

EDIT = "edit"
END_OF_EDIT = "end_of_edit"
EDIT_LAYOUT = "edit <start_line>:<end_line>\n<replacement_text>\nend_of_edit"


class ActionFormatError(Exception):
    """The action cannot be cut into steps; the message says what is wrong."""


@dataclass(frozen=True)
class ShellStep:
    text: str
    tokens: tuple[Token, ...] = ()
    connector: str = "\n"  # how it follows the previous step: "\n", ";", "&&" or "||"


@dataclass(frozen=True)
class CommandStep:
    name: str
    args: tuple[str, ...]
    body: tuple[str, ...] | None = None  # the replacement lines of an edit
    connector: str = "\n"


Step = ShellStep | CommandStep


def split_action(action: str, commands: Collection[str]) -> list[Step]:
    """The steps of an action. Raises ActionFormatError for a malformed multi-line form."""
    lines = action.split("\n")
    steps: list[Step] = []
    shell_lines: list[str] = []
    shell_tokens: list[Token] = []
    state = LexState()

    def flush_shell() -> None:
        if any(line.strip() for line in shell_lines):
            steps.append(ShellStep("\n".join(shell_lines), tuple(shell_tokens)))
        shell_lines.clear()
        shell_tokens.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        if state.at_command_start:
            probe = LexState()
            tokens = lex_line(line, probe)
            first = _first_word(tokens)
            if first == EDIT and EDIT in commands:
                flush_shell()
                index = _take_edit(lines, index, tokens, steps)
                continue
            if first == END_OF_EDIT and EDIT in commands:
                raise ActionFormatError(
                    f"`{END_OF_EDIT}` without an edit command before it. The edit layout is:\n"
                    f"{EDIT_LAYOUT}"
                )
            pieces = _pieces(line, tokens, probe)
            if any(_first_word(piece_tokens) in commands for _, _, piece_tokens in pieces):
                flush_shell()
                steps.extend(_piece_steps(pieces, commands))
            else:
                shell_lines.append(line)
                shell_tokens.extend(tokens)
                state = probe
            index += 1
            continue
        shell_lines.append(line)
        shell_tokens.extend(lex_line(line, state))
        index += 1
    flush_shell()
    return steps


def _take_edit(lines: list[str], index: int, tokens: list[Token], steps: list[Step]) -> int:
    """Append the edit starting at lines[index]; return the index after its terminator."""
    for end in range(index + 1, len(lines)):
        if lines[end].strip() == END_OF_EDIT:
            args = _arguments(lines[index], EDIT)
            steps.append(CommandStep(EDIT, args, tuple(lines[index + 1 : end])))
            return end + 1
    raise ActionFormatError(
        "The edit command has no terminating `end_of_edit` line. The edit layout is:\n"
        f"{EDIT_LAYOUT}"
    )


def _pieces(line: str, tokens: list[Token], after: LexState) -> list[tuple[str, str, list[Token]]]:
    """The line cut at top-level `;`, `&&`, `||` as (connector, text, tokens); the whole line
    when it holds a compound command or does not end at top level."""
    whole = [("\n", line, tokens)]
    if not after.at_command_start or any(
        token.kind == "op" and token.text in ("(", "$(") for token in tokens
    ):
        return whole
    pieces: list[tuple[str, str, list[Token]]] = []
    connector, start = "\n", 0
    current: list[Token] = []
    for token in tokens:
        if token.kind == "op" and token.text in SEPARATORS:
            pieces.append((connector, line[start : token.start], current))
            connector, start, current = token.text, token.end, []
        else:
            current.append(token)
    pieces.append((connector, line[start:], current))
    if any(_first_word(piece_tokens) in KEYWORDS for _, _, piece_tokens in pieces):
        return whole
    return [piece for piece in pieces if piece[1].strip()]


def _piece_steps(
    pieces: list[tuple[str, str, list[Token]]], commands: Collection[str]
) -> list[Step]:
    steps: list[Step] = []
    for connector, text, tokens in pieces:
        name = _first_word(tokens)
        if name is None or name not in commands:
            steps.append(ShellStep(text.strip(), tuple(tokens), connector=connector))
            continue
        if name == EDIT:
            raise ActionFormatError(
                "An edit command must start its own line. The edit layout is:\n" + EDIT_LAYOUT
            )
        steps.append(CommandStep(name, _arguments(text, name), connector=connector))
    return steps


def _arguments(text: str, name: str) -> tuple[str, ...]:
    """The shell words after the command name (quotes removed, no expansion)."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError as error:
        raise ActionFormatError(
            f"The arguments of `{name}` could not be read ({error}): quote them as in the shell."
        ) from error
    return tuple(words[1:])


def _first_word(tokens: list[Token]) -> str | None:
    if tokens and tokens[0].kind == "word":
        return tokens[0].text
    return None
