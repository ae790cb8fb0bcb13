"""Cutting an action into steps: ACI commands and chunks of shell text, in order.

A line whose first word is an enabled ACI command is that command (a multi-line command such as
`edit` takes the following lines up to its terminator; one with several multi-line arguments, such
as `str_replace`, takes one block of lines per argument, each closed by its own terminator line);
runs of other lines are one shell chunk.
Lines inside a heredoc, a multi-line string or a continued line are shell text, whatever their
first word. ACI commands are not shell programs: one used in a pipe, chained with `;`, `&&` or
`||`, inside a compound command, redirected, prefixed with `VAR=value` or given more arguments
than its signature has is a format error whose one line says how the commands are used.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from swe_aci.aci.shellwords import LexState, Token, invocations, lex_line, simple_commands


class ActionFormatError(Exception):
    """The action cannot be cut into steps; the message says what is wrong."""


@dataclass(frozen=True)
class Syntax:
    """How a command is written: its usage line, its most arguments, its terminator line."""

    usage: str  # the first line of the signature, e.g. `open <path> [<line_number>]`
    layout: str  # the whole signature (a multi-line command's blocks and terminators included)
    ends: tuple[str, ...] = ()  # the terminator line of each block, in order

    @property
    def max_args(self) -> int:
        return len(self.usage.split()) - 1


@dataclass(frozen=True)
class ShellStep:
    text: str
    tokens: tuple[Token, ...] = ()


@dataclass(frozen=True)
class CommandStep:
    name: str
    args: tuple[str, ...]
    blocks: tuple[tuple[str, ...], ...] = ()  # the lines of each multi-line argument


Step = ShellStep | CommandStep


def misuse(syntax: Syntax) -> str:
    return (
        f"Interface commands run alone on their line, as `{syntax.usage}` (quote an argument "
        "that holds spaces): not in a pipe, not chained with ;, && or ||, not inside a compound "
        "command, not redirected, not after VAR=value, with no extra arguments."
    )


def split_action(action: str, commands: Mapping[str, Syntax]) -> list[Step]:
    """The steps of an action. Raises ActionFormatError for a malformed or misused command."""
    lines = action.split("\n")
    terminators: dict[str, list[str]] = {}
    for name, syntax in commands.items():
        for end in syntax.ends:
            terminators.setdefault(end, []).append(name)
    steps: list[Step] = []
    shell_lines: list[str] = []
    shell_tokens: list[Token] = []
    state = LexState()

    def flush_shell() -> None:
        if any(line.strip() for line in shell_lines):
            _refuse_embedded(shell_tokens, commands)
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
            if first in commands:
                flush_shell()
                index = _take_command(lines, index, tokens, probe, first, commands[first], steps)
                continue
            if first in terminators:
                _refuse_embedded(shell_tokens, commands)
                names = terminators[first]
                article = "an" if names[0][0] in "aeiou" else "a"
                layouts = "\n".join(
                    f"The {name} layout is:\n{commands[name].layout}" for name in names
                )
                raise ActionFormatError(
                    f"`{first}` without {article} {' or '.join(names)} command before it. {layouts}"
                )
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


def _take_command(
    lines: list[str],
    index: int,
    tokens: list[Token],
    after: LexState,
    name: str,
    syntax: Syntax,
    steps: list[Step],
) -> int:
    """Append the command starting at lines[index]; return the index of the line after it."""
    args = _arguments(lines[index], name)
    simple = all(token.kind == "word" for token in tokens[:-1]) and tokens[-1].text == "\n"
    if not simple or not after.at_command_start or len(args) > syntax.max_args:
        raise ActionFormatError(misuse(syntax))
    blocks: list[tuple[str, ...]] = []
    start = index + 1
    for terminator in syntax.ends:
        end = next((n for n in range(start, len(lines)) if lines[n].strip() == terminator), None)
        if end is None:
            raise ActionFormatError(
                f"The {name} command has no terminating `{terminator}` line. The {name} layout "
                f"is:\n{syntax.layout}"
            )
        blocks.append(tuple(lines[start:end]))
        start = end + 1
    steps.append(CommandStep(name, args, tuple(blocks)))
    return start


def _refuse_embedded(tokens: list[Token], commands: Mapping[str, Syntax]) -> None:
    """Shell text that runs an ACI command anywhere (`ls | open x`, `X=1 open x`, `env open x`)."""
    for words, _ in simple_commands(tokens):
        for command, _ in invocations(words):
            if command[0] in commands:
                raise ActionFormatError(misuse(commands[command[0]]))


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
