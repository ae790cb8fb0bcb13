"""Choosing and creating the environment a config asks for."""

from __future__ import annotations

from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.bwrap import BwrapEnvironment, bwrap_problem
from swe_aci.env.config import EnvConfig
from swe_aci.env.local import LocalEnvironment


def resolve_backend(config: EnvConfig) -> str:
    """The concrete backend: `auto` is bwrap, and a SandboxError when bwrap cannot run here
    (never a silent fall back to no sandbox)."""
    if config.backend != "auto":
        return config.backend
    problem = bwrap_problem()
    if problem is None:
        return "bwrap"
    raise SandboxError(
        f"no sandbox: bubblewrap is not usable ({problem}); install it "
        "(apt-get install bubblewrap) or run without a sandbox with --env local"
    )


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
