"""Which commands edit files under the lint guardrail, and how the observation of an edit it
rejected starts (ours and the paper's `edit`, the str_replace set's commands). The ACI marks a
rejected edit itself (`Observation.rejected_edit`, recorded on the step); the text is read only for
trajectories stored before that (`analysis.stats.rejected_edit`)."""

from __future__ import annotations

from collections.abc import Iterable

REJECTED_EDITS = (
    "Your proposed edit has introduced new syntax error(s)",
    "Your edit was NOT applied: it introduces new syntax error(s)",
)
# The commands the guardrail judges: their id in `aci.commands`, and the name the model types.
EDIT_COMMANDS = {"edit": "edit", "str_replace": "str_replace", "insert": "insert"}
EDIT_COMMANDS |= {"create_file": "create"}


def editing_commands(command_ids: Iterable[str]) -> frozenset[str]:
    """The typed names of the editing commands among an interface's command ids."""
    return frozenset(EDIT_COMMANDS[key] for key in command_ids if key in EDIT_COMMANDS)


def is_edit(action: str, editing: frozenset[str]) -> bool:
    words = action.split(maxsplit=1)
    return bool(words) and words[0] in editing


def is_rejected_edit(observation: str) -> bool:
    return observation.lstrip().startswith(REJECTED_EDITS)
