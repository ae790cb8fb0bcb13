"""The task row and its environment recipe (the task-file format: one SWE-bench row per task,
plus an optional `environment` recipe saying how to build the repository and its interpreter)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from swe_aci.records import INSTANCE_ID_RULE, is_valid_instance_id

LogParser = Literal[
    "pytest", "django", "sympy", "unittest",
    # evaluate/parsers_other.py
    "go_test", "cargo", "jest", "mocha", "node_test", "tap", "junit_xml", "phpunit", "rspec",
]  # fmt: skip
ToolchainName = Literal["node", "go", "rust", "java", "php", "ruby", "c"]
RevertField = Literal["patch", "test_patch"]
# SWE-bench 5's grading of a row: `pass_and_fail` needs every FAIL_TO_PASS test to pass and every
# PASS_TO_PASS test kept; `fail_only` needs only that none of them is reported failed.
EvalType = Literal["pass_and_fail", "fail_only"]


class Source(BaseModel):
    """Where the repository's files come from: exactly one of `pypi_sdist`, `npm` or `debian` (a
    package archive, with its `sha256`), `git` (a URL or path, checked out at the row's
    base_commit) or `path` (a local directory)."""

    model_config = ConfigDict(extra="forbid")

    pypi_sdist: str | None = Field(None, description="a requirement `Name==version`")
    npm: str | None = Field(None, description="an npm package `name@version` (its tarball)")
    debian: str | None = Field(
        None, description="a Debian package `name=version` shipping a Go or Rust library's source"
    )
    sha256: str | None = Field(None, pattern=r"^[0-9a-fA-F]{64}$")
    git: str | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> Source:
        kinds = [kind for kind in SOURCE_KINDS if getattr(self, kind)]
        if len(kinds) != 1:
            raise ValueError(f"source needs exactly one of {', '.join(SOURCE_KINDS)}")
        kind = kinds[0]
        if kind in ARCHIVE_KINDS:
            if not self.sha256:
                raise ValueError(f"the {kind} source needs its sha256")
            separator = ARCHIVE_KINDS[kind]
            name, found, version = getattr(self, kind).rpartition(separator)
            if not found or not name.strip() or not version.strip():
                raise ValueError(f"{kind} must be `name{separator}version`")
        elif self.sha256:
            raise ValueError(f"sha256 belongs to a {', '.join(ARCHIVE_KINDS)} source")
        return self

    @property
    def kind(self) -> str:
        return next(kind for kind in SOURCE_KINDS if getattr(self, kind))


# The package-archive kinds of source, with what separates the name from the version.
ARCHIVE_KINDS = {"pypi_sdist": "==", "npm": "@", "debian": "="}
SOURCE_KINDS = (*ARCHIVE_KINDS, "git", "path")


class Recipe(BaseModel):
    """How to build a task's environment: interpreter, source, base tree, install, tests."""

    model_config = ConfigDict(extra="forbid")

    python: str | None = Field(None, pattern=r"^\d+\.\d+(\.\d+)?$")
    toolchains: list[ToolchainName] = Field(default_factory=list)  # recipes/toolchains.py
    source: Source
    revert: list[RevertField] = Field(default_factory=list)
    prepare: list[str] = Field(default_factory=list)
    install: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    test_cmd: str | None = None
    log_parser: LogParser | None = None


class Task(BaseModel):
    """One row of a task file: the keys of a SWE-bench row that swe-aci reads; the others
    (`hints_text`, `version`, `created_at`, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="ignore")

    instance_id: str
    repo: str
    problem_statement: str
    base_commit: str | None = None
    patch: str | None = None
    test_patch: str | None = None
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    image: str | None = None
    repo_dir: str = Field("/testbed", pattern=r"^/")
    environment: Recipe | None = None
    version: str = ""
    # SWE-bench 5 rows: the script that applies the test patch and runs the tests between
    # SWE-bench's markers, the name of the swebench parser of its log, and how it is graded.
    eval_script: str | None = None
    log_parser: str | None = Field(None, pattern=r"^parse_log_\w+$")
    eval_type: EvalType = "pass_and_fail"
    # A task repository's task directory: its Dockerfile (the build context of `image`) and its
    # `test_assets/`. Set by the task-repository reader, not by a row.
    task_dir: str | None = Field(None, exclude=True)

    @field_validator("instance_id")
    @classmethod
    def _names_a_directory(cls, value: str) -> str:
        if not is_valid_instance_id(value):
            raise ValueError(INSTANCE_ID_RULE)
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        """Saved datasets sometimes carry the version as a number (`3.0`)."""
        return (
            str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
        )

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_string_list(cls, value: Any) -> Any:
        """SWE-bench rows carry the test lists as JSON strings."""
        if isinstance(value, str):
            try:
                return json.loads(value) if value.strip() else []
            except (json.JSONDecodeError, RecursionError):
                raise ValueError("not a list of test ids nor a JSON string of one") from None
        return value

    @model_validator(mode="after")
    def _one_environment(self) -> Task:
        if self.image and self.environment:
            raise ValueError("a row has an image or an environment recipe, not both")
        if self.eval_script is not None and self.environment is not None:
            raise ValueError(
                "a row has an eval_script (SWE-bench 5) or an environment recipe, not both"
            )
        if self.eval_script is not None and not self.log_parser:
            raise ValueError("a row with an eval_script needs its log_parser")
        return self
