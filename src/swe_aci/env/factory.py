"""Choosing and creating the environment a config asks for."""

from __future__ import annotations

from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.bwrap import BwrapEnvironment, bwrap_problem
from swe_aci.env.config import EnvConfig, Workspace
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


def make_environment(workspace: Workspace) -> Environment:
    """Open a sandbox on the workspace's repository with its config's backend (the one way every
    caller opens one)."""
    config, source, commit = workspace.config, workspace.source, workspace.commit
    backend = resolve_backend(config)
    if backend == "docker":
        from swe_aci.env.docker import DockerEnvironment

        return DockerEnvironment(source, commit, config)
    if source is None:
        raise SandboxError(f"the {backend} backend needs a repository path or URL")
    if backend == "bwrap":
        return BwrapEnvironment(source, commit, config)
    return LocalEnvironment(source, commit, config)
