"""The agent-computer interface: file viewer, editor with lint guardrail, search, submit."""

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import ACI, ActionProblem, ArgumentDoc, CommandDoc, Observation

__all__ = ["ACI", "ACIConfig", "ActionProblem", "ArgumentDoc", "CommandDoc", "Observation"]
