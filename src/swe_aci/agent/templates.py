"""The prompt templates (Jinja) and the texts generated for them: command docs, demonstrations."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from swe_aci.configuration import jinja
from swe_aci.models.base import message_text
from swe_aci.trajectory.store import load_trajectory

if TYPE_CHECKING:
    from swe_aci.aci.interface import CommandDoc

STATE_VARIABLES = frozenset({"open_file", "working_dir"})

# The variables each template may use; anything else is a config error caught at load time.
TEMPLATE_VARIABLES: dict[str, frozenset[str]] = {
    "system": frozenset({"command_docs", "WINDOW", "parser", "aci"}),
    "instance": frozenset({"problem_statement", "parser", "aci"}) | STATE_VARIABLES,
    "next_step": frozenset({"observation"}) | STATE_VARIABLES,
    "next_step_no_output": STATE_VARIABLES,
    "demonstration": frozenset({"demonstration"}),
    "format_error": frozenset({"error", "parser"}),
    "blocked_action": frozenset({"error", "action"}),
    "repeated_action": frozenset({"count"}),
    "review": frozenset({"diff", "new_files", "untouched_files"}),
}


class TemplatesConfig(BaseModel):
    """The texts the model reads. Each is a Jinja template; the variables are listed per field."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    system: str
    """The setting, {{command_docs}}, {{WINDOW}}, the response format ({{parser}}), the ACI config
    ({{aci}}: e.g. `aci.commands`, `aci.lint`)."""
    instance: str
    """The task: {{problem_statement}}, tips, the state suffix ({{open_file}}, {{working_dir}}),
    the ACI config ({{aci}})."""
    next_step: str
    """An observation: {{observation}} and the state suffix."""
    next_step_no_output: str
    """An empty observation: the state suffix only."""
    demonstration: str = "{{demonstration}}"
    """Wraps a demonstration trajectory rendered as text: {{demonstration}}."""
    format_error: str
    """Requery after a malformed reply: {{error}} says what is wrong."""
    blocked_action: str
    """Requery after a refused command: {{error}} (the refusal), {{action}}."""
    repeated_action: str = (
        "\nNOTE: you have now run this same command {{count}} times in a row"
        " and it changed nothing. Do something different: running it again ends the episode."
    )
    """Appended once to the observation when the same action repeats ({{count}} times in a row:
    `agent.limits.repeats`)."""
    review: str | None = None
    """The answer to the first `submit` under `agent.review_on_submit`: {{diff}} (the patch so
    far), {{new_files}} (the files it adds), {{untouched_files}} (those of them a create command
    made and nothing changed since)."""


class Templates:
    """Compiled templates; `render(name, **variables)`."""

    def __init__(self, config: TemplatesConfig) -> None:
        self._compiled = {
            name: jinja().from_string(getattr(config, name))
            for name in TEMPLATE_VARIABLES
            if getattr(config, name) is not None
        }

    def render(self, name: str, **variables: Any) -> str:
        return self._compiled[name].render(**variables)


def render_command_docs(docs: Sequence[CommandDoc]) -> str:
    """One entry per command, in the layout of the paper-era prompt (name, docstring, signature,
    arguments with type and required/optional)."""
    entries = []
    for doc in docs:
        lines = [f"{doc.name}:", f"  docstring: {doc.docstring}", f"  signature: {doc.signature}"]
        if doc.arguments:
            lines.append("  arguments:")
            for argument in doc.arguments:
                need = "required" if argument.required else "optional"
                lines.append(
                    f"    - {argument.name} ({argument.type}) [{need}]: {argument.description}"
                )
        entries.append("\n".join(lines) + "\n")
    return "\n".join(entries)


def demonstration_text(trajectory: dict[str, Any]) -> str:
    """A recorded episode as plain text: its non-system, non-demonstration messages joined.

    An assistant turn recorded with function calling has its command appended as a fenced block,
    so the demonstration shows the action either way.
    """
    parts = []
    for message in trajectory.get("history", []):
        if message.get("role") == "system" or message.get("is_demo"):
            continue
        if message.get("message_type") == "demonstration":
            continue
        text = message_text(message)
        if message.get("tool_calls") and message.get("action"):
            text = f"{text}\n```\n{message['action'].strip(chr(10))}\n```\n"
        parts.append(text)
    return "\n".join(parts)


def load_demonstrations(paths: Sequence[str]) -> list[str]:
    """The demonstration trajectories as text. Each file is read once per process (the config
    check and every episode after it share the text) unless it changed since; raises
    TrajectoryError (one line naming the file)."""
    texts = []
    for path in paths:
        try:
            status = os.stat(path)
            identity = (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_size)
        except OSError:
            identity = None  # load_trajectory reports the problem
        texts.append(_demonstration(path, identity))
    return texts


@functools.lru_cache(maxsize=16)
def _demonstration(path: str, identity: tuple[int, ...] | None) -> str:
    return demonstration_text(load_trajectory(path))
