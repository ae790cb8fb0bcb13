"""Choosing and creating the environment a config asks for."""

from __future__ import annotations

import logging

from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.bwrap import BwrapEnvironment, bwrap_problem
from swe_aci.env.config import EnvConfig
from swe_aci.env.local import LocalEnvironment

logger = logging.getLogger(__name__)


def resolve_backend(config: EnvConfig) -> str:
    """The concrete backend: `auto` is bwrap when it works here, else local (with a warning)."""
    if config.backend != "auto":
        return config.backend
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    logger.warning(
        "bubblewrap is not usable (%s); running without a sandbox (local backend)", problem
    )
    return "local"


def make_environment(
    config: EnvConfig, source: str | None, commit: str | None = None
) -> Environment:
    """Create the environment: `source` is a repository path or URL (None for docker when the
    repository is already in the image), `commit` the base commit (None: the source's HEAD)."""
    backend = resolve_backend(config)
    if backend == "docker":
        from swe_aci.env.docker import DockerEnvironment

        return DockerEnvironment(source, commit, config)
    if source is None:
        raise SandboxError(f"the {backend} backend needs a repository path or URL")
    if backend == "bwrap":
        return BwrapEnvironment(source, commit, config)
    return LocalEnvironment(source, commit, config)
