"""The one frame every strategy records an episode on: the journal started with the header, one
`StepRecord` per step (appended to the journal, then passed to `on_step`), the model calls of the
step so far, an interrupt recorded as the exit, the `.traj` compacted at the end, the predictions
(`.patch`, `.pred`) and the `EpisodeResult`.

A strategy runs its body inside `recorder.run(body)`; the body starts the journal when it has the
episode's first messages, records its steps with `recorder.step(...)`, and returns
(exit status, submission).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from swe_aci.models.base import Message, ModelReply, ModelStats
from swe_aci.trajectory.exits import INTERRUPTED, signal_name
from swe_aci.trajectory.files import EpisodeFiles, trajectory_info
from swe_aci.trajectory.result import EpisodeResult, StepRecord
from swe_aci.trajectory.store import TrajectoryWriter

OnStep = Callable[[StepRecord], None]


@dataclass
class StepUsage:
    """The model calls of the step being recorded, requeries included, and the last query sent."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    model_latency: float = 0.0
    cost: float = 0.0
    query: list[Message] = field(default_factory=list)


class EpisodeRecorder:
    """Records one episode into the instance's files (`files`), whichever strategy runs it.

    `info` is the trajectory's info block as the strategy fills it (exit status, submission, the
    error, what the strategy adds); `stats` the usage of the whole episode.
    """

    def __init__(
        self,
        files: EpisodeFiles,
        model_name: str,
        stats: ModelStats | None = None,
        on_step: OnStep | None = None,
    ) -> None:
        self.files = files
        self.model_name = model_name
        self.stats = stats if stats is not None else ModelStats()
        self.on_step = on_step
        self.writer = TrajectoryWriter(files.trajectory_path)
        self.info: dict[str, Any] = {}
        self.started = self.last_step = time.monotonic()
        self.usage = StepUsage()
        self.steps = 0  # steps recorded

    @property
    def is_open(self) -> bool:
        return self.writer.is_open

    # -- the frame ---------------------------------------------------------------------------

    def run(
        self,
        body: Callable[[], tuple[str, str]],
        *,
        on_interrupt: Callable[[str], None] | None = None,
        steps: Callable[[], int] | None = None,
    ) -> EpisodeResult:
        """Run the strategy's body; leave the trajectory however it ends, the predictions and the
        result when it ended by itself. An interrupt (Ctrl-C, a termination signal) is recorded
        as the exit (`on_interrupt` gets the signal's name, e.g. to record a step), then
        re-raised. `steps`: the count the result reports (default: the steps recorded)."""
        status, submission = "exit_error", ""
        try:
            status, submission = body()
        except KeyboardInterrupt as interrupt:
            name = signal_name(interrupt)
            self.info.update(exit_status=INTERRUPTED, exit_signal=name)
            if on_interrupt is not None and self.is_open:
                on_interrupt(name)
            raise
        finally:
            self.finish()
        self.files.write_predictions(self.model_name, submission)
        return EpisodeResult.from_info(
            status,
            submission,
            self.stats,
            self.files.trajectory_path,
            self.info,
            steps=self.steps if steps is None else steps(),
        )

    def start(
        self, problem_statement: str, config: dict[str, Any], messages: Sequence[Message] = ()
    ) -> None:
        """Open the journal (removing an earlier run's files) with the header and first messages."""
        header = self.files.header(problem_statement, config)
        self.writer.start(header, list(messages), self.snapshot())

    def finish(self) -> None:
        self.writer.finish(self.snapshot())

    def snapshot(self) -> dict[str, Any]:
        """The trajectory's info block now."""
        return trajectory_info(self.info, self.stats, self.model_name, self.started)

    # -- model calls -------------------------------------------------------------------------

    def querying(self, messages: list[Message]) -> None:
        """The step's query is `messages` (recorded even if the call then fails)."""
        self.usage.query = messages

    def replied(self, reply: ModelReply, latency: float | None = None) -> None:
        """A model reply of this step: the episode's usage and the step's tokens, cost and (when
        given) the call's seconds."""
        cost_before = self.stats.instance_cost
        self.stats.add(reply)
        if latency is not None:
            self.usage.model_latency += latency
        self.usage.cost += self.stats.instance_cost - cost_before
        self.usage.input_tokens += reply.input_tokens
        self.usage.output_tokens += reply.output_tokens
        self.usage.cached_tokens += reply.cached_tokens

    def waited(self, seconds: float) -> None:
        """Seconds spent in a model call of this step (a failed one included)."""
        self.usage.model_latency += seconds

    def discard_usage(self) -> None:
        """Forget the model calls since the last step (a new step begins)."""
        self.usage = StepUsage()

    # -- steps -------------------------------------------------------------------------------

    def step(
        self,
        action: str,
        thought: str,
        observation: str,
        details: dict[str, Any] | None = None,
        reply: ModelReply | None = None,
        prompt: str | None = None,
        *,
        response: str | None = None,
        state: dict[str, Any] | None = None,
        execution_time: float | None = None,
        messages: Sequence[Message] = (),
        notify: bool = True,
        rejected_edit: bool = False,
    ) -> StepRecord:
        """Record one step with the model calls since the last one, append it to the journal
        with the `messages` it adds to the history, then pass it to `on_step` (unless `notify`
        is false).

        A stage of a staged strategy gives its data as `details` (stored under the step's
        `pipeline`) and, when it asked the model, the `prompt` and `reply` (both go into the
        history, the prompt is the step's query); its state is then the stage's name.
        `execution_time` defaults to the seconds since the last step.
        """
        if reply is not None and prompt is not None:
            self.usage.query = [{"role": "user", "content": prompt}]
            messages = [self.usage.query[0], {"role": "assistant", "content": reply.content}]
        if response is None:
            response = reply.content if reply is not None else ""
        now = time.monotonic()
        if execution_time is None:
            execution_time = now - self.last_step
        usage = self.usage
        record = StepRecord(
            thought=thought,
            action=action,
            observation=observation,
            response=response,
            state=dict(state) if state is not None else {"stage": action.split()[0]},
            execution_time=round(execution_time, 3),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            query=usage.query,
            model_latency=round(usage.model_latency, 3),
            cost=round(usage.cost, 6),
            rejected_edit=rejected_edit,
        )
        self.last_step = now
        self.usage = StepUsage()
        self.steps += 1
        stored = dict(vars(record))
        if details is not None:
            stored["pipeline"] = details
        self.writer.append(list(messages), stored, self.snapshot())
        if notify and self.on_step is not None:
            self.on_step(record)
        return record
