"""Stuck detection: the same action (or action and observation) over and over."""

from __future__ import annotations

from typing import Literal

from swe_aci.agent.config import RepeatsConfig

Verdict = Literal["ok", "warn", "stop"]


class RepeatWatch:
    """Counts how many times in a row the same step happened.

    At `limit` repeats the verdict is `warn` (the model is told, once per episode); the next time
    the limit is reached (at once, or after another streak) it is `stop`.
    """

    def __init__(self, config: RepeatsConfig) -> None:
        self.config = config
        self.last: tuple[str, str] | None = None
        self.streak = 0
        self.warned = False

    def observe(self, action: str, observation: str) -> Verdict:
        compared = observation if self.config.compare == "action_and_observation" else ""
        key = (action.strip(), compared)
        self.streak = self.streak + 1 if key == self.last else 1
        self.last = key
        if not self.config.limit or self.streak < self.config.limit:
            return "ok"
        if self.warned:
            return "stop"
        self.warned = True
        return "warn"
