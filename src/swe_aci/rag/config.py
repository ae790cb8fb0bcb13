"""The RAG baseline's config (`configs/baselines/rag.yaml`): retrieval, budget, documents, templates,
model and environment. Loaded from YAML with `key.path=value` overrides, like episode configs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from swe_aci.configuration import (
    ConfigError,
    builtin_config_dir,
    check_templates,
    describe_validation_error,
    load_validated,
)
from swe_aci.env.config import EnvConfig
from swe_aci.models.config import ModelConfig

Retrieval = Literal["bm25", "oracle"]

# The variables each template may use.
TEMPLATE_VARIABLES: dict[str, frozenset[str]] = {
    "system": frozenset(),
    "file": frozenset({"path", "text", "numbered"}),
    "user": frozenset({"problem_statement", "files", "retrieval"}),
}


class DocumentsConfig(BaseModel):
    """Which files of the repository BM25 searches (and the size limit of every file shown)."""

    model_config = ConfigDict(extra="forbid")

    extensions: list[str] = Field(default_factory=lambda: [".py"])
    max_file_bytes: int = Field(1_000_000, gt=0, description="larger files are left out")
    include_tests: bool = Field(False, description="keep paths with a test/tests/testing word")
    readme: bool = Field(True, description="show the root README files first, as SWE-bench does")


class RagTemplates(BaseModel):
    """Jinja templates: the system message, one file block, and the user message."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    system: str
    """The system message (no variables)."""
    file: str
    """One retrieved file: {{path}}, {{text}}, {{numbered}} (the text with line numbers)."""
    user: str
    """The request: {{problem_statement}}, {{files}} (rendered file blocks), {{retrieval}}."""

    @model_validator(mode="after")
    def _templates_render(self) -> RagTemplates:
        check_templates(self, "templates", TEMPLATE_VARIABLES)
        return self


class RagConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    retrieval: Retrieval = "bm25"
    context_tokens: int = Field(27000, gt=0, description="budget of the whole prompt, in tokens")
    documents: DocumentsConfig = Field(default_factory=DocumentsConfig)
    templates: RagTemplates
    model: dict[str, Any] = Field(default_factory=dict, description="a model config (see models)")
    env: EnvConfig = Field(default_factory=EnvConfig)

    def model_settings(self) -> ModelConfig:
        """The `model` section validated as a model config."""
        return TypeAdapter(ModelConfig).validate_python(self.model)


def load_rag_config(path: str | Path | None = None, overrides: Sequence[str] = ()) -> RagConfig:
    """Read the YAML (the built-in `baselines/rag.yaml` when None), apply overrides, validate everything,
    the model section included. Raises ConfigError (one line)."""
    config_path = (
        Path(path).expanduser()
        if path is not None
        else builtin_config_dir() / "baselines" / "rag.yaml"
    )
    config = load_validated(RagConfig, config_path, overrides)
    try:
        config.model_settings()
    except ValidationError as error:
        raise ConfigError(
            f"config {config_path}: model: {describe_validation_error(error)}"
        ) from None
    return config
