"""Configuration of the model an episode talks to (the `model:` section of a run config)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class RetryConfig(BaseModel):
    """Jittered exponential backoff for transient API failures (429, 5xx, timeouts, drops)."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: int = Field(6, ge=1, description="requests in total, the first one included")
    initial_wait: float = Field(1.0, ge=0, description="seconds before the first retry")
    max_wait: float = Field(30.0, ge=0, description="cap on one wait (seconds)")
    max_total_wait: float = Field(120.0, ge=0, description="cap on all waits of one query")


class Price(BaseModel):
    """USD per million tokens. `cached_input` defaults to `input` when unknown."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)


class LocalRuntimeConfig(BaseModel):
    """How swe-aci runs llama.cpp's server for the `local` model."""

    model_config = ConfigDict(extra="forbid")

    ctx_size: int = Field(32768, gt=0, description="context window per slot, in tokens")
    parallel: int = Field(1, ge=1, description="slots decoding at once (batch runs)")
    threads: int | None = Field(None, ge=1, description="CPU threads; None lets llama.cpp pick")
    startup_timeout: float = Field(300.0, gt=0, description="seconds to wait for the server")


class ModelConfig(BaseModel):
    """Which model, where it lives and how to sample from it.

    `name` is `replay`, `scripted`, `human`, `openai/<model>`, `anthropic/<model>` or `local`.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = "replay"
    base_url: str | None = Field(None, description="API root, e.g. http://localhost:8000/v1")
    api_key: SecretStr | None = None
    api_key_env: str | None = Field(None, description="environment variable holding the key")
    temperature: float = Field(0.0, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    max_output_tokens: int | None = Field(None, gt=0)
    stop: list[str] = Field(default_factory=list)
    timeout: float = Field(120.0, gt=0, description="seconds one request may take")
    retry: RetryConfig = Field(default_factory=RetryConfig)
    prices: dict[str, Price] = Field(
        default_factory=dict, description="per model name, merged over the built-in table"
    )
    replay_path: str | None = Field(None, description="trajectory whose responses are replayed")
    script: list[str] = Field(default_factory=list, description="replies of the scripted model")
    grammar: str | None = Field(None, description="GBNF grammar sent to llama.cpp servers")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="extra JSON fields merged into each request body"
    )
    local: LocalRuntimeConfig = Field(default_factory=LocalRuntimeConfig)
