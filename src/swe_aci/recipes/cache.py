"""Recipe hashes, the cache directory, build logs and a per-recipe lock."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from swe_aci.recipes.interpreter import Interpreter
from swe_aci.tasks import Task

# Bumped when the way environments are built changes, so old cache entries are not reused.
BUILDER_VERSION = 2


def default_cache_dir() -> Path:
    base = os.environ.get("SWE_ACI_CACHE") or Path.home() / ".cache" / "swe-aci"
    return Path(base) / "recipes"


def recipe_hash(task: Task, interpreter: Interpreter) -> str:
    """What the environment depends on: the recipe, the row fields it uses, the interpreter."""
    recipe = task.environment
    assert recipe is not None
    inputs = {
        "builder": BUILDER_VERSION,
        # without an empty `toolchains`, so the recipes that name none keep their hash
        "recipe": recipe.model_dump(
            mode="json", exclude=set() if recipe.toolchains else {"toolchains"}
        ),
        "reverted": {field: getattr(task, field) for field in recipe.revert},
        "base_commit": task.base_commit if recipe.source.git else None,
        "source_state": directory_state(Path(recipe.source.path)) if recipe.source.path else None,
        "python": [interpreter.version, interpreter.origin, str(interpreter.executable)],
        "repo": task.repo,
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:24]


def directory_state(root: Path) -> str:
    """A fingerprint of a local source directory (names, sizes, mtimes), so edits rebuild."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts:
            continue
        with contextlib.suppress(OSError):
            stat = path.lstat()
            digest.update(
                f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
            )
    return digest.hexdigest()


def tree_name(task: Task) -> str:
    """The repository's directory name: the last part of `owner/name`."""
    name = re.sub(r"[^\w.-]", "_", task.repo.rstrip("/").rsplit("/", 1)[-1])
    return name if name not in {"", ".", ".."} else "repo"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock across threads and processes (two workers never build one recipe)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class BuildLog:
    """Appends timestamped lines to a build log file, echoing them to an optional callback."""

    def __init__(self, path: Path, echo: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.echo = echo
        path.parent.mkdir(parents=True, exist_ok=True)
        self._started = time.monotonic()

    def __call__(self, text: str) -> None:
        stamp = f"[{time.monotonic() - self._started:7.1f}s] "
        with open(self.path, "a", encoding="utf-8", errors="replace") as handle:
            for line in text.splitlines() or [""]:
                handle.write(stamp + line + "\n")
        if self.echo is not None:
            self.echo(text.splitlines()[0] if text.splitlines() else text)
