"""One episode end to end: its config, sandbox, interface, model, agent loop. Shared by `run`,
`replay` and the commands that run many episodes."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from swe_aci.aci import ACIConfig
from swe_aci.agent.config import AgentConfig
from swe_aci.agent.loop import Agent
from swe_aci.agent.templates import load_demonstrations
from swe_aci.configuration import ConfigError, load_validated, resolve_config_path
from swe_aci.env.base import Environment
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.repo import repo_name
from swe_aci.github.config import GitHubConfig
from swe_aci.models.config import LocalConfig, ModelConfig
from swe_aci.pipeline.config import AgentStrategy, Strategy
from swe_aci.records import check_instance_id, instance_id_from
from swe_aci.trajectory.files import EpisodeFiles
from swe_aci.trajectory.progress import OnProgress
from swe_aci.trajectory.result import EpisodeResult, StepRecord
from swe_aci.trajectory.store import TrajectoryError

TEXT_EDITOR_COMMANDS = ("view", "create_file", "str_replace", "insert")


class InstanceBusy(Exception):
    """Another run holds the instance's output directory (one line for the user)."""


class EpisodeConfig(BaseModel):
    """Everything one episode needs besides the repository and the issue."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field("", description="one line shown by swe-aci configs")
    agent: AgentConfig
    aci: ACIConfig = Field(default_factory=ACIConfig)
    model: ModelConfig = Field(default_factory=dict, validate_default=True)
    env: EnvConfig = Field(default_factory=EnvConfig)
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    strategy: Strategy = Field(
        default_factory=AgentStrategy, description="the agent loop, the pipeline, or attempts"
    )

    @model_validator(mode="after")
    def _local_model_speaks_text(self) -> EpisodeConfig:
        """llama.cpp's tool calls through the chat template never parsed one call of the local
        models (exit_format after 3 turns): refused before any model loads."""
        local = isinstance(self.model, LocalConfig)
        loop = self.strategy.type in ("agent", "attempts")
        if local and loop and self.agent.parser == "tool_calls":
            raise ValueError(
                "agent.parser=tool_calls does not work with the local model: use "
                "agent.parser=thought_action (the default)"
            )
        return self

    @model_validator(mode="after")
    def _text_editor_fits(self) -> EpisodeConfig:
        """Anthropic's text editor tool needs an Anthropic model and the str_replace set."""
        tool_type = self.agent.anthropic_text_editor
        if tool_type is None:
            return self
        if not self.model.name.startswith("anthropic/"):
            raise ValueError(
                f"agent.anthropic_text_editor: {tool_type} is Anthropic's tool; "
                f"model {self.model.name!r} is not an anthropic/ model"
            )
        missing = [c for c in TEXT_EDITOR_COMMANDS if c not in self.aci.commands]
        if missing:
            raise ValueError(
                "agent.anthropic_text_editor: aci.commands lacks the str_replace set's "
                f"{', '.join(missing)}"
            )
        return self


def load_config(path: str | Path | None = None, overrides: Sequence[str] = ()) -> EpisodeConfig:
    """Read a YAML config (a path or a built-in name), apply `key.path=value` overrides (values
    parsed as YAML), validate.

    Demonstration paths in the file are relative to the file's directory; paths given in an
    override are relative to the current directory. Raises ConfigError (one line).
    """
    config_path = resolve_config_path(path)
    config = load_validated(EpisodeConfig, config_path, overrides)
    try:
        load_demonstrations(config.agent.demonstrations)
    except TrajectoryError as error:
        raise ConfigError(f"config {config_path}: agent.demonstrations: {error}") from None
    return config


def instance_id_for(source: str, problem_statement: str) -> str:
    """A readable, stable id: the repository name plus a short hash of the issue text."""
    digest = hashlib.sha1(problem_statement.encode()).hexdigest()[:8]
    return f"{instance_id_from(repo_name(source), 'repo')}-{digest}"


