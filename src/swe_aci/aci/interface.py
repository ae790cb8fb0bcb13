"""The agent-computer interface: one object per episode, over an environment.

`check` cuts an action into its steps and says whether it can run (format problems, interactive
programs); `execute` runs a checked action: ACI commands run here, on the host, through the
environment's file primitives; everything else goes to the environment's persistent shell. The
agent checks each action once and executes what the check returned.
"""

from __future__ import annotations

from dataclasses import dataclass

from swe_aci.aci.checking import ActionChecker, ActionProblem, CheckedAction
from swe_aci.aci.commands import BY_NAME, Handler
from swe_aci.aci.config import ACIConfig
from swe_aci.aci.docs import ArgumentDoc, CommandDoc
from swe_aci.aci.editor import Editor, EditRefused
from swe_aci.aci.iterative import IterativeSearch
from swe_aci.aci.parsing import CommandStep, Step
from swe_aci.aci.search import CommandTimedOut, Search
from swe_aci.aci.str_replace import StrReplaceEditor
from swe_aci.aci.viewer import CommandError, Viewer
from swe_aci.env.base import Environment, Exclusion, Submission

__all__ = ["ACI", "ActionProblem", "ArgumentDoc", "CheckedAction", "CommandDoc", "Observation"]


@dataclass(frozen=True)
class Observation:
    output: str
    submission: str | None = None
    done: bool = False
    timed_out: bool = False
    excluded: tuple[Exclusion, ...] = ()  # changed files the submission leaves out
    rejected_edit: bool = False  # the lint guardrail refused an edit of this action


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
        self.checker = ActionChecker(self.config)

    def command_docs(self) -> list[CommandDoc]:
        """The enabled commands in config order (plain shell commands need no entry)."""
        return [command.doc(self.config) for command in self._commands.values()]

    def check(self, action: str) -> CheckedAction | ActionProblem:
        """The action cut into steps, or why it cannot run."""
        return self.checker.check(action)

    def execute(self, action: CheckedAction | str) -> Observation:
        """Run a checked action. Text is checked first (the agent passes what `check` returned,
        so its actions are split once): a refused action runs nothing, its problem is the
        output."""
        checked = self.check(action) if isinstance(action, str) else action
        if isinstance(checked, ActionProblem):
            return Observation(output=checked.message)
        outputs: list[str] = []
        rejected = False
        for step in checked.steps:
            handler = self._commands[step.name].run if isinstance(step, CommandStep) else None
            if isinstance(step, CommandStep) and handler is None:
                taken = self.submission()
                return Observation(
                    output=taken.patch,
                    submission=taken.patch,
                    done=True,
                    excluded=taken.excluded,
                    rejected_edit=rejected,
                )
            try:
                output, timed_out = self._run_step(step, handler)
            except EditRefused as refusal:
                output, timed_out, rejected = str(refusal), False, True
            outputs.append(output)
            if timed_out:
                return Observation(output=_join(outputs), timed_out=True, rejected_edit=rejected)
        return Observation(output=_join(outputs), rejected_edit=rejected)

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
            except EditRefused:
                raise
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


def _join(outputs: list[str]) -> str:
    return "\n".join(text.rstrip("\n") for text in outputs if text.strip())
