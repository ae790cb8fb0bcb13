"""Recipe environments for the docker backend: one image per recipe hash, built offline (no
registry pulls) on swe-aci/base:bookworm.

Two layers of images: `swe-aci/python:<version>` holds the interpreter (copied from the host's
pyenv or other prefix, at the same path, with the shared libraries it links against and a C
toolchain from Debian), and `swe-aci/task:<hash>` adds the base tree at /testbed, a virtualenv at
/opt/venv (active for every process of the container) and the installed package.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swe_aci.env.cleanup import PREFIX, pid_alive, sweep_stale_dirs
from swe_aci.env.docker.environment import BASE_IMAGE
from swe_aci.recipes.cache import BuildLog, locked, recipe_hash, tree_name
from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.interpreter import Interpreter
from swe_aci.recipes.sdist import ca_bundle, index_url
from swe_aci.recipes.toolchains import debian_packages
from swe_aci.recipes.tree import build_base_tree, sweep_orphan_builds
from swe_aci.tasks import Task

REPO_DIR = "/testbed"
VENV = "/opt/venv"
COMMIT_LABEL = "swe-aci.base-commit"
OWNER_LABEL = "swe-aci.build-owner"
# `patch`: the evaluation's fallback for predictions `git apply` rejects (as on the host).
RUNTIME_PACKAGES = (
    "gcc g++ make libc6-dev pkg-config libssl-dev libffi-dev zlib1g-dev libsqlite3-0 "
    "libbz2-1.0 liblzma5 libreadline8 libncursesw6 libgdbm6 libuuid1 libexpat1 patch"
)


def task_image_name(task: Task, interpreter: Interpreter) -> str:
    """Named by the recipe and the interpreter image it builds on."""
    inputs = f"{recipe_hash(task, interpreter)}\0{python_image_name(interpreter)}"
    return f"swe-aci/task:{hashlib.sha256(inputs.encode()).hexdigest()[:24]}"


def python_image_name(interpreter: Interpreter) -> str:
    """Named by the interpreter and the Debian packages beside it (a changed list rebuilds)."""
    packages = hashlib.sha256(RUNTIME_PACKAGES.encode()).hexdigest()[:8]
    return f"swe-aci/python:{interpreter.version}-{interpreter.origin}-{packages}"


def docker_build(
    task: Task, interpreter: Interpreter, cache_root: Path, echo: Callable[[str], None] | None
) -> tuple[str, str]:
    """(image, base commit) of the task's recipe image, built if missing. Raises RecipeError."""
    from swe_aci.env.docker.environment import connect

    image = task_image_name(task, interpreter)
    digest = image.rpartition(":")[2]
    client = connect()
    commit = image_commit(client, image)
    if commit is not None:
        return image, commit
    with locked(cache_root / f"{digest}.docker.lock"):
        commit = image_commit(client, image)
        if commit is not None:
            return image, commit
        sweep_orphan_builds()
        sweep_stale_dirs()
        remove_orphan_images(client)
        log_path = cache_root / digest / "docker-build.log"
        log_path.unlink(missing_ok=True)
        log = BuildLog(log_path, echo)
        try:
            python_image = ensure_python_image(client, interpreter, cache_root, echo)
            commit = build_task_image(
                client, task, interpreter, python_image, image, cache_root, log
            )
        except RecipeError as error:
            log(f"failed: {error}")
            raise RecipeError(f"{task.instance_id}: {error} (build log: {log.path})") from None
        log("ready")
        return image, commit


def remove_orphan_images(client: Any) -> list[str]:
    """Remove the untagged layers left by builds whose swe-aci died (kill -9 mid-build); return
    their ids. Layers of a build still running belong to a live pid and are left alone."""
    import docker

    removed = []
    for image in client.images.list(filters={"dangling": True, "label": OWNER_LABEL}):
        owner = (image.labels or {}).get(OWNER_LABEL, "")
        if not owner.isdigit() or int(owner) == os.getpid() or pid_alive(int(owner)):
            continue
        with contextlib.suppress(docker.errors.APIError):
            client.images.remove(image.id)
            removed.append(image.id)
    return removed


def image_commit(client: Any, image: str) -> str | None:
    import docker

    try:
        labels = client.api.inspect_image(image)["Config"].get("Labels") or {}
    except docker.errors.ImageNotFound:
        return None
    return labels.get(COMMIT_LABEL)


def ensure_python_image(
    client: Any, interpreter: Interpreter, cache_root: Path, echo: Callable[[str], None] | None
) -> str:
    import docker

    name = python_image_name(interpreter)
    with locked(cache_root / "python-image.lock"):
        try:
            client.api.inspect_image(name)
            return name
        except docker.errors.ImageNotFound:
            pass
        log = BuildLog(cache_root / f"python-{interpreter.version}-build.log", echo)
        with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-pyimage-") as context:
            lines = [f"FROM {BASE_IMAGE}", apt_install(RUNTIME_PACKAGES)]
            if interpreter.origin == "system":
                lines.append(
                    apt_install(f"python{interpreter.minor}-venv python{interpreter.minor}-dev")
                )
            else:
                copy_prefix(interpreter, Path(context) / "python")
                lines.append(f"COPY python/ {interpreter.prefix}/")
            lines.append(f"RUN {interpreter.executable} -c 'import ssl, sqlite3, ctypes, venv'")
            run_build(client, Path(context), lines, name, log)
    return name


