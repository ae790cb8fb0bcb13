"""Finding the Python interpreter a recipe asks for on this machine: a pyenv version, Debian's
own python3.X, or the interpreter swe-aci runs on."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from swe_aci.recipes.errors import RecipeError


@dataclass(frozen=True)
class Interpreter:
    version: str  # x.y.z
    executable: Path
    prefix: Path  # its installation prefix (copied whole into docker images)
    origin: str  # pyenv | system | running

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])


def pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")


def find_interpreter(python: str | None) -> Interpreter:
    """The interpreter for `python` (`x.y` or `x.y.z`; None: the running one). Raises RecipeError."""
    if python is None:
        return running_interpreter()
    wanted = tuple(int(part) for part in python.split("."))
    candidates = itertools.chain(
        pyenv_interpreters(), [running_interpreter()], system_interpreters()
    )  # lazily: the system ones are only asked for their version when nothing else matched
    for candidate in candidates:
        have = tuple(int(part) for part in candidate.version.split("."))
        if have[: len(wanted)] == wanted:
            return candidate
    raise RecipeError(
        f"python {python} is not available here (looked in {pyenv_root()}/versions, "
        "/usr/bin, and the running interpreter); install it with pyenv"
    )


def running_interpreter() -> Interpreter:
    prefix = Path(sys.base_prefix)
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    executable = prefix / "bin" / f"python{minor}"
    version = ".".join(str(part) for part in sys.version_info[:3])
    origin = "system" if prefix == Path("/usr") else "running"
    if prefix.parent == pyenv_root() / "versions":
        origin = "pyenv"
    return Interpreter(
        version, executable if executable.exists() else Path(sys.executable), prefix, origin
    )


def pyenv_interpreters() -> list[Interpreter]:
    """Installed pyenv versions, newest patch release first within each minor version."""
    versions = pyenv_root() / "versions"
    found = []
    for entry in versions.iterdir() if versions.is_dir() else []:
        if not re.fullmatch(r"\d+\.\d+\.\d+", entry.name):
            continue
        minor = ".".join(entry.name.split(".")[:2])
        executable = entry / "bin" / f"python{minor}"
        if executable.exists():
            found.append(Interpreter(entry.name, executable, entry, "pyenv"))
    return sorted(found, key=lambda i: tuple(int(p) for p in i.version.split(".")), reverse=True)


def system_interpreters() -> Iterator[Interpreter]:
    for executable in sorted(Path("/usr/bin").glob("python[23].*[0-9]"), reverse=True):
        try:
            output = subprocess.run(
                [
                    str(executable),
                    "-c",
                    "import sys; print('.'.join(map(str, sys.version_info[:3])))",
                ],
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
        if re.fullmatch(r"\d+\.\d+\.\d+", output):
            yield Interpreter(output, executable, Path("/usr"), "system")
