"""`openai/<model>`: the Chat Completions API through the official `openai` SDK.

Works against OpenAI itself and any compatible server (vLLM, Ollama, llama.cpp, ...) given
`base_url`; such servers may be keyless. The SDK is imported when the model is built, its own
retries are off (ours are in retry.py). Usage missing from a reply (some servers omit it) is
estimated at 4 characters per token. A configured grammar (llama.cpp) is sent with text queries
only: function calling and a text grammar exclude each other.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from swe_aci.models.base import (
    Message,
    ModelReply,
    ToolCall,
    ToolSpec,
    estimate_tokens,
    message_text,
)
from swe_aci.models.config import OpenAIConfig
from swe_aci.models.credentials import resolve_api_key, resolve_base_url
from swe_aci.models.pricing import Pricing
from swe_aci.models.retry import classify_sdk_error
from swe_aci.models.sdk import SDKModel
from swe_aci.models.tools import calls_of, openai_call, openai_tools, parse_arguments

WIRE_KEYS = ("role", "content", "name", "tool_call_id")


class OpenAICompatModel(SDKModel):
    """One `openai.OpenAI` client; `query` sends the conversation and prices the reply."""

    malformed = (*SDKModel.malformed, IndexError)  # no choice in the response

    def __init__(self, config: OpenAIConfig, pricing: Pricing | None = None) -> None:
        import openai

        self.name = config.name
        self.model = config.name.partition("/")[2]
        self.config = config
        self.pricing = pricing or Pricing(config.prices)
        base_url = resolve_base_url(config, "OPENAI_BASE_URL")
        # The official API wants max_completion_tokens; compatible servers know max_tokens.
        self.official = base_url is None or urlparse(base_url).hostname == "api.openai.com"
        self.client = openai.OpenAI(
            api_key=resolve_api_key(config, "OPENAI_API_KEY", base_url),
            base_url=base_url,
            timeout=config.timeout,
            max_retries=0,
        )

    def request(self, messages: list[Message], tools: list[ToolSpec] | None) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` for this conversation."""
        config = self.config
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [wire_message(message) for message in messages],
            "temperature": config.temperature,
        }
        if config.top_p is not None:
            request["top_p"] = config.top_p
        if config.max_output_tokens is not None:
            key = "max_completion_tokens" if self.official else "max_tokens"
            request[key] = config.max_output_tokens
        if config.stop:
            request["stop"] = config.stop
        if tools:
            request["tools"] = openai_tools(tools)
        extra_body = dict(config.extra_body)
        if config.grammar is not None and not tools:
            extra_body["grammar"] = config.grammar
        if extra_body:
            request["extra_body"] = extra_body
        return request

    def create(self, request: dict[str, Any]) -> Any:
        import openai

        try:
            return self.client.chat.completions.create(**request)
        except openai.OpenAIError as error:
            raise classify_sdk_error(error) from error

    def parse(self, response: Any, messages: list[Message]) -> ModelReply:
        message = response.choices[0].message
        content = message.content or ""
        calls = tuple(
            ToolCall(
                id=call.id,
                name=call.function.name,
                arguments=parse_arguments(call.function.arguments),
            )
            for call in message.tool_calls or ()
        )
        usage = response.usage
        if usage is None:
            input_tokens = sum(estimate_tokens(message_text(m)) for m in messages)
            output_tokens = estimate_tokens(content)
            cached = 0
        else:
            input_tokens = usage.prompt_tokens or 0
            output_tokens = usage.completion_tokens or 0
            details = usage.prompt_tokens_details
            cached = (details.cached_tokens or 0) if details is not None else 0
        return ModelReply(
            content=content,
            tool_calls=calls,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost=self.pricing.cost(self.name, input_tokens, output_tokens, cached),
            cached_tokens=cached,
        )


def wire_message(message: Message) -> dict[str, Any]:
    """The message as the API expects it: known keys only, tool calls in the wire format."""
    wire = {key: message[key] for key in WIRE_KEYS if key in message}
    calls = calls_of(message)
    if calls:
        wire["tool_calls"] = [openai_call(call) for call in calls]
    return wire
