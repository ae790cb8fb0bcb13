"""Package archives beside PyPI's sdists: an npm tarball (`npm: name@version`, from the registry
npm is configured with) and a Debian package shipping a Go or Rust library's source
(`debian: name=version`, fetched with `apt-get download`). Each is cached by its sha256 and used
only once that matches; the repository is the package's source directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

from swe_aci.recipes.errors import RecipeError
from swe_aci.recipes.sdist import download_verified, file_sha256, http_client, keep_verified

DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org/"
COMMAND_TIMEOUT = 300.0
# Where Debian's library packages keep the source: Go's import paths, Rust's crates.
DEBIAN_SOURCE_ROOTS = ("usr/share/gocode/src", "usr/share/cargo/registry")


def npm_registry() -> str:
    """npm's registry as npm sees it: `npm_config_registry`, then `npm config get registry`."""
    for variable in ("npm_config_registry", "NPM_CONFIG_REGISTRY"):
        if os.environ.get(variable):
            return os.environ[variable].rstrip("/") + "/"
    if shutil.which("npm"):
        try:
            configured = subprocess.run(
                ["npm", "config", "get", "registry"],
                capture_output=True,
                text=True,
                timeout=30,
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            configured = ""
        if configured.startswith(("http://", "https://")):
            return configured.rstrip("/") + "/"
    return DEFAULT_NPM_REGISTRY


def fetch_npm(spec: str, sha256: str, cache_dir: Path) -> Path:
    """The verified tarball of `name@version` (cached by its sha256). Raises RecipeError."""
    import httpx

    target = cache_dir / f"{sha256.lower()}.tgz"
    if target.is_file() and file_sha256(target) == sha256.lower():
        return target
    name, _, version = spec.rpartition("@")
    manifest = f"{npm_registry()}{quote(name, safe='@')}/{quote(version)}"
    try:
        with http_client() as client:
            response = client.get(manifest)
            if response.status_code == 404:
                raise RecipeError(f"the npm registry has no {spec} ({manifest})")
            response.raise_for_status()
            try:
                url = response.json()["dist"]["tarball"]
            except (ValueError, KeyError, TypeError):
                raise RecipeError(f"{manifest} names no tarball of {spec}") from None
            return download_verified(client, url, sha256, target, spec)
    except httpx.HTTPError as error:
        raise RecipeError(f"cannot fetch {spec} from {manifest}: {error}") from None


def fetch_debian(spec: str, sha256: str, cache_dir: Path) -> Path:
    """The verified `.deb` of `name=version`, fetched by `apt-get download` from the host's apt
    sources (cached by its sha256). Raises RecipeError."""
    target = cache_dir / f"{sha256.lower()}.deb"
    if target.is_file() and file_sha256(target) == sha256.lower():
        return target
    if shutil.which("apt-get") is None:
        raise RecipeError(f"fetching the Debian package {spec} needs apt-get (a Debian host)")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".apt-") as scratch:
        # apt drops privileges to `_apt` to download: the scratch directory must be its to write
        os.chmod(scratch, 0o777)
        try:
            result = subprocess.run(
                ["apt-get", "download", "-q", spec],
                cwd=scratch,
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            raise RecipeError(
                f"apt-get download {spec} did not finish in {COMMAND_TIMEOUT:.0f} s"
            ) from None
        debs = list(Path(scratch).glob("*.deb"))
        if result.returncode != 0 or len(debs) != 1:
            lines = (result.stderr or result.stdout).strip().splitlines()
            reason = lines[-1] if lines else f"exit code {result.returncode}"
            raise RecipeError(
                f"apt-get download {spec} failed: {reason} (is the version in the apt "
                "sources? apt-get update refreshes them)"
            )
        return keep_verified(debs[0], file_sha256(debs[0]), sha256, target, spec)


def unpack_debian(archive: Path, dest: Path) -> None:
    """The library source a Debian package ships (its directory under /usr/share/gocode/src or
    /usr/share/cargo/registry) as `dest`, which must not exist."""
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".unpack-") as scratch:
        try:
            result = subprocess.run(
                ["dpkg-deb", "-x", str(archive), scratch],
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError:
            raise RecipeError(f"unpacking {archive.name} needs dpkg-deb (a Debian host)") from None
        except subprocess.TimeoutExpired:
            raise RecipeError(f"dpkg-deb -x {archive.name} did not finish in time") from None
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            raise RecipeError(
                f"cannot unpack {archive.name}: {lines[-1] if lines else result.returncode}"
            )
        source = next(
            (Path(scratch, root) for root in DEBIAN_SOURCE_ROOTS if Path(scratch, root).is_dir()),
            None,
        )
        if source is None:
            raise RecipeError(
                f"{archive.name} ships no library source (nothing under "
                f"{' or '.join('/' + root for root in DEBIAN_SOURCE_ROOTS)})"
            )
        while True:  # down to the one package's directory
            entries = list(source.iterdir())
            if len(entries) != 1 or not entries[0].is_dir() or entries[0].is_symlink():
                break
            source = entries[0]
        shutil.copytree(source, dest, symlinks=True)
