"""The one protocol every way of turning an issue into a prediction implements (after SWE-agent
1.x: a composite is an agent): the agent loop, the pipeline, attempts of the loop and RAG each
are a `Strategy` whose `run` takes the `EpisodeRun` (the frame: the config, the sandbox's
workspace, the issue, where the files go, the listeners) and returns the `EpisodeResult`,
recording the episode on `EpisodeRun.recorder(...)`.

Which class runs a `strategy.type` is the registry's business (`episode.py: STRATEGIES`, names
to dotted paths), so nothing here or in a strategy imports another strategy.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from swe_aci.env.base import Environment
from swe_aci.env.config import Workspace
from swe_aci.models.base import ModelStats
from swe_aci.trajectory.files import EpisodeFiles
from swe_aci.trajectory.progress import OnProgress
from swe_aci.trajectory.recorder import EpisodeRecorder, OnStep
from swe_aci.trajectory.result import EpisodeResult


@dataclass(frozen=True)
class EpisodeRun:
    """One episode as a strategy receives it. `config` is the episode config (`episode.py`:
    sections agent, aci, model, env, github, strategy; `config.strategy` is this strategy's
    section). `run_inner` runs the strategy of another run inside this one (the registry's
    dispatch: an attempt of the agent loop), under the lock this run already holds."""

    config: Any
    workspace: Workspace
    problem_statement: str
    instance_id: str
    output_dir: Path
    run_inner: Callable[[EpisodeRun], EpisodeResult]
    on_step: OnStep | None = None
    on_progress: OnProgress | None = None
    gold_patch: str | None = None  # the task row's, for strategies that may read it (oracle RAG)

    @property
    def backend(self) -> str:
        from swe_aci.env.factory import resolve_backend

        return resolve_backend(self.workspace.config)

    @property
    def files(self) -> EpisodeFiles:
        return EpisodeFiles(self.output_dir, self.instance_id, self.backend)

    def recorder(self, model_name: str, stats: ModelStats | None = None) -> EpisodeRecorder:
        """The frame this episode is recorded on (its files, `on_step`)."""
        return EpisodeRecorder(self.files, model_name, stats, self.on_step)

    def open_environment(self) -> Environment:
        """A fresh sandbox of the workspace (the caller closes it)."""
        from swe_aci.env.factory import make_environment

        return make_environment(self.workspace)

    @contextmanager
    def sandbox(self) -> Iterator[tuple[Environment, contextlib.ExitStack]]:
        """The opened sandbox, closed at the end, and the stack the strategy adds its own cleanup
        to (closed first). The sandbox opens before any model loads, so its errors (no image, a
        bad commit) come first."""
        with contextlib.ExitStack() as cleanup:
            environment = self.open_environment()
            cleanup.callback(environment.close)
            yield environment, cleanup

    def inner(self, config: Any, *, instance_id: str, output_dir: Path) -> EpisodeResult:
        """Run `config`'s strategy as a part of this episode, in its own files."""
        run = dataclasses.replace(
            self, config=config, instance_id=instance_id, output_dir=output_dir, on_progress=None
        )
        return self.run_inner(run)


class Strategy(Protocol):
    """Turns the issue of `episode` into an `EpisodeResult`, recorded on its frame."""

    def run(self, episode: EpisodeRun) -> EpisodeResult: ...
