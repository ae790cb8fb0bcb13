"""One instance of a batch: its environment, one episode, and how it ended. Runs in a worker
thread or in a Ray worker process; never raises for a problem of this instance alone."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from swe_aci.batch.outputs import ENVIRONMENT_ERROR, EXCEPTION_ERROR
from swe_aci.env.base import SandboxError
from swe_aci.episode import EpisodeConfig, run_episode
from swe_aci.tasks import Task
from swe_aci.trajectory.exits import EXIT_REASONS
from swe_aci.trajectory.instance import InstanceResult
from swe_aci.trajectory.result import StepRecord

logger = logging.getLogger("swe_aci.batch")


class StopRequested(BaseException):
    """Raised after a step when the batch is stopping: the episode saves its trajectory and the
    sandbox is torn down, but the instance is not recorded as finished."""


class FatalBatchError(Exception):
    """A problem no instance can get past (a rejected API key, a bad model config)."""


def run_instance(
    task: Task,
    config: EpisodeConfig,
    output_dir: Path,
    *,
    cache_dir: Path | None = None,
    on_step: Callable[[str, int, str], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> InstanceResult:
    """Build or find the task's workspace, run one episode in it, return how it ended."""
    from swe_aci.models.base import ModelAuthError, ModelConfigError
    from swe_aci.recipes import RecipeError, task_workspace

    started = time.monotonic()
    instance_id = task.instance_id

    def ended(status: str | None, error: str | None = None) -> InstanceResult:
        return InstanceResult(
            instance_id,
            status,
            model_name=config.model.name,
            elapsed=round(time.monotonic() - started, 3),
            error=error,
        )

    try:
        workspace = task_workspace(
            task,
            config.env,
            cache_dir=cache_dir,
            log=lambda line: logger.info("%s: %s", instance_id, line),
        )
    except RecipeError as error:
        return ended(ENVIRONMENT_ERROR, str(error))
    if should_stop():
        return ended(None, "interrupted")
    steps = failed_edits = 0

    def step_done(step: StepRecord) -> None:
        nonlocal steps, failed_edits
        if step.action.strip() not in EXIT_REASONS:  # the record of the exit is no step
            steps += 1
        failed_edits += step.rejected_edit
        if on_step is not None:
            on_step(instance_id, steps, step.action)
        if should_stop():
            raise StopRequested

    try:
        result = run_episode(
            config,
            workspace,
            task.problem_statement,
            instance_id=instance_id,
            output_dir=output_dir,
            on_step=step_done,
            gold_patch=task.patch,
        )
    except StopRequested:
        return ended(None, "interrupted")
    except (ModelAuthError, ModelConfigError) as error:
        raise FatalBatchError(str(error)) from None
    except SandboxError as error:
        return ended(ENVIRONMENT_ERROR, str(error))
    except Exception as error:
        logger.exception("%s: unexpected error", instance_id)
        return ended(EXCEPTION_ERROR, f"{type(error).__name__}: {error}")
    return InstanceResult(
        instance_id,
        result.exit_status,
        model_patch=result.submission,
        model_name=config.model.name,
        cost=result.stats.instance_cost,
        api_calls=result.stats.api_calls,
        steps=result.steps,
        elapsed=round(time.monotonic() - started, 3),
        tokens_sent=result.stats.tokens_sent,
        tokens_received=result.stats.tokens_received,
        failed_edits=failed_edits,
    )
