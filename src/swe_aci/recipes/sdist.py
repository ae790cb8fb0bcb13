"""Fetching a release's sdist (`.tar.gz`) through the package index pip is configured with, and
unpacking it safely once its sha256 matches.

`pip download` would run the sdist's build to read its metadata, which old releases cannot do
without their build dependencies: the file itself is fetched from the index's simple page.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import ssl
import subprocess
import sys
import tarfile
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

from swe_aci.recipes.errors import RecipeError

DEFAULT_INDEX = "https://pypi.org/simple"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
FETCH_TIMEOUT = 120.0


def ca_bundle() -> str | None:
    """The CA bundle to trust: pip's configured `cert`, else the host's system bundle."""
    configured = pip_setting("cert")
    if configured and Path(configured).is_file():
        return configured
    return str(CA_BUNDLE) if CA_BUNDLE.is_file() else None


def index_url() -> str:
    return (pip_setting("index-url") or DEFAULT_INDEX).rstrip("/")


def pip_setting(key: str) -> str | None:
    """A pip setting as pip sees it: PIP_* variables, then `pip config list` (global, user, site)."""
    from_env = os.environ.get("PIP_" + key.upper().replace("-", "_"))
    if from_env:
        return from_env
    try:
        listing = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in listing.splitlines():
        name, _, value = line.partition("=")
        if name.rsplit(".", 1)[-1] == key:
            return value.strip().strip("'\"")
    return None


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [value for key, value in attrs if key == "href" and value]


def fetch_sdist(requirement: str, sha256: str, cache_dir: Path) -> Path:
    """The verified `.tar.gz` of `Name==version` (cached by its sha256). Raises RecipeError."""
    import httpx

    target = cache_dir / f"{sha256.lower()}.tar.gz"
    if target.is_file() and file_sha256(target) == sha256.lower():
        return target
    name, _, version = (part.strip() for part in requirement.partition("=="))
    page = f"{index_url()}/{normalize(name)}/"
    try:
        with http_client() as client:
            response = client.get(page)
            response.raise_for_status()
            url = sdist_link(response.text, page, name, version)
            if url is None:
                raise RecipeError(f"{page} lists no sdist {name}-{version}.tar.gz")
            return download_verified(client, url, sha256, target, requirement)
    except httpx.HTTPError as error:
        raise RecipeError(f"cannot fetch {requirement} from {page}: {error}") from None


def http_client() -> Any:
    """An httpx client trusting pip's CA bundle, every request bounded by FETCH_TIMEOUT."""
    import httpx

    bundle = ca_bundle()
    verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=bundle) if bundle else True
    return httpx.Client(timeout=FETCH_TIMEOUT, verify=verify, follow_redirects=True)


def download_verified(client: Any, url: str, sha256: str, target: Path, what: str) -> Path:
    """Stream `url` to `target` if its sha256 is `sha256`; else RecipeError (nothing kept)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".part", delete=False) as part:
        digest = hashlib.sha256()
        try:
            with client.stream("GET", url) as download:
                download.raise_for_status()
                for chunk in download.iter_bytes():
                    digest.update(chunk)
                    part.write(chunk)
        except BaseException:
            os.unlink(part.name)
            raise
    return keep_verified(Path(part.name), digest.hexdigest(), sha256, target, what)


def keep_verified(part: Path, digest: str, sha256: str, target: Path, what: str) -> Path:
    """Move the downloaded `part` to `target` if its digest is `sha256`, else drop it."""
    if digest != sha256.lower():
        part.unlink()
        raise RecipeError(f"sha256 mismatch for {what}: the registry served {digest}")
    os.replace(part, target)
    return target


def sdist_link(html: str, page: str, name: str, version: str) -> str | None:
    parser = _Links()
    parser.feed(html)
    for href in parser.hrefs:
        url = urldefrag(urljoin(page, href)).url
        filename = url.rsplit("/", 1)[-1]
        if not filename.endswith(".tar.gz"):
            continue
        stem_name, _, stem_version = filename.removesuffix(".tar.gz").rpartition("-")
        if normalize(stem_name) == normalize(name) and stem_version == version:
            return url
    return None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def safe_tarfile() -> Any:
    """The standard tarfile where it has extraction filters (Python >= 3.11.4), else its
    backport (Debian 12's Python is 3.11.2): the `data` filter is what keeps members inside."""
    if hasattr(tarfile, "data_filter"):
        return tarfile
    import backports.tarfile

    return backports.tarfile


def unpack_sdist(archive: Path, dest: Path) -> None:
    """Unpack into `dest` (which must not exist) the sdist's single top directory's contents.

    Members that would leave the directory, links pointing out of it and device files are
    refused (tarfile's `data` filter)."""
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".unpack-") as scratch:
        module = safe_tarfile()  # the backport raises its own TarError subclasses
        try:
            with module.open(archive, "r:gz") as tar:
                tar.extractall(scratch, filter="data")
        except (module.TarError, tarfile.TarError, OSError) as error:
            raise RecipeError(f"cannot unpack {archive.name}: {error}") from None
        entries = list(Path(scratch).iterdir())
        if len(entries) == 1 and entries[0].is_dir():
            shutil.move(str(entries[0]), str(dest))
        else:
            shutil.copytree(scratch, dest, symlinks=True)
