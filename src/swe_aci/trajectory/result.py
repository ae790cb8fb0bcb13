"""What an episode produced, whatever strategy ran it: its steps and its result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_aci.models.base import Message, ModelStats


@dataclass
class StepRecord:
    """One executed action (or the final exit), as stored in the trajectory."""

    thought: str
    action: str
    observation: str
    response: str
    state: dict[str, Any]
    execution_time: float
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    query: list[Message]
    model_latency: float = 0.0  # seconds spent in model calls for this step, requeries included
    cost: float = 0.0  # of this step's model calls
    # the ACI's lint guardrail refused an edit of this action (`Observation.rejected_edit`); a step
    # stored before this was recorded has no such key (read back by `analysis.stats`)
    rejected_edit: bool = False


@dataclass
class EpisodeResult:
    exit_status: str
    submission: str
    stats: ModelStats
    trajectory_path: Path
    error: str | None = None
    error_trace: str | None = None  # set when the episode ended on an unexpected error
    steps: int = 0  # actions executed (the record of the exit is not one)

    @classmethod
    def from_info(
        cls,
        exit_status: str,
        submission: str,
        stats: ModelStats,
        trajectory_path: Path,
        info: dict[str, Any],
        steps: int = 0,
    ) -> EpisodeResult:
        """The result of an episode whose trajectory's info holds its error, if any."""
        return cls(
            exit_status,
            submission,
            stats,
            trajectory_path,
            error=info.get("error"),
            error_trace=info.get("traceback"),
            steps=steps,
        )
