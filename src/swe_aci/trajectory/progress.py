"""What an episode reports while it runs, besides its finished steps (`StepRecord`): a turn
starting (the model is being asked) and a reply the loop rejected (asked again). `run` prints
them; anything else may ignore them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnStarted:
    """The model is asked for step `turn` (1-based); tokens spent on the episode so far."""

    turn: int
    tokens_sent: int
    tokens_received: int


@dataclass(frozen=True)
class ReplyRejected:
    """A reply of step `turn` was not run: `kind` is `format` (malformed) or `blocked` (a refused
    command); `reason` is the error the model is shown."""

    turn: int
    kind: str
    reason: str


ProgressEvent = TurnStarted | ReplyRejected
OnProgress = Callable[[ProgressEvent], None]
