"""Recipe environments for the bwrap and local backends: a virtualenv and a base tree on the host,
built once per recipe hash under the cache directory and shared read-only by every sandbox.

The agent's working copy is a clone of the base tree, so the shell puts the working copy first on
PYTHONPATH, each directory the install imports from (`src/`, `lib/`: import_roots.py) before its
root, so its edits are what `import` finds even with an editable install that points into the
cache; and it copies in the untracked build products the install left in the base tree.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from swe_aci.env.cleanup import PREFIX
from swe_aci.env.config import EnvConfig
from swe_aci.env.shell import shell_quote
from swe_aci.recipes.cache import BuildLog, locked, recipe_hash, tree_name
from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.import_roots import import_roots
from swe_aci.recipes.interpreter import Interpreter
from swe_aci.recipes.sdist import ca_bundle, index_url
from swe_aci.recipes.tree import build_base_tree, last_line, run_logged, sweep_orphan_builds
from swe_aci.tasks import Task

READY = "ready.json"


@dataclass(frozen=True)
class HostBuild:
    tree: Path
    commit: str
    venv: Path
    build_products: bool
    import_roots: tuple[str, ...]  # import_roots.py: before the root on the working copy's path


def host_build(
    task: Task, interpreter: Interpreter, cache_root: Path, echo: Callable[[str], None] | None
) -> HostBuild:
    """The cached build of the task's recipe, building it first if needed. Raises RecipeError."""
    directory = cache_root / recipe_hash(task, interpreter)
    ready = directory / READY
    if not ready.is_file():
        with locked(cache_root / f"{directory.name}.lock"):
            if not ready.is_file():
                sweep_orphan_builds()
                build(task, interpreter, directory, cache_root / "sdists", echo)
    data = json.loads(ready.read_text())
    tree, venv = Path(data["tree"]), Path(data["venv"])
    return HostBuild(
        tree=tree,
        commit=data["commit"],
        venv=venv,
        build_products=data["build_products"],
        import_roots=import_roots(venv, tree),
    )


def build(
    task: Task,
    interpreter: Interpreter,
    directory: Path,
    sdist_cache: Path,
    echo: Callable[[str], None] | None,
) -> None:
    """Build into a fresh attempt directory `swe-aci-<pid>-build-*` under `directory`, then make
    it the recipe's build by renaming READY into place. A virtualenv holds its own absolute path,
    so the attempt is not moved: READY points into it. Called with the recipe's lock held, so any
    other attempt found is what a killed build left (its processes are already swept)."""
    clear_attempts(directory)
    log_path = directory / "build.log"
    log_path.unlink(missing_ok=True)
    log = BuildLog(log_path, echo)
    attempt = Path(tempfile.mkdtemp(dir=directory, prefix=f"{PREFIX}{os.getpid()}-build-"))
    attempt.chmod(0o755)  # mkdtemp's 0700 would hide the build from a sandbox's other uid
    try:
        tree = attempt / "tree" / tree_name(task)
        tree.parent.mkdir()
        commit = build_base_tree(task, tree, sdist_cache, log)
        venv = attempt / "venv"
        install(task, interpreter, tree, venv, log)
        products = ignore_build_products(tree)
        readable_by_others(tree)
        readable_by_others(venv)
    except RecipeError as error:
        shutil.rmtree(attempt, ignore_errors=True)
        log(f"failed: {error}")
        raise RecipeError(f"{task.instance_id}: {error} (build log: {log.path})") from None
    except BaseException:
        shutil.rmtree(attempt, ignore_errors=True)
        raise
    record = {
        "tree": str(tree),
        "commit": commit,
        "venv": str(venv),
        "build_products": bool(products),
        "python": interpreter.version,
    }
    partial = directory / f"{READY}.partial"
    partial.write_text(json.dumps(record, indent=2))
    os.replace(partial, directory / READY)
    log("ready")


