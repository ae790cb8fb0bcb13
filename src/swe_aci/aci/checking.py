"""Whether an action can run under an interface config: its command layout parses, and it calls
no refused interactive program and no command the config leaves out. Needs no sandbox, so a
recorded trajectory (a demonstration) can be checked against a config too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from swe_aci.aci.blocklist import Blocklist
from swe_aci.aci.commands import BY_NAME, TYPED_NAMES
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.parsing import ActionFormatError, ShellStep, Step, split_action
from swe_aci.aci.shellwords import invocations, simple_commands


@dataclass(frozen=True)
class ActionProblem:
    """Why an action is not run: a malformed command layout, or a refused interactive program."""

    kind: Literal["format", "blocked"]
    message: str


@dataclass(frozen=True)
class CheckedAction:
    """An action that passed the check, already cut into the steps the ACI runs."""

    steps: tuple[Step, ...]


class ActionChecker:
    def __init__(self, config: ACIConfig) -> None:
        self.config = config
        enabled = [BY_NAME[key] for key in config.commands]
        self.syntax = {command.name: command.syntax for command in enabled}
        self._unavailable = TYPED_NAMES - set(self.syntax)
        self._blocklist = Blocklist(config.interactive_blocklist, config.standalone_blocklist)

    def split(self, action: str) -> list[Step]:
        """The action's steps; raises ActionFormatError."""
        return split_action(action, self.syntax)

    def check(self, action: str) -> CheckedAction | ActionProblem:
        """The action cut into steps, or why it cannot run."""
        try:
            steps = self.split(action)
        except ActionFormatError as error:
            return ActionProblem("format", str(error))
        return self.refusal(steps) or CheckedAction(tuple(steps))

    def refusal(self, steps: list[Step]) -> ActionProblem | None:
        for step in steps:
            if not isinstance(step, ShellStep):
                continue
            entry = self._blocklist.match(step.tokens)
            if entry is not None:
                return ActionProblem("blocked", self.config.blocked_message.format(command=entry))
            for words, piped in simple_commands(list(step.tokens)):
                for command, _ in invocations(words, piped):
                    if command[0] in self._unavailable:
                        return ActionProblem(
                            "blocked", self.config.unavailable_message.format(command=command[0])
                        )
        return None
