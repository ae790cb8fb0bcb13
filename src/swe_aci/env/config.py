"""Configuration of the sandbox an episode runs in, and the workspace it starts from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Backend = Literal["auto", "local", "bwrap", "docker"]
BYTE_SIZE = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)
UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def parse_bytes(text: str) -> int:
    """A size as docker writes it ("4g", "512m", "1024k", "123"), in bytes."""
    match = BYTE_SIZE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (use a number with k, m, g or t, e.g. 4g)")
    return int(match.group(1)) * UNITS[match.group(2).lower()]


class EnvConfig(BaseModel):
    """Where and how the repository is isolated. `auto` is bwrap, and an error when bubblewrap
    cannot run here (running without a sandbox is always an explicit choice: `local`)."""

    model_config = ConfigDict(extra="forbid")

    backend: Backend = "auto"
    setup_timeout: float = Field(600.0, gt=0, description="seconds each setup command may take")
    output_cap: int = Field(100_000, gt=0, description="bytes of one command's output kept")
    network: bool = Field(False, description="allow network access inside bwrap/docker sandboxes")
    env_vars: dict[str, str] = Field(default_factory=dict, description="exported in the shell")
    setup_commands: list[str] = Field(
        default_factory=list, description="run in the shell after the repository is ready"
    )
    path_prepend: list[str] = Field(
        default_factory=list, description="directories put first on the shell's PATH"
    )
    max_file_bytes: int = Field(
        10_000_000, gt=0, description="largest file read_file returns (the ACI's open, edit...)"
    )
    max_diff_file_bytes: int = Field(
        1_000_000, gt=0, description="files larger than this are left out of the submission"
    )
    diff_timeout: float = Field(120.0, gt=0, description="seconds taking the submission may take")
    # bwrap only
    ro_paths: list[str] = Field(
        default_factory=list,
        description="host paths bound read-only at the same path (a task's interpreter, venv)",
    )
    host_python: bool = Field(
        True,
        description="the interpreter swe-aci runs on and its scripts (pytest) first on the shell's "
        "PATH (local, bwrap), bound read-only (bwrap), as in an activated venv; false: the "
        "inherited PATH and, in bwrap, system directories only",
    )
    # docker only
    image: str | None = Field(None, description="docker image to start the container from")
    repo_in_image: str | None = Field(
        None, description="absolute path of the repository already present in the image"
    )
    container_repo_dir: str = Field(
        "/", description="parent directory the repository is copied into in the container"
    )
    cpus: float | None = Field(2.0, gt=0, description="CPUs of the container (docker)")
    # resource limits (docker: cgroup and ulimits; bwrap: rlimits of every process, and a cgroup
    # of the sandbox's own where the host offers one: env/bwrap/limits.py, env/bwrap/cgroups.py)
    memory: str | None = Field(
        "4g",
        description="docker: the container's memory; bwrap: the memory of each process, and of "
        "the whole sandbox when it has a cgroup",
    )
    pids_limit: int | None = Field(
        1024, gt=0, description="processes (and threads) of the sandbox at once"
    )
    file_size: str | None = Field("4g", description="largest file a sandbox process may write")
    cpu_seconds: int | None = Field(3600, gt=0, description="CPU seconds of each process")
    disk: str | None = Field(
        "2g",
        description="what one sandbox may write in total: bwrap, its writable directories on "
        "a tmpfs of this size (mounted on the host as root, held by a process of its own "
        "otherwise); docker, the container's writable layer where the "
        "storage driver can bound it (docs/security.md); below `memory`, so that a full disk is "
        "ENOSPC, not the OOM killer",
    )

    @field_validator("memory", "file_size", "disk")
    @classmethod
    def _a_size(cls, value: str | None) -> str | None:
        if value is not None and parse_bytes(value) == 0:
            # A tmpfs of size 0 has no bound at all, an rlimit of 0 stops every process.
            raise ValueError(f"a size of 0 bounds nothing: {value!r} (use null for no bound)")
        return value


@dataclass(frozen=True)
class Workspace:
    """The repository a sandbox starts from and everything set up around it: one value opened by
    `make_environment`, whoever asks (an episode, the evaluation harness, rag).

    `source` is a local git repository or URL the backend copies (None when the repository is
    already in the image, at `config.repo_in_image`), `commit` its base (None: the source's
    HEAD). `config` holds the rest: the backend, the image, the task's interpreter and virtualenv
    (`ro_paths`, `path_prepend`, `env_vars`) and its setup commands. For a task row
    `recipes.task_workspace` builds it from the user's env config; for `--repo` it is that config.
    """

    config: EnvConfig
    source: str | None = None
    commit: str | None = None
