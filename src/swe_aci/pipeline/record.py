"""The trajectory of a staged episode (the pipeline, the attempts and their chooser): each stage
a step in the agent loop's `.traj` layout, its prompt and reply in the history, its data under
`pipeline`, passed to `on_step` as it ends (the progress a user sees)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swe_aci.agent.loop import StepRecord
from swe_aci.agent.trajectory import TrajectoryWriter
from swe_aci.models.base import Message, ModelReply, ModelStats


class StageRecorder:
    def __init__(
        self,
        directory: Path,
        instance_id: str,
        model_name: str,
        stats: ModelStats,
        on_step: Callable[[StepRecord], None] | None,
    ) -> None:
        self.path = directory / f"{instance_id}.traj"
        self.writer = TrajectoryWriter(self.path)
        self.model_name = model_name
        self.stats = stats
        self.on_step = on_step
        self.info: dict[str, Any] = {}
        self.started = self.last_step = time.monotonic()

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
            query=query,
        )
        self.last_step = time.monotonic()
        self.writer.append(messages, {**vars(step), "pipeline": details}, self.snapshot())
        if self.on_step is not None:
            self.on_step(step)

    def snapshot(self) -> dict[str, Any]:
        return {
            "exit_status": None,
            "submission": None,
            **self.info,
            "model_stats": self.stats.to_dict(),
            "model_name": self.model_name,
            "elapsed_time": round(time.monotonic() - self.started, 3),
        }
