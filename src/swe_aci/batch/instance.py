"""One instance of a batch: its environment, one episode, and how it ended. Runs in a worker
thread or in a Ray worker process; never raises for a problem of this instance alone."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from swe_aci.agent.loop import EpisodeResult, StepRecord
from swe_aci.batch.outputs import ENVIRONMENT_ERROR, EXCEPTION_ERROR, InstanceResult
from swe_aci.env.base import SandboxError
from swe_aci.episode import EpisodeConfig
from swe_aci.tasks import Task

if TYPE_CHECKING:
    from swe_aci.recipes import TaskEnvironment

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
    """Build or find the task's environment, run one episode, return how it ended."""
    from swe_aci.models.base import ModelAuthError, ModelConfigError
    from swe_aci.recipes import RecipeError, task_environment

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
        environment = task_environment(
            task,
            config.env,
            cache_dir=cache_dir,
            log=lambda line: logger.info("%s: %s", instance_id, line),
        )
    except RecipeError as error:
        return ended(ENVIRONMENT_ERROR, str(error))
    if should_stop():
        return ended(None, "interrupted")
    steps = 0

    def step_done(step: StepRecord) -> None:
        nonlocal steps
        steps += 1
        if on_step is not None:
            on_step(instance_id, steps, step.action)
        if should_stop():
            raise StopRequested

    try:
        result = run_task_episode(task, environment, config, output_dir, on_step=step_done)
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
        steps=steps,
        elapsed=round(time.monotonic() - started, 3),
    )


def run_task_episode(
    task: Task,
    environment: TaskEnvironment,
    config: EpisodeConfig,
    output_dir: Path,
    *,
    on_step: Callable[[StepRecord], None] | None = None,
) -> EpisodeResult:
    """One episode on the task's issue, in the environment its recipe or image gives."""
    from swe_aci.episode import RepoSource, run_episode

    return run_episode(
        config.model_copy(update={"env": environment.config}),
        RepoSource(environment.source, environment.commit),  # type: ignore[arg-type]
        task.problem_statement,
        instance_id=task.instance_id,
        output_dir=output_dir,
        on_step=on_step,
    )
