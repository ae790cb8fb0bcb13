"""One episode end to end: its config, the registry of strategies (`strategy.type` -> the class
that runs it), the instance's lock, and `run_episode`. Shared by `run`, `replay` and the commands
that run many episodes."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from swe_aci.aci.config import ACIConfig
from swe_aci.agent.config import AgentConfig
from swe_aci.agent.templates import load_demonstrations
from swe_aci.configuration import ConfigError, load_validated, resolve_config_path
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.repo import repo_name
from swe_aci.github.config import GitHubConfig
from swe_aci.models.config import LocalConfig, ModelConfig
from swe_aci.pipeline.config import AgentStrategy, AttemptsStrategy, PipelineStrategy
from swe_aci.rag.config import RagStrategy
from swe_aci.records import OutputLock, check_instance_id, instance_id_from
from swe_aci.strategy import EpisodeRun, Strategy
from swe_aci.trajectory.progress import OnProgress
from swe_aci.trajectory.result import EpisodeResult, StepRecord
from swe_aci.trajectory.store import TrajectoryError

TEXT_EDITOR_COMMANDS = ("view", "create_file", "str_replace", "insert")

# The class that runs each `strategy.type` (a `Strategy`), by dotted path: adding a strategy is
# one line here and one in `StrategyConfig`, and no strategy imports another.
STRATEGIES: dict[str, str] = {
    "agent": "swe_aci.agent.strategy.AgentLoop",
    "pipeline": "swe_aci.pipeline.strategy.PipelineStages",
    "attempts": "swe_aci.pipeline.strategy.AttemptsOfTheLoop",
    "rag": "swe_aci.rag.strategy.RetrievalBaseline",
}


def _strategy_type(section: Any) -> Any:
    if isinstance(section, dict):
        return section.get("type", "agent")
    return getattr(section, "type", None)


StrategyConfig = Annotated[
    Annotated[AgentStrategy, Tag("agent")]
    | Annotated[PipelineStrategy, Tag("pipeline")]
    | Annotated[AttemptsStrategy, Tag("attempts")]
    | Annotated[RagStrategy, Tag("rag")],
    Discriminator(
        _strategy_type,
        custom_error_type="invalid_strategy",
        custom_error_message="strategy.type must be agent, pipeline, attempts or rag",
    ),
]
"""The `strategy:` section, a discriminated union on `type` (a config names one strategy and
only that strategy's keys): `{type: agent}` (the default), `{type: pipeline, ...}`,
`{type: attempts, ...}` or `{type: rag, ...}`."""


class EpisodeConfig(BaseModel):
    """Everything one episode needs besides the repository and the issue."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field("", description="one line shown by swe-aci configs")
    agent: AgentConfig
    aci: ACIConfig = Field(default_factory=ACIConfig)
    model: ModelConfig = Field(default_factory=dict, validate_default=True)
    env: EnvConfig = Field(default_factory=EnvConfig)
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    strategy: StrategyConfig = Field(
        default_factory=AgentStrategy,
        description="the agent loop, the pipeline, attempts of the loop, or RAG",
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


def load_config(
    path: str | Path | None = None,
    overrides: Sequence[str] = (),
    values: Mapping[str, Any] | None = None,
) -> EpisodeConfig:
    """Read a YAML config (a path or a built-in name), apply `key.path=value` overrides (values
    parsed as YAML), then `values` (dotted key -> typed value, as they are), validate.

    Demonstration paths in the file are relative to the file's directory; paths given in an
    override are relative to the current directory. Raises ConfigError (one line).
    """
    config_path = resolve_config_path(path)
    config = load_validated(EpisodeConfig, config_path, overrides, values)
    try:
        load_demonstrations(config.agent.demonstrations)
    except TrajectoryError as error:
        raise ConfigError(f"config {config_path}: agent.demonstrations: {error}") from None
    if isinstance(config.strategy, RagStrategy) and config.strategy.retrieval == "bm25":
        from swe_aci.retrieval.bm25 import RetrievalUnavailable, check_available

        try:
            check_available()
        except RetrievalUnavailable as error:
            raise ConfigError(f"config {config_path}: strategy.retrieval: {error}") from None
    return config


def instance_id_for(source: str, problem_statement: str) -> str:
    """A readable, stable id: the repository name plus a short hash of the issue text."""
    digest = hashlib.sha1(problem_statement.encode()).hexdigest()[:8]
    return f"{instance_id_from(repo_name(source), 'repo')}-{digest}"


def run_episode(
    config: EpisodeConfig,
    workspace: Workspace,
    problem_statement: str,
    *,
    instance_id: str,
    output_dir: Path,
    on_step: Callable[[StepRecord], None] | None = None,
    on_progress: OnProgress | None = None,
    gold_patch: str | None = None,
) -> EpisodeResult:
    """Run the episode's strategy on the issue in the workspace's sandbox, which is torn down
    however the episode ends (errors, Ctrl-C, SIGTERM and SIGHUP included; SIGKILL cannot be
    handled).

    The sandbox comes from `workspace` alone: `Workspace(config.env, repo, commit)` for a
    repository, `recipes.task_workspace(task, config.env)` for a task row. `gold_patch` is the
    task row's, read only by a strategy that asks for it (RAG's oracle retrieval).

    The instance's output directory is locked for the whole episode (OutputLockError if another
    run holds it); the episode's files replace those of any earlier run of the same instance.
    """
    check_instance_id(instance_id)
    check_requirements(config)
    run = EpisodeRun(
        config,
        workspace,
        problem_statement,
        instance_id,
        output_dir,
        run_strategy,
        on_step,
        on_progress,
        gold_patch,
    )
    with OutputLock.instance(output_dir / instance_id):
        return run_strategy(run)


def run_strategy(run: EpisodeRun) -> EpisodeResult:
    """Run `run.config.strategy`'s strategy (no lock: the caller holds it)."""
    return strategy_for(run.config.strategy.type).run(run)


def strategy_for(name: str) -> Strategy:
    """The strategy registered for `strategy.type` `name`."""
    module, _, attribute = STRATEGIES[name].rpartition(".")
    return getattr(importlib.import_module(module), attribute)()


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
