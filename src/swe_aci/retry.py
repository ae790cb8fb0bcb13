"""The one retry loop: a call tried again after a transient failure, bounded in attempts.

What counts as transient and how long to wait is the caller's (`wait`): the model backends wait
a jittered exponential backoff or what `Retry-After` asks, within a total budget
(`models/retry.py`); the GitHub client what the rate-limit headers ask (`github/client.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def retrying(
    call: Callable[[], T],
    wait: Callable[[Exception, int], float | None],
    *,
    attempts: int,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """`call()`'s value; when it raises, `wait(error, attempt)` (attempt counts from 1) gives the
    seconds to sleep before trying again, or None (or raises) to give up. After `attempts`
    calls the last error is raised without asking."""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except Exception as error:
            delay = wait(error, attempt) if attempt < attempts else None
            if delay is None:
                raise
            sleep(delay)
    raise ValueError(f"attempts must be at least 1, not {attempts}")