def apt_install(packages: str) -> str:
    return (
        "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
        f"--no-install-recommends {packages} >/dev/null && rm -rf /var/lib/apt/lists/*"
    )


def copy_prefix(interpreter: Interpreter, dest: Path) -> None:
    """The interpreter's prefix without its own test suite and without the packages installed
    into it on the host (virtualenvs do not see them; they are often gigabytes)."""
    stdlib = interpreter.prefix / "lib" / f"python{interpreter.minor}"

    def ignore(directory: str, names: list[str]) -> list[str]:
        if Path(directory) == stdlib:
            return ["test"]
        if Path(directory) == stdlib / "site-packages":
            return names
        return []

    shutil.copytree(interpreter.prefix, dest, symlinks=True, ignore=ignore)


def build_task_image(
    client: Any,
    task: Task,
    interpreter: Interpreter,
    python_image: str,
    image: str,
    cache_root: Path,
    log: BuildLog,
) -> str:
    with tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-taskimage-") as scratch:
        context = Path(scratch)
        commit, lines = task_build_context(
            task, interpreter, python_image, context, cache_root, log
        )
        lines.append(f"LABEL {COMMIT_LABEL}={commit} swe-aci.recipe={image.rsplit(':', 1)[-1]}")
        run_build(client, context, lines, image, log)
    return commit


def task_build_context(
    task: Task,
    interpreter: Interpreter,
    python_image: str,
    context: Path,
    cache_root: Path,
    log: Callable[[str], None],
) -> tuple[str, list[str]]:
    """Fill `context` with the recipe's base tree (and the host's CA bundle, for pip) and return
    the base commit and the Dockerfile lines that build the recipe's environment from it: a
    virtualenv at /opt/venv on the interpreter image, the tree at /testbed, the install steps."""
    recipe = task.environment
    assert recipe is not None
    tree = context / "tree" / tree_name(task)
    tree.parent.mkdir(parents=True)
    commit = build_base_tree(task, tree, cache_root / "sdists", log)
    lines = [f"FROM {python_image}"]
    if recipe.toolchains:  # first: the layer is shared by the recipes naming the same ones
        lines.append(apt_install(" ".join(debian_packages(recipe.toolchains))))
    lines += [
        f"RUN {interpreter.executable} -m venv {VENV}",
        f"ENV VIRTUAL_ENV={VENV} PATH={VENV}/bin:$PATH",
        f"COPY tree/{tree.name}/ {REPO_DIR}/",
        f"WORKDIR {REPO_DIR}",
    ]
    build_env = ["env", f"PIP_INDEX_URL={index_url()}", "PIP_DISABLE_PIP_VERSION_CHECK=1"]
    if bundle := ca_bundle():
        shutil.copy(bundle, context / "host-ca.crt")
        lines.append("COPY host-ca.crt /etc/ssl/certs/swe-aci-host-ca.crt")
        certificate = "/etc/ssl/certs/swe-aci-host-ca.crt"
        build_env += [f"PIP_CERT={certificate}", f"SSL_CERT_FILE={certificate}"]
    lines += [
        f"RUN {json.dumps([*build_env, 'bash', '-c', command])}" for command in recipe.install
    ]
    lines.append(  # what the install left untracked is ignored, as on the host
        "RUN git -c safe.directory='*' ls-files --others --directory | sed 's|^|/|' "
        ">> .git/info/exclude"
    )
    return commit, lines


def run_build(client: Any, context: Path, lines: list[str], tag: str, log: BuildLog) -> None:
    """`docker build` of `lines` in `context`, its output in the log. Every layer carries this
    process's pid, so the untagged layers of a build it did not finish are found and removed."""
    owner = f"LABEL {OWNER_LABEL}={os.getpid()}"
    (context / "Dockerfile").write_text("\n".join([lines[0], owner, *lines[1:]]) + "\n")
    stream_build(client, context, tag, log)


def stream_build(
    client: Any, context: Path, tag: str, log: BuildLog, labels: dict[str, str] | None = None
) -> None:
    """`docker build` of the context's Dockerfile, its output in the log; RecipeError with the
    engine's last line when it fails."""
    import docker

    log(f"docker build {tag}")
    error = None
    try:
        for chunk in client.api.build(
            path=str(context), tag=tag, rm=True, forcerm=True, decode=True, labels=labels
        ):
            if "stream" in chunk and chunk["stream"].strip():
                log(chunk["stream"].rstrip())
            if "error" in chunk:
                error = chunk["error"].strip()
                log(error)
    except docker.errors.APIError as exc:
        error = str(exc)
    if error:
        last = error.splitlines()[-1] if error.splitlines() else error
        raise RecipeError(f"docker build of {tag} failed: {last}")