@contextmanager
def instance_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on an instance's output directory for the whole episode, so two
    runs never write the same files; a second run fails at once with one line.

    Directories the lock had to create are removed again if the run left them empty (it failed
    before writing anything).
    """
    absolute = Path(os.path.abspath(directory))
    created = [path for path in (absolute, *absolute.parents) if not path.exists()]
    directory.mkdir(parents=True, exist_ok=True)
    handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InstanceBusy(
                f"another run is writing {directory}: wait for it to end, or choose another "
                "--output-dir or --instance-id"
            ) from None
        if not same_directory(handle, directory):  # removed by the run that held it before
            raise InstanceBusy(f"{directory} was removed while this run started; run it again")
        yield
    finally:
        for path in created:  # deepest first; only while still empty
            with contextlib.suppress(OSError):
                path.rmdir()
        os.close(handle)


def same_directory(handle: int, directory: Path) -> bool:
    try:
        current = os.stat(directory)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle)
    return (opened.st_dev, opened.st_ino) == (current.st_dev, current.st_ino)


def run_episode(
    config: EpisodeConfig,
    workspace: Workspace,
    problem_statement: str,
    *,
    instance_id: str,
    output_dir: Path,
    on_step: Callable[[StepRecord], None] | None = None,
    on_progress: OnProgress | None = None,
) -> EpisodeResult:
    """Open the workspace's sandbox, run the agent on the issue, and tear the sandbox down however
    the episode ends (errors, Ctrl-C, SIGTERM and SIGHUP included; SIGKILL cannot be handled).

    The sandbox comes from `workspace` alone: `Workspace(config.env, repo, commit)` for a
    repository, `recipes.task_workspace(task, config.env)` for a task row.

    The instance's output directory is locked for the whole episode (InstanceBusy if another
    run holds it); the episode's files replace those of any earlier run of the same instance.
    """
    check_instance_id(instance_id)
    check_requirements(config)
    run = _Run(config, workspace, problem_statement, instance_id, output_dir, on_step, on_progress)
    with instance_lock(output_dir / instance_id):
        return RUNNERS[config.strategy.type](run)


def missing_requirements(config: EpisodeConfig) -> str | None:
    """One line naming the packages the model or the strategy needs that are not installed."""
    from swe_aci.pipeline.requirements import missing_packages

    return missing_packages(config.model, config.strategy)


def check_requirements(config: EpisodeConfig) -> None:
    """ModelConfigError (one line; a batch stops on it once) when a package the model or the
    strategy needs is not installed, before any sandbox opens or model loads."""
    from swe_aci.models.base import ModelConfigError

    if problem := missing_requirements(config):
        raise ModelConfigError(problem)


@dataclass(frozen=True)
class _Run:
    """One call of `run_episode`, handed to the runner of its strategy."""

    config: EpisodeConfig
    workspace: Workspace
    problem_statement: str
    instance_id: str
    output_dir: Path
    on_step: Callable[[StepRecord], None] | None
    on_progress: OnProgress | None

    @property
    def backend(self) -> str:
        from swe_aci.env.factory import resolve_backend

        return resolve_backend(self.workspace.config)

    @property
    def files(self) -> EpisodeFiles:
        return EpisodeFiles(self.output_dir, self.instance_id, self.backend)

    @contextmanager
    def sandbox(self) -> Iterator[tuple[Environment, contextlib.ExitStack]]:
        """The opened sandbox, closed at the end, and the stack the runner adds its own cleanup
        to (closed first). The sandbox opens before any model loads, so its errors (no image, a
        bad commit) come first."""
        from swe_aci.env.factory import make_environment

        with contextlib.ExitStack() as cleanup:
            environment = make_environment(self.workspace)
            cleanup.callback(environment.close)
            yield environment, cleanup


def _run_agent(run: _Run) -> EpisodeResult:
    """The agent loop: the model of `model:` drives the ACI turn by turn."""
    from swe_aci.aci import ACI
    from swe_aci.agent.parsing import reply_format
    from swe_aci.models.factory import make_model

    config = run.config
    with run.sandbox() as (environment, cleanup):
        model = make_model(config.model, reply_format(config.agent.parser))
        if close_model := getattr(model, "close", None):
            cleanup.callback(close_model)
        agent = Agent(
            config.agent,
            model,
            ACI(environment, config.aci),
            output_dir=run.output_dir,
            instance_id=run.instance_id,
            environment=run.backend,
            on_step=run.on_step,
            on_progress=run.on_progress,
        )
        return agent.run(run.problem_statement)


def _run_pipeline(run: _Run) -> EpisodeResult:
    """The pipeline: the models of every sampling setting (the first loaded before any stage);
    the ACI's lint guardrail on every edit."""
    from swe_aci.aci.lint import Linter
    from swe_aci.pipeline.models import ModelPool
    from swe_aci.pipeline.run import Pipeline

    config = run.config
    with run.sandbox() as (environment, cleanup):
        models = ModelPool(config.model)
        cleanup.callback(models.close)
        models.get(0.0)
        pipeline = Pipeline(
            config.strategy,
            models,
            environment,
            Linter(config.aci.lint_select) if config.aci.lint else None,
            run.files,
            run.on_step,
        )
        return pipeline.run(run.problem_statement)


def _run_attempts(run: _Run) -> EpisodeResult:
    """Several attempts of the agent loop and a chooser: each attempt a whole agent-loop episode
    (its own sandbox and files under `<id>/attempts/`); the chooser opens one more sandbox."""
    from swe_aci.env.factory import make_environment
    from swe_aci.pipeline.attempts import Attempts
    from swe_aci.pipeline.models import variant

    config = run.config
    attempts_dir = run.output_dir / run.instance_id / "attempts"

    def run_attempt(number: int, temperature: float, wall_time: float) -> EpisodeResult:
        limits = config.agent.limits.model_copy(update={"wall_time": wall_time})
        attempt = config.model_copy(
            update={
                "strategy": AgentStrategy(),
                "model": variant(config.model, temperature, seed_offset=number),
                "agent": config.agent.model_copy(update={"limits": limits}),
            }
        )
        return run_episode(
            attempt,
            run.workspace,
            run.problem_statement,
            instance_id=f"{run.instance_id}.attempt{number}",
            output_dir=attempts_dir,
            on_step=run.on_step,
        )

    attempts = Attempts(
        config.strategy,
        run_attempt,
        lambda: make_environment(run.workspace),
        run.files,
        config.model.name,
        run.on_step,
    )
    return attempts.run(run.problem_statement)


# The runner of each `strategy.type`, called under the instance's lock; `run.config.strategy`
# is that type's section.
RUNNERS: dict[str, Callable[[_Run], EpisodeResult]] = {
    "agent": _run_agent,
    "pipeline": _run_pipeline,
    "attempts": _run_attempts,
}
