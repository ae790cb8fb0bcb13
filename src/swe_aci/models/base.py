"""The model protocol: messages in, one reply (text, tool calls, usage, cost) out.

Messages are OpenAI-style dicts. Besides the standard keys a message may carry
`cache_breakpoint: True`, a hint the Anthropic backend turns into `cache_control`; every backend
drops keys it does not understand before sending. Adding a backend: docs/extending.md ("A model
backend").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

Message = dict[str, Any]


class ModelError(Exception):
    """Base of every model failure; the message is one line meant for the user."""


class ModelConfigError(ModelError):
    """The user can fix it: missing API key, unknown model name, bad base URL or replay file."""


class ModelAPIError(ModelError):
    """The API failed for good: retries exhausted or a non-retryable error. Episode: exit_api."""


class ModelAuthError(ModelAPIError):
    """401/403: the key is missing, wrong or lacks permission. Never retried."""


class RepliesExhausted(ModelAPIError):
    """A scripted or replayed model has no more replies.

    `recorded_exit` is how the replayed episode ended (e.g. `exit_cost`) when it did not end with
    `submit`, so that a replay can end the same way; None when unknown.
    """

    def __init__(self, message: str, recorded_exit: str | None = None) -> None:
        super().__init__(message)
        self.recorded_exit = recorded_exit


class ContextWindowExceeded(ModelError):
    """The prompt no longer fits the model's context window. Episode: exit_context."""


@dataclass(frozen=True)
class ToolSpec:
    """A function the model may call; `parameters` is a JSON-schema object. A `type` names a
    tool the provider itself defines (Anthropic's `text_editor_20250728`): then only the name and
    the type are sent, the provider knows the parameters."""

    name: str
    description: str
    parameters: dict[str, Any]
    type: str | None = None


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model, arguments already decoded from JSON."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ModelReply:
    """What one query returned, with its usage and cost (USD)."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    cached_tokens: int = 0


@dataclass
class ModelStats:
    """Usage accumulated over an episode (the paper-era `model_stats` keys)."""

    instance_cost: float = 0.0
    tokens_sent: int = 0
    tokens_received: int = 0
    api_calls: int = 0

    def add(self, reply: ModelReply) -> None:
        self.instance_cost += reply.cost
        self.tokens_sent += reply.input_tokens
        self.tokens_received += reply.output_tokens
        self.api_calls += 1

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


@runtime_checkable
class Model(Protocol):
    """Anything that answers a conversation. Raises ModelError subclasses only."""

    name: str

    def query(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> ModelReply:
        """Answer `messages`; `tools` are offered as callable functions when given. `timeout`
        bounds the whole call, retries included (None: the backend's own per-request timeout);
        backends that answer at once (scripted, replay) ignore it."""
        ...


def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters per token) for backends without a tokenizer."""
    return (len(text) + 3) // 4


def message_text(message: Message) -> str:
    """The plain text of a message whose content is a string or a list of text parts."""
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


# Keys a model backend needs; everything else in a stored message is bookkeeping.
WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "cache_breakpoint")


def wire_message(message: Message) -> Message:
    """The message without bookkeeping keys, as a backend receives it."""
    return {key: message[key] for key in WIRE_KEYS if key in message}
