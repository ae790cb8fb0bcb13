"""The agent layer: its config sections, templates, response parsing, history processing, the loop,
and the trajectory files it writes. The whole episode config is `swe_aci.episode.EpisodeConfig`."""

from swe_aci.agent.config import AgentConfig
from swe_aci.agent.exits import Interrupted
from swe_aci.agent.loop import Agent, EpisodeResult, StepRecord
from swe_aci.agent.trajectory import TrajectoryError, load_trajectory

__all__ = [
    "Agent",
    "AgentConfig",
    "EpisodeResult",
    "Interrupted",
    "StepRecord",
    "TrajectoryError",
    "load_trajectory",
]
