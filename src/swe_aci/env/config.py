"""Configuration of the sandbox an episode runs in, and the workspace it starts from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Backend = Literal["auto", "local", "bwrap", "docker"]


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
    cpus: float | None = Field(2.0, gt=0)
    memory: str | None = "4g"
    pids_limit: int | None = Field(1024, gt=0)


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
