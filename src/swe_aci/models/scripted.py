"""A model that answers with fixed replies, in order: for tests and demos.

Token counts are estimated (4 characters per token) so usage and cost accounting run as with a
real model; a price for `scripted` in `model.prices` makes it cost money (useful to test limits).
"""

from __future__ import annotations

from collections.abc import Sequence

from swe_aci.models.base import (
    Message,
    ModelReply,
    RepliesExhausted,
    ToolSpec,
    estimate_tokens,
    message_text,
)
from swe_aci.models.pricing import Pricing


class ScriptedModel:
    """Replies from a list, one per query; running out raises RepliesExhausted."""

    def __init__(
        self,
        replies: Sequence[str],
        name: str = "scripted",
        pricing: Pricing | None = None,
        recorded_exit: str | None = None,
    ) -> None:
        self.name = name
        self.replies = list(replies)
        self.position = 0
        self.pricing = pricing or Pricing()
        self.recorded_exit = recorded_exit

    def query(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        timeout: float | None = None,
    ) -> ModelReply:
        if self.position >= len(self.replies):
            raise RepliesExhausted(f"{self.name} model has no more replies", self.recorded_exit)
        content = self.replies[self.position]
        self.position += 1
        return estimated_reply(self.name, self.pricing, messages, content)


def estimated_reply(
    name: str, pricing: Pricing, messages: list[Message], content: str
) -> ModelReply:
    """A reply whose usage is estimated from the text; priced only if `name` has a price."""
    input_tokens = sum(estimate_tokens(message_text(message)) for message in messages)
    output_tokens = estimate_tokens(content)
    cost = pricing.cost(name, input_tokens, output_tokens, warn_unknown=False)
    return ModelReply(
        content=content, input_tokens=input_tokens, output_tokens=output_tokens, cost=cost
    )
