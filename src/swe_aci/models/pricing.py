"""Token prices (USD per million tokens) and the cost of one call.

The built-in table holds list prices as published by the providers (2024-2025); a run config's
`model.prices` overrides or extends it. A model without a price costs 0, with one warning per name
per process, so a cost limit silently never triggers only after the user was told.
"""

from __future__ import annotations

import logging
import re
import threading

from swe_aci.models.config import Price

logger = logging.getLogger(__name__)

BUILTIN_PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-4-1106-preview": Price(input=10.0, output=30.0),
    "gpt-4-turbo": Price(input=10.0, output=30.0),
    "gpt-4o": Price(input=2.5, output=10.0, cached_input=1.25),
    "gpt-4o-mini": Price(input=0.15, output=0.6, cached_input=0.075),
    "gpt-4.1": Price(input=2.0, output=8.0, cached_input=0.5),
    "gpt-4.1-mini": Price(input=0.4, output=1.6, cached_input=0.1),
    "gpt-4.1-nano": Price(input=0.1, output=0.4, cached_input=0.025),
    "o3-mini": Price(input=1.1, output=4.4, cached_input=0.55),
    "o4-mini": Price(input=1.1, output=4.4, cached_input=0.275),
    "gpt-5": Price(input=1.25, output=10.0, cached_input=0.125),
    "gpt-5-mini": Price(input=0.25, output=2.0, cached_input=0.025),
    # Anthropic (cache reads at 10% of input)
    "claude-3-opus-20240229": Price(input=15.0, output=75.0, cached_input=1.5),
    "claude-3-5-sonnet-20241022": Price(input=3.0, output=15.0, cached_input=0.3),
    "claude-3-5-haiku-20241022": Price(input=0.8, output=4.0, cached_input=0.08),
    "claude-3-7-sonnet-20250219": Price(input=3.0, output=15.0, cached_input=0.3),
    "claude-sonnet-4-20250514": Price(input=3.0, output=15.0, cached_input=0.3),
    "claude-sonnet-4-5": Price(input=3.0, output=15.0, cached_input=0.3),
    "claude-opus-4-1": Price(input=15.0, output=75.0, cached_input=1.5),
    "claude-haiku-4-5": Price(input=1.0, output=5.0, cached_input=0.1),
}

_DATE_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")
_warned: set[str] = set()
_warned_lock = threading.Lock()


class Pricing:
    """The built-in table with a config's overrides on top."""

    def __init__(self, overrides: dict[str, Price] | None = None) -> None:
        self.table = {**BUILTIN_PRICES, **(overrides or {})}

    def lookup(self, model: str) -> Price | None:
        """Price of `model`, tried as given, without its `provider/` prefix, then undated."""
        bare = model.split("/", 1)[-1]
        for candidate in (model, bare, _DATE_SUFFIX.sub("", bare)):
            if candidate in self.table:
                return self.table[candidate]
        return None

    def cost(
        self,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cached_tokens: int = 0,
        *,
        warn_unknown: bool = True,
    ) -> float:
        """USD for one call. `input_tokens` includes the `cached_tokens` read from a cache."""
        price = self.lookup(model)
        if price is None:
            if warn_unknown:
                _warn_once(model)
            return 0.0
        cached_price = price.input if price.cached_input is None else price.cached_input
        uncached = max(input_tokens - cached_tokens, 0)
        return (
            uncached * price.input + cached_tokens * cached_price + output_tokens * price.output
        ) / 1_000_000


def _warn_once(model: str) -> None:
    with _warned_lock:
        if model in _warned:
            return
        _warned.add(model)
    logger.warning(
        "no price known for model %r: its cost counts as 0 (set model.prices to fix)", model
    )
