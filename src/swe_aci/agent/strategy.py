"""`strategy.type: agent`: the agent loop of `agent:` drives the ACI turn by turn with the model of
`model:`."""

from __future__ import annotations

from swe_aci.strategy import EpisodeRun
from swe_aci.trajectory.result import EpisodeResult


class AgentLoop:
    def run(self, episode: EpisodeRun) -> EpisodeResult:
        from swe_aci.aci.interface import ACI
        from swe_aci.agent.loop import Agent
        from swe_aci.agent.parsing import reply_format
        from swe_aci.models.factory import make_model

        config = episode.config
        with episode.sandbox() as (environment, cleanup):
            model = make_model(config.model, reply_format(config.agent.parser))
            if close_model := getattr(model, "close", None):
                cleanup.callback(close_model)
            agent = Agent(
                config.agent,
                model,
                ACI(environment, config.aci),
                output_dir=episode.output_dir,
                instance_id=episode.instance_id,
                environment=episode.backend,
                on_step=episode.on_step,
                on_progress=episode.on_progress,
            )
            return agent.run(episode.problem_statement)
