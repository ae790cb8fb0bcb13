"""The workspace a task row needs on the configured backend: its image, or its recipe built."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from swe_aci.env.base import SandboxError
from swe_aci.env.config import EnvConfig, Workspace
from swe_aci.env.factory import resolve_backend
from swe_aci.recipes.cache import default_cache_dir
from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.interpreter import find_interpreter
from swe_aci.tasks import Task

# The official SWE-bench images keep the repository's interpreter in the conda env `testbed`.
CONDA_ACTIVATE = (
    "if [ -f /opt/miniconda3/bin/activate ]; then "
    "source /opt/miniconda3/bin/activate testbed >/dev/null 2>&1; fi"
)


def official_image(instance_id: str) -> str:
    """The SWE-bench evaluation image named after the instance (as SWE-agent names it)."""
    return f"swebench/sweb.eval.x86_64.{instance_id.replace('__', '_1776_')}:latest".lower()


def task_workspace(
    task: Task,
    env_config: EnvConfig,
    *,
    cache_dir: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Workspace:
    """The task's repository at its base with its interpreter active, on `env_config.backend`:
    built now or found in the cache. Raises RecipeError."""
    cache_root = (cache_dir or default_cache_dir()).expanduser().resolve()
    if task.environment is None:
        image = task.image or official_image(task.instance_id)
        workspace = image_environment(task, env_config, image, official=task.image is None)
        if task.task_dir is not None:
            from swe_aci.recipes.task_image import ensure_task_image

            ensure_task_image(image, Path(task.task_dir), cache_root, log, task.instance_id)
        else:
            ensure_image(image, task.instance_id)
        return workspace
    try:
        backend = resolve_backend(env_config)
    except SandboxError as error:
        raise RecipeError(str(error)) from None
    interpreter = find_interpreter(task.environment.python)
    if backend == "docker":
        from swe_aci.recipes.docker_image import REPO_DIR, docker_build

        try:
            image, commit = docker_build(task, interpreter, cache_root, log)
        except SandboxError as error:
            raise RecipeError(f"{task.instance_id}: {error}") from None
        config = env_config.model_copy(update={"image": image, "repo_in_image": REPO_DIR})
        return Workspace(config, None, commit)
    from swe_aci.recipes.host import host_build, host_config
    from swe_aci.recipes.toolchains import check_host

    try:
        check_host(task.environment.toolchains)
    except RecipeError as error:
        raise RecipeError(f"{task.instance_id}: {error}") from None
    built = host_build(task, interpreter, cache_root, log)
    return Workspace(host_config(env_config, built, interpreter), str(built.tree), built.commit)


def image_environment(
    task: Task, env_config: EnvConfig, image: str, *, official: bool
) -> Workspace:
    """A prebuilt image holding the repository at `repo_dir` (docker only; `auto` means docker);
    the caller makes sure the image is there."""
    what = "the official SWE-bench image" if official else f"image {image}"
    if env_config.backend == "auto":
        env_config = env_config.model_copy(update={"backend": "docker"})
    if env_config.backend != "docker":
        raise RecipeError(
            f"{task.instance_id} runs in {what}: use the docker backend (--env docker), "
            "or give the row an environment recipe"
        )
    config = env_config.model_copy(
        update={
            "image": image,
            "repo_in_image": task.repo_dir,
            "setup_commands": [CONDA_ACTIVATE, *env_config.setup_commands],
        }
    )
    return Workspace(config, None, task.base_commit)


def ensure_image(image: str, instance_id: str) -> None:
    """The image is present, or pulled now; else one clear line."""
    import docker

    from swe_aci.env.docker.environment import connect

    try:
        client = connect()
    except SandboxError as error:
        raise RecipeError(f"{instance_id}: {error}") from None
    try:
        client.api.inspect_image(image)
        return
    except docker.errors.ImageNotFound:
        pass
    try:
        client.images.pull(image)
    except docker.errors.DockerException as error:
        reason = str(error).strip().splitlines()[0][:200]
        raise RecipeError(
            f"{instance_id}: image {image} is neither present nor pullable ({reason})"
        ) from None
