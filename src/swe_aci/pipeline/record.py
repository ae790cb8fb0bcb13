"""What the staged strategies (the pipeline, the attempts and their chooser) share on the episode
frame: each stage one step of the recorder (`trajectory/recorder.py`) in the agent loop's `.traj`
layout, its prompt and reply in the history, its data under `pipeline`; the header names the
strategy."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from pydantic import BaseModel

from swe_aci.models.base import ModelStats
from swe_aci.trajectory.files import EpisodeFiles
from swe_aci.trajectory.recorder import EpisodeRecorder, OnStep
from swe_aci.trajectory.result import EpisodeResult

__all__ = ["OnStep", "StagedEpisode", "record_skipped"]


class StagedEpisode(ABC):
    """A subclass runs its stages in `_stages`, records each with `self.record.step(...)` and ends
    them with `_end`."""

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
        self.record = EpisodeRecorder(files, model_name, stats, on_step)
        self.info = self.record.info
        self.strategy = strategy

    def run(self, problem_statement: str) -> EpisodeResult:
        self.problem = problem_statement
        self.record.start(problem_statement, {"strategy": self.strategy.model_dump(mode="json")})
        return self.record.run(self._stages)

    @abstractmethod
    def _stages(self) -> tuple[str, str]:
        """The stages; (exit status, submission)."""

    def _end(
        self, status: str, summary: str, submission: str, details: dict[str, Any] | None = None
    ) -> tuple[str, str]:
        self.info.update(exit_status=status, submission=submission)
        self.record.step("choose", summary, f"{self.label}: {summary}", details or {})
        return status, submission


def record_skipped(record: EpisodeRecorder, action: str, why: str) -> None:
    """A stage that did not run, as a step saying why."""
    record.step(action, "stage skipped", f"skipped: {why}", {"skipped": why})
