"""Sandboxes holding a repository and one persistent shell (backends: local, bwrap, docker)."""

from swe_aci.env.base import (
    CommandResult,
    Environment,
    Exclusion,
    FileTooLargeError,
    NotARegularFileError,
    SandboxError,
    Submission,
)
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.factory import make_environment

__all__ = [
    "CommandResult",
    "EnvConfig",
    "Environment",
    "Exclusion",
    "FileTooLargeError",
    "NotARegularFileError",
    "SandboxError",
    "Submission",
    "Workspace",
    "make_environment",
]
