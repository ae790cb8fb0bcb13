"""The agent layer: its config sections, templates, response parsing, history processing and the
loop. What an episode produces (steps, result, trajectory files) is `swe_aci.trajectory`; the
whole episode config is `swe_aci.episode.EpisodeConfig`."""

from swe_aci.agent.config import AgentConfig
from swe_aci.agent.loop import Agent

__all__ = ["Agent", "AgentConfig"]
