"""The agent layer: config, templates, response parsing, history processing, the loop, and the
trajectory files it writes."""

from swe_aci.agent.config import AgentConfig, ConfigError, EpisodeConfig, load_config
from swe_aci.agent.loop import Agent, EpisodeResult, StepRecord
from swe_aci.agent.trajectory import TrajectoryError, load_trajectory

__all__ = [
    "Agent",
    "AgentConfig",
    "ConfigError",
    "EpisodeConfig",
    "EpisodeResult",
    "StepRecord",
    "TrajectoryError",
    "load_config",
    "load_trajectory",
]