def readable_by_others(root: Path) -> None:
    """Let other users read (and enter, and run what the owner may run in) a built tree: bwrap
    runs as `nobody` when swe-aci runs as root, and a tree copied from a private directory
    would keep its 0700."""
    for parent, _, files in os.walk(root):
        for path in (parent, *(os.path.join(parent, name) for name in files)):
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                continue
            others = stat.S_IROTH | (stat.S_IXOTH if mode & stat.S_IXUSR else 0)
            if mode & others != others:
                os.chmod(path, mode | others)


def clear_attempts(directory: Path) -> None:
    """Everything in a recipe's directory that is not a finished build: killed attempts, and the
    tree and virtualenv of the layout before attempt directories."""
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name != "build.log":
            entry.unlink(missing_ok=True)


def build_env(venv: Path) -> dict[str, str]:
    """The variables of install commands: the virtualenv active, the index and CA bundle pip uses
    on the host, none of swe-aci's own Python settings."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.update(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}:{os.environ.get('PATH', '')}")
    env.update(PIP_INDEX_URL=index_url(), PIP_DISABLE_PIP_VERSION_CHECK="1")
    if bundle := ca_bundle():
        env.update(PIP_CERT=bundle, SSL_CERT_FILE=bundle, REQUESTS_CA_BUNDLE=bundle)
    return env


def install(task: Task, interpreter: Interpreter, tree: Path, venv: Path, log: BuildLog) -> None:
    recipe = task.environment
    assert recipe is not None
    log(f"virtualenv with python {interpreter.version} ({interpreter.executable})")
    # pip is only needed to install (the sandbox has no network for the agent to use it)
    without_pip = [] if recipe.install else ["--without-pip"]
    argv = [str(interpreter.executable), "-m", "venv", *without_pip, str(venv)]
    created = run_logged(argv, tree, log)
    if created.returncode != 0:
        raise RecipeError(f"cannot create a virtualenv: {last_line(created)}")
    env = build_env(venv)
    for command in recipe.install:
        log(f"install: {command}")
        result = run_logged(["bash", "-c", command], tree, log, env=env, inherit=False)
        if result.returncode != 0:
            raise RecipeError(f"install command failed ({command!r}): {last_line(result)}")


def ignore_build_products(tree: Path) -> bool:
    """Add what the install left untracked in the base tree to its .git/info/exclude (anchored at
    the root), which every working copy then takes over. True if there was anything."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--others", "--directory"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    listing = [path for path in listing if path]
    if listing:
        with open(tree / ".git" / "info" / "exclude", "a") as exclude:
            exclude.writelines(f"/{glob_escape(path)}\n" for path in listing)
    return bool(listing)


def glob_escape(path: str) -> str:
    return "".join(f"\\{char}" if char in "*?[\\!# " else char for char in path)


def host_config(env_config: EnvConfig, built: HostBuild, interpreter: Interpreter) -> EnvConfig:
    """`env_config` with the virtualenv and interpreter visible (read-only) and active."""
    ro_paths = [str(built.venv), str(interpreter.prefix)]
    tree = shell_quote(str(built.tree))
    setup = [
        "export PYTHONPATH="
        + "".join(f'"$ROOT"/{shell_quote(root)}:' for root in built.import_roots)
        + '"$ROOT"',
        f"cat {tree}/.git/info/exclude >> .git/info/exclude",
    ]
    ro_paths.append(str(built.tree))
    if built.build_products:
        setup.append(
            f"git -c safe.directory='*' -C {tree} ls-files --others -z "
            f"| tar -C {tree} --null -T - -cf - | tar -xf -"
        )
    return env_config.model_copy(
        update={
            "ro_paths": [*env_config.ro_paths, *ro_paths],
            "path_prepend": [str(built.venv / "bin"), *env_config.path_prepend],
            "env_vars": {**env_config.env_vars, "VIRTUAL_ENV": str(built.venv)},
            "setup_commands": [*setup, *env_config.setup_commands],
        }
    )
