"""Our retry policy for model APIs (the SDKs' own retries are switched off), on the one retry
loop (`swe_aci/retry.py`).

Transient failures (429, 408, 409, 5xx, timeouts, dropped connections, malformed bodies) are retried
with jittered exponential backoff, bounded in attempts and in total wait; a `Retry-After` header is
honoured up to `max_wait`. Auth errors, other 4xx and context-length errors are raised at once.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

from swe_aci.models.base import (
    ContextWindowExceeded,
    ModelAPIError,
    ModelAuthError,
    ModelError,
)
from swe_aci.models.config import RetryConfig
from swe_aci.retry import retrying

logger = logging.getLogger(__name__)
T = TypeVar("T")

RETRYABLE_STATUS = frozenset({408, 409, 429})
CONTEXT_PATTERN = re.compile(
    r"context[ _](length|window|size|limit)|maximum context|prompt is too long|too many tokens",
    re.IGNORECASE,
)


class RetryableError(ModelError):
    """A transient failure; `with_retries` tries again, then turns it into ModelAPIError."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Deadline:
    """The time a model call may take, retries included: each attempt's timeout is the backend's
    own (`per_request`) or the time left, whichever is shorter. `total=None`: no overall bound."""

    def __init__(self, total: float | None, per_request: float, what: str) -> None:
        self.ends = None if total is None else time.monotonic() + total
        self.per_request = per_request
        self.what = what

    def left(self) -> float | None:
        return None if self.ends is None else self.ends - time.monotonic()

    def attempt(self) -> float:
        """The timeout of the next attempt; ModelAPIError when no time is left."""
        left = self.left()
        if left is None:
            return self.per_request
        if left <= 0:
            raise ModelAPIError(f"{self.what}: no time left for the call")
        return min(self.per_request, left)


def with_retries(
    call: Callable[[], T],
    config: RetryConfig,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    deadline: Deadline | None = None,
) -> T:
    """Run `call`, retrying RetryableError as `config` allows (and, with a `deadline`, while a
    wait leaves time for another attempt); `what` names the call in messages."""
    waited = 0.0

    def backoff(error: Exception, attempt: int) -> float | None:
        nonlocal waited
        if not isinstance(error, RetryableError):
            return None
        wait = min(config.max_wait, config.initial_wait * 2 ** (attempt - 1))
        wait *= 0.5 + random.random() / 2
        if error.retry_after is not None:
            wait = max(wait, min(error.retry_after, config.max_wait))
        if waited + wait > config.max_total_wait:
            raise ModelAPIError(
                f"{what}: {error} (gave up after {attempt} attempts and {waited:.1f}s of waiting)"
            ) from None
        left = deadline.left() if deadline is not None else None
        if left is not None and wait >= left:
            raise ModelAPIError(f"{what}: {error} (no time left for a retry)") from None
        logger.warning("%s: %s; retry %d in %.2fs", what, error, attempt, wait)
        waited += wait
        return wait

    try:
        return retrying(call, backoff, attempts=config.max_attempts, sleep=sleep)
    except RetryableError as error:
        attempts = config.max_attempts
        raise ModelAPIError(f"{what}: {error} (gave up after {attempts} attempts)") from None


def call_within(
    send: Callable[[float], T],
    config: RetryConfig,
    per_request: float,
    total: float | None,
    what: str,
) -> T:
    """One model call of an API backend: `send(attempt timeout)` retried as `config` allows,
    all attempts within `total` seconds (None: no overall bound), each within `per_request` or
    the time left (`Deadline`)."""
    deadline = Deadline(total, per_request, what)
    return with_retries(lambda: send(deadline.attempt()), config, what, deadline=deadline)


def classify_status(
    status: int, message: str, code: str | None = None, retry_after: float | None = None
) -> ModelError:
    """The error to raise for an HTTP error status with the API's own `message` and `code`."""
    text = f"HTTP {status}: {message}"
    if code == "context_length_exceeded" or (
        status in (400, 413, 422) and CONTEXT_PATTERN.search(message)
    ):
        return ContextWindowExceeded(f"context window exceeded ({text})")
    if status in (401, 403):
        return ModelAuthError(f"authentication failed ({text}): check the API key")
    if status in RETRYABLE_STATUS or status >= 500:
        return RetryableError(text, retry_after)
    return ModelAPIError(text)


def classify_sdk_error(error: Exception) -> ModelError:
    """Map an `openai` or `anthropic` SDK exception (same generated layout) to our errors."""
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        message, code = _error_details(getattr(error, "body", None), str(error))
        response = getattr(error, "response", None)
        headers = getattr(response, "headers", None) or {}
        return classify_status(status, message, code, _retry_after(headers.get("retry-after")))
    kind = type(error).__name__
    if kind == "APITimeoutError":
        return RetryableError("request timed out")
    if kind == "APIConnectionError":
        return RetryableError(f"connection failed: {error.__cause__ or error}")
    if kind == "APIResponseValidationError":
        return RetryableError(f"malformed response: {error}")
    return ModelAPIError(f"{kind}: {error}")


def _error_details(body: Any, fallback: str) -> tuple[str, str | None]:
    """(message, code) from an error body: OpenAI `{error: {message, code}}` or Anthropic's."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return fallback, None
    message = error.get("message") or fallback
    code = error.get("code")
    return str(message), code if isinstance(code, str) else None


def _retry_after(value: str | None) -> float | None:
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None
