"""The agent-computer interface: file viewer, editor with lint guardrail, search, submit.

Every command and its observations are described in docs/aci.md; adding one in
docs/extending.md ("An ACI command").
"""

from swe_aci.aci.config import ACIConfig
from swe_aci.aci.interface import (
    ACI,
    ActionProblem,
    ArgumentDoc,
    CheckedAction,
    CommandDoc,
    Observation,
)

__all__ = [
    "ACI",
    "ACIConfig",
    "ActionProblem",
    "ArgumentDoc",
    "CheckedAction",
    "CommandDoc",
    "Observation",
]
