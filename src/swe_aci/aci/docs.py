"""A command's documentation as the model reads it: in the prompt's command list and as a
tool-calling schema. Built from the declarations in `commands.py`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArgumentDoc:
    name: str
    type: str  # "string", "integer", or "text": a multi-line argument taken verbatim
    description: str
    required: bool


@dataclass(frozen=True)
class CommandDoc:
    name: str
    signature: str  # first line is the command line; a multi-line one continues with its blocks
    docstring: str  # one line
    arguments: tuple[ArgumentDoc, ...] = ()
    ends: tuple[str, ...] = ()  # the terminator line of each multi-line argument, in order
