"""The image of a task-repository task, built from the task's own Dockerfile when it is absent.

The task directory is the build context (SWE-bench 5: a Dockerfile may `COPY` what sits beside
it). The image keeps the name its `task.yaml` gives it, labelled with a digest of the context, so
an unchanged task is never rebuilt and a changed one is. The build never writes into the context
(it is the user's task repository). Nothing is pulled but what the
Dockerfile's `FROM` names and the engine does not have: with a local base
(`swe-aci/base:bookworm`) the build is offline except what its own `RUN` lines fetch.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swe_aci.recipes.cache import BuildLog, locked
from swe_aci.recipes.docker_image import OWNER_LABEL, stream_build
from swe_aci.recipes.errors import RecipeError

CONTEXT_LABEL = "swe-aci.task-context"
MAX_CONTEXT_FILES = 20_000


def context_digest(task_dir: Path) -> str:
    """Names, modes and contents of every file of the build context."""
    digest = hashlib.sha256()
    files = sorted(path for path in task_dir.rglob("*") if path.is_file() or path.is_symlink())
    if len(files) > MAX_CONTEXT_FILES:
        raise RecipeError(f"{task_dir}: more than {MAX_CONTEXT_FILES} files in the build context")
    for path in files:
        relative = path.relative_to(task_dir).as_posix()
        if path.is_symlink():
            digest.update(f"L {relative}\0{os.readlink(path)}\n".encode())
            continue
        digest.update(f"F {relative}\0{path.stat().st_mode & 0o777:o}\0".encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:24]


def ensure_task_image(
    image: str,
    task_dir: Path,
    cache_root: Path,
    log: Callable[[str], None] | None,
    instance_id: str,
) -> None:
    """`image` is present and built from `task_dir`'s current context, or built now."""
    from swe_aci.env.base import SandboxError
    from swe_aci.env.docker.environment import connect

    try:
        client = connect()
    except SandboxError as error:
        raise RecipeError(f"{instance_id}: {error}") from None
    digest = context_digest(task_dir)
    if built_digest(client, image) == digest:
        return
    cache_root.mkdir(parents=True, exist_ok=True)
    with locked(cache_root / f"task-image-{digest}.lock"):
        if built_digest(client, image) == digest:
            return
        build_log = BuildLog(cache_root / "task-images" / f"{instance_id}.log", log)
        try:
            labels = {CONTEXT_LABEL: digest, OWNER_LABEL: str(os.getpid())}
            stream_build(client, task_dir, image, build_log, labels)
        except RecipeError as error:
            raise RecipeError(f"{instance_id}: {error} (build log: {build_log.path})") from None
        build_log("ready")


def built_digest(client: Any, image: str) -> str | None:
    import docker

    try:
        labels = client.api.inspect_image(image)["Config"].get("Labels") or {}
    except docker.errors.ImageNotFound:
        return None
    return labels.get(CONTEXT_LABEL)
