"""The model calls of one pipeline episode within its time budget: each prompt rendered from the
strategy's templates, each call given the budget's time left as its timeout and recorded."""

from __future__ import annotations

import time
from typing import Any

from swe_aci.configuration import jinja
from swe_aci.models.base import ModelError, ModelReply
from swe_aci.pipeline.config import PipelineStrategy
from swe_aci.trajectory.exits import ESCAPING_ERRORS
from swe_aci.trajectory.recorder import EpisodeRecorder


class OutOfTime(Exception):
    """The time budget is spent: the stages still to come are skipped."""


class Asking:
    def __init__(self, strategy: PipelineStrategy, record: EpisodeRecorder) -> None:
        self.strategy = strategy
        self.record = record

    def time_left(self) -> float | None:
        """Seconds of `time_budget` left (0.0 when it is used up); None without a budget."""
        budget = self.strategy.time_budget
        if not budget:
            return None
        return max(0.0, budget - (time.monotonic() - self.record.started))

    def check_time(self) -> None:
        if self.time_left() == 0.0:
            raise OutOfTime

    def render(self, template: str, **variables: Any) -> str:
        return jinja().from_string(getattr(self.strategy.templates, template)).render(**variables)

    def ask(self, model: Any, prompt: str) -> ModelReply:
        """One model call, given the budget's time left as its timeout: a slow reply (a loaded
        machine) ends the pipeline on its time limit with the candidates so far, not past it."""
        left = self.time_left()
        if left == 0.0:
            raise OutOfTime
        started = time.monotonic()
        try:
            reply = model.query([{"role": "user", "content": prompt}], timeout=left)
        except ESCAPING_ERRORS:
            raise
        except ModelError:
            if self.time_left() == 0.0:
                raise OutOfTime from None
            raise
        finally:
            self.record.waited(time.monotonic() - started)
        self.record.replied(reply)
        return reply
