"""The toolchains a recipe may name beside its Python (`environment.toolchains: [go, node]`).

Each is a set of Debian packages, installed into the task's docker image (with the install
step's network), and the programs that must be found on the host for the bwrap and local
backends, in the system directories a bwrap sandbox sees (nothing is installed on the host).
"""

from __future__ import annotations

import shutil
from typing import NamedTuple

from swe_aci.recipes.errors import RecipeError

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"  # the programs a bwrap sandbox can run


class Toolchain(NamedTuple):
    packages: tuple[str, ...]  # Debian bookworm's
    programs: tuple[str, ...]  # that must be on SYSTEM_PATH


TOOLCHAINS = {
    "node": Toolchain(("nodejs", "npm"), ("node", "npm")),
    "go": Toolchain(("golang-go",), ("go",)),
    "rust": Toolchain(("cargo", "rustc"), ("cargo", "rustc")),
    "java": Toolchain(("default-jdk-headless", "maven"), ("java", "javac", "mvn")),
    "php": Toolchain(("php-cli", "composer"), ("php", "composer")),
    "ruby": Toolchain(("ruby", "ruby-dev", "bundler"), ("ruby", "bundle")),
    "c": Toolchain(("gcc", "g++", "make", "cmake"), ("cc", "c++", "make", "cmake")),
}


def debian_packages(names: list[str]) -> list[str]:
    """The Debian packages of the toolchains `names`, in order, each once."""
    return list(dict.fromkeys(package for name in names for package in TOOLCHAINS[name].packages))


def check_host(names: list[str]) -> None:
    """Every program of the toolchains `names` is on the host's system path; else a RecipeError
    naming the first missing one and how to install it."""
    for name in names:
        toolchain = TOOLCHAINS[name]
        for program in toolchain.programs:
            if shutil.which(program, path=SYSTEM_PATH) is None:
                raise RecipeError(
                    f"the recipe needs the {name} toolchain: `{program}` is not in "
                    f"{SYSTEM_PATH} on this host (Debian: apt-get install "
                    f"{' '.join(toolchain.packages)}; or use --env docker)"
                )
