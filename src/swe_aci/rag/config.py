"""The RAG baseline's `strategy:` section (`strategy.type: rag`; the built-in config
`baselines/rag`): retrieval, the prompt's budget, the documents searched, the templates. The model
and the sandbox are the episode config's `model:` and `env:`, as for every strategy."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from swe_aci.configuration import check_templates

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
        check_templates(self, "strategy.templates", TEMPLATE_VARIABLES)
        return self


class RagStrategy(BaseModel):
    """SWE-bench's non-interactive retrieval baseline: BM25 (or the gold patch's) files packed
    into one prompt, one model call, the diff extracted and checked."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["rag"]
    retrieval: Retrieval = "bm25"
    context_tokens: int = Field(27000, gt=0, description="budget of the whole prompt, in tokens")
    documents: DocumentsConfig = Field(default_factory=DocumentsConfig)
    templates: RagTemplates
