"""The hook of a batch's instances: `--evaluate` grading on the worker (see hooks/)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swe_aci.hooks.base import InstanceCompleted
from swe_aci.trajectory.instance import InstanceResult

if TYPE_CHECKING:
    from swe_aci.episode import EpisodeConfig
    from swe_aci.evaluate.options import GradingOptions
    from swe_aci.tasks import Task


def completed_instance(
    result: InstanceResult, output_dir: Path, task: Task | None = None
) -> InstanceCompleted[InstanceResult]:
    """The event of a batch's instance."""
    instance_id = result.instance_id
    trajectory = output_dir / instance_id / f"{instance_id}.traj"
    return InstanceCompleted(instance_id, result.model_patch, trajectory, result, task)


@dataclass
class GradeInstance:
    """`--evaluate`: the instance's patch graded in a fresh environment, the report added to its
    result (an interrupted instance is not graded). Pickled to Ray workers with the batch."""

    config: EpisodeConfig
    output_dir: Path
    options: GradingOptions

    def on_instance_completed(self, completed: InstanceCompleted[InstanceResult]) -> None:
        from swe_aci.batch.evaluation import evaluate_result

        if completed.task is None:
            return
        completed.record = evaluate_result(
            completed.task,
            completed.record,
            self.config,
            self.output_dir,
            self.options,
        )
