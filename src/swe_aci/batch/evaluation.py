"""`swe-aci batch --evaluate`: each instance's patch graded right after its episode, in a fresh
environment (on the worker that ran it, so grading overlaps the other episodes), and the run's
report from every finished instance's prediction.

The outputs are those of `swe-aci evaluate --output-dir OUT/evaluation`: the same per-instance
directories and `report.json`, so either command can finish what the other started.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

from swe_aci.batch.outputs import BatchOutputs
from swe_aci.env.config import EnvConfig
from swe_aci.episode import EpisodeConfig
from swe_aci.evaluate import InstanceReport, evaluate_instance
from swe_aci.evaluate.options import GradingOptions
from swe_aci.evaluate.run_grading import RunGrading, grade_run
from swe_aci.records import EVALUATION_DIR
from swe_aci.tasks import Task
from swe_aci.trajectory.instance import InstanceResult


def evaluate_result(
    task: Task,
    result: InstanceResult,
    config: EpisodeConfig,
    output_dir: Path,
    options: GradingOptions,
) -> InstanceResult:
    """The result with the report of grading its patch (an interrupted instance is not graded)."""
    if result.exit_status is None:
        return result
    report = evaluate_instance(
        task,
        result.model_patch,
        config.env,
        output_dir / EVALUATION_DIR,
        options,
        model_name=config.model.name,
    )
    return dataclasses.replace(result, evaluation=report.outcome, report=report)


def evaluate_outputs(
    tasks: Iterable[Task],
    outputs: BatchOutputs,
    env_config: EnvConfig,
    directory: Path,
    options: GradingOptions,
    *,
    on_done: Callable[[InstanceReport, bool], None] | None = None,
) -> RunGrading:
    """Grade the predictions of the finished instances and write the run's `report.json` in
    `directory` (`grade_run`).

    The reports this session's workers made (carried back in their results) are taken as they
    are; an instance finished by an earlier run has its saved report reused when it was made from
    the same patch, and is graded otherwise."""
    tasks = list(tasks)
    chosen = {
        task.instance_id: outputs.predictions[task.instance_id]
        for task in tasks
        if task.instance_id in outputs.results and task.instance_id in outputs.predictions
    }
    graded = {
        instance_id: report
        for instance_id in chosen
        if (report := outputs.results[instance_id].report) is not None
    }
    return grade_run(tasks, chosen, env_config, directory, options, on_done=on_done, graded=graded)
