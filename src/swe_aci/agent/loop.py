"""The agent loop: query the model, parse its action, run it through the ACI, record, repeat.

The episode is recorded on the one frame every strategy shares (`trajectory/recorder.py`): every
step is appended to the trajectory journal as it finishes, so a run killed at any moment leaves
the finished steps readable; the `.traj` is written at the end, also when the episode is
interrupted (Ctrl-C, SIGTERM, SIGHUP: exit status `exit_interrupted`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_aci.aci.interface import ACI, ActionProblem, CheckedAction
from swe_aci.agent.config import AgentConfig
from swe_aci.agent.history import process_history
from swe_aci.agent.parsing import FormatError, ParsedAction, make_parser
from swe_aci.agent.repeats import RepeatWatch
from swe_aci.agent.review import review_observation
from swe_aci.agent.templates import Templates, load_demonstrations, render_command_docs
from swe_aci.env.base import Exclusion
from swe_aci.models.base import Message, Model, ModelError, ModelReply, ModelStats
from swe_aci.models.tools import assistant_message
from swe_aci.trajectory.exits import (
    ESCAPING_ERRORS,
    EXIT_REASONS,
    INTERRUPTED,
    SUBMITTED,
    EpisodeExit,
    exit_for,
)
from swe_aci.trajectory.files import EpisodeFiles
from swe_aci.trajectory.progress import OnProgress, ReplyRejected, TurnStarted
from swe_aci.trajectory.recorder import EpisodeRecorder
from swe_aci.trajectory.result import EpisodeResult, StepRecord

logger = logging.getLogger(__name__)


@dataclass
class _Episode:
    """The mutable state of one run; `record` is its frame (info, steps, usage, files)."""

    problem_statement: str
    record: EpisodeRecorder
    history: list[Message] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    placeholders: dict[int, str] = field(default_factory=dict)  # of elided history messages
    executed: int = 0  # actions run (the recorded steps also hold the exit's record)

    @property
    def info(self) -> dict[str, Any]:
        return self.record.info


class Agent:
    """Runs one episode of `model` on an issue through `aci`, writing its trajectory as it goes.

    `environment` names the sandbox backend the ACI runs on (recorded in the trajectory).
    """

    def __init__(
        self,
        config: AgentConfig,
        model: Model,
        aci: ACI,
        *,
        output_dir: Path,
        instance_id: str,
        environment: str,
        on_step: Callable[[StepRecord], None] | None = None,
        on_progress: OnProgress | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.aci = aci
        self.files = EpisodeFiles(output_dir, instance_id, environment)
        self.on_step = on_step
        self.on_progress = on_progress or (lambda _event: None)
        self.docs = aci.command_docs()
        self.parser = make_parser(config.parser, self.docs, config.anthropic_text_editor)
        self.templates = Templates(config.templates)
        self.demonstrations = load_demonstrations(config.demonstrations)
        self.stats = ModelStats()

    # -- the episode -------------------------------------------------------------------------

    def run(self, problem_statement: str) -> EpisodeResult:
        """Run until submission or an exit. Once the episode has started its trajectory is left
        however it ends; the predictions when it ended by itself. An interrupt (Ctrl-C, a
        termination signal) is recorded as the exit, then re-raised."""
        record = EpisodeRecorder(self.files, self.model.name, self.stats, self.on_step)
        episode = _Episode(problem_statement, record)

        def body() -> tuple[str, str]:
            episode.state = self.aci.state()
            episode.history = self._initial_messages(problem_statement, episode.state)
            record.start(problem_statement, self._config(), episode.history)
            status, submission = self._loop(episode)
            episode.info.update(exit_status=status, submission=submission)
            return status, submission

        return record.run(
            body,
            on_interrupt=lambda name: self._interrupted(episode, name),
            steps=lambda: episode.executed,
        )

    def _loop(self, episode: _Episode) -> tuple[str, str]:
        """Steps until the episode ends; returns (exit status, submission)."""
        limits = self.config.limits
        repeats = RepeatWatch(limits.repeats)
        try:
            while True:
                episode.record.discard_usage()
                if limits.max_steps and episode.executed >= limits.max_steps:
                    raise EpisodeExit("exit_step_limit")
                if self._time_left(episode) == 0.0:
                    raise EpisodeExit("exit_time_limit")
                parsed, checked, reply = self._next_action(episode)
                submission = self._execute(episode, parsed, checked, reply, repeats)
                if submission is not None:
                    return SUBMITTED, submission
        except ESCAPING_ERRORS:
            raise
        except Exception as error:  # every other failure ends the episode, recorded
            return self._exit(episode, exit_for(error))

    def _config(self) -> dict[str, Any]:
        return {
            "agent": self.config.model_dump(mode="json"),
            "aci": self.aci.config.model_dump(mode="json"),
        }

    def _initial_messages(self, problem_statement: str, state: dict[str, Any]) -> list[Message]:
        render = self.templates.render
        system = render(
            "system",
            command_docs=render_command_docs(self.docs),
            WINDOW=self.aci.config.window,
            parser=self.parser.name,
            aci=self.aci.config,
        )
        messages: list[Message] = [
            {"role": "system", "content": system, "message_type": "system_prompt"}
        ]
        for text in self.demonstrations:
            messages.append(
                {
                    "role": "user",
                    "content": render("demonstration", demonstration=text),
                    "is_demo": True,
                    "message_type": "demonstration",
                }
            )
        instance = render(
            "instance",
            problem_statement=problem_statement,
            parser=self.parser.name,
            aci=self.aci.config,
            **state_variables(state),
        )
        messages.append({"role": "user", "content": instance, "message_type": "instance"})
        return messages

    # -- one step ----------------------------------------------------------------------------

    def _next_action(self, episode: _Episode) -> tuple[ParsedAction, CheckedAction, ModelReply]:
        """Query until a reply parses and passes the ACI's check (which cuts the action into the
        steps `_execute` runs); requery with the error.

        A requery shows the processed history plus only the latest bad reply and its error;
        neither enters the stored history.
        """
        base = process_history(episode.history, self.config.history, episode.placeholders)
        query = base
        failures = 0
        turn = episode.executed + 1
        self.on_progress(TurnStarted(turn, self.stats.tokens_sent, self.stats.tokens_received))
        while True:
            reply = self._query(episode, query)
            try:
                parsed = self.parser.parse(reply)
                checked = self.aci.check(parsed.action.strip())
            except FormatError as error:
                template, reason = "format_error", str(error)
                message = self.templates.render(template, error=reason, parser=self.parser.name)
            else:
                if not isinstance(checked, ActionProblem):
                    return parsed, checked, reply
                template = "blocked_action" if checked.kind == "blocked" else "format_error"
                message = self.templates.render(
                    template,
                    error=checked.message,
                    action=parsed.action.strip(),
                    parser=self.parser.name,
                )
                reason = checked.message
            kind = "blocked" if template == "blocked_action" else "format"
            self.on_progress(ReplyRejected(turn, kind, reason))
            failures += 1
            if failures >= self.config.limits.max_format_errors:
                raise EpisodeExit("exit_format", response=reply.content)
            query = [*base, *requery_messages(reply, message)]

    def _query(self, episode: _Episode, messages: list[Message]) -> ModelReply:
        """One model call, given the wall time left as its timeout: a slow reply ends the
        episode on its time limit, not past it."""
        episode.record.querying(messages)
        left = self._time_left(episode)
        if left == 0.0:
            raise EpisodeExit("exit_time_limit")
        started = time.monotonic()
        try:
            reply = self.model.query(messages, tools=self.parser.tools(), timeout=left)
        except ESCAPING_ERRORS:
            raise
        except ModelError:
            if self._time_left(episode) == 0.0:
                raise EpisodeExit("exit_time_limit") from None
            raise
        episode.record.replied(reply, time.monotonic() - started)
        limit = self.config.limits.per_instance_cost
        if limit and self.stats.instance_cost >= limit:
            raise EpisodeExit("exit_cost")  # the reply that crossed the limit is discarded
        return reply

    def _time_left(self, episode: _Episode) -> float | None:
        """Seconds of `wall_time` left (0.0 when it is used up); None without a wall time."""
        wall_time = self.config.limits.wall_time
        if not wall_time:
            return None
        return max(0.0, wall_time - (time.monotonic() - episode.record.started))

    def _execute(
        self,
        episode: _Episode,
        parsed: ParsedAction,
        checked: CheckedAction,
        reply: ModelReply,
        repeats: RepeatWatch,
    ) -> str | None:
        """Run the checked action, extend history and trajectory; the submission if the episode ended.
        The same step once too often ends the episode (exit_repeated) once it is recorded."""
        started = time.monotonic()
        observation = self.aci.execute(checked)
        if observation.done and self.config.review_on_submit and "review" not in episode.info:
            observation = review_observation(self.templates, self.aci, observation)
            episode.info["review"] = {"step": episode.record.steps + 1}
        execution_time = time.monotonic() - started
        episode.executed += 1
        output, submission = observation.output, None
        verdict = "ok"
        if observation.done:
            record_exclusions(episode.info, observation.excluded)
            submission = self._capped(episode, observation.submission or "")
            if observation.submission and not submission:
                output = f"Submission not taken: {episode.info['submission_note']}"
        else:
            verdict = repeats.observe(parsed.action, output)
        episode.state = self.aci.state()
        variables = state_variables(episode.state)
        if output.strip():
            content = self.templates.render("next_step", observation=output, **variables)
        else:
            content = self.templates.render("next_step_no_output", **variables)
        if verdict == "warn":
            content += self.templates.render("repeated_action", count=repeats.streak)
        action_message = assistant_message(reply) | {
            "thought": parsed.thought,
            "action": parsed.action,
            "message_type": "action",
        }
        if parsed.tool_call is not None:
            observation_message = {
                "role": "tool",
                "tool_call_id": parsed.tool_call.id,
                "content": content,
            }
        else:
            observation_message = {"role": "user", "content": content}
        observation_message["message_type"] = "observation"
        self._record(
            episode,
            parsed.thought,
            parsed.action,
            output,
            reply.content,
            [action_message, observation_message],
            execution_time=execution_time,
            rejected_edit=observation.rejected_edit,
        )
        if verdict == "stop":
            raise EpisodeExit("exit_repeated")
        return submission

    def _capped(self, episode: _Episode, submission: str) -> str:
        """The submission, or "" with a note in the info when it exceeds the size cap."""
        cap = self.config.limits.max_submission_bytes
        size = len(submission.encode("utf-8", "surrogateescape"))
        if not cap or size <= cap:
            return submission
        episode.info["submission_note"] = (
            f"the diff was {size} bytes, over agent.limits.max_submission_bytes={cap}: "
            "nothing was submitted"
        )
        return ""

    # -- the end -----------------------------------------------------------------------------

    def _exit(self, episode: _Episode, end: EpisodeExit) -> tuple[str, str]:
        """Record the exit step and autosubmit a non-empty diff: `submitted (<status>)`."""
        end.record(episode.info)
        if end.trace:
            logger.error(
                "episode %s: unexpected error\n%s", self.files.instance_id, end.trace.rstrip()
            )
        try:
            taken = self.aci.submission()
            record_exclusions(episode.info, taken.excluded)
            submission = self._capped(episode, taken.patch)
        except Exception as error:
            submission = ""
            episode.info["autosubmission_error"] = f"{type(error).__name__}: {error}"
        status = end.status
        if submission.strip():
            status = f"{SUBMITTED} ({end.status})"
        thought = f"Exit due to {EXIT_REASONS[end.status]}"
        observation = "Exited (autosubmitted)" if submission.strip() else "Exited"
        response = end.response or thought
        self._record(episode, thought, end.status, observation, response)
        return status, submission

    def _interrupted(self, episode: _Episode, name: str) -> None:
        """Record Ctrl-C or a termination signal (`name`) as the exit step (no autosubmission:
        the sandbox is about to be torn down, and taking a diff could take long)."""
        thought = f"Exit due to {name}"
        self._record(episode, thought, INTERRUPTED, "Interrupted", thought, notify=False)

    def _record(
        self,
        episode: _Episode,
        thought: str,
        action: str,
        observation: str,
        response: str,
        messages: Sequence[Message] = (),
        *,
        execution_time: float = 0.0,
        notify: bool = True,
        rejected_edit: bool = False,
    ) -> None:
        """One step of the current state, with the model calls (and query) of the step so far."""
        episode.history += messages
        episode.record.step(
            action,
            thought,
            observation,
            response=response,
            state=episode.state,
            execution_time=execution_time,
            messages=messages,
            notify=notify,
            rejected_edit=rejected_edit,
        )


def state_variables(state: dict[str, Any]) -> dict[str, str]:
    """The template variables of the three-line state suffix."""
    return {
        "open_file": str(state.get("open_file") or "n/a"),
        "working_dir": str(state.get("working_dir") or "n/a"),
    }


def requery_messages(reply: ModelReply, error: str) -> list[Message]:
    """The bad reply and the error, in a shape every API accepts.

    Tool calls must be answered by tool results, so with function calling the error is the
    result of the first call (the others are reported as not run).
    """
    bad = assistant_message(reply)
    if not reply.tool_calls:
        return [bad, {"role": "user", "content": error}]
    results = [
        {
            "role": "tool",
            "tool_call_id": call.id,
            "content": error if index == 0 else "Not run: see the error above.",
        }
        for index, call in enumerate(reply.tool_calls)
    ]
    return [bad, *results]


def record_exclusions(info: dict[str, Any], excluded: tuple[Exclusion, ...]) -> None:
    """Name in the trajectory the changed files the submission leaves out, and why."""
    if excluded:
        info["excluded_from_submission"] = [
            {"path": item.path, "reason": item.reason} for item in excluded
        ]
