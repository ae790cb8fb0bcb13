"""The frame of a staged episode (the pipeline, the attempts and their chooser) and its
trajectory: each stage a step in the agent loop's `.traj` layout, its prompt and reply in the
history, its data under `pipeline`, passed to `on_step` as it ends (the progress a user sees)."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from swe_aci.models.base import Message, ModelReply, ModelStats
from swe_aci.trajectory.exits import INTERRUPTED, signal_name
from swe_aci.trajectory.files import EpisodeFiles, trajectory_info
from swe_aci.trajectory.result import EpisodeResult, StepRecord
from swe_aci.trajectory.store import TrajectoryWriter

OnStep = Callable[[StepRecord], None]


class StageRecorder:
    def __init__(
        self, path: Path, model_name: str, stats: ModelStats, on_step: OnStep | None
    ) -> None:
        self.path = path
        self.writer = TrajectoryWriter(path)
        self.model_name = model_name
        self.stats = stats
        self.on_step = on_step
        self.info: dict[str, Any] = {}
        self.started = self.last_step = time.monotonic()
        self.model_latency = 0.0  # seconds in model calls since the last step
        self.steps = 0  # stages recorded: the episode's steps

    def start(self, header: dict[str, Any]) -> None:
        self.writer.start(header, [], self.snapshot())

    def finish(self) -> None:
        self.writer.finish(self.snapshot())

    def step(
        self,
        action: str,
        thought: str,
        observation: str,
        details: dict[str, Any],
        reply: ModelReply | None = None,
        prompt: str | None = None,
    ) -> None:
        messages: list[Message] = []
        query: list[Message] = []
        if reply is not None and prompt is not None:
            query = [{"role": "user", "content": prompt}]
            messages = [query[0], {"role": "assistant", "content": reply.content}]
        step = StepRecord(
            thought=thought,
            action=action,
            observation=observation,
            response=reply.content if reply is not None else "",
            state={"stage": action.split()[0]},
            execution_time=round(time.monotonic() - self.last_step, 3),
            input_tokens=reply.input_tokens if reply else 0,
            output_tokens=reply.output_tokens if reply else 0,
            cached_tokens=reply.cached_tokens if reply else 0,
            model_latency=round(self.model_latency, 3),
            query=query,
        )
        self.last_step = time.monotonic()
        self.model_latency = 0.0
        self.steps += 1
        self.writer.append(messages, {**vars(step), "pipeline": details}, self.snapshot())
        if self.on_step is not None:
            self.on_step(step)

    def snapshot(self) -> dict[str, Any]:
        return trajectory_info(self.info, self.stats, self.model_name, self.started)


class StagedEpisode(ABC):
    """What the pipeline and the attempts share: the instance's files, the trajectory (its
    header names the strategy), an interrupt recorded as the exit, the predictions and the
    result. A subclass runs its stages in `_stages` and ends them with `_end`."""

    label = ""  # the choice step's observation starts with it
    strategy: BaseModel  # the `strategy:` section the header records

    def __init__(
        self,
        strategy: BaseModel,
        files: EpisodeFiles,
        model_name: str,
        stats: ModelStats,
        on_step: OnStep | None,
    ) -> None:
        self.files = files
        self.model_name = model_name
        self.stats = stats
        self.record = StageRecorder(self.files.trajectory_path, model_name, stats, on_step)
        self.info = self.record.info
        self.strategy = strategy

    def run(self, problem_statement: str) -> EpisodeResult:
        self.problem = problem_statement
        config = {"strategy": self.strategy.model_dump(mode="json")}
        self.record.start(self.files.header(problem_statement, config))
        status, submission = "exit_error", ""
        try:
            status, submission = self._stages()
        except KeyboardInterrupt as interrupt:
            self.info.update(exit_status=INTERRUPTED, exit_signal=signal_name(interrupt))
            raise
        finally:
            self.record.finish()
        self.files.write_predictions(self.model_name, submission)
        return EpisodeResult.from_info(
            status,
            submission,
            self.stats,
            self.files.trajectory_path,
            self.info,
            steps=self.record.steps,
        )

    @abstractmethod
    def _stages(self) -> tuple[str, str]:
        """The stages; (exit status, submission)."""

    def _end(
        self, status: str, summary: str, submission: str, details: dict[str, Any] | None = None
    ) -> tuple[str, str]:
        self.info.update(exit_status=status, submission=submission)
        self.record.step("choose", summary, f"{self.label}: {summary}", details or {})
        return status, submission
