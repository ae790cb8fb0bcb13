"""`anthropic/<model>`: the native Messages API through the official `anthropic` SDK.

The conversation is mapped to the API's shape: system messages become the separate `system`
prompt, tool messages become `tool_result` blocks of a user turn, consecutive turns of one role are
merged, and messages marked `cache_breakpoint` get `cache_control` on their last block (at most
the last 4 marks are kept, the API's limit). Cache writes are priced at the input price.

Sampling parameters: API version 2026-10-21 (sent by SDK 2.x) rejects `temperature` and `top_p`
even at their defaults, so they are sent (as body fields, which every SDK version passes on) only
when the client speaks the legacy version 2023-06-01 (SDK 1.x and older); otherwise a setting
made explicitly in the config is reported once as ignored.
"""

from __future__ import annotations

import logging
from typing import Any

from swe_aci.models.base import (
    Message,
    ModelReply,
    ToolCall,
    ToolSpec,
    message_text,
)
from swe_aci.models.config import AnthropicConfig
from swe_aci.models.credentials import resolve_api_key, resolve_base_url
from swe_aci.models.pricing import Pricing
from swe_aci.models.retry import classify_sdk_error
from swe_aci.models.sdk import SDKModel
from swe_aci.models.tools import anthropic_tools, calls_of

LEGACY_API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # the API requires max_tokens; used when model.max_output_tokens is unset
MAX_CACHE_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}
Block = dict[str, Any]
logger = logging.getLogger(__name__)
_warned_sampling: set[str] = set()  # model names already told their sampling settings are unsent


class AnthropicModel(SDKModel):
    """One `anthropic.Anthropic` client; `query` sends the conversation and prices the reply."""

    def __init__(self, config: AnthropicConfig, pricing: Pricing | None = None) -> None:
        import anthropic

        self.name = config.name
        self.model = config.name.split("/", 1)[1]
        self.config = config
        self.pricing = pricing or Pricing(config.prices)
        base_url = resolve_base_url(config, "ANTHROPIC_BASE_URL")
        self.client = anthropic.Anthropic(
            api_key=resolve_api_key(config, "ANTHROPIC_API_KEY", base_url),
            base_url=base_url,
            timeout=config.timeout,
            max_retries=0,
        )
        api_version = self.client.default_headers.get("anthropic-version")
        self.sampling = api_version == LEGACY_API_VERSION
        ignored = sorted({"temperature", "top_p"} & config.model_fields_set)
        if ignored and not self.sampling and self.name not in _warned_sampling:
            _warned_sampling.add(self.name)
            logger.warning(
                "%s: anthropic API version %s takes no %s; not sent",
                self.name,
                api_version,
                "/".join(ignored),
            )

    def request(self, messages: list[Message], tools: list[ToolSpec] | None) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for this conversation."""
        config = self.config
        system, turns = to_anthropic(messages)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": config.max_output_tokens or DEFAULT_MAX_TOKENS,
            "messages": turns,
        }
        if system:
            request["system"] = system
        if config.stop:
            request["stop_sequences"] = config.stop
        if tools:
            request["tools"] = anthropic_tools(tools)
        extra_body: dict[str, Any] = {}
        if self.sampling:
            extra_body["temperature"] = config.temperature
            if config.top_p is not None:
                extra_body["top_p"] = config.top_p
        extra_body.update(config.extra_body)
        if extra_body:
            request["extra_body"] = extra_body
        return request

    def create(self, request: dict[str, Any]) -> Any:
        import anthropic

        try:
            return self.client.messages.create(**request)
        except anthropic.AnthropicError as error:
            raise classify_sdk_error(error) from error

    def parse(self, response: Any, messages: list[Message]) -> ModelReply:
        text = "".join(block.text for block in response.content if block.type == "text")
        calls = tuple(
            ToolCall(id=block.id, name=block.name, arguments=dict(block.input))
            for block in response.content
            if block.type == "tool_use"
        )
        usage = response.usage
        cached = usage.cache_read_input_tokens or 0
        input_tokens = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
        return ModelReply(
            content=text,
            tool_calls=calls,
            input_tokens=input_tokens,
            output_tokens=usage.output_tokens,
            cost=self.pricing.cost(self.name, input_tokens, usage.output_tokens, cached),
            cached_tokens=cached,
        )


def to_anthropic(messages: list[Message]) -> tuple[list[Block], list[dict[str, Any]]]:
    """(system blocks, alternating user/assistant turns) for the Messages API."""
    system: list[Block] = []
    turns: list[dict[str, Any]] = []
    marked: list[Block] = []
    for message in messages:
        role = message.get("role")
        blocks = content_blocks(message)
        if message.get("cache_breakpoint"):
            marked.append(blocks[-1])
        if role == "system":
            system.extend(blocks)
            continue
        wire_role = "assistant" if role == "assistant" else "user"
        if turns and turns[-1]["role"] == wire_role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": wire_role, "content": blocks})
    for block in marked[-MAX_CACHE_BREAKPOINTS:]:
        block["cache_control"] = EPHEMERAL
    for turn in turns:  # tool results must open their user turn
        turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    return system, turns


def content_blocks(message: Message) -> list[Block]:
    """The blocks of one message; never empty, since the API rejects empty content."""
    text = message_text(message)
    if message.get("role") == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id", ""),
                "content": text or "(no output)",
            }
        ]
    blocks: list[Block] = [{"type": "text", "text": text}] if text.strip() else []
    blocks += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in calls_of(message)
    ]
    return blocks or [{"type": "text", "text": "(empty)"}]
