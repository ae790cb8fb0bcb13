"""A command's documentation as the model reads it: in the prompt's command list and as a
tool-calling schema. Built from the declarations in `commands.py`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArgumentDoc:
    name: str
    type: str  # "string" or "integer"
    description: str
    required: bool


@dataclass(frozen=True)
class CommandDoc:
    name: str
    signature: str  # first line is the command line; edit's continues with its body and end
    docstring: str  # one line
    arguments: tuple[ArgumentDoc, ...] = ()
    end_name: str | None = None  # the terminator line of a multi-line command
