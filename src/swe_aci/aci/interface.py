"""The agent-computer interface: one object per episode, over an environment.

`check` says whether an action can run (format problems, interactive programs); `execute` runs
it: ACI commands run here, on the host, through the environment's file primitives; everything
else goes to the environment's persistent shell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from swe_aci.aci.blocklist import Blocklist
from swe_aci.aci.commands import BY_NAME, TYPED_NAMES, Handler
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.docs import ArgumentDoc, CommandDoc
from swe_aci.aci.editor import Editor
from swe_aci.aci.iterative import IterativeSearch
from swe_aci.aci.parsing import ActionFormatError, CommandStep, ShellStep, Step, split_action
from swe_aci.aci.search import CommandTimedOut, Search
from swe_aci.aci.shellwords import invocations, simple_commands
from swe_aci.aci.str_replace import StrReplaceEditor
from swe_aci.aci.viewer import CommandError, Viewer
from swe_aci.env.base import Environment, Exclusion, Submission

__all__ = ["ACI", "ActionProblem", "ArgumentDoc", "CommandDoc", "Observation"]


@dataclass(frozen=True)
class ActionProblem:
    """Why an action is not run: a malformed command layout, or a refused interactive program."""

    kind: Literal["format", "blocked"]
    message: str


@dataclass(frozen=True)
class Observation:
    output: str
    submission: str | None = None
    done: bool = False
    timed_out: bool = False
    excluded: tuple[Exclusion, ...] = ()  # changed files the submission leaves out


class ACI:
    def __init__(
        self,
        env: Environment,
        config: ACIConfig | None = None,
    ) -> None:
        self.env = env
        self.config = config or ACIConfig()
        self.viewer = Viewer(env, self.config)
        self.editor = Editor(self.viewer, self.config)
        self.search = Search(self.viewer, self.config)
        self.iterative = IterativeSearch(self.viewer, self.search, self.config)
        self.str_replace = StrReplaceEditor(self.editor, self.config)
        enabled = [BY_NAME[key] for key in self.config.commands]
        self._commands = {command.name: command for command in enabled}
        self._syntax = {name: command.syntax for name, command in self._commands.items()}
        self._unavailable = TYPED_NAMES - set(self._commands)
        self._blocklist = Blocklist(
            self.config.interactive_blocklist, self.config.standalone_blocklist
        )

    def command_docs(self) -> list[CommandDoc]:
        """The enabled commands in config order (plain shell commands need no entry)."""
        return [command.doc(self.config) for command in self._commands.values()]

    def check(self, action: str) -> ActionProblem | None:
        try:
            steps = split_action(action, self._syntax)
        except ActionFormatError as error:
            return ActionProblem("format", str(error))
        return self._refusal(steps)

    def execute(self, action: str) -> Observation:
        try:
            steps = split_action(action, self._syntax)
        except ActionFormatError as error:
            return Observation(output=str(error))
        problem = self._refusal(steps)
        if problem is not None:
            return Observation(output=problem.message)
        outputs: list[str] = []
        for step in steps:
            handler = self._commands[step.name].run if isinstance(step, CommandStep) else None
            if isinstance(step, CommandStep) and handler is None:
                taken = self.submission()
                return Observation(
                    output=taken.patch, submission=taken.patch, done=True, excluded=taken.excluded
                )
            output, timed_out = self._run_step(step, handler)
            outputs.append(output)
            if timed_out:
                return Observation(output=_join(outputs), timed_out=True)
        return Observation(output=_join(outputs))

    def state(self) -> dict[str, str]:
        return {"open_file": self.viewer.path or "n/a", "working_dir": self.env.cwd}

    def untouched_creations(self) -> list[str]:
        """The files a create command made that still hold what it wrote (scratch files, often)."""
        untouched = []
        for path, content in self.viewer.created.items():
            try:
                if self.env.read_file(path) == content:
                    untouched.append(path)
            except OSError:
                continue
        return sorted(untouched)

    def submission(self) -> Submission:
        """What `submit` returns: every change against the base commit, and the changed files
        left out of the patch (binary or too large). The environment takes it itself
        (`Environment.submission`), never through the agent's shell."""
        return self.env.submission()

    # -- internals -------------------------------------------------------------------------

    def _run_step(self, step: Step, handler: Handler | None) -> tuple[str, bool]:
        """(output, timed out) of one step: a command by its handler, else a shell command."""
        if isinstance(step, CommandStep) and handler is not None:
            try:
                return handler(self, step), False
            except CommandError as error:
                return str(error), False
            except CommandTimedOut as timeout:
                return self._timed_out(timeout.args[0] if timeout.args else ""), True
        result = self.env.run(step.text, timeout=self.config.command_timeout)
        if result.timed_out:
            return self._timed_out(result.output), True
        return result.output, False

    def _timed_out(self, partial: str) -> str:
        notice = self.config.timeout_message.format(timeout=self.config.command_timeout)
        return _join([partial, notice])

    def _refusal(self, steps: list[Step]) -> ActionProblem | None:
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


def _join(outputs: list[str]) -> str:
    return "\n".join(text.rstrip("\n") for text in outputs if text.strip())
