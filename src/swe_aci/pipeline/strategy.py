"""`strategy.type: pipeline` and `strategy.type: attempts` on the episode frame."""

from __future__ import annotations

from swe_aci.pipeline.config import AgentStrategy
from swe_aci.strategy import EpisodeRun
from swe_aci.trajectory.result import EpisodeResult


class PipelineStages:
    """The pipeline: the models of every sampling setting (the first loaded before any stage);
    the ACI's lint guardrail on every edit."""

    def run(self, episode: EpisodeRun) -> EpisodeResult:
        from swe_aci.aci.lint import Linter
        from swe_aci.pipeline.models import ModelPool
        from swe_aci.pipeline.run import Pipeline

        config = episode.config
        with episode.sandbox() as (environment, cleanup):
            models = ModelPool(config.model)
            cleanup.callback(models.close)
            models.get(0.0)
            pipeline = Pipeline(
                config.strategy,
                models,
                environment,
                Linter(config.aci.lint_select) if config.aci.lint else None,
                episode.files,
                episode.on_step,
            )
            return pipeline.run(episode.problem_statement)


class AttemptsOfTheLoop:
    """Several attempts of the agent loop and a chooser: each attempt a whole agent-loop episode
    run through the frame (its own sandbox and files under `<id>/attempts/`); the chooser opens
    one more sandbox."""

    def run(self, episode: EpisodeRun) -> EpisodeResult:
        from swe_aci.pipeline.attempts import Attempts
        from swe_aci.pipeline.models import variant

        config = episode.config
        attempts_dir = episode.output_dir / episode.instance_id / "attempts"

        def run_attempt(number: int, temperature: float, wall_time: float) -> EpisodeResult:
            limits = config.agent.limits.model_copy(update={"wall_time": wall_time})
            attempt = config.model_copy(
                update={
                    "strategy": AgentStrategy(),
                    "model": variant(config.model, temperature, seed_offset=number),
                    "agent": config.agent.model_copy(update={"limits": limits}),
                }
            )
            return episode.inner(
                attempt,
                instance_id=f"{episode.instance_id}.attempt{number}",
                output_dir=attempts_dir,
            )

        attempts = Attempts(
            config.strategy,
            run_attempt,
            episode.open_environment,
            episode.files,
            config.model.name,
            episode.on_step,
        )
        return attempts.run(episode.problem_statement)
