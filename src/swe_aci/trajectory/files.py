"""Where one episode writes and what its trajectory's header and info blocks hold: one piece for
the agent loop and the staged episodes of `pipeline/` (the pipeline, the attempts)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_aci.models.base import ModelStats
from swe_aci.records import TRAJECTORY_SUFFIX
from swe_aci.trajectory.store import write_predictions


@dataclass(frozen=True)
class EpisodeFiles:
    """The instance's directory under the output directory, its `.traj`, and the sandbox backend
    the header names."""

    output_dir: Path
    instance_id: str
    backend: str

    @property
    def directory(self) -> Path:
        return Path(self.output_dir) / self.instance_id

    @property
    def trajectory_path(self) -> Path:
        return self.directory / f"{self.instance_id}{TRAJECTORY_SUFFIX}"

    def header(self, problem_statement: str, config: dict[str, Any]) -> dict[str, Any]:
        return {
            "environment": self.backend,
            "instance_id": self.instance_id,
            "problem_statement": problem_statement,
            "config": config,
        }

    def write_predictions(self, model_name: str, submission: str) -> None:
        write_predictions(self.directory, self.instance_id, model_name, submission)


def trajectory_info(
    info: dict[str, Any], stats: ModelStats, model_name: str, started: float
) -> dict[str, Any]:
    """The trajectory's `info` block now: the exit and submission so far, the rest of `info`,
    the usage, the model, the time since `started` (monotonic)."""
    return {
        "exit_status": None,
        "submission": None,
        **info,
        "model_stats": stats.to_dict(),
        "model_name": model_name,
        "elapsed_time": round(time.monotonic() - started, 3),
    }
