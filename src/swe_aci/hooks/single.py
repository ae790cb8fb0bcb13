"""One instance outside a batch, as `swe-aci run` and `replay` run it: the episode with its steps
shown as they happen, then its hooks (the outcome shown first, then `--apply`, `--open-pr`), the
same `InstanceCompleted` event a batch's instances end with."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swe_aci.hooks.base import HookError, InstanceCompleted, RunHook, notify

if TYPE_CHECKING:
    from swe_aci.env.config import Workspace
    from swe_aci.episode import EpisodeConfig
    from swe_aci.trajectory.outcome import Outcome
    from swe_aci.trajectory.result import EpisodeResult


class EpisodeFailed(HookError):
    """The episode ended on an unexpected error (its traceback is in the trajectory)."""


@dataclass
class ShowOutcome:
    """The outputs, the cost and the plain outcome; an unexpected error stops the hooks after
    it (nothing is applied or pushed from a broken episode)."""

    outcome: Outcome | None = None

    def on_instance_completed(self, completed: InstanceCompleted[EpisodeResult]) -> None:
        from swe_aci.episode_display import print_result

        episode = completed.record
        self.outcome = print_result(episode)
        if episode.error_trace is not None:
            raise EpisodeFailed(
                f"the episode ended on an unexpected error ({episode.error}); its traceback is "
                f"in {episode.trajectory_path}"
            )


@dataclass
class SingleRun:
    result: EpisodeResult
    outcome: Outcome


def run_single(
    config: EpisodeConfig,
    workspace: Workspace,
    problem: str,
    *,
    instance_id: str,
    output_dir: Path,
    hooks: Iterable[RunHook[EpisodeResult]] = (),
) -> SingleRun:
    """Run the episode, then show its outcome and call `hooks`. Raises EpisodeFailed, or the
    HookError of a hook that failed."""
    from swe_aci.episode import run_episode
    from swe_aci.episode_display import EpisodeDisplay

    display = EpisodeDisplay()
    result = run_episode(
        config,
        workspace,
        problem,
        instance_id=instance_id,
        output_dir=output_dir,
        on_step=display.step,
        on_progress=display.progress,
    )
    shown = ShowOutcome()
    instance = InstanceCompleted(instance_id, result.submission, result.trajectory_path, result)
    notify([shown, *hooks], instance)
    assert shown.outcome is not None
    return SingleRun(result, shown.outcome)
