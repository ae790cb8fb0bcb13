"""History processors: what of the stored conversation is sent at each query.

The stored history is never modified; `process_history` builds the query from it afresh every time
(stateless). Messages carry bookkeeping keys besides role/content: `message_type` is one of
`system_prompt`, `demonstration`, `instance`, `action`, `observation`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from swe_aci.models.base import Message, message_text, wire_message

MAX_CACHE_BREAKPOINTS = 4  # Anthropic's limit per request, one of them on the instance message


class HistoryConfig(BaseModel):
    """`last_n_observations` keeps the issue and the last `n` observations in full.

    With `collapse_every` = k > 1 the older observations are collapsed only every k steps, so
    the prompt prefix stays byte-identical for k turns (prompt caching) while between n and
    n + k - 1 recent observations are kept. `cache_breakpoints` > 0 marks the instance message (the
    end of the fixed prefix) and that many of the last observations with `cache_breakpoint`
    (Anthropic prompt caching; other backends ignore the key).
    """

    model_config = ConfigDict(extra="forbid")

    type: Literal["last_n_observations", "full"] = "last_n_observations"
    n: int = Field(5, ge=1, description="observations kept in full")
    collapse_every: int = Field(1, ge=1, description="collapse older observations every k steps")
    cache_breakpoints: int = Field(0, ge=0, le=MAX_CACHE_BREAKPOINTS - 1)

    @model_validator(mode="after")
    def _full_has_no_window(self) -> HistoryConfig:
        if self.type == "full" and self.collapse_every != 1:
            raise ValueError("collapse_every only applies to type last_n_observations")
        return self


def omitted_placeholder(message: Message) -> str:
    """The one line an elided observation becomes (N = lines of the whole original message)."""
    return f"Old output omitted ({len(message_text(message).splitlines())} lines)"


def elided_positions(history: list[Message], config: HistoryConfig) -> set[int]:
    """Indices of the observations to replace by their placeholder.

    Counted messages are the instance message and every observation, 1..k. The instance is never
    elided; with k rounded down to a multiple of `collapse_every`, messages 2..k'-n are elided.
    """
    if config.type == "full":
        return set()
    counted = [
        index
        for index, message in enumerate(history)
        if message.get("message_type") in ("instance", "observation")
    ]
    step = config.collapse_every
    last_elided = max(0, (len(counted) // step) * step - config.n)
    return set(counted[1:last_elided])


def process_history(
    history: list[Message], config: HistoryConfig, placeholders: dict[int, str] | None = None
) -> list[Message]:
    """The messages to send: old observations collapsed, cache breakpoints marked, fresh dicts.

    `placeholders` caches the placeholder of each elided position across calls on the same
    (append-only) history, so a long episode does not recount the lines of every old observation
    at every step.
    """
    elided = elided_positions(history, config)
    cache = {} if placeholders is None else placeholders
    query = []
    for index, message in enumerate(history):
        sent = wire_message(message)
        sent.pop("cache_breakpoint", None)
        if index in elided:
            if index not in cache:
                cache[index] = omitted_placeholder(message)
            sent["content"] = cache[index]
        query.append(sent)
    mark_cache_breakpoints(query, history, config.cache_breakpoints)
    return query


def mark_cache_breakpoints(query: list[Message], history: list[Message], count: int) -> None:
    """Mark the instance message and the last `count` observations of `query` in place."""
    if count == 0:
        return
    kinds = [message.get("message_type") for message in history]
    observations = [index for index, kind in enumerate(kinds) if kind == "observation"]
    marked = [index for index, kind in enumerate(kinds) if kind == "instance"]
    marked += observations[-count:]
    for index in marked:
        query[index]["cache_breakpoint"] = True
