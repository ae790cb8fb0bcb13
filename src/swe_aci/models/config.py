"""Configuration of the model an episode talks to (the `model:` section of a run config).

Each backend has its own section, chosen by the provider part of `model.name`: `replay`,
`scripted`, `human`, `openai/<model>`, `anthropic/<model>` or `local[/<model>]`. A key that does
not belong to the chosen backend is an error naming it, e.g. `model.grammar` with an Anthropic
model.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SecretStr,
    Tag,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

KNOWN_NAMES = "replay, scripted, human, openai/<model>, anthropic/<model>, local[/<model>]"
DEFAULT_NAME = "replay"


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


Prices = Annotated[
    dict[str, Price], Field(description="per model name, merged over the built-in table")
]


class ReplayConfig(BaseModel):
    """`replay`: the responses recorded in a trajectory, in order."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["replay"] = "replay"
    replay_path: str | None = Field(None, description="trajectory whose responses are replayed")
    prices: Prices = Field(default_factory=dict)


class ScriptedConfig(BaseModel):
    """`scripted`: fixed replies, for tests and demos."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["scripted"] = "scripted"
    script: list[str] = Field(default_factory=list, description="replies of the scripted model")
    prices: Prices = Field(default_factory=dict)


class HumanConfig(BaseModel):
    """`human`: a person types the replies."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["human"] = "human"


class APIConfig(BaseModel):
    """What every model behind an HTTP API shares: sampling, request limits, retries."""

    model_config = ConfigDict(extra="forbid")
    provider: ClassVar[str]

    name: str
    temperature: float = Field(0.0, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    max_output_tokens: int | None = Field(None, gt=0)
    stop: list[str] = Field(default_factory=list)
    timeout: float = Field(120.0, gt=0, description="seconds one request may take")
    retry: RetryConfig = Field(default_factory=RetryConfig)
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="extra JSON fields merged into each request body"
    )

    @field_validator("name")
    @classmethod
    def _name_selects_this_backend(cls, name: str) -> str:
        if backend_of(name) != cls.provider:
            raise ValueError(f"{name!r} does not select the {cls.provider} backend")
        return name


class HostedConfig(APIConfig):
    """A model served elsewhere: where it lives, the key, what it costs."""

    base_url: str | None = Field(None, description="API root, e.g. http://localhost:8000/v1")
    api_key: SecretStr | None = None
    api_key_env: str | None = Field(None, description="environment variable holding the key")
    prices: Prices = Field(default_factory=dict)


class OpenAIConfig(HostedConfig):
    """`openai/<model>`: OpenAI's Chat Completions API or a compatible server."""

    provider = "openai"

    grammar: str | None = Field(None, description="GBNF grammar sent to llama.cpp servers")


class AnthropicConfig(HostedConfig):
    """`anthropic/<model>`: Anthropic's Messages API."""

    provider = "anthropic"


class LocalRuntimeConfig(BaseModel):
    """How swe-aci runs llama.cpp's server for the `local` model."""

    model_config = ConfigDict(extra="forbid")

    ctx_size: int = Field(32768, gt=0, description="context window per slot, in tokens")
    parallel: int = Field(1, ge=1, description="slots decoding at once (batch runs)")
    threads: int | None = Field(None, ge=1, description="CPU threads; None lets llama.cpp pick")
    prompt_cache_mib: int = Field(
        1024,
        ge=0,
        description="host memory (MiB) for computed prompts llama.cpp keeps and restores when a "
        "later prompt starts the same way; 0: only the slot's last prompt is reused",
    )
    startup_timeout: float = Field(300.0, gt=0, description="seconds to wait for the server")


class LocalConfig(APIConfig):
    """`local[/<catalog name or .gguf path>]`: a GGUF model run by llama.cpp on this machine.

    Free, so no prices; the defaults suit a CPU (long timeout, room for an edit's body).
    """

    provider = "local"

    max_output_tokens: int = Field(4096, gt=0)
    timeout: float = Field(1800.0, gt=0, description="a long prompt on a CPU takes minutes")
    grammar: str | None = Field(
        None,
        description="GBNF grammar; unset: the agent's reply format's grammar, empty: none",
    )
    local: LocalRuntimeConfig = Field(default_factory=LocalRuntimeConfig)


def backend_of(name: str) -> str | None:
    """The backend a model name selects (its provider part), or None for an unknown name."""
    provider, slash, model = name.partition("/")
    if provider in ("replay", "scripted", "human"):
        return None if slash else provider
    if provider == "local" or (provider in ("openai", "anthropic") and model):
        return provider
    return None


def _name_in(section: Any) -> Any:
    """The model name a `model:` section gives (a section without one is a replay)."""
    if isinstance(section, dict):
        return section.get("name", DEFAULT_NAME)
    return getattr(section, "name", None)


def _backend_tag(section: Any) -> str | None:
    name = _name_in(section)
    return backend_of(name) if isinstance(name, str) else None


def _located_at_the_users_key(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate, reporting errors at the key as written (`model.grammar`), not under pydantic's
    union tag (`model.anthropic.grammar`), and saying which backend a misplaced key belongs to."""
    try:
        return handler(value)
    except ValidationError as error:
        details = [_user_facing(detail, value) for detail in error.errors()]
        raise ValidationError.from_exception_data(error.title, details) from None


def _user_facing(detail: ErrorDetails, value: Any) -> InitErrorDetails:
    if not isinstance(value, dict | BaseModel):
        problem = "expected a mapping with a model name, e.g. {name: openai/gpt-4o}"
        return {"type": PydanticCustomError("value_error", problem), "loc": (), "input": value}
    name = _name_in(value)
    if detail["type"] == "unknown_model":
        problem = f"unknown model {name!r}: expected one of {KNOWN_NAMES}"
        return {
            "type": PydanticCustomError("value_error", problem),
            "loc": ("name",),
            "input": name,
        }
    loc = detail["loc"][1:]  # drop the tag
    if detail["type"] == "extra_forbidden" and len(loc) == 1:
        owners = [tag for tag, backend in BACKENDS.items() if loc[0] in backend.model_fields]
        problem = f"not an option of model {name!r}"
        if owners:
            problem += f" (it is one of {', '.join(owners)} models)"
        return {"type": PydanticCustomError("value_error", problem), "loc": loc, "input": None}
    context = {"ctx": detail["ctx"]} if "ctx" in detail else {}
    return {"type": detail["type"], "loc": loc, "input": detail["input"], **context}


ModelConfig = Annotated[
    Annotated[ReplayConfig, Tag("replay")]
    | Annotated[ScriptedConfig, Tag("scripted")]
    | Annotated[HumanConfig, Tag("human")]
    | Annotated[OpenAIConfig, Tag("openai")]
    | Annotated[AnthropicConfig, Tag("anthropic")]
    | Annotated[LocalConfig, Tag("local")],
    Discriminator(
        _backend_tag, custom_error_type="unknown_model", custom_error_message="unknown model"
    ),
    WrapValidator(_located_at_the_users_key),
]
"""The `model:` section: one backend's config, chosen by the provider part of `name`."""

BACKENDS: dict[str, type[BaseModel]] = {
    tag.tag: section
    for section, tag in (get_args(option) for option in get_args(get_args(ModelConfig)[0]))
}
"""Each backend's config section by the tag `backend_of` gives its names."""
