"""Backend availability checks and parameters shared by the environment tests."""

from __future__ import annotations

import functools

import pytest

from swe_aci.env.bwrap.environment import bwrap_problem

DOCKER_IMAGE = "swe-aci/base:bookworm"
NEEDS_DOCKER = "run scripts/ensure_docker.sh and scripts/build_base_image.sh"


@functools.cache
def docker_problem() -> str | None:
    """Why the docker tests cannot run here, or None."""
    try:
        import docker
    except ImportError:
        return "the docker package is not installed"
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        return f"Docker engine not reachable ({NEEDS_DOCKER}): {str(exc)[:120]}"
    try:
        client.images.get(DOCKER_IMAGE)
    except docker.errors.ImageNotFound:
        return f"image {DOCKER_IMAGE} missing ({NEEDS_DOCKER})"
    return None


def skip_unavailable(backend: str) -> None:
    backend = backend.split("-")[0]
    if backend == "bwrap" and (problem := bwrap_problem()):
        pytest.skip(f"bubblewrap unusable: {problem}")
    if backend == "docker" and (problem := docker_problem()):
        pytest.skip(problem)


BACKENDS = ["local", "bwrap", pytest.param("docker", marks=pytest.mark.docker)]
# "docker-archive": docker with base64 hidden, so files go through the archive API fallback.
FILE_BACKENDS = [*BACKENDS, pytest.param("docker-archive", marks=pytest.mark.docker)]
SANDBOXED = ["bwrap", pytest.param("docker", marks=pytest.mark.docker)]
