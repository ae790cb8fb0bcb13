"""Choosing and creating the environment a config asks for."""

from __future__ import annotations

import importlib

from swe_aci.env.base import Environment, SandboxError
from swe_aci.env.bwrap.environment import bwrap_problem
from swe_aci.env.config import EnvConfig, Workspace

# Each backend's class by dotted path: adding one is a line here, and a backend's module (the
# docker SDK's, say) is imported only when that backend is opened.
BACKENDS = {
    "local": "swe_aci.env.local.LocalEnvironment",
    "bwrap": "swe_aci.env.bwrap.environment.BwrapEnvironment",
    "docker": "swe_aci.env.docker.environment.DockerEnvironment",
}
# Backends that copy the repository from a source; docker may find it in the image instead.
NEED_SOURCE = frozenset({"local", "bwrap"})


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
    if source is None and backend in NEED_SOURCE:
        raise SandboxError(f"the {backend} backend needs a repository path or URL")
    module, _, name = BACKENDS[backend].rpartition(".")
    environment: Environment = getattr(importlib.import_module(module), name)(
        source, commit, config
    )
    return environment
